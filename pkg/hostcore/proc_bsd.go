//go:build unix && !linux && !darwin

package hostcore

import (
	"errors"
	"time"
)

func uptime() (time.Duration, error) { return 0, errors.New("uptime unknown on this platform") }
