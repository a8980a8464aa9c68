//go:build windows

package fsx

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on windows") }
