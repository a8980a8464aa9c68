//go:build linux

package hostcore

import (
	"os"
	"strconv"
	"strings"
)

// bootID identifies this boot of the machine (R-PLAN-6: the host's generation).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// procStart returns a token for when pid started, so a reused pid is not
// mistaken for the original waiter ("" if unknown).
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22: starttime in clock ticks since boot
}
