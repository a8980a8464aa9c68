//go:build linux

package shell

import (
	"bytes"
	"os"
	"strconv"
)

// groupHasLiveMember scans /proc for a non-zombie process whose process
// group is pgid. Used only while waiting out the kill grace, so its cost
// (one small read per process) is paid rarely. When /proc is unreadable it
// answers true, which only means "wait the full grace, then SIGKILL".
func groupHasLiveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(pgid))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces or ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || !bytes.Equal(f[2], want) {
			continue
		}
		if s := f[0]; !bytes.Equal(s, []byte("Z")) && !bytes.Equal(s, []byte("X")) {
			return true
		}
	}
	return false
}
