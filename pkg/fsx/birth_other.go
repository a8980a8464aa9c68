//go:build unix && !linux && !darwin && !freebsd && !dragonfly && !ios && !netbsd

package fsx

import "syscall"

func statBirth(*syscall.Stat_t) int64 { return 0 }

func birthFd(int) int64 { return 0 }

func birthPath(string) int64 { return 0 }
