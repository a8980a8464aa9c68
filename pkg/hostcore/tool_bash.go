package hostcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore/redact"
	"github.com/pi-cli/pi/pkg/hostcore/store"
	"github.com/pi-cli/pi/pkg/shell"
)

// BashArgs are Bash's arguments (SPEC §3.1, R-BASH-2, R-BASH-6).
type BashArgs struct {
	Command string `json:"command"`
	Timeout *int   `json:"timeout,omitempty"`
	Shell   string `json:"shell,omitempty"`
}

// BashContent is Bash's result content.
type BashContent struct {
	ExitCode       int    `json:"exitCode"`
	Stdout         string `json:"stdout"`
	Stderr         string `json:"stderr"`
	Truncated      bool   `json:"truncated"`
	TimedOut       bool   `json:"timedOut"`
	Aborted        bool   `json:"aborted,omitempty"`
	SpillPath      string `json:"spillPath,omitempty"`
	StderrSpill    string `json:"stderrSpillPath,omitempty"`
	StdoutBytes    int64  `json:"stdoutBytes"`
	StderrBytes    int64  `json:"stderrBytes"`
	CommandShellID string `json:"commandShellId"`
	DurationMs     int64  `json:"durationMs"`
}

const (
	bashDefaultTimeout = 60
	bashMaxTimeout     = 300
)

func (h *Host) bashTool() *ToolDef {
	return &ToolDef{
		Name: "Bash", Description: "Run a non-interactive shell command in the workspace", Risk: RiskHigh, Kind: KindExec,
		NeedsRoot: true,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{
 "command":{"type":"string","description":"the command line, run by the session's pinned shell"},
 "timeout":{"type":"integer","minimum":1,"maximum":300,"default":60,"description":"seconds"},
 "shell":{"type":"string","enum":["bash","git-bash","windows-powershell","cmd"],"description":"the catalog id this call expects (must match the turn's pinned shell)"}}}`),
		NewArgs: func() any { return &BashArgs{} },
		Validate: func(a any) error {
			b := a.(*BashArgs)
			if strings.TrimSpace(b.Command) == "" {
				return Errf(InvalidArgument, "Bash needs a command")
			}
			return inRange("timeout (seconds)", b.Timeout, 1, bashMaxTimeout)
		},
		Redact: func(a any) string {
			b := a.(*BashArgs)
			s := b.Command
			if b.Shell != "" {
				s = "[" + b.Shell + "] " + s
			}
			return redactClip(s)
		},
		Run: h.runBash,
	}
}

func (h *Host) shellEnv() shell.Env { return shell.DefaultEnv() }

// pinShell pins the effective shell of a turn (R-BASH-6): the configured
// default if available, else the platform's first available entry.
func (h *Host) pinShell(ctx context.Context, s *store.Session) {
	s.ShellID, s.ShellDialect, s.ShellPath = "", "", ""
	e, err := shell.Effective(shell.Discover(h.shellEnv()), h.Cfg.DefaultCommandShell)
	if err != nil {
		return
	}
	s.ShellID, s.ShellDialect, s.ShellPath = e.ID, e.Dialect, e.Path
}

// CheckShellID validates a catalog id for this platform (setting and --shell).
func (h *Host) CheckShellID(id string) (shell.Entry, error) {
	if !shell.KnownID(id) {
		return shell.Entry{}, Errf(CommandShellInvalid, "unknown shell id %q (bash, git-bash, windows-powershell, cmd)", id)
	}
	e, ok := shell.Lookup(shell.Discover(h.shellEnv()), id)
	if !ok {
		return shell.Entry{}, Errf(CommandShellInvalid, "shell %q is not part of the %s catalog", id, runtime.GOOS)
	}
	if !e.Available {
		return shell.Entry{}, Errf(CommandShellInvalid, "shell %q is not available here: %s", id, e.Reason)
	}
	return e, nil
}

// ShellList is the content of `pi shell list`.
type ShellList struct {
	Shells    []ShellRow `json:"shells"`
	Effective string     `json:"effective"`
	Pinned    string     `json:"pinned,omitempty"`
}

// ShellRow is one catalog entry.
type ShellRow struct {
	shell.Entry
	Default bool `json:"default"`
}

// ListShells shows the catalog with availability and the effective default.
func (h *Host) ListShells(ctx context.Context, sessionID string) (*ShellList, error) {
	entries := shell.Discover(h.shellEnv())
	out := &ShellList{Shells: []ShellRow{}}
	eff, err := shell.Effective(entries, h.Cfg.DefaultCommandShell)
	if err == nil {
		out.Effective = eff.ID
	}
	for _, e := range entries {
		out.Shells = append(out.Shells, ShellRow{Entry: e, Default: e.ID == out.Effective})
	}
	if sessionID != "" {
		if s, err := h.Session(ctx, sessionID); err == nil {
			out.Pinned = s.ShellID
		}
	}
	return out, nil
}

// resolveShell applies CLI.md's order: an id unknown or unavailable here is
// COMMAND_SHELL_INVALID; then an id other than the turn's pin, or a pinned
// entry that now resolves to another executable or dialect, is
// COMMAND_SHELL_CHANGED. No executable path is ever taken from the caller.
func (h *Host) resolveShell(s *store.Session, want string) (shell.Entry, error) {
	if want != "" {
		if _, err := h.CheckShellID(want); err != nil {
			return shell.Entry{}, err
		}
	}
	if s.ShellID == "" {
		_, err := shell.FindBash(h.shellEnv())
		return shell.Entry{}, Wrap(ShellNotFound, err, "no command shell was available when this turn started")
	}
	if want != "" && want != s.ShellID {
		return shell.Entry{}, Errf(CommandShellChanged, "this turn's shell is %s, not %s; start a new turn (pi session turn) to change it", s.ShellID, want)
	}
	cur, ok := shell.Lookup(shell.Discover(h.shellEnv()), s.ShellID)
	if !ok || !cur.Available {
		reason := ""
		if ok {
			reason = cur.Reason
		}
		return shell.Entry{}, Errf(ShellNotFound, "the pinned shell %s is no longer available: %s", s.ShellID, reason)
	}
	if cur.Path != s.ShellPath || cur.Dialect != s.ShellDialect {
		return shell.Entry{}, Errf(CommandShellChanged, "the pinned shell %s now resolves to %s (%s), not %s (%s); start a new turn",
			s.ShellID, cur.Path, cur.Dialect, s.ShellPath, s.ShellDialect)
	}
	return cur, nil
}

func (h *Host) runBash(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*BashArgs)
	s := env.Session
	entry, err := h.resolveShell(s, args.Shell)
	if err != nil {
		return nil, err
	}
	// The workspace is re-checked by identity before anything runs in it.
	root, _, err := env.Roots.Reopen(&Resolved{Class: ClassWorkspace, Rel: "."}, false)
	if err != nil {
		return nil, err
	}
	root.Close()
	scratch := h.ScratchDir(s.ID)
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, Wrap(ToolFailed, err, "create scratch dir")
	}
	timeout := orDefault(args.Timeout, bashDefaultTimeout)
	actx, stopWatch := h.watchAbort(ctx, s)
	defer stopWatch()
	res, err := shell.Run(actx, shell.RunOptions{
		Entry: entry, Command: args.Command, Dir: s.WorkspaceRoot, Env: h.childEnv(ctx, scratch),
		Timeout: time.Duration(timeout) * time.Second, Stdout: env.Stdout, Stderr: env.Stderr,
		Filter: redact.NewWriter,
		Keep:   shell.StreamLimits{Bytes: h.Cfg.BashKeepBytes, Lines: h.Cfg.BashKeepLines}, Capture: h.Cfg.BashCaptureBytes,
		SpillDir: filepath.Join(scratch, "tool-output"), SpillLabel: "bash",
		OnStart: func(pid int) { h.noteChildGroup(context.WithoutCancel(ctx), env.Call.ToolCallID, pid) },
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, Errf(ToolAborted, "stopped before the command started")
		}
		return nil, Wrap(ToolFailed, err, "start %s", entry.ID)
	}
	c := &BashContent{ExitCode: res.ExitCode, Stdout: withMarker(res.Stdout, false), Stderr: withMarker(res.Stderr, true),
		Truncated: res.Stdout.Truncated || res.Stderr.Truncated, TimedOut: res.TimedOut, SpillPath: res.Stdout.SpillPath,
		StderrSpill: res.Stderr.SpillPath, StdoutBytes: res.Stdout.TotalBytes, StderrBytes: res.Stderr.TotalBytes,
		CommandShellID: entry.ID, DurationMs: res.Duration.Milliseconds()}
	if c.SpillPath == "" {
		c.SpillPath = c.StderrSpill
	}
	out := &Outcome{Content: c}
	switch {
	case errors.Is(context.Cause(actx), errAborted):
		c.Aborted = true
		return out, Errf(ToolAborted, "the command was stopped: the session was aborted")
	case res.TimedOut:
		return out, Errf(ToolTimeout, "the command did not finish within %ds; its process tree was killed", timeout)
	case res.Aborted:
		c.Aborted = true
		return out, Errf(ToolAborted, "the command was interrupted; its process tree was killed")
	case res.ExitCode != 0:
		return out, Errf(ToolFailed, "the command exited with status %d", res.ExitCode)
	}
	return out, nil
}

func withMarker(s shell.StreamResult, tail bool) string {
	if !s.Truncated || s.Marker == "" {
		return s.Text
	}
	if tail {
		return s.Marker + "\n" + s.Text
	}
	if s.Text != "" && !strings.HasSuffix(s.Text, "\n") {
		return s.Text + "\n" + s.Marker
	}
	return s.Text + s.Marker
}

// noteChildGroup records the child's process group, so that an abort can
// still kill it if this process is stuck.
func (h *Host) noteChildGroup(ctx context.Context, toolCallID string, pgid int) {
	_ = h.DB.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE running SET child_pgid = ? WHERE tool_call_id = ? AND pid = ?`, pgid, toolCallID, h.PID)
		return err
	})
}

// childEnv is pi's environment with PI_SCRATCH_DIR and the login shell's
// PATH in front of the host PATH (R-BASH-8, R-PATH-6).
func (h *Host) childEnv(ctx context.Context, scratch string) []string {
	env := os.Environ()
	out := env[:0:0]
	hostPath := os.Getenv("PATH")
	for _, kv := range env {
		if strings.HasPrefix(kv, "PI_SCRATCH_DIR=") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		out = append(out, kv)
	}
	path := mergePath(h.loginPATH(ctx), hostPath)
	return append(out, "PATH="+path, "PI_SCRATCH_DIR="+scratch)
}

func mergePath(first, second string) string {
	seen := map[string]bool{}
	var parts []string
	for _, p := range append(filepath.SplitList(first), filepath.SplitList(second)...) {
		if p != "" && !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, string(os.PathListSeparator))
}

// loginPATHTTL bounds how long a probed login PATH is trusted.
const loginPATHTTL = 10 * time.Minute

// loginPATH probes the login shell's PATH once and caches it in the store
// (best effort: any failure falls back to the host PATH).
func (h *Host) loginPATH(ctx context.Context) string {
	if runtime.GOOS == "windows" || os.Getenv("PI_NO_LOGIN_PATH") != "" {
		return ""
	}
	key := "loginPATH:" + os.Getenv("SHELL")
	if v, err := h.DB.DeviceState(ctx, key); err == nil && v != "" {
		if at, p, ok := strings.Cut(v, "|"); ok {
			var ms int64
			fmt.Sscan(at, &ms)
			if h.Now().Sub(time.UnixMilli(ms)) < loginPATHTTL {
				return p
			}
		}
	}
	p, err := shell.LoginPATH(ctx, h.shellEnv(), shell.DefaultLoginBudget)
	if err != nil {
		p = ""
	}
	_ = h.DB.SetDeviceState(context.WithoutCancel(ctx), key, fmt.Sprintf("%d|%s", h.Now().UnixMilli(), p))
	return p
}

// patchCommand recognises shell patch commands for the retry budget (R-MUT-3).
var patchCommand = regexp.MustCompile(`(^|[;&|(\s])(apply_patch|git\s+apply|patch)(\s|$)`)
