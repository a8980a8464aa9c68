//go:build unix

package shell

import (
	"os/exec"
	"syscall"
)

// procGroup is the process group of one started command. On unix its id is
// the child's pid, because the child leads a new session.
type procGroup struct{ pgid int }

// prepareCmd puts the child in a new session (hence a new process group
// with pgid == pid) with no controlling terminal: it can neither read the
// user's TTY nor be hit by the terminal's job-control signals, and one
// kill(-pgid) reaches every descendant that stays in the group.
func prepareCmd(cmd *exec.Cmd, _ Entry, _ string) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

func attachGroup(cmd *exec.Cmd) *procGroup { return &procGroup{pgid: cmd.Process.Pid} }

// groupID is what OnStart reports: the pid, which is also the pgid.
func (g *procGroup) groupID() int { return g.pgid }

// terminate asks the whole group to stop (SIGTERM), leaving time for
// cleanup handlers before kill.
func (g *procGroup) terminate() { _ = syscall.Kill(-g.pgid, syscall.SIGTERM) }

// kill ends the whole group; ESRCH (already gone) is not an error.
func (g *procGroup) kill() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) }

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
