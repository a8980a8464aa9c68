//go:build darwin || freebsd || dragonfly || ios || netbsd

package fsx

import "syscall"

func statBirth(st *syscall.Stat_t) int64 { return st.Birthtimespec.Nano() }

func birthFd(int) int64 { return 0 }

func birthPath(string) int64 { return 0 }
