//go:build unix

package hostcore

import (
	"errors"
	"syscall"
)

// pidAlive reports whether a process with pid exists (EPERM still means it
// exists, owned by someone else).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
