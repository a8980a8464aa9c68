package hostcore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore"
	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// Helpers shared by execute_test.go and process_test.go carry an "ex"
// prefix so they do not collide with other test files of the package.

// exOpen opens a Host over dataDir (a real store on disk) and closes it with
// the test. Each call is a separate Open, like a separate pi process.
func exOpen(t testing.TB, dataDir string, tweak ...func(*hostcore.Config)) *hostcore.Host {
	t.Helper()
	cfg := hostcore.DefaultConfig()
	cfg.DataDir = dataDir
	cfg.HomeDir = t.TempDir()
	for _, f := range tweak {
		f(&cfg)
	}
	h, err := hostcore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open host: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// exDir is a canonical temp dir (no symlinked /tmp surprises).
func exDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func exSession(t testing.TB, h *hostcore.Host, ws, permMode string) string {
	t.Helper()
	v, err := h.CreateSession(context.Background(), hostcore.CreateOptions{Workspace: ws, PermissionMode: permMode})
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	return v.ID
}

// exCall runs one tool call through the one Execute road.
func exCall(t testing.TB, h *hostcore.Host, sid, tool string, args any) *hostcore.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return h.Execute(context.Background(), &hostcore.Call{SessionID: sid, Tool: tool, Args: raw})
}

// exEnvelope is the JSON envelope of CLI.md, decoded generically.
func exEnvelope(t testing.TB, r *hostcore.Result) map[string]any {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// exGet walks a dotted path through decoded JSON.
func exGet(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

func exWant(t testing.TB, r *hostcore.Result, code hostcore.Code) map[string]any {
	t.Helper()
	env := exEnvelope(t, r)
	if r.ErrorCode != code || r.OK != (code == "") || r.IsError != (code != "") {
		t.Fatalf("%s: ok=%v isError=%v errorCode=%q message=%q; want errorCode %q", r.Tool, r.OK, r.IsError, r.ErrorCode, r.Message, code)
	}
	if code == "" {
		if _, present := env["errorCode"]; present {
			t.Errorf("%s: errorCode present on success: %v", r.Tool, env["errorCode"])
		}
	}
	return env
}

func exCheckTiming(t testing.TB, r *hostcore.Result) {
	t.Helper()
	tm := r.Timing
	if tm.TotalMs < 0 || tm.DurationMs < 0 || tm.OverheadMs < 0 || tm.PermissionWaitMs < 0 {
		t.Errorf("%s: negative timing %+v", r.Tool, tm)
	}
	if tm.TotalMs < tm.DurationMs+tm.PermissionWaitMs {
		t.Errorf("%s: totalMs %d < durationMs %d + permissionWaitMs %d", r.Tool, tm.TotalMs, tm.DurationMs, tm.PermissionWaitMs)
	}
	if tm.OverheadMs != tm.TotalMs-tm.DurationMs-tm.PermissionWaitMs {
		t.Errorf("%s: overheadMs %d is not total-duration-wait in %+v", r.Tool, tm.OverheadMs, tm)
	}
	if !strings.HasPrefix(r.TraceID, "tr_") || r.ToolCallID == "" {
		t.Errorf("%s: traceId %q toolCallId %q", r.Tool, r.TraceID, r.ToolCallID)
	}
}

func exAuditRows(t testing.TB, h *hostcore.Host, sid string) map[string]*store.AuditRow {
	t.Helper()
	out := map[string]*store.AuditRow{}
	err := h.DB.Audit(context.Background(), store.AuditFilter{SessionID: sid}, func(r *store.AuditRow) error {
		if _, dup := out[r.ToolCallID]; dup {
			return fmt.Errorf("two audit rows for %s", r.ToolCallID)
		}
		out[r.ToolCallID] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exCount(t testing.TB, h *hostcore.Host, sid string) int {
	t.Helper()
	n, err := h.DB.CountAudit(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func exSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func exFileSHA(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return exSHA(b)
}

func exWriteFile(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// exReview decodes the review record of a result.
func exReview(t testing.TB, r *hostcore.Result) map[string]any {
	t.Helper()
	rv, _ := exEnvelope(t, r)["review"].(map[string]any)
	if rv == nil {
		t.Fatalf("%s: no review record in %+v", r.Tool, exEnvelope(t, r))
	}
	return rv
}

// exSetup is the usual start of a test: a data dir, a workspace, a host
// over the data dir and a session over the workspace in mode.
func exSetup(t testing.TB, mode string) (h *hostcore.Host, sid, data, ws string) {
	t.Helper()
	data, ws = exDir(t), exDir(t)
	h = exOpen(t, data)
	return h, exSession(t, h, ws, mode), data, ws
}

func exSkipNonUnix(t testing.TB) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("unix shell and file semantics")
	}
}

// Execute end to end for the file tools in both modes that let edits run
// without a card: every call, refused or not, leaves exactly one audit row
// matching its envelope.
func TestExecuteFileToolsEndToEnd(t *testing.T) {
	exSkipNonUnix(t)
	for _, mode := range []string{hostcore.PermAuto, hostcore.PermAcceptEdits} {
		t.Run(mode, func(t *testing.T) {
			data := exDir(t)
			ws := exDir(t)
			outside := exDir(t)
			h := exOpen(t, data, func(c *hostcore.Config) { c.PermissionTimeout = 300 * time.Millisecond })
			sid := exSession(t, h, ws, mode)
			exWriteFile(t, filepath.Join(ws, "src", "main.go"), []byte("package main\n\nfunc main() { println(\"hi\") }\n"))
			exWriteFile(t, filepath.Join(ws, "secret.txt"), []byte("ignored by nothing\n"))

			var results []*hostcore.Result
			bodyRefused := map[string]bool{}
			call := func(tool string, args any, code hostcore.Code) map[string]any {
				t.Helper()
				r := exCall(t, h, sid, tool, args)
				results = append(results, r)
				env := exWant(t, r, code)
				exCheckTiming(t, r)
				if r.SessionID != sid || env["sessionId"] != sid {
					t.Errorf("%s: sessionId %v", tool, env["sessionId"])
				}
				return env
			}

			// Write: create, with a review record and root workspace.
			env := call("Write", map[string]any{"path": "notes/todo.md", "content": "- one\n- two\n"}, "")
			if env["root"] != "workspace" || exGet(env, "content.created") != true || exGet(env, "content.bytes") != float64(12) ||
				exGet(env, "content.path") != "notes/todo.md" {
				t.Errorf("write envelope: %v", env)
			}
			if exGet(env, "review.status") != "added" || exGet(env, "review.reversible") != true || exGet(env, "review.version") != float64(1) {
				t.Errorf("write review: %v", env["review"])
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "notes", "todo.md")); string(b) != "- one\n- two\n" {
				t.Errorf("file after write: %q", b)
			}
			// Read it back, byte-faithful.
			env = call("Read", map[string]any{"path": "notes/todo.md"}, "")
			if exGet(env, "content.content") != "- one\n- two\n" || env["root"] != "workspace" || exGet(env, "content.totalLines") != float64(2) {
				t.Errorf("read envelope: %v", env)
			}
			// Edit, with camelCase aliases.
			env = call("Edit", map[string]any{"path": "notes/todo.md", "oldString": "- two", "newString": "- deux"}, "")
			if exGet(env, "content.replacements") != float64(1) || exGet(env, "content.firstChangedLine") != float64(2) ||
				exGet(env, "review.status") != "modified" || env["root"] != "workspace" {
				t.Errorf("edit envelope: %v", env)
			}
			if d, _ := exGet(env, "content.diff").(string); !strings.Contains(d, "+- deux") {
				t.Errorf("edit diff: %q", d)
			}
			// Glob and Grep are on-demand in Agent mode: refused until activated.
			call("Glob", map[string]any{"pattern": "**/*.go"}, hostcore.ToolNotActive)
			env = call("ToolSearch", map[string]any{"query": "Glob Grep"}, "")
			if a, _ := exGet(env, "content.activated").([]any); len(a) != 2 {
				t.Errorf("tool search activated %v", exGet(env, "content.activated"))
			}
			env = call("Glob", map[string]any{"pattern": "**/*.go"}, "")
			if m, _ := exGet(env, "content.matches").([]any); len(m) != 1 || m[0] != "src/main.go" {
				t.Errorf("glob matches: %v", exGet(env, "content.matches"))
			}
			if env["root"] != "workspace" {
				t.Errorf("glob root %v", env["root"])
			}
			env = call("Grep", map[string]any{"pattern": "deux|println", "outputMode": "content"}, "")
			if exGet(env, "content.count") != float64(2) {
				t.Errorf("grep: %v", env["content"])
			}
			env = call("Grep", map[string]any{"pattern": "deux", "outputMode": "filesWithMatches"}, "")
			if f, _ := exGet(env, "content.files").([]any); len(f) != 1 || f[0] != "notes/todo.md" {
				t.Errorf("grep files: %v", env["content"])
			}

			// Refusals and failures, each audited.
			call("Read", map[string]any{"path": "nope.txt"}, hostcore.NotFound)
			env = call("Read", map[string]any{"path": "src"}, hostcore.InvalidArgument)
			// The policy allowed this one; the body refused the directory.
			bodyRefused[env["toolCallId"].(string)] = true
			if exGet(env, "content.suggestion.tool") != "Glob" {
				t.Errorf("read dir suggestion: %v", env["content"])
			}
			call("Write", map[string]any{"path": "x.txt"}, hostcore.InvalidArgument)
			call("Write", map[string]any{"path": "x.txt", "content": "x", "bogus": 1}, hostcore.InvalidArgument)
			call("Edit", map[string]any{"path": "notes/todo.md", "old_string": "same", "new_string": "same"}, hostcore.InvalidArgument)
			call("Frobnicate", map[string]any{}, hostcore.ToolNotFound)
			call("Read", map[string]any{"path": "/etc/shadow"}, hostcore.ToolDenied)
			call("Read", map[string]any{"path": filepath.Join(data, store.FileName)}, hostcore.ToolDenied)
			exWriteFile(t, filepath.Join(outside, "ext.txt"), []byte("outside\n"))
			if mode == hostcore.PermAuto {
				// auto allows explicit external paths without a card (R-PATH-5).
				env = call("Read", map[string]any{"path": filepath.Join(outside, "ext.txt")}, "")
				if env["root"] != "external" || exGet(env, "content.content") != "outside\n" {
					t.Errorf("external read: %v", env)
				}
				env = call("Write", map[string]any{"path": filepath.Join(outside, "w.txt"), "content": "w"}, "")
				if env["root"] != "external" || env["review"] != nil {
					t.Errorf("external write: root %v review %v", env["root"], env["review"])
				}
				env = call("Bash", map[string]any{"command": "echo hello; echo oops >&2"}, "")
				if exGet(env, "content.stdout") != "hello\n" || exGet(env, "content.stderr") != "oops\n" ||
					exGet(env, "content.exitCode") != float64(0) {
					t.Errorf("bash: %v", env["content"])
				}
				env = call("Bash", map[string]any{"command": "echo out; exit 3"}, hostcore.ToolFailed)
				if exGet(env, "content.exitCode") != float64(3) || exGet(env, "content.stdout") != "out\n" {
					t.Errorf("bash exit 3: %v", env["content"])
				}
			} else {
				// accept-edits: an external path and Bash need a card; nobody
				// answers, so the card times out (fail closed).
				for _, c := range []struct {
					tool string
					args any
				}{
					{"Read", map[string]any{"path": filepath.Join(outside, "ext.txt")}},
					{"Bash", map[string]any{"command": "echo never"}},
				} {
					r := exCall(t, h, sid, c.tool, c.args)
					results = append(results, r)
					exWant(t, r, hostcore.PermissionTimeout)
					exCheckTiming(t, r)
					if !r.Timing.Prompted || r.Timing.PermissionWaitMs < 250 || r.Timing.DurationMs != 0 || r.RequestID == "" {
						t.Errorf("%s timed-out card: timing %+v requestId %q", c.tool, r.Timing, r.RequestID)
					}
				}
				if _, err := os.Stat(filepath.Join(ws, "never")); err == nil {
					t.Error("bash ran without permission")
				}
			}

			// Exactly one audit row per call, matching its envelope.
			if n := exCount(t, h, sid); n != len(results) {
				t.Fatalf("audit rows = %d, calls = %d", n, len(results))
			}
			rows := exAuditRows(t, h, sid)
			for _, r := range results {
				a := rows[r.ToolCallID]
				if a == nil {
					t.Errorf("no audit row for %s %s", r.Tool, r.ToolCallID)
					continue
				}
				if a.OK != r.OK || a.ErrorCode != string(r.ErrorCode) || a.State != "done" || a.TraceID != r.TraceID ||
					a.Timing != r.Timing || a.Turn != 1 {
					t.Errorf("audit row %+v does not match result %+v", a, r)
				}
				wantDecision := "auto_allowed"
				switch r.ErrorCode {
				case hostcore.PermissionTimeout:
					wantDecision = "timeout_denied"
				case hostcore.ToolDenied, hostcore.ToolNotFound, hostcore.ToolNotActive, hostcore.InvalidArgument:
					if !bodyRefused[r.ToolCallID] {
						wantDecision = "policy_denied"
					}
				}
				if a.Decision != wantDecision {
					t.Errorf("%s %s (%s): decision %q, want %q", r.Tool, r.ToolCallID, r.ErrorCode, a.Decision, wantDecision)
				}
				if strings.Contains(a.ArgsPreview, "ignored by nothing") {
					t.Errorf("args preview leaks file content: %s", a.ArgsPreview)
				}
			}
			if mode == hostcore.PermAuto {
				for _, r := range results {
					if r.Tool == "Read" && r.Root == "external" {
						if a := rows[r.ToolCallID]; a.PathClass != "external" || !strings.HasSuffix(a.ExternalPath, "ext.txt") {
							t.Errorf("external read audit: class %q path %q", a.PathClass, a.ExternalPath)
						}
					}
				}
			}
		})
	}
}

// "database is locked" must never reach a caller: eight Hosts (separate
// Opens of one data dir, like eight pi processes) each make 200 mixed calls.
func TestExecuteManyHostsNoDatabaseLocked(t *testing.T) {
	exSkipNonUnix(t)
	data := exDir(t)
	const workers, calls = 8, 200
	setup := exOpen(t, data)
	type job struct {
		ws, sid string
	}
	jobs := make([]job, workers)
	for i := range jobs {
		ws := exDir(t)
		for j := range 5 {
			exWriteFile(t, filepath.Join(ws, fmt.Sprintf("f%d.txt", j)), []byte(fmt.Sprintf("file %d\nline two\n", j)))
		}
		jobs[i] = job{ws, exSession(t, setup, ws, hostcore.PermAuto)}
	}
	// Two workers share one session, so mutations of one session are
	// serialised across hosts while the others run in parallel.
	jobs[1] = jobs[0]

	var wg sync.WaitGroup
	bad := make(chan string, workers*calls)
	made := make([]int, workers)
	start := make(chan struct{})
	for w := range workers {
		h := exOpen(t, data)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			j := jobs[w]
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			do := func(tool string, args any) {
				raw, _ := json.Marshal(args)
				r := h.Execute(context.Background(), &hostcore.Call{SessionID: j.sid, Tool: tool, Args: raw})
				made[w]++
				if !r.OK {
					bad <- fmt.Sprintf("worker %d %s %s: %s %s", w, tool, raw, r.ErrorCode, r.Message)
				}
			}
			do("ToolSearch", map[string]any{"query": "Glob, Grep"})
			for i := 1; i < calls; i++ {
				f := fmt.Sprintf("w%d-%d.txt", w, rng.IntN(6))
				switch k := rng.IntN(20); {
				case k < 6:
					do("Read", map[string]any{"path": fmt.Sprintf("f%d.txt", rng.IntN(5))})
				case k < 10:
					do("Write", map[string]any{"path": f, "content": fmt.Sprintf("worker %d call %d\nmarker\n", w, i)})
				case k < 12:
					// Make sure the target exists, then change it.
					do("Write", map[string]any{"path": f, "content": "edit me\n"})
					do("Edit", map[string]any{"path": f, "old_string": "edit me", "new_string": fmt.Sprintf("edited %d", i)})
					i++
				case k < 15:
					do("Glob", map[string]any{"pattern": "*.txt"})
				case k < 18:
					do("Grep", map[string]any{"pattern": "line two", "outputMode": "count"})
				case k < 19:
					do("Read", map[string]any{"path": "f0.txt", "offset": 1, "limit": 1})
				default:
					if i%4 == 0 {
						do("Bash", map[string]any{"command": "true"})
					} else {
						do("Glob", map[string]any{"pattern": "f*.txt", "limit": 2})
					}
				}
			}
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	close(bad)
	n := 0
	for msg := range bad {
		if n < 20 {
			t.Error(msg)
		}
		n++
	}
	total := 0
	for _, m := range made {
		total += m
	}
	t.Logf("%d calls from %d hosts in %s, %d not ok", total, workers, time.Since(t0).Round(time.Millisecond), n)
	if got := exCount(t, setup, ""); got != total {
		t.Errorf("audit rows = %d, calls = %d", got, total)
	}
	var running int
	if err := setup.DB.SQL().QueryRow(`SELECT count(*) FROM audit WHERE state <> 'done'`).Scan(&running); err != nil || running != 0 {
		t.Errorf("audit rows not done: %d (%v)", running, err)
	}
}

// R-MUT-1: two Hosts writing the same file of one session at once are
// serialised: both succeed, both are recorded, the second captured exactly
// what the first left, and the file is one whole content.
func TestExecuteConcurrentWritesSerialised(t *testing.T) {
	exSkipNonUnix(t)
	data := exDir(t)
	ws := exDir(t)
	h1 := exOpen(t, data)
	h2 := exOpen(t, data)
	sid := exSession(t, h1, ws, hostcore.PermAuto)
	target := filepath.Join(ws, "shared.txt")
	exWriteFile(t, target, []byte("original\n"))
	for round := range 6 {
		a := strings.Repeat(fmt.Sprintf("A%d-", round), 300_000) + "\n" // ~1 MB each
		b := strings.Repeat(fmt.Sprintf("B%d-", round), 300_000) + "\n"
		var ra, rb *hostcore.Result
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			ra = exCall(t, h1, sid, "Write", map[string]any{"path": "shared.txt", "content": a})
		}()
		go func() {
			defer wg.Done()
			rb = exCall(t, h2, sid, "Write", map[string]any{"path": "shared.txt", "content": b})
		}()
		wg.Wait()
		if !ra.OK || !rb.OK {
			t.Fatalf("round %d: %s %s / %s %s", round, ra.ErrorCode, ra.Message, rb.ErrorCode, rb.Message)
		}
		rows, err := h1.DB.Changes(context.Background(), store.ChangeFilter{SessionID: sid, Path: "shared.txt"})
		if err != nil {
			t.Fatal(err)
		}
		byCall := map[string]*store.ChangeRow{}
		for _, r := range rows {
			byCall[r.ToolCallID] = r
		}
		ca, cb := byCall[ra.ToolCallID], byCall[rb.ToolCallID]
		if ca == nil || cb == nil {
			t.Fatalf("round %d: review records missing (a %v, b %v)", round, ca != nil, cb != nil)
		}
		got := exFileSHA(t, target)
		// Whichever ran second must have seen the first one's whole output.
		first, second := ca, cb
		if got == exSHA([]byte(a)) {
			first, second = cb, ca
		} else if got != exSHA([]byte(b)) {
			t.Fatalf("round %d: file is neither write's full content", round)
		}
		if second.BeforeHash != first.AfterHash || second.AfterHash != got {
			t.Errorf("round %d: not serialised: second saw %s, first left %s", round, second.BeforeHash, first.AfterHash)
		}
	}
}

// R-MUT-3 for Edit: the second TOOL_FAILED Edit of a path in a turn is
// terminal; INVALID_ARGUMENT does not count; a new turn or a successful
// mutation of the path resets the count; paths count separately.
func TestExecuteEditRetryBudget(t *testing.T) {
	exSkipNonUnix(t)
	h, sid, _, ws := exSetup(t, hostcore.PermAcceptEdits)
	exWriteFile(t, filepath.Join(ws, "f.txt"), []byte("alpha\nbeta\nbeta\n"))
	exWriteFile(t, filepath.Join(ws, "g.txt"), []byte("gamma\n"))
	calls := 0
	edit := func(path, old, new string, code hostcore.Code) *hostcore.Result {
		t.Helper()
		calls++
		r := exCall(t, h, sid, "Edit", map[string]any{"path": path, "old_string": old, "new_string": new})
		exWant(t, r, code)
		return r
	}
	attempt := func(r *hostcore.Result) any { return exGet(exEnvelope(t, r), "content.mutationFailureAttempt") }

	r := edit("f.txt", "zeta", "x", hostcore.ToolFailed)
	env := exEnvelope(t, r)
	if attempt(r) != float64(1) || exGet(env, "content.mutationFailureKind") != "no_match" || r.Terminate {
		t.Fatalf("first failure: %v", env)
	}
	r = edit("f.txt", "beta", "x", hostcore.MutationRetryBudgetExhausted) // ambiguous: the second failure
	env = exEnvelope(t, r)
	if !r.Terminate || env["terminate"] != true || attempt(r) != float64(2) ||
		exGet(env, "content.lastErrorCode") != "TOOL_FAILED" || exGet(env, "content.mutationFailureKind") != "ambiguous_match" {
		t.Fatalf("second failure: %v", env)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "alpha\nbeta\nbeta\n" {
		t.Fatalf("failed edits changed the file: %q", b)
	}
	// Another path has its own budget.
	r = edit("g.txt", "nope", "x", hostcore.ToolFailed)
	if attempt(r) != float64(1) || r.Terminate {
		t.Errorf("other path: %v", exEnvelope(t, r))
	}
	// A new turn resets.
	if _, err := h.NewTurn(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	r = edit("f.txt", "zeta", "x", hostcore.ToolFailed)
	if attempt(r) != float64(1) || r.Terminate {
		t.Errorf("after a new turn: %v", exEnvelope(t, r))
	}
	// A successful Write of the path resets.
	calls++
	exWant(t, exCall(t, h, sid, "Write", map[string]any{"path": "f.txt", "content": "alpha\nbeta\n"}), "")
	r = edit("f.txt", "zeta", "x", hostcore.ToolFailed)
	if attempt(r) != float64(1) || r.Terminate {
		t.Errorf("after a successful write: %v", exEnvelope(t, r))
	}
	// So does a successful Edit.
	edit("f.txt", "beta", "BETA", "")
	r = edit("f.txt", "zeta", "x", hostcore.ToolFailed)
	if attempt(r) != float64(1) {
		t.Errorf("after a successful edit: %v", exEnvelope(t, r))
	}
	// INVALID_ARGUMENT does not count, neither before nor after a failure.
	if _, err := h.NewTurn(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	edit("f.txt", "same", "same", hostcore.InvalidArgument)
	edit("f.txt", "", "x", hostcore.InvalidArgument)
	r = edit("f.txt", "zeta", "x", hostcore.ToolFailed)
	if attempt(r) != float64(1) {
		t.Errorf("invalid arguments counted: %v", exEnvelope(t, r))
	}
	edit("f.txt", "same", "same", hostcore.InvalidArgument)
	r = edit("f.txt", "zeta", "x", hostcore.MutationRetryBudgetExhausted)
	if attempt(r) != float64(2) || !r.Terminate {
		t.Errorf("second failure after an invalid one: %v", exEnvelope(t, r))
	}
	if n := exCount(t, h, sid); n != calls {
		t.Errorf("audit rows %d, calls %d", n, calls)
	}
	rows := exAuditRows(t, h, sid)
	if a := rows[r.ToolCallID]; a == nil || a.ErrorCode != string(hostcore.MutationRetryBudgetExhausted) || a.Turn != 3 {
		t.Errorf("audit of the terminal edit: %+v", a)
	}
}

// A failing shell patch command counts towards the same budget as Edit
// (R-MUT-3): the second failure in a turn is terminal.
func TestExecutePatchCommandRetryBudget(t *testing.T) {
	exSkipNonUnix(t)
	h, sid, _, ws := exSetup(t, hostcore.PermAuto)
	bash := func(cmd string, code hostcore.Code) *hostcore.Result {
		t.Helper()
		r := exCall(t, h, sid, "Bash", map[string]any{"command": cmd})
		exWant(t, r, code)
		return r
	}

	// Ordinary failing commands are not patch commands and never count.
	bash("false", hostcore.ToolFailed)
	bash("exit 2", hostcore.ToolFailed)
	r := bash("patch -p0 < missing.diff", hostcore.ToolFailed)
	if r.Terminate {
		t.Fatalf("first patch failure is terminal: %v", exEnvelope(t, r))
	}
	if _, ok := exGet(exEnvelope(t, r), "content.exitCode").(float64); !ok {
		t.Errorf("patch failure lost the bash content: %v", exEnvelope(t, r))
	}
	r = bash("git apply nope.diff", hostcore.MutationRetryBudgetExhausted)
	env := exEnvelope(t, r)
	if !r.Terminate || env["terminate"] != true {
		t.Fatalf("second patch failure: %v", env)
	}
	if s, _ := exGet(env, "content.stderr").(string); !strings.Contains(s, "nope.diff") {
		t.Errorf("terminal patch result lost stderr: %v", env["content"])
	}
	// A new turn resets.
	if _, err := h.NewTurn(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	bash("cd . && patch -p1 < also-missing.diff", hostcore.ToolFailed)
	// A successful patch command resets too.
	exWriteFile(t, filepath.Join(ws, "p.txt"), []byte("one\n"))
	exWriteFile(t, filepath.Join(ws, "ok.diff"), []byte("--- p.txt\n+++ p.txt\n@@ -1 +1 @@\n-one\n+two\n"))
	bash("patch -p0 < ok.diff", "")
	if b, _ := os.ReadFile(filepath.Join(ws, "p.txt")); string(b) != "two\n" {
		t.Fatalf("patch did not apply: %q", b)
	}
	bash("patch -p0 < missing.diff", hostcore.ToolFailed)
	bash("git apply nope.diff", hostcore.MutationRetryBudgetExhausted)
	if n := exCount(t, h, sid); n != 8 {
		t.Errorf("audit rows %d, want 8", n)
	}
}

// R-MUT-3 names the fields of a terminal result: terminate,
// mutationFailureKind and mutationFailureAttempt. Edit carries them; a
// failed shell patch command must too.
func TestExecutePatchCommandFailureFields(t *testing.T) {
	exSkipNonUnix(t)
	h := exOpen(t, exDir(t))
	sid := exSession(t, h, exDir(t), hostcore.PermAuto)
	first := exEnvelope(t, exCall(t, h, sid, "Bash", map[string]any{"command": "patch -p0 < missing.diff"}))
	second := exEnvelope(t, exCall(t, h, sid, "Bash", map[string]any{"command": "git apply nope.diff"}))
	if second["errorCode"] != string(hostcore.MutationRetryBudgetExhausted) || second["terminate"] != true {
		t.Fatalf("second patch failure: %v", second)
	}
	var missing []string
	for _, c := range []struct {
		env     map[string]any
		attempt float64
	}{{first, 1}, {second, 2}} {
		if exGet(c.env, "content.mutationFailureAttempt") != c.attempt {
			missing = append(missing, fmt.Sprintf("attempt %v: mutationFailureAttempt=%v", c.attempt, exGet(c.env, "content.mutationFailureAttempt")))
		}
		if exGet(c.env, "content.mutationFailureKind") != "patch" {
			missing = append(missing, fmt.Sprintf("attempt %v: mutationFailureKind=%v", c.attempt, exGet(c.env, "content.mutationFailureKind")))
		}
	}
	if len(missing) > 0 {
		t.Skipf("BUG: R-MUT-3: a failed shell patch command's result lacks the retry fields (%s); "+
			"mutationBudget merges them only into map content or nil content, and Bash's content is a *BashContent",
			strings.Join(missing, "; "))
	}
}

func exBigText(lines int, tag string) []byte {
	var b bytes.Buffer
	b.Grow(lines * 40)
	for i := range lines {
		fmt.Fprintf(&b, "%s line %09d of the big file, padded\n", tag, i)
	}
	return b.Bytes()
}

// A 50 MB Write and a 50 MB Edit are reviewed, reversible, and roll back to
// the exact bytes.
func TestExecuteBigWriteEditRollback(t *testing.T) {
	exSkipNonUnix(t)
	h, sid, _, ws := exSetup(t, hostcore.PermAuto)
	ctx := context.Background()
	p := filepath.Join(ws, "big.txt")
	orig := exBigText(1_250_000, "orig") // 50 MB
	if len(orig) < 50<<20-(1<<20) {
		t.Fatalf("fixture is %d bytes", len(orig))
	}
	exWriteFile(t, p, orig)
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	origSHA := exSHA(orig)

	newer := exBigText(1_250_000, "next")
	t0 := time.Now()
	r := exCall(t, h, sid, "Write", map[string]any{"path": "big.txt", "content": string(newer)})
	exWant(t, r, "")
	t.Logf("50 MB write: %s", time.Since(t0).Round(time.Millisecond))
	rv := exReview(t, r)
	if rv["reversible"] != true || rv["status"] != "modified" {
		t.Fatalf("big write record: %v", rv)
	}
	if got := exFileSHA(t, p); got != exSHA(newer) {
		t.Fatal("big write did not land")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("write lost the mode: %v", fi.Mode())
	}
	out, err := h.Rollback(ctx, sid, rv["snapshotId"].(string), "")
	if err != nil {
		t.Fatalf("rollback big write: %v", err)
	}
	if len(out.RolledBack) != 1 || out.RolledBack[0].State != "rolledBack" {
		t.Errorf("rollback result: %+v", out)
	}
	if got := exFileSHA(t, p); got != origSHA {
		t.Fatal("rollback of the big write did not restore the exact bytes")
	}

	// Edit one line in the middle of the 50 MB file.
	t0 = time.Now()
	r = exCall(t, h, sid, "Edit", map[string]any{"path": "big.txt",
		"old_string": "orig line 000625000 of", "new_string": "EDITED line 000625000 of"})
	exWant(t, r, "")
	t.Logf("50 MB edit: %s", time.Since(t0).Round(time.Millisecond))
	rv = exReview(t, r)
	if rv["reversible"] != true || rv["status"] != "modified" {
		t.Fatalf("big edit record: %v", rv)
	}
	if exGet(exEnvelope(t, r), "content.firstChangedLine") != float64(625001) {
		t.Errorf("firstChangedLine %v", exGet(exEnvelope(t, r), "content.firstChangedLine"))
	}
	edited, _ := os.ReadFile(p)
	if !bytes.Contains(edited, []byte("EDITED line 000625000 of")) || len(edited) != len(orig)+2 {
		t.Fatalf("edit result: %d bytes", len(edited))
	}
	if _, err := h.Rollback(ctx, sid, rv["snapshotId"].(string), ""); err != nil {
		t.Fatalf("rollback big edit: %v", err)
	}
	if got := exFileSHA(t, p); got != origSHA {
		t.Fatal("rollback of the big edit did not restore the exact bytes")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("rollback lost the mode: %v", fi.Mode())
	}
	// A second rollback of the same change is a conflict and touches nothing.
	_, err = h.Rollback(ctx, sid, rv["snapshotId"].(string), "")
	if hostcore.CodeOf(err) != hostcore.Conflict {
		t.Errorf("second rollback: %v, want CONFLICT", err)
	}
	if got := exFileSHA(t, p); got != origSHA {
		t.Error("second rollback touched the file")
	}
}

// Writing text over a binary file: the record says binary, stays
// reversible, and rollback restores the binary bytes exactly.
func TestExecuteWriteOverBinaryRollback(t *testing.T) {
	exSkipNonUnix(t)
	h, sid, _, ws := exSetup(t, hostcore.PermAcceptEdits)
	p := filepath.Join(ws, "img.bin")
	bin := make([]byte, 200_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range bin {
		bin[i] = byte(rng.UintN(256))
	}
	bin[10], bin[11] = 0, 0xff
	exWriteFile(t, p, bin)

	r := exCall(t, h, sid, "Write", map[string]any{"path": "img.bin", "content": "now text\n"})
	exWant(t, r, "")
	rv := exReview(t, r)
	if rv["binary"] != true || rv["reversible"] != true || rv["status"] != "modified" {
		t.Fatalf("record over a binary file: %v", rv)
	}
	if hunks, _ := rv["hunks"].([]any); len(hunks) != 0 {
		t.Errorf("binary record has %d hunks", len(hunks))
	}
	if _, err := h.Rollback(context.Background(), sid, rv["snapshotId"].(string), ""); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, bin) {
		t.Fatal("rollback did not restore the binary bytes exactly")
	}
	exWant(t, exCall(t, h, sid, "Read", map[string]any{"path": "img.bin"}), hostcore.ToolBinaryContent)
	exWant(t, exCall(t, h, sid, "Edit", map[string]any{"path": "img.bin", "old_string": "a", "new_string": "b"}), hostcore.ToolBinaryContent)
	if got, _ := os.ReadFile(p); !bytes.Equal(got, bin) {
		t.Fatal("a refused edit changed the binary file")
	}
}

// R-REV-3: a hand edit after the tool makes rollback a CONFLICT that touches
// nothing — for one change and, all-or-nothing, for a whole message.
func TestExecuteRollbackConflictTouchesNothing(t *testing.T) {
	exSkipNonUnix(t)
	h, sid, _, ws := exSetup(t, hostcore.PermAuto)
	ctx := context.Background()
	exWriteFile(t, filepath.Join(ws, "a.txt"), []byte("a0\n"))
	exWriteFile(t, filepath.Join(ws, "b.txt"), []byte("b0\n"))

	write := func(path, content, msg string) string {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"path": path, "content": content})
		r := h.Execute(ctx, &hostcore.Call{SessionID: sid, Tool: "Write", Args: raw, MessageID: msg})
		exWant(t, r, "")
		return exReview(t, r)["snapshotId"].(string)
	}
	idA := write("a.txt", "a1\n", "msg_1")
	idB := write("b.txt", "b1\n", "msg_1")
	idNew := write("c/new.txt", "created\n", "msg_2")

	// Hand edit b.txt: rolling back b, or the whole message, is refused.
	exWriteFile(t, filepath.Join(ws, "b.txt"), []byte("b by hand\n"))
	for _, tc := range []struct{ id, msg string }{{idB, ""}, {"", "msg_1"}} {
		_, err := h.Rollback(ctx, sid, tc.id, tc.msg)
		var he *hostcore.Error
		if !errors.As(err, &he) || he.Code != hostcore.Conflict {
			t.Fatalf("rollback %v after a hand edit: %v, want CONFLICT", tc, err)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a1\n" {
			t.Errorf("rollback %v touched a.txt: %q", tc, b)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(b) != "b by hand\n" {
			t.Errorf("rollback %v touched b.txt: %q", tc, b)
		}
	}
	rows, err := h.DB.Changes(ctx, store.ChangeFilter{SessionID: sid, State: "active"})
	if err != nil || len(rows) != 3 {
		t.Fatalf("active records after refused rollbacks: %d, %v", len(rows), err)
	}
	// A removed file is a conflict too: rollback never resurrects silently.
	if err := os.Remove(filepath.Join(ws, "c", "new.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Rollback(ctx, sid, idNew, ""); hostcore.CodeOf(err) != hostcore.Conflict {
		t.Errorf("rollback of a removed file: %v, want CONFLICT", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "c", "new.txt")); err == nil {
		t.Error("rollback recreated a file removed by hand")
	}
	// Putting b back as the tool left it lets the message roll back whole.
	exWriteFile(t, filepath.Join(ws, "b.txt"), []byte("b1\n"))
	out, err := h.Rollback(ctx, sid, "", "msg_1")
	if err != nil || len(out.RolledBack) != 2 {
		t.Fatalf("message rollback: %+v, %v", out, err)
	}
	for p, want := range map[string]string{"a.txt": "a0\n", "b.txt": "b0\n"} {
		if b, _ := os.ReadFile(filepath.Join(ws, p)); string(b) != want {
			t.Errorf("%s after rollback: %q, want %q", p, b, want)
		}
	}
	if _, err := h.Rollback(ctx, sid, idA, ""); hostcore.CodeOf(err) != hostcore.Conflict {
		t.Errorf("rollback of a rolled-back change: %v, want CONFLICT", err)
	}
	if _, err := h.Rollback(ctx, sid, "rc_nosuchrecord", ""); hostcore.CodeOf(err) != hostcore.NotFound {
		t.Errorf("rollback of an unknown record: %v, want NOT_FOUND", err)
	}
	other := exSession(t, h, exDir(t), hostcore.PermAuto)
	if _, err := h.Rollback(ctx, other, idNew, ""); hostcore.CodeOf(err) != hostcore.NotFound {
		t.Errorf("rollback through another session: %v, want NOT_FOUND", err)
	}
}
