//go:build unix

package shell

import (
	"os/exec"
	"syscall"
)

// procGroup is the process group of one started command. On unix its id is
// the child's pid, because the child leads a new session.
type procGroup struct {
	pgid    int
	started int64  // clock ticks since boot when the command started (Linux)
	tag     string // PI_RUN_TAG value inherited by every descendant
}

// prepareCmd puts the child in a new session (hence a new process group
// with pgid == pid) with no controlling terminal: it can neither read the
// user's TTY nor be hit by the terminal's job-control signals, and one
// kill(-pgid) reaches every descendant that stays in the group.
func prepareCmd(cmd *exec.Cmd, _ Entry, _ string) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

func attachGroup(cmd *exec.Cmd) *procGroup {
	return &procGroup{pgid: cmd.Process.Pid, started: startTicks(cmd.Process.Pid)}
}

// groupID is what OnStart reports: the pid, which is also the pgid.
func (g *procGroup) groupID() int { return g.pgid }

// terminate asks the whole group to stop (SIGTERM), leaving time for
// cleanup handlers before kill.
// Descendants that left the group (setsid, setpgid) are signalled one by one:
// R-BASH-9 says the whole tree, not the whole group.
func (g *procGroup) terminate() { g.signal(syscall.SIGTERM) }

// kill ends the whole group and every escaped descendant; ESRCH (already
// gone) is not an error.
func (g *procGroup) kill() { g.signal(syscall.SIGKILL) }

func (g *procGroup) signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
	for _, pid := range escapees(g) {
		_ = syscall.Kill(pid, sig)
	}
}

// alive reports whether any member of the group is still running. kill(0)
// also succeeds for zombies, which linger forever under an init that does
// not reap orphans (common in containers), so a positive answer is checked
// against the process table where the platform exposes one.
func (g *procGroup) alive() bool {
	if err := syscall.Kill(-g.pgid, 0); err == syscall.ESRCH {
		return false
	}
	return groupHasLiveMember(g.pgid)
}

func (g *procGroup) release() {}
