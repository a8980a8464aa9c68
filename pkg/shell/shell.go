// Package shell is pi's command-shell layer: the shell catalog and its
// discovery (R-BASH-6, R-BASH-7), the native non-interactive invocation of
// each dialect (R-BASH-8, R-BASH-10), the login-shell PATH probe, and Run,
// which executes one command in its own process group with bounded capture
// of stdout (head) and stderr (tail), optional spill to disk, and a
// whole-tree kill on timeout or abort (R-BASH-3, R-BASH-4, R-BASH-9).
//
// The package imports nothing else from pi and never prints: callers decide
// what reaches the user. Bash runs unconfined by the OS; nothing here is a
// sandbox.
package shell

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Dialects: how a command string is interpreted.
const (
	DialectPOSIX      = "posix"
	DialectPowerShell = "powershell"
	DialectCmd        = "cmd"
)

// Stable catalog ids. They are the only shell identities pi accepts: no
// arbitrary executable path is ever a shell identity (R-BASH-6).
const (
	IDBash              = "bash"
	IDGitBash           = "git-bash"
	IDWindowsPowerShell = "windows-powershell"
	IDCmd               = "cmd"
)

// Entry is one catalog row.
type Entry struct {
	ID        string `json:"id"`
	Available bool   `json:"available"`
	Path      string `json:"path,omitempty"`   // resolved executable
	Dialect   string `json:"dialect"`          // DialectPOSIX, DialectPowerShell or DialectCmd
	Reason    string `json:"reason,omitempty"` // why unavailable (install guidance for bash)
}

// Env abstracts the machine so discovery can be driven by tests without
// touching the real one. Zero fields are filled from DefaultEnv.
type Env struct {
	GOOS     string                       // runtime.GOOS by default
	Getenv   func(string) string          // os.Getenv by default
	LookPath func(string) (string, error) // exec.LookPath by default
	IsExec   func(path string) bool       // regular file with an exec bit (windows: regular file)
}

// DefaultEnv is the real machine.
func DefaultEnv() Env {
	return Env{GOOS: runtime.GOOS, Getenv: os.Getenv, LookPath: exec.LookPath, IsExec: isExecutable}
}

// filled returns env with every nil/empty field taken from DefaultEnv, so a
// partially built Env never panics.
func (env Env) filled() Env {
	d := DefaultEnv()
	if env.GOOS == "" {
		env.GOOS = d.GOOS
	}
	if env.Getenv == nil {
		env.Getenv = d.Getenv
	}
	if env.LookPath == nil {
		env.LookPath = d.LookPath
	}
	if env.IsExec == nil {
		env.IsExec = d.IsExec
	}
	return env
}

// isExecutable follows symlinks: a symlinked /bin/bash (usr-merge) is fine.
// On windows there is no exec bit, so existing as a regular file is enough.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if runtime.GOOS == "windows" {
		return true
	}
	return fi.Mode().Perm()&0o111 != 0
}

// ErrNoShell is returned (wrapped) by Effective when no catalog entry is
// available. Its text is the install guidance.
var ErrNoShell = errors.New("no command shell is available: install bash " +
	"(Unix: your package manager, e.g. apt install bash / brew install bash; " +
	"Windows: Git for Windows from https://git-scm.com/download/win), " +
	"or set PI_DESKTOP_BASH to the absolute path of a bash executable")

// KnownID reports whether id is one of the four stable ids, whatever the
// platform. A known id may still be absent from this platform's catalog.
func KnownID(id string) bool {
	switch id {
	case IDBash, IDGitBash, IDWindowsPowerShell, IDCmd:
		return true
	}
	return false
}

// Discover lists every catalog id of env's platform, in the platform's
// order: unix [bash]; windows [git-bash, windows-powershell, cmd].
func Discover(env Env) []Entry {
	env = env.filled()
	if env.GOOS != "windows" {
		e := Entry{ID: IDBash, Dialect: DialectPOSIX}
		if p, err := FindBash(env); err == nil {
			e.Available, e.Path = true, p
		} else {
			e.Reason = err.Error()
		}
		return []Entry{e}
	}
	gb := Entry{ID: IDGitBash, Dialect: DialectPOSIX}
	if p, err := FindBash(env); err == nil {
		gb.Available, gb.Path = true, p
	} else {
		gb.Reason = err.Error()
	}
	// PowerShell and cmd are taken only from the system directory, never
	// from PATH: a PATH entry must not be able to impersonate them.
	sys := systemRoot(env)
	ps := systemEntry(env, IDWindowsPowerShell, DialectPowerShell,
		winJoin(sys, "System32", "WindowsPowerShell", "v1.0", "powershell.exe"))
	cmd := systemEntry(env, IDCmd, DialectCmd, winJoin(sys, "System32", "cmd.exe"))
	return []Entry{gb, ps, cmd}
}

func systemRoot(env Env) string {
	for _, k := range []string{"SystemRoot", "windir"} {
		if v := strings.TrimSpace(env.Getenv(k)); v != "" {
			return v
		}
	}
	return `C:\Windows`
}

func systemEntry(env Env, id, dialect, path string) Entry {
	e := Entry{ID: id, Dialect: dialect}
	if env.IsExec(path) {
		e.Available, e.Path = true, path
	} else {
		e.Reason = fmt.Sprintf("%s not found", path)
	}
	return e
}

// Lookup finds id in entries.
func Lookup(entries []Entry, id string) (Entry, bool) {
	for _, e := range entries {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

// Effective is the entry for defaultID if it is available, else the
// platform's first available entry (R-BASH-6 fallback). With none available
// the error wraps ErrNoShell and carries each entry's reason.
func Effective(entries []Entry, defaultID string) (Entry, error) {
	if e, ok := Lookup(entries, defaultID); ok && e.Available {
		return e, nil
	}
	var reasons []string
	for _, e := range entries {
		if e.Available {
			return e, nil
		}
		if e.Reason != "" {
			reasons = append(reasons, e.ID+": "+e.Reason)
		}
	}
	if len(reasons) == 0 {
		return Entry{}, ErrNoShell
	}
	return Entry{}, fmt.Errorf("%w (%s)", ErrNoShell, strings.Join(reasons, "; "))
}

// Argv is the native non-interactive invocation of command by e.
// bash on unix runs as a login shell (-lc) so the user's profile PATH
// applies (R-BASH-8); bash on windows (Git Bash) runs -c; PowerShell and
// cmd use their documented non-interactive switches (R-BASH-10).
func Argv(e Entry, goos, command string) []string {
	switch e.Dialect {
	case DialectPowerShell:
		return []string{e.Path, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", command}
	case DialectCmd:
		return []string{e.Path, "/d", "/s", "/c", command}
	}
	if goos == "windows" {
		return []string{e.Path, "-c", command}
	}
	return []string{e.Path, "-lc", command}
}

// runTagVar names the environment variable that marks a command's descendants.
const runTagVar = "PI_RUN_TAG"

func newRunTag() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
