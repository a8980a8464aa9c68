//go:build linux

package fsx

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func statBirth(*syscall.Stat_t) int64 { return 0 } // Linux's stat has no birth time; statx does

func birthFd(fd int) int64 {
	var st unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &st) != nil || st.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
}

func birthPath(p string) int64 {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, p, 0, unix.STATX_BTIME, &st) != nil || st.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return st.Btime.Sec*1e9 + int64(st.Btime.Nsec)
}
