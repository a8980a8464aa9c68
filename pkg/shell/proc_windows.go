//go:build windows

package shell

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is the job object holding the started command. A job, unlike
// `taskkill /T`, still reaches grandchildren after their parent has exited
// (a backgrounded `sleep &` in Git Bash). When the job cannot be created or
// assigned, taskkill /T /F on the child's pid is the fallback.
type procGroup struct {
	pid  int
	job  windows.Handle
	proc windows.Handle // held open so the pid cannot be reused before release
	tag  string         // unused: the job object already holds every descendant
}

// prepareCmd: no console window, own process group (so a console Ctrl+C
// aimed at pi does not reach the child and vice versa).
func prepareCmd(cmd *exec.Cmd, e Entry, command string) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP,
		HideWindow:    true,
	}
	if e.Dialect == DialectCmd {
		// cmd.exe does not parse the MSVCRT quoting Go applies to argv; with
		// /s /c it strips the first and last quote and runs the rest
		// verbatim, so the command line is built by hand.
		cmd.SysProcAttr.CmdLine = syscall.EscapeArg(e.Path) + ` /d /s /c "` + command + `"`
	}
}

// attachGroup assigns the started child to a new job. Go cannot start it
// suspended, so a grandchild spawned in the first instant escapes the job;
// taskkill /T still reaches it while its parent lives.
func attachGroup(cmd *exec.Cmd) *procGroup {
	g := &procGroup{pid: cmd.Process.Pid}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, uint32(g.pid))
	if err != nil {
		return g
	}
	g.proc = h
	if job, err := windows.CreateJobObject(nil, nil); err == nil {
		if windows.AssignProcessToJobObject(job, h) == nil {
			g.job = job
		} else {
			windows.CloseHandle(job)
		}
	}
	return g
}

func (g *procGroup) groupID() int { return g.pid }

// terminate: windowless console programs have no polite stop signal, so
// terminate is the hard kill; the grace is then simply not needed.
func (g *procGroup) terminate() { g.kill() }

func (g *procGroup) kill() {
	if g.job != 0 {
		if windows.TerminateJobObject(g.job, 1) == nil {
			return
		}
	}
	if g.proc == 0 {
		return // without our handle the pid may belong to someone else by now
	}
	tk := filepath.Join(systemDir(), "taskkill.exe")
	c := exec.Command(tk, "/T", "/F", "/PID", strconv.Itoa(g.pid))
	c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NO_WINDOW, HideWindow: true}
	_ = c.Run()
}

// jobAccounting mirrors JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                       int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime   int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses uint32
	TotalTerminatedProcesses                             uint32
}

func (g *procGroup) alive() bool {
	if g.job == 0 {
		return false
	}
	var info jobAccounting
	err := windows.QueryInformationJobObject(g.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err == nil && info.ActiveProcesses > 0
}

func (g *procGroup) release() {
	for _, h := range []*windows.Handle{&g.job, &g.proc} {
		if *h != 0 {
			windows.CloseHandle(*h)
			*h = 0
		}
	}
}

// systemDir asks Windows for System32 instead of trusting the environment,
// so a planted taskkill.exe elsewhere is never run.
func systemDir() string {
	if d, err := windows.GetSystemDirectory(); err == nil && d != "" {
		return d
	}
	return `C:\Windows\System32`
}

func becomeSubreaper() {}
