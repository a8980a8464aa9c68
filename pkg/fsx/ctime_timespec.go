//go:build darwin || freebsd || dragonfly || ios || netbsd

package fsx

import "syscall"

func ctime(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
