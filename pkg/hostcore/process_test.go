//go:build unix

package hostcore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// Real processes: the pi binary is built once per test run. It goes next to
// the test binary, in the work dir that `go test` deletes afterwards, so no
// TestMain is needed to clean it up.
var (
	exPiOnce sync.Once
	exPiPath string
	exPiErr  error
)

func exPi(t *testing.T) string {
	t.Helper()
	exSkipNonUnix(t)
	exPiOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			exPiErr = fmt.Errorf("no go tool to build pi: %w", err)
			return
		}
		parent := ""
		if exe, err := os.Executable(); err == nil {
			parent = filepath.Dir(exe)
		}
		dir, err := os.MkdirTemp(parent, "pi-bin-")
		if err != nil {
			if dir, err = os.MkdirTemp("", "pi-bin-"); err != nil {
				exPiErr = err
				return
			}
		}
		exPiPath = filepath.Join(dir, "pi")
		cmd := exec.Command(goBin, "build", "-o", exPiPath, "github.com/pi-cli/pi")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			exPiErr = fmt.Errorf("go build pi: %v\n%s", err, out)
		}
	})
	if exPiErr != nil {
		if errors.Is(exPiErr, exec.ErrNotFound) {
			t.Skip(exPiErr)
		}
		t.Fatal(exPiErr)
	}
	return exPiPath
}

// exPiEnv is a clean environment for pi children: the test's data dir and
// session, JSON output, no user settings, no login-shell probe.
func exPiEnv(t *testing.T, data, sid string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PI_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "PI_DATA_DIR="+data, "PI_SESSION="+sid, "PI_OUTPUT=json", "PI_NO_LOGIN_PATH=1",
		"XDG_CONFIG_HOME="+t.TempDir())
}

// exRunPi runs pi to completion and decodes its envelope.
func exRunPi(t *testing.T, env []string, args ...string) (map[string]any, int) {
	t.Helper()
	cmd := exec.Command(exPi(t), args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("pi %v: %v", args, err)
	}
	var m map[string]any
	if jerr := json.Unmarshal(out.Bytes(), &m); jerr != nil {
		t.Fatalf("pi %v (exit %d): not one JSON envelope: %v\nstdout: %.500s\nstderr: %.500s", args, code, jerr, out.String(), errb.String())
	}
	return m, code
}

// exProcGone reports whether pid no longer runs. A zombie counts as gone:
// under an init that does not reap orphans (containers) it lingers forever.
func exProcGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return runtime.GOOS == "linux" // exited between the two checks
	}
	i := bytes.LastIndexByte(b, ')')
	f := bytes.Fields(b[i+1:])
	return len(f) > 0 && (string(f[0]) == "Z" || string(f[0]) == "X")
}

func exWaitGone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if exProcGone(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return exProcGone(pid)
}

// exPidFile waits for a command to write its child's pid, and makes sure
// that child does not outlive the test whatever pi does with it.
func exPidFile(t *testing.T, p string, within time.Duration, done <-chan struct{}) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil && pid > 1 {
				t.Cleanup(func() {
					if !exProcGone(pid) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
				return pid
			}
		}
		select {
		case <-done:
			t.Fatalf("the command ended before writing %s", p)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no pid in %s after %s", p, within)
	return 0
}

// exContent is size bytes of text that differ from every other tag's.
func exContent(tag string, size int) []byte {
	line := []byte(fmt.Sprintf("%s: the quick brown fox jumps over the lazy dog\n", tag))
	b := bytes.Repeat(line, size/len(line)+1)
	return b[:size]
}

// kill -9 in the middle of `pi tool write`: the file is always exactly the
// old or exactly the new content, and the store stays usable. Most rounds
// count the random delay from the start of the process, which mostly lands
// before the write (pi spends seconds on 20-50 MB of JSON first); four
// rounds count it from the moment the temp file appears or, in turn,
// from the moment big.txt is replaced, to land in the fsync, the rename and
// the bookkeeping after it.
func TestProcessKillDuringWrite(t *testing.T) {
	pi := exPi(t)
	h, sid, data, ws := exSetup(t, hostcore.PermAuto)
	env := exPiEnv(t, data, sid)
	target := filepath.Join(ws, "big.txt")
	cur := []byte("the original small content\n")
	exWriteFile(t, target, cur)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds := 30
	killed := map[int]bool{}
	var landedNoRecord, stayed, landed, completed int
	var aimedTime, otherTime time.Duration
	for i := range rounds {
		size := 20<<20 + rng.IntN(30<<20+1)
		next := exContent(fmt.Sprintf("round %02d", i), size)
		aim := i%7 == 6
		aimReplace := aim && (i/7)%2 == 1
		roundStart := time.Now()
		before, err := os.Stat(target)
		if err != nil {
			t.Fatal(err)
		}

		cmd := exec.Command(pi, "tool", "write", "big.txt")
		cmd.Env = env
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		go func() { _, _ = stdin.Write(next); stdin.Close() }()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()

		var werr error
		exited := false
		if aim {
			// Wait until the atomic write has begun.
		poll:
			for {
				select {
				case werr = <-done:
					exited = true
					break poll
				case <-time.After(time.Millisecond):
				}
				if aimReplace {
					if fi, err := os.Stat(target); err == nil && !os.SameFile(fi, before) {
						break poll
					}
					continue
				}
				ents, _ := os.ReadDir(ws)
				for _, e := range ents {
					if strings.HasPrefix(e.Name(), ".big.txt.pi-tmp-") {
						break poll
					}
				}
			}
		}
		if !exited {
			select {
			case werr = <-done:
				exited = true
			case <-time.After(time.Duration(rng.IntN(151)) * time.Millisecond):
				_ = cmd.Process.Signal(syscall.SIGKILL)
				werr = <-done
			}
		}
		var ee *exec.ExitError
		wasKilled := errors.As(werr, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()
		if wasKilled {
			killed[pid] = true
		} else {
			completed++
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil || m["ok"] != true {
				t.Fatalf("round %d: write finished without being killed but failed: %v %.300s", i, werr, out.String())
			}
		}

		got, err := os.ReadFile(target)
		if err != nil {
			t.Fatalf("round %d: big.txt: %v", i, err)
		}
		switch {
		case bytes.Equal(got, cur):
			stayed++
			if !wasKilled {
				t.Fatalf("round %d: a completed write left the old content", i)
			}
		case bytes.Equal(got, next):
			landed++
			rows, err := h.DB.Changes(context.Background(), hostcore.ReviewFilter{SessionID: sid, Path: "big.txt"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 || rows[0].AfterHash != exSHA(next) {
				landedNoRecord++
				if !wasKilled {
					t.Errorf("round %d: completed write has no review record", i)
				}
			}
			cur = next
		default:
			t.Fatalf("round %d (killed=%v): big.txt is %d bytes, neither the old (%d) nor the new (%d) content",
				i, wasKilled, len(got), len(cur), len(next))
		}
		if aim {
			aimedTime += time.Since(roundStart)
		} else {
			otherTime += time.Since(roundStart)
		}

		// The store is consistent and every provisional audit row left
		// behind belongs to a process that was killed.
		var integrity string
		if err := h.DB.SQL().QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
			t.Fatalf("round %d: integrity_check %q %v", i, integrity, err)
		}
		rows, err := h.DB.SQL().Query(`SELECT pid FROM audit WHERE state = 'running'`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var p int
			if err := rows.Scan(&p); err != nil {
				t.Fatal(err)
			}
			if !killed[p] {
				t.Errorf("round %d: audit row left running by pid %d, which was not killed", i, p)
			}
		}
		rows.Close()
	}
	ents, _ := os.ReadDir(ws)
	var leftovers []string
	for _, e := range ents {
		if e.Name() != "big.txt" {
			leftovers = append(leftovers, e.Name())
		}
	}
	t.Logf("%d rounds: %d killed (%d left the old content, %d the new), %d completed; %d landed without a review record; leftover temp files: %d",
		rounds, len(killed), stayed, landed-completed, completed, landedNoRecord, len(leftovers))
	t.Logf("aimed rounds took %s, the others %s", aimedTime.Round(time.Millisecond), otherTime.Round(time.Millisecond))

	// Whatever was killed, the session is not wedged and the CLI works.
	m, code := exRunPi(t, env, "tool", "write", "big.txt", "--content", "final\n")
	if code != 0 || m["ok"] != true {
		t.Fatalf("write after the kills: exit %d %v", code, m)
	}
	if b, _ := os.ReadFile(target); string(b) != "final\n" {
		t.Fatalf("final write: %q", b)
	}
	m, code = exRunPi(t, env, "audit", "list", "--limit", "1000")
	if code != 0 || m["ok"] != true {
		t.Fatalf("pi audit list: exit %d %v", code, m)
	}
	if rows, _ := exGet(m, "content.rows").([]any); len(rows) != rounds+1 {
		// Rounds killed before their first audit write leave no row.
		t.Logf("pi audit list: %d rows for %d calls", len(rows), rounds+1)
	}
	m, code = exRunPi(t, env, "review", "list")
	if code != 0 || m["ok"] != true {
		t.Fatalf("pi review list: exit %d %v", code, m)
	}
	if ch, _ := exGet(m, "content.changes").([]any); len(ch) < completed+1 {
		t.Errorf("pi review list: %d records, want at least %d", len(ch), completed+1)
	}
}

// A 1 GiB flood on each stream at once through Bash: the envelope keeps
// stdout's head and stderr's tail without mixing them, each spill file holds
// every byte of its stream, and memory stays bounded.
func TestProcessBashFloodBoundedMemory(t *testing.T) {
	exSkipNonUnix(t)
	if testing.Short() {
		t.Skip("1 GiB per stream; skipped with -short")
	}
	const total = 1 << 30
	// Lines of 100 bytes: the redaction filter works per line, so `yes`'s
	// two-byte lines would cost ~25 s per GiB without testing anything more.
	// 2^30 is not a multiple of 100: each stream ends in a partial line.
	line := strings.Repeat("y", 99)
	unit := line + "\n"
	streamAt := func(from, to int) string { // bytes [from, to) of either stream
		var b strings.Builder
		for k := from; k < to; k++ {
			b.WriteByte(unit[k%len(unit)])
		}
		return b.String()
	}
	firstBytes, lastBytes := streamAt(0, 250), streamAt(total-250, total)
	flood := fmt.Sprintf("yes %s | head -c %d", line, total)
	command := fmt.Sprintf("{ %s; } & %s >&2; wait", flood, flood)

	h := exOpen(t, exDir(t))
	sid := exSession(t, h, exDir(t), hostcore.PermAuto)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseSys := ms.HeapInuse, ms.Sys
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	r := exCall(t, h, sid, "Bash", map[string]any{"command": command, "timeout": 300})
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	env := exWant(t, r, "") // truncation is never an error
	c, _ := env["content"].(map[string]any)
	for _, k := range []string{"spillPath", "stderrSpillPath"} {
		if p, ok := c[k].(string); ok {
			defer os.Remove(p)
		}
	}
	heapDelta := int64(peak.Load()) - int64(baseHeap)
	t.Logf("2 × 1 GiB in %s, peak heap +%d KB, sys +%d KB", time.Since(t0).Round(time.Millisecond),
		heapDelta>>10, (int64(ms.Sys)-int64(baseSys))>>10)
	if heapDelta > 64<<20 {
		t.Errorf("heap grew by %d MB during the flood (limit 64 MB)", heapDelta>>20)
	}
	if c["truncated"] != true {
		t.Errorf("truncated = %v", c["truncated"])
	}
	if c["spillPath"] == c["stderrSpillPath"] {
		t.Errorf("both streams spilled to %v", c["spillPath"])
	}
	for _, s := range []struct{ stream, spillKey string }{{"stdout", "spillPath"}, {"stderr", "stderrSpillPath"}} {
		if c[s.stream+"Bytes"] != float64(total) {
			t.Errorf("%sBytes = %v, want %d", s.stream, c[s.stream+"Bytes"], total)
		}
		kept, _ := c[s.stream].(string)
		if len(kept) > 96*1024+1024 || len(kept) < 1024 {
			t.Errorf("%s keeps %d bytes", s.stream, len(kept))
		}
		if strings.Count(kept, "[pi: ") != 1 {
			t.Errorf("%s holds %d markers", s.stream, strings.Count(kept, "[pi: "))
		}
		if s.stream == "stdout" {
			if !strings.HasPrefix(kept, firstBytes) || !strings.Contains(kept, "[pi: stdout truncated: kept the first") {
				t.Errorf("stdout does not keep its head with a marker: %.200q … %.300q", kept, kept[max(0, len(kept)-300):])
			}
		} else {
			if !strings.HasPrefix(kept, "[pi: stderr truncated: kept the last") || !strings.HasSuffix(kept, lastBytes) {
				t.Errorf("stderr does not keep its tail behind a marker: %.300q … %.100q", kept, kept[max(0, len(kept)-100):])
			}
		}
		spill, _ := c[s.spillKey].(string)
		if spill == "" {
			t.Errorf("no %s in %v", s.spillKey, c)
			continue
		}
		if !strings.HasPrefix(spill, filepath.Join(h.ScratchDir(sid), "tool-output")+string(filepath.Separator)) {
			t.Errorf("spill %s is not under the session's scratch tool-output dir", spill)
		}
		if !strings.Contains(kept, spill) {
			t.Errorf("the %s marker does not say where the rest is (%s)", s.stream, spill)
		}
		fi, err := os.Stat(spill)
		if err != nil || fi.Size() != total {
			t.Errorf("%s spill file: %v, size %v, want %d", s.stream, err, fi, total)
			continue
		}
		f, err := os.Open(spill)
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 250)
		_, _ = f.ReadAt(head, 0)
		tail := make([]byte, 250)
		_, _ = f.ReadAt(tail, total-250)
		f.Close()
		if string(head) != firstBytes || string(tail) != lastBytes {
			t.Errorf("%s spill file does not hold the stream from its first to its last byte", s.stream)
		}
	}
}

// `pi session abort` from another process stops a running `pi tool bash`:
// the call returns TOOL_ABORTED and its process tree is gone.
func TestProcessAbortStopsBash(t *testing.T) {
	pi := exPi(t)
	h, sid, data, ws := exSetup(t, hostcore.PermAuto)
	env := exPiEnv(t, data, sid)

	cmd := exec.Command(pi, "tool", "bash", "--", "sleep 1000 & echo $! > sleep.pid; wait")
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	done := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(done) }()
	sleepPID := exPidFile(t, filepath.Join(ws, "sleep.pid"), 10*time.Second, done)

	t0 := time.Now()
	m, code := exRunPi(t, env, "session", "abort")
	if code != 0 || m["ok"] != true || exGet(m, "content.stoppedCalls") != float64(1) {
		t.Errorf("pi session abort: exit %d %v", code, m)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("pi tool bash still running %s after the abort", time.Since(t0))
	}
	t.Logf("bash call stopped %s after the abort began", time.Since(t0).Round(time.Millisecond))
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("bash envelope: %v %q", err, out.String())
	}
	var ee *exec.ExitError
	if res["errorCode"] != "TOOL_ABORTED" || !errors.As(werr, &ee) || ee.ExitCode() != 3 || exGet(res, "content.aborted") != true {
		t.Errorf("aborted bash: %v (exit %v)", res, werr)
	}
	if !exWaitGone(sleepPID, 3*time.Second) {
		t.Errorf("sleep (pid %d) survived the abort", sleepPID)
	}
	// The audit row is final, and the session runs new calls again.
	tc, _ := res["toolCallId"].(string)
	rows := exAuditRows(t, h, sid)
	if a := rows[tc]; a == nil || a.State != "done" || a.ErrorCode != "TOOL_ABORTED" {
		t.Errorf("audit row of the aborted call: %+v", a)
	}
	m, code = exRunPi(t, env, "tool", "bash", "--", "echo again")
	if code != 0 || exGet(m, "content.stdout") != "again\n" {
		t.Errorf("bash after the abort: exit %d %v", code, m)
	}
}

// A tree that ignores SIGTERM under --timeout 1: TOOL_TIMEOUT within a few
// seconds (grace, then SIGKILL), and nothing of the tree survives.
func TestProcessTimeoutKillsTermIgnoringTree(t *testing.T) {
	pi := exPi(t)
	_, sid, data, ws := exSetup(t, hostcore.PermAuto)
	env := exPiEnv(t, data, sid)

	cmd := exec.Command(pi, "tool", "bash", "--timeout", "1", "--",
		`trap "" TERM; sleep 1000 & echo $! > sleep.pid; wait`)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &out
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	done := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(done) }()
	sleepPID := exPidFile(t, filepath.Join(ws, "sleep.pid"), 10*time.Second, done)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("pi tool bash --timeout 1 still running after %s", time.Since(t0))
	}
	elapsed := time.Since(t0)
	t.Logf("timed-out call returned after %s", elapsed.Round(time.Millisecond))
	if elapsed > 5*time.Second {
		t.Errorf("--timeout 1 took %s to return", elapsed)
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("bash envelope: %v %q", err, out.String())
	}
	var ee *exec.ExitError
	if res["errorCode"] != "TOOL_TIMEOUT" || exGet(res, "content.timedOut") != true || !errors.As(werr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("timed-out bash: %v (exit %v)", res, werr)
	}
	if !exProcGone(sleepPID) {
		t.Errorf("sleep (pid %d) ignoring SIGTERM survived the timeout", sleepPID)
	}
}

// R-BASH-9 says the whole tree dies, including grandchildren that keep the
// pipes open. A grandchild that starts its own session leaves the process
// group that pi kills.
func TestProcessTimeoutKillsSessionLeavingGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("setsid(1) is a util-linux tool")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	_, sid, data, ws := exSetup(t, hostcore.PermAuto)
	env := exPiEnv(t, data, sid)

	m, _ := exRunPi(t, env, "tool", "bash", "--timeout", "1", "--", "setsid sleep 1000 & echo $! > escaped.pid; wait")
	b, err := os.ReadFile(filepath.Join(ws, "escaped.pid"))
	if err != nil {
		t.Fatalf("no pid file: %v (%v)", err, m)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %q", b)
	}
	defer func() {
		if !exProcGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	if m["errorCode"] != "TOOL_TIMEOUT" {
		t.Errorf("envelope %v", m)
	}
	if !exWaitGone(pid, time.Second) {
		t.Skipf("BUG: R-BASH-9: a grandchild that called setsid (pid %d) survives the timeout although the result says %q",
			pid, m["message"])
	}
}
