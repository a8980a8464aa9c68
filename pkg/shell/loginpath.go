package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// DefaultLoginBudget is the R-BASH-8 budget for the login PATH probe.
const DefaultLoginBudget = 5 * time.Second

// loginShells is the fallback order when $SHELL is unusable.
var loginShells = []string{"/bin/zsh", "/bin/bash", "/bin/sh"}

// loginProbe is the probe command. printf without a newline lets the PATH
// be told apart from anything rc files print before it (see lastLine).
const loginProbe = `printf %s "$PATH"`

// LoginPATH asks the user's login shell for its PATH: a GUI- or
// service-started pi often has a bare PATH, while the user's commands
// expect the one their profile builds (R-BASH-8). It runs
// `$SHELL -lic 'printf %s "$PATH"'` (else /bin/zsh, /bin/bash, /bin/sh)
// with stdin closed, in its own session, and kills the whole group at the
// budget (default 5 s). Any failure, timeout or non-zero exit is an error
// and "" — the caller falls back to the host PATH. On windows it is
// ("", nil). Caching is the caller's business.
func LoginPATH(ctx context.Context, env Env, budget time.Duration) (string, error) {
	env = env.filled()
	if env.GOOS == "windows" {
		return "", nil
	}
	if budget <= 0 {
		budget = DefaultLoginBudget
	}
	sh := ""
	if s := strings.TrimSpace(env.Getenv("SHELL")); s != "" && isAbsFor(env.GOOS, s) && env.IsExec(s) {
		sh = s
	} else {
		for _, c := range loginShells {
			if env.IsExec(c) {
				sh = c
				break
			}
		}
	}
	if sh == "" {
		return "", errors.New("login PATH probe: no login shell ($SHELL, " + strings.Join(loginShells, ", ") + ")")
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	cmd := exec.Command(sh, "-lic", loginProbe)
	prepareCmd(cmd, Entry{Dialect: DialectPOSIX}, "")
	out := &capBuffer{max: 64 * 1024} // a PATH is small; rc noise must not grow memory
	cmd.Stdout = out                  // stdin nil = os.DevNull; stderr nil = discarded
	// A background job started by an rc file may hold stdout: do not wait
	// for it past the kill.
	cmd.WaitDelay = 250 * time.Millisecond
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("login PATH probe: %w", err)
	}
	grp := attachGroup(cmd)
	defer grp.release()
	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()

	var err error
	select {
	case err = <-waitCh:
	case <-ctx.Done():
		grp.kill() // interactive rc files can block forever: no grace
		<-waitCh
		grp.kill()
		return "", fmt.Errorf("login PATH probe: %s -lic did not finish within %s: %w", sh, budget, ctx.Err())
	}
	grp.kill() // sweep whatever the rc files left running in the group
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return "", fmt.Errorf("login PATH probe: %s -lic: %w", sh, err)
	}
	p := lastLine(out.Bytes())
	if !strings.Contains(p, "/") {
		return "", fmt.Errorf("login PATH probe: %s -lic printed no PATH", sh)
	}
	return p, nil
}

// lastLine is the text after the last newline: rc files may print banners,
// but the probe's printf adds no newline, so the PATH is always last (and
// output ending in a newline means the PATH was empty).
func lastLine(b []byte) string {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return strings.TrimSpace(string(b))
}

// capBuffer keeps the last max bytes written and never fails, so a chatty
// rc file cannot block the probe or grow memory.
type capBuffer struct {
	max int
	buf []byte
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	if over := len(c.buf) - c.max; over > 0 {
		c.buf = append(c.buf[:0], c.buf[over:]...)
	}
	return len(p), nil
}

func (c *capBuffer) Bytes() []byte { return c.buf }
