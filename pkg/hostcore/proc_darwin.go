//go:build darwin

package hostcore

import (
	"time"

	"golang.org/x/sys/unix"
)

func uptime() (time.Duration, error) {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return 0, err
	}
	return time.Since(time.Unix(tv.Sec, int64(tv.Usec)*1000)), nil
}
