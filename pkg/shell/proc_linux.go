//go:build linux

package shell

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

var subreaper sync.Once

// becomeSubreaper makes this process the reaper of orphaned descendants
// (PR_SET_CHILD_SUBREAPER): a grandchild whose parent exits is re-parented
// to pi instead of init, so it can still be found and killed.
func becomeSubreaper() {
	subreaper.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

type procInfo struct {
	ppid, pgid int
	start      int64
	live       bool
}

// procTable reads pid → (ppid, pgid, start, live) from /proc.
func procTable() map[int]procInfo {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	t := make(map[int]procInfo, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 20 {
			continue
		}
		ppid, _ := strconv.Atoi(string(f[1]))
		pgid, _ := strconv.Atoi(string(f[2]))
		start, _ := strconv.ParseInt(string(f[19]), 10, 64)
		t[pid] = procInfo{ppid: ppid, pgid: pgid, start: start, live: f[0][0] != 'Z' && f[0][0] != 'X'}
	}
	return t
}

// startTicks is a process's start time in clock ticks since boot.
func startTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[19]), 10, 64)
	return n
}

// escapees are the live descendants of the command that left its process
// group: children of its processes (found by ppid) and orphans re-parented
// to this process (the subreaper) that started after the command did.
func escapees(g *procGroup) []int {
	t := procTable()
	if t == nil {
		return nil
	}
	self := os.Getpid()
	children := map[int][]int{}
	for pid, p := range t {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	seen := map[int]bool{}
	queue := []int{g.pgid}
	for pid, p := range t { // members of the group are roots too
		if p.pgid == g.pgid {
			queue = append(queue, pid)
		}
	}
	for _, pid := range children[self] { // orphans handed to us, if they carry our tag
		if p := t[pid]; pid != g.pgid && p.start >= g.started && p.pgid != g.pgid && hasTag(pid, g.tag) {
			queue = append(queue, pid)
		}
	}
	var out []int
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if p, ok := t[pid]; ok && p.live && p.pgid != g.pgid && pid != self {
			out = append(out, pid)
		}
		queue = append(queue, children[pid]...)
	}
	return out
}

// hasTag reports whether pid's environment holds this run's tag.
func hasTag(pid int, tag string) bool {
	if tag == "" {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := []byte(runTagVar + "=" + tag)
	for _, kv := range bytes.Split(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

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
