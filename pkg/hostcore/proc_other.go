//go:build !linux

package hostcore

import (
	"fmt"
	"time"
)

// bootID approximates the boot identity from the uptime where no boot id
// file exists: the boot instant rounded to a minute is stable for a boot.
func bootID() string {
	up, err := uptime()
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("boot-%d", time.Now().Add(-up).Unix()/60)
}

func procStart(int) string { return "" }
