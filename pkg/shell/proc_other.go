//go:build !unix && !windows

package shell

import "os/exec"

// Platforms without process groups (js, wasip1, plan9): Run can still start
// a command but can only kill the direct child.
type procGroup struct {
	cmd *exec.Cmd
	tag string
}

func prepareCmd(*exec.Cmd, Entry, string) {}

func attachGroup(cmd *exec.Cmd) *procGroup { return &procGroup{cmd: cmd} }
func (g *procGroup) groupID() int          { return g.cmd.Process.Pid }
func (g *procGroup) terminate()            { g.kill() }
func (g *procGroup) kill()                 { _ = g.cmd.Process.Kill() }
func (g *procGroup) alive() bool           { return false }
func (g *procGroup) release()              {}
func becomeSubreaper()                     {}
