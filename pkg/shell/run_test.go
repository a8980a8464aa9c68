//go:build unix

package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

func bashEntry(t testing.TB) Entry {
	t.Helper()
	e, ok := Lookup(Discover(DefaultEnv()), IDBash)
	if !ok || !e.Available {
		t.Skipf("no bash on this machine: %s", e.Reason)
	}
	return e
}

func run(t *testing.T, o RunOptions) *Result {
	t.Helper()
	if o.Entry.Path == "" {
		o.Entry = bashEntry(t)
	}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run(%q): %v", o.Command, err)
	}
	return r
}

// groupGone waits briefly for no live member of pgid to remain. Zombies
// count as gone: under a PID 1 that does not reap orphans they never leave.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if err == syscall.ESRCH {
			return
		}
		if !groupHasLiveMember(pgid) {
			t.Logf("group %d holds only zombies (init does not reap)", pgid)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live members", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunExitCodesAndStreams(t *testing.T) {
	r := run(t, RunOptions{Command: "echo out; echo err >&2; exit 3"})
	if r.ExitCode != 3 || r.Stdout.Text != "out\n" || r.Stderr.Text != "err\n" || r.TimedOut || r.Aborted {
		t.Fatalf("%+v", r)
	}
	if r.Stdout.Kept != "all" || r.Stdout.Truncated || r.Stdout.TotalLines != 1 || r.Duration <= 0 {
		t.Errorf("stdout %+v", r.Stdout)
	}
	if r := run(t, RunOptions{Command: "true"}); r.ExitCode != 0 || r.Stdout.Text != "" {
		t.Errorf("true: %+v", r)
	}
	if r := run(t, RunOptions{Command: "kill -9 $$"}); r.ExitCode != -1 || r.TimedOut {
		t.Errorf("signalled: %+v", r)
	}
}

func TestRunStartFailure(t *testing.T) {
	r, err := Run(context.Background(), RunOptions{Entry: Entry{ID: IDBash, Path: "/nonexistent/bash", Dialect: DialectPOSIX}, Command: "true"})
	if err == nil || r != nil {
		t.Fatalf("want start error, got %+v", r)
	}
	if _, err := Run(context.Background(), RunOptions{Command: "true"}); err == nil {
		t.Error("entry without path must fail")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, RunOptions{Entry: bashEntry(t), Command: "true"}); err == nil {
		t.Error("cancelled ctx must not start")
	}
}

func TestRunDirEnvStdin(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	r := run(t, RunOptions{Command: `pwd; echo "$FOO"; cat; read x; echo "read=$?"`, Dir: dir,
		Env: []string{"FOO=bar", "PATH=/usr/bin:/bin"}})
	real, _ := filepath.EvalSymlinks(dir)
	if r.Stdout.Text != real+"\nbar\nread=1\n" {
		t.Fatalf("got %q", r.Stdout.Text)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("cat waited on stdin")
	}
}

func TestRunUnicodeAndBinary(t *testing.T) {
	r := run(t, RunOptions{Command: `printf 'héllo 世界 🎉\n'; printf 'bin\377\376\000z\n' >&2`})
	if r.Stdout.Text != "héllo 世界 🎉\n" {
		t.Errorf("unicode %q", r.Stdout.Text)
	}
	if !utf8.ValidString(r.Stderr.Text) || r.Stderr.Text != "bin\uFFFD\x00z\n" || r.Stderr.TotalBytes != 8 {
		t.Errorf("binary %q %d", r.Stderr.Text, r.Stderr.TotalBytes)
	}
}

func TestRunOnStart(t *testing.T) {
	var pid, pgid int
	r := run(t, RunOptions{Command: "sleep 0.2", OnStart: func(p int) {
		pid = p
		pgid, _ = syscall.Getpgid(p)
	}})
	if pid <= 0 || pgid != pid || r.ExitCode != 0 {
		t.Fatalf("pid %d pgid %d", pid, pgid)
	}
}

type upper struct{ w io.Writer }

func (u upper) Write(p []byte) (int, error) { return u.w.Write(bytes.ToUpper(p)) }
func (u upper) Close() error                { return nil }

// holdAll buffers everything until Close, like a redactor that must see
// whole secrets: Run must Close the filter before finishing the capture.
type holdAll struct {
	w   io.Writer
	buf bytes.Buffer
}

func (h *holdAll) Write(p []byte) (int, error) { return h.buf.Write(p) }
func (h *holdAll) Close() error {
	_, err := h.w.Write(bytes.ReplaceAll(h.buf.Bytes(), []byte("secret"), []byte("[redacted]")))
	return err
}

func TestRunFilter(t *testing.T) {
	var live, liveErr bytes.Buffer
	dir := t.TempDir()
	r := run(t, RunOptions{Command: `for i in $(seq 1 50); do echo line$i; done; echo err >&2`,
		Filter: func(w io.Writer) io.WriteCloser { return upper{w} },
		Keep:   StreamLimits{Bytes: 64, Lines: 1000}, SpillDir: dir, SpillLabel: "bash",
		Stdout: &live, Stderr: &liveErr})
	var want strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&want, "LINE%d\n", i)
	}
	if !strings.HasPrefix(want.String(), r.Stdout.Text) || !strings.HasPrefix(r.Stdout.Text, "LINE1\nLINE2\n") {
		t.Errorf("text %q", r.Stdout.Text)
	}
	if got, _ := os.ReadFile(r.Stdout.SpillPath); string(got) != want.String() {
		t.Errorf("spill %q", got)
	}
	if live.String() != want.String() || liveErr.String() != "ERR\n" || r.Stderr.Text != "ERR\n" {
		t.Errorf("live %q / %q, stderr %q", live.String(), liveErr.String(), r.Stderr.Text)
	}
	r = run(t, RunOptions{Command: `printf 'my sec'; printf 'ret here\n'`,
		Filter: func(w io.Writer) io.WriteCloser { return &holdAll{w: w} }})
	if r.Stdout.Text != "my [redacted] here\n" {
		t.Errorf("held filter %q", r.Stdout.Text)
	}
}

// peakHeap samples HeapInuse until stop is closed.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return out
}

func seqText(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func seqBytes(n int) int64 {
	var total int64
	for d, lo := 1, 1; lo <= n; d, lo = d+1, lo*10 {
		hi := min(n, lo*10-1)
		total += int64(hi-lo+1) * int64(d+1)
	}
	return total
}

// TestRunFlood prints ~169 MB on one stream: the kept end must be right,
// the spill complete, and memory flat.
func TestRunFlood(t *testing.T) {
	if _, err := exec.LookPath("seq"); err != nil {
		t.Skip("seq not installed")
	}
	const n = 20_000_000
	for _, stream := range []string{"stdout", "stderr"} {
		t.Run(stream, func(t *testing.T) {
			cmd := fmt.Sprintf("seq 1 %d", n)
			if stream == "stderr" {
				cmd += " >&2"
			}
			dir := t.TempDir()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := make(chan struct{})
			peak := peakHeap(stop)
			r := run(t, RunOptions{Command: cmd, SpillDir: dir, SpillLabel: "bash"})
			close(stop)
			runtime.ReadMemStats(&after)
			grew := int64(<-peak) - int64(before.HeapInuse)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %.1f MB in %v, heap peak +%.1f MB, allocated %.1f MB", stream,
				float64(seqBytes(n))/1e6, r.Duration, float64(grew)/1e6, float64(allocated)/1e6)
			if grew > 16<<20 || allocated > 32<<20 {
				t.Errorf("memory not bounded: heap +%d, allocated %d", grew, allocated)
			}
			s, other := r.Stdout, r.Stderr
			wantText, kept, which := seqText(1, 4000), "head", "first"
			if stream == "stderr" {
				s, other = r.Stderr, r.Stdout
				wantText, kept, which = seqText(n-3999, n), "tail", "last"
			}
			if r.ExitCode != 0 || other.TotalBytes != 0 {
				t.Fatalf("exit %d, other stream %d bytes", r.ExitCode, other.TotalBytes)
			}
			if s.Text != wantText || s.Kept != kept || !s.Truncated {
				t.Fatalf("kept %s %q... (%d bytes)", s.Kept, s.Text[:min(20, len(s.Text))], len(s.Text))
			}
			if s.TotalBytes != seqBytes(n) || s.TotalLines != n {
				t.Errorf("totals %d bytes %d lines", s.TotalBytes, s.TotalLines)
			}
			fi, err := os.Stat(s.SpillPath)
			if err != nil || fi.Size() != s.TotalBytes {
				t.Fatalf("spill %q: %v size %v", s.SpillPath, err, fi)
			}
			for _, m := range []string{
				fmt.Sprintf("kept the %s 4000 of %d lines (", which, n),
				"of 161.1 MiB); limit 96 KiB / 4000 lines; full output: " + s.SpillPath + "]",
			} {
				if !strings.Contains(s.Marker, m) {
					t.Errorf("marker %q lacks %q", s.Marker, m)
				}
			}
			t.Log(s.Marker)
		})
	}
}

func TestRunBothStreamsFlood(t *testing.T) {
	r := run(t, RunOptions{Command: "seq 1 2000000 >&2 & seq 1 2000000; wait", Keep: StreamLimits{Bytes: 1000, Lines: 10}})
	if r.Stdout.Text != seqText(1, 10) || r.Stderr.Text != seqText(1999991, 2000000) {
		t.Fatalf("stdout %q stderr %q", r.Stdout.Text, r.Stderr.Text)
	}
	if !strings.Contains(r.Stdout.Marker, "full output not saved") {
		t.Errorf("marker %q", r.Stdout.Marker)
	}
}

func TestRunTimeoutIgnoringTERM(t *testing.T) {
	var pgid int
	start := time.Now()
	r := run(t, RunOptions{Command: "echo started; trap '' TERM; sleep 100", Timeout: time.Second,
		Grace: 500 * time.Millisecond, OnStart: func(p int) { pgid = p }})
	el := time.Since(start)
	if !r.TimedOut || r.Aborted || r.ExitCode != -1 || r.Stdout.Text != "started\n" {
		t.Fatalf("%+v", r)
	}
	if el > time.Second+500*time.Millisecond+2*time.Second {
		t.Errorf("took %v", el)
	}
	groupGone(t, pgid)
}

func TestRunTimeoutGracefulExitEndsGraceEarly(t *testing.T) {
	start := time.Now()
	r := run(t, RunOptions{Command: "trap 'echo bye; exit 0' TERM; sleep 100 & wait", Timeout: 500 * time.Millisecond,
		Grace: 5 * time.Second})
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("grace not cut short: %v", el)
	}
	if !r.TimedOut || r.ExitCode != -1 || r.Stdout.Text != "bye\n" {
		t.Fatalf("%+v", r)
	}
}

func TestRunBackgroundGrandchildHoldsPipes(t *testing.T) {
	var pgid int
	start := time.Now()
	r := run(t, RunOptions{Command: "sleep 100 & echo hi", OnStart: func(p int) { pgid = p }})
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("hung %v", el)
	}
	if r.ExitCode != 0 || r.TimedOut || r.Aborted || r.Stdout.Text != "hi\n" {
		t.Fatalf("%+v", r)
	}
	groupGone(t, pgid)
}

func TestRunEscapedGrandchildHoldsPipes(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	start := time.Now()
	// setsid leaves our process group, so only closing the pipes frees Run.
	r := run(t, RunOptions{Command: "setsid sleep 3 & echo hi", WaitDelay: 200 * time.Millisecond, Grace: 200 * time.Millisecond})
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("hung %v", el)
	}
	if r.Stdout.Text != "hi\n" {
		t.Fatalf("%+v", r)
	}
}

func TestRunAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var pgid atomic.Int64
	var once sync.Once
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	start := time.Now()
	r, err := Run(ctx, RunOptions{Entry: bashEntry(t), Command: "echo partial; sleep 100", Timeout: time.Minute,
		OnStart: func(p int) { once.Do(func() { pgid.Store(int64(p)) }) }})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Aborted || r.TimedOut || r.ExitCode != -1 || r.Stdout.Text != "partial\n" {
		t.Fatalf("%+v", r)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v", el)
	}
	groupGone(t, int(pgid.Load()))
}
