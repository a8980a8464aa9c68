//go:build windows

package hostcore

import (
	"syscall"
	"time"
)

var (
	kernel32        = syscall.NewLazyDLL("kernel32.dll")
	getTickCount64  = kernel32.NewProc("GetTickCount64")
	procOpenProcess = kernel32.NewProc("OpenProcess")
	procGetExitCode = kernel32.NewProc("GetExitCodeProcess")
)

func uptime() (time.Duration, error) {
	r, _, _ := getTickCount64.Call()
	return time.Duration(r) * time.Millisecond, nil
}

func pidAlive(pid int) bool {
	const queryLimited = 0x1000
	h, _, _ := procOpenProcess.Call(queryLimited, 0, uintptr(pid))
	if h == 0 {
		return false
	}
	defer syscall.CloseHandle(syscall.Handle(h))
	var code uint32
	r, _, _ := procGetExitCode.Call(h, uintptr(unsafePointer(&code)))
	return r != 0 && code == 259 // STILL_ACTIVE
}
