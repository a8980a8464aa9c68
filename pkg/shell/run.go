package shell

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"
)

// StreamLimits is what one stream keeps in the final result.
type StreamLimits struct {
	Bytes int
	Lines int
}

// Defaults from SPEC §3.1 "Budgets".
const (
	DefaultKeepBytes = 96 * 1024
	DefaultKeepLines = 4000
	DefaultCapture   = 512 * 1024
	DefaultGrace     = 2 * time.Second
	DefaultWaitDelay = time.Second
)

// RunOptions describes one command run. Zero values take the defaults.
type RunOptions struct {
	Entry          Entry
	Command        string
	Dir            string
	Env            []string      // full environment for the child; nil inherits pi's
	Timeout        time.Duration // 0 = none
	Grace          time.Duration // SIGTERM→SIGKILL grace, default 2s
	Stdout, Stderr io.Writer     // optional live copies (already filtered)
	// Filter, when set, wraps each stream before capture, spill and live
	// copy (redaction happens before truncation). Close flushes it.
	Filter     func(io.Writer) io.WriteCloser
	Keep       StreamLimits // default {96 KiB, 4000}
	Capture    int          // in-memory bound per stream, default 512 KiB; caps Keep.Bytes
	SpillDir   string       // where full output of a truncated stream goes; "" = nowhere
	SpillLabel string       // file name prefix, e.g. "bash"
	OnStart    func(pid int)
	// WaitDelay bounds how long Run keeps reading after the shell exited
	// while something else (a backgrounded grandchild) still holds the
	// pipes; then the group is terminated. Default 1s.
	WaitDelay time.Duration
}

// StreamResult is the bounded final form of one stream.
type StreamResult struct {
	Text       string // the kept part: stdout its head, stderr its tail; whole lines; valid UTF-8
	TotalBytes int64  // of the filtered stream
	TotalLines int64
	Truncated  bool
	Kept       string // "head" | "tail" | "all"
	SpillPath  string // "" unless spilled
	Marker     string // human marker when truncated
}

// Result of Run.
type Result struct {
	ExitCode       int // -1 when killed by a signal, timeout or abort
	Stdout, Stderr StreamResult
	TimedOut       bool
	Aborted        bool // ctx was cancelled (not by Timeout)
	Duration       time.Duration
}

// Run starts the command in its own process group with stdin closed and no
// TTY, drains both pipes concurrently into bounded sinks, and on timeout or
// ctx cancel terminates the whole group (SIGTERM, Grace, SIGKILL, and one
// more SIGKILL sweep after the shell was reaped). A start failure is an
// error; a non-zero exit is not.
//
// Run owns the pipes rather than handing exec.Cmd a writer: then it knows
// whether the pipes reached EOF, which is how it tells "the shell exited
// but a grandchild still holds stdout" (and must be terminated) apart from a
// clean exit. That explicit drain deadline (WaitDelay) does what
// exec.Cmd.WaitDelay would, which cannot report it (a non-zero exit hides
// exec.ErrWaitDelay).
func Run(ctx context.Context, opts RunOptions) (*Result, error) {
	if opts.Entry.Path == "" {
		return nil, errors.New("shell: entry " + opts.Entry.ID + " has no executable path")
	}
	if err := ctx.Err(); err != nil {
		return nil, err // never start what is already cancelled
	}
	if opts.Keep.Bytes <= 0 {
		opts.Keep.Bytes = DefaultKeepBytes
	}
	if opts.Keep.Lines <= 0 {
		opts.Keep.Lines = DefaultKeepLines
	}
	if opts.Capture <= 0 {
		opts.Capture = DefaultCapture
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.WaitDelay <= 0 {
		opts.WaitDelay = DefaultWaitDelay
	}

	argv := Argv(opts.Entry, runtime.GOOS, opts.Command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	// A tag in the environment, inherited by every descendant, is how an
	// orphan that left the process group is told apart from the orphans of
	// another command run by the same process.
	tag := newRunTag()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], runTagVar+"="+tag)
	prepareCmd(cmd, opts.Entry, opts.Command)
	// With *os.File stdio exec starts no copy goroutines, so this only
	// matters if that ever changes; Run's own drain deadline is below.
	cmd.WaitDelay = opts.WaitDelay
	// cmd.Stdin stays nil: exec connects os.DevNull, so stdin is closed.

	outSink := newSink("stdout", false, opts.Keep, opts.Capture, opts.SpillDir, opts.SpillLabel, opts.Stdout)
	errSink := newSink("stderr", true, opts.Keep, opts.Capture, opts.SpillDir, opts.SpillLabel, opts.Stderr)
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	becomeSubreaper()
	began := time.Now()
	startErr := cmd.Start()
	// The parent's write ends must go, or EOF never comes.
	outW.Close()
	errW.Close()
	if startErr != nil {
		outR.Close()
		errR.Close()
		return nil, startErr
	}
	grp := attachGroup(cmd)
	grp.tag = tag
	defer grp.release()
	var timeoutC <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout) // counted from the start, not from OnStart's return
		defer t.Stop()
		timeoutC = t.C
	}
	outF, errF := wrapFilter(opts.Filter, outSink), wrapFilter(opts.Filter, errSink)
	var pumps sync.WaitGroup
	pumps.Add(2)
	go pump(outR, outF, &pumps)
	go pump(errR, errF, &pumps)
	pumpsDone := make(chan struct{})
	go func() { pumps.Wait(); close(pumpsDone) }()
	if opts.OnStart != nil {
		opts.OnStart(grp.groupID()) // after the pumps run: a slow callback must not stall the child
	}

	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()

	res := &Result{}
	var (
		exited, drained bool
		killing, killed bool
		forceArmed      bool
		abandoned       bool
		killDone        chan struct{}    // closed by killGroup
		killSel         <-chan struct{}  // killDone until received, then nil
		drainC          <-chan time.Time // armed when the shell exited before EOF
		forceC          <-chan time.Time // armed when the kill is over but pipes stay open
		abandonC        <-chan time.Time // armed when closing the pipes did not end the pumps
		ctxDone         = ctx.Done()
	)
	startKill := func() {
		if !killing {
			killing, killDone = true, make(chan struct{})
			killSel = killDone
			go killGroup(grp, opts.Grace, killDone)
		}
	}
	for !(exited && (drained || abandoned)) {
		select {
		case <-waitCh:
			exited, waitCh, timeoutC = true, nil, nil
			if !drained {
				drainC = time.After(opts.WaitDelay)
			}
		case <-pumpsDone:
			drained, pumpsDone = true, nil
		case <-timeoutC:
			timeoutC = nil
			if !res.Aborted {
				res.TimedOut = true
				startKill()
			}
		case <-ctxDone:
			ctxDone = nil
			if !exited && !res.TimedOut {
				res.Aborted = true
			}
			startKill()
		case <-drainC:
			// The shell is gone but its group still holds the pipes.
			drainC = nil
			startKill()
		case <-killSel:
			killSel, killed = nil, true
		case <-forceC:
			// Whatever still holds the pipes escaped the group (setsid);
			// closing our read ends unblocks the pumps so Run returns.
			forceC = nil
			outR.Close()
			errR.Close()
			// Where Close cannot interrupt a blocked read (synchronous
			// pipes on windows), stop waiting; the gates below make
			// the pumps' late writes no-ops.
			abandonC = time.After(time.Second)
		case <-abandonC:
			abandoned = true
		}
		if exited && !drained && killed && !forceArmed {
			forceArmed, forceC = true, time.After(100*time.Millisecond)
		}
	}
	if killing {
		<-killDone // the grace may still be running for a lingering member
		grp.kill() // sweep: anything the group forked while dying
	}
	outR.Close()
	errR.Close()
	_ = outF.Close() // shut the gate and flush the filter into the sinks
	_ = errF.Close()
	res.Stdout, res.Stderr = outSink.finish(), errSink.finish()
	res.ExitCode = -1
	if !res.TimedOut && !res.Aborted && cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode() // -1 when signalled
	}
	res.Duration = time.Since(began)
	return res, nil
}

// pump copies one pipe into its filter chain until EOF or until Run closes
// the read end. The writer never fails (see drainWriter), so the pipe never
// backs up into the child.
func pump(r *os.File, w io.Writer, wg *sync.WaitGroup) {
	defer wg.Done()
	buf := make([]byte, 32*1024)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// drainWriter reports success whatever the wrapped writer does; after the
// first error the data is dropped, but the child keeps being drained. It is
// also the gate between a pump and the sinks: once closed, late writes from
// an abandoned pump are dropped instead of racing with finish.
type drainWriter struct {
	mu     sync.Mutex
	w      io.WriteCloser
	err    error
	closed bool
}

func (d *drainWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil && !d.closed {
		if _, err := d.w.Write(p); err != nil {
			d.err = err
		}
	}
	return len(p), nil
}

func (d *drainWriter) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	return d.w.Close()
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func wrapFilter(f func(io.Writer) io.WriteCloser, s *sink) *drainWriter {
	var w io.WriteCloser
	if f != nil {
		w = f(s)
	}
	if w == nil {
		w = nopCloser{s}
	}
	return &drainWriter{w: w}
}

// killGroup runs terminate → grace → kill in the background, so Run keeps
// draining the pipes meanwhile. The grace ends early once the group is
// empty.
func killGroup(grp *procGroup, grace time.Duration, done chan<- struct{}) {
	defer close(done)
	grp.terminate()
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && grp.alive() {
		time.Sleep(20 * time.Millisecond)
	}
	grp.kill()
}
