package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// openStore opens a store on a real file in a fresh temp dir.
func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func userVersion(t *testing.T, db *store.DB) int {
	t.Helper()
	var v int
	if err := db.SQL().QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatalf("user_version: %v", err)
	}
	return v
}

func addSession(t *testing.T, db *store.DB, id string) {
	t.Helper()
	if err := db.CreateSession(context.Background(), &store.Session{ID: id, WorkspaceRoot: "/ws/" + id,
		Mode: "agent", PermissionMode: "ask", Turn: 1}); err != nil {
		t.Fatalf("create session %s: %v", id, err)
	}
}

func enqueue(t *testing.T, db *store.DB, session, id, tool string) *store.Request {
	t.Helper()
	r := &store.Request{RequestID: id, SessionID: session, ToolCallID: "tc_" + id, ToolName: tool, Risk: "high",
		Rationale: "test", ArgsPreview: "{}", Workspace: "/ws/" + session,
		DeadlineMs: time.Now().Add(time.Minute).UnixMilli(), WaiterPID: os.Getpid(), WaiterBoot: "boot"}
	if err := db.EnqueueRequest(context.Background(), r); err != nil {
		t.Fatalf("enqueue %s: %v", id, err)
	}
	return r
}

func requestState(t *testing.T, db *store.DB, id string) string {
	t.Helper()
	r, err := db.Request(context.Background(), id)
	if err != nil {
		t.Fatalf("request %s: %v", id, err)
	}
	return r.State
}

// Sixteen first runs at once (like sixteen pi processes on a fresh machine)
// must each get a working store with every migration applied exactly once.
func TestOpenConcurrentMigratesOnce(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	var wg sync.WaitGroup
	start := make(chan struct{})
	dbs := make([]*store.DB, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			dbs[i], errs[i] = store.Open(context.Background(), dir)
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("open %d: %v", i, errs[i])
			continue
		}
		defer dbs[i].Close()
	}
	if t.Failed() {
		return
	}
	want := store.SchemaVersion()
	if want < 1 {
		t.Fatalf("SchemaVersion() = %d, want ≥ 1", want)
	}
	for i, db := range dbs {
		if got := userVersion(t, db); got != want {
			t.Errorf("store %d: user_version = %d, want %d", i, got, want)
		}
	}
	// Every store handle works against the one schema.
	for i, db := range dbs {
		addSession(t, db, fmt.Sprintf("ses_%02d", i))
	}
	ss, err := dbs[0].Sessions(context.Background())
	if err != nil || len(ss) != n {
		t.Fatalf("sessions = %d, %v; want %d", len(ss), err, n)
	}
	// And a later open finds nothing left to do.
	again, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	if got := userVersion(t, again); got != want {
		t.Errorf("after reopen user_version = %d, want %d", got, want)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	newer := store.SchemaVersion() + 1
	if _, err := db.SQL().Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db2, err := store.Open(context.Background(), dir)
	if err == nil {
		db2.Close()
		t.Fatal("a store written by a newer pi was opened")
	}
	if !errors.Is(err, store.ErrNewerSchema) {
		t.Fatalf("error %v does not wrap ErrNewerSchema", err)
	}
	// Refusing must not have downgraded the file.
	raw, err := os.ReadFile(filepath.Join(dir, store.FileName))
	if err != nil || len(raw) == 0 {
		t.Fatalf("store file: %v", err)
	}
}

func TestOpenWAL(t *testing.T) {
	db := openStore(t)
	// Every pooled connection must be in WAL with a busy timeout: hold a few
	// connections at once so the pool really opens several.
	ctx := context.Background()
	var conns []interface{ Close() error }
	for i := range 3 {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var mode string
		var busy int
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		var fk int
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if !strings.EqualFold(mode, "wal") || busy <= 0 || fk != 1 {
			t.Errorf("conn %d: journal_mode=%s busy_timeout=%d foreign_keys=%d", i, mode, busy, fk)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	addSession(t, db, "ses_wal")
	if _, err := os.Stat(db.Path + "-wal"); err != nil {
		t.Errorf("no -wal file next to the store after a write: %v", err)
	}
}

// An answer from a person and a host-side close (timeout, cancelled caller)
// race on the same pending request: exactly one transition wins, the loser
// sees ErrStale and the row ends in the winner's state.
func TestAnswerVersusCloseRace(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	addSession(t, db, "ses_race")
	const rounds = 40
	answered, closed := 0, 0
	for i := range rounds {
		id := fmt.Sprintf("req_race_%02d", i)
		enqueue(t, db, "ses_race", id, "Write")
		var wg sync.WaitGroup
		start := make(chan struct{})
		var aErr, cErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, aErr = db.Answer(ctx, "ses_race", id, store.StateAllowedOnce, "user")
		}()
		go func() {
			defer wg.Done()
			<-start
			_, cErr = db.CloseRequest(ctx, id, store.StateTimeoutDenied, "timeout")
		}()
		close(start)
		wg.Wait()
		state := requestState(t, db, id)
		switch {
		case aErr == nil && errors.Is(cErr, store.ErrStale):
			answered++
			if state != store.StateAllowedOnce {
				t.Errorf("%s: answer won but state is %s", id, state)
			}
		case cErr == nil && errors.Is(aErr, store.ErrStale):
			closed++
			if state != store.StateTimeoutDenied {
				t.Errorf("%s: close won but state is %s", id, state)
			}
		default:
			t.Fatalf("%s: answer err %v, close err %v (want exactly one winner, the other ErrStale)", id, aErr, cErr)
		}
	}
	t.Logf("answer won %d, close won %d of %d", answered, closed, rounds)

	// Two answers racing: one wins, one is stale.
	enqueue(t, db, "ses_race", "req_twice", "Write")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, st := range []string{store.StateAllowedOnce, store.StateDenied} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.Answer(ctx, "", "req_twice", st, "user")
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two answers: %v / %v, want exactly one winner", errs[0], errs[1])
	}
	for _, e := range errs {
		if e != nil && !errors.Is(e, store.ErrStale) {
			t.Errorf("losing answer: %v, want ErrStale", e)
		}
	}
}

func TestAnswerQueueHead(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	addSession(t, db, "ses_q")
	addSession(t, db, "ses_other")
	enqueue(t, db, "ses_q", "req_1", "Write")
	enqueue(t, db, "ses_other", "req_x", "Bash")
	enqueue(t, db, "ses_q", "req_2", "Bash")
	enqueue(t, db, "ses_q", "req_3", "Edit")

	r, err := db.Request(ctx, "req_2")
	if err != nil {
		t.Fatal(err)
	}
	if r.QueuePosition != 2 || r.Waiting != 3 {
		t.Errorf("req_2: position %d waiting %d, want 2 and 3", r.QueuePosition, r.Waiting)
	}
	heads, err := db.Requests(ctx, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range heads {
		ids = append(ids, h.RequestID)
	}
	if !slices.Equal(ids, []string{"req_1", "req_x"}) {
		t.Errorf("heads = %v, want [req_1 req_x]", ids)
	}

	// A queued request cannot be answered before the head.
	if _, err := db.Answer(ctx, "ses_q", "req_2", store.StateAllowedOnce, "user"); !errors.Is(err, store.ErrNotHead) {
		t.Fatalf("answer queued request: %v, want ErrNotHead", err)
	}
	if st := requestState(t, db, "req_2"); st != store.StatePending {
		t.Fatalf("req_2 after refused answer: %s", st)
	}
	// An answer naming another session is NOT_FOUND, and touches nothing.
	if _, err := db.Answer(ctx, "ses_other", "req_1", store.StateDenied, "user"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("answer with foreign session: %v, want ErrNotFound", err)
	}
	if _, err := db.Answer(ctx, "", "req_nope", store.StateDenied, "user"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("answer unknown: %v, want ErrNotFound", err)
	}
	// A host-side close reaches anywhere in the queue.
	if _, err := db.CloseRequest(ctx, "req_3", store.StateCancelled, "caller"); err != nil {
		t.Fatalf("close queued request: %v", err)
	}
	if n, err := db.CloseByToolCall(ctx, "tc_req_3", store.StateCancelled, "caller"); err != nil || n != 0 {
		t.Errorf("close by tool call of a closed request: %d, %v", n, err)
	}
	// Answering the head promotes the next one.
	got, err := db.Answer(ctx, "ses_q", "req_1", store.StateDenied, "user")
	if err != nil || got.State != store.StateDenied || got.DecidedBy != "user" {
		t.Fatalf("answer head: %+v, %v", got, err)
	}
	if _, err := db.Answer(ctx, "ses_q", "req_1", store.StateAllowedOnce, "user"); !errors.Is(err, store.ErrStale) {
		t.Errorf("late answer of a decided request: %v, want ErrStale", err)
	}
	if _, err := db.Answer(ctx, "ses_q", "req_2", store.StateAllowedOnce, "user"); err != nil {
		t.Fatalf("answer new head: %v", err)
	}
	if st := requestState(t, db, "req_x"); st != store.StatePending {
		t.Errorf("other session's request became %s", st)
	}
}

func TestDenyQueueOnlyItsSession(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	addSession(t, db, "ses_a")
	addSession(t, db, "ses_b")
	enqueue(t, db, "ses_a", "req_a1", "Write")
	enqueue(t, db, "ses_b", "req_b1", "Write")
	enqueue(t, db, "ses_a", "req_a2", "Bash")
	enqueue(t, db, "ses_a", "req_a3", "Edit")
	if _, err := db.Answer(ctx, "", "req_a1", store.StateAllowedOnce, "user"); err != nil {
		t.Fatal(err)
	}

	ids, err := db.DenyQueue(ctx, "ses_a", "abort")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{"req_a2", "req_a3"}) {
		t.Errorf("denied %v, want [req_a2 req_a3] (oldest first, pending only)", ids)
	}
	for id, want := range map[string]string{"req_a1": store.StateAllowedOnce, "req_a2": store.StateDenied,
		"req_a3": store.StateDenied, "req_b1": store.StatePending} {
		r, err := db.Request(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.State != want {
			t.Errorf("%s: %s, want %s", id, r.State, want)
		}
		if r.State == store.StateDenied && r.DecidedBy != "abort" {
			t.Errorf("%s decided by %q, want abort", id, r.DecidedBy)
		}
	}
	ids, err = db.DenyQueue(ctx, "ses_a", "abort")
	if err != nil || len(ids) != 0 {
		t.Errorf("second deny: %v, %v; want nothing", ids, err)
	}
}

func TestGrants(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	addSession(t, db, "ses_g")
	addSession(t, db, "ses_h")
	enqueue(t, db, "ses_g", "req_g1", "Bash")
	if _, err := db.Answer(ctx, "ses_g", "req_g1", store.StateAllowedSession, "user"); err != nil {
		t.Fatal(err)
	}
	enqueue(t, db, "ses_g", "req_g2", "Write")
	if _, err := db.Answer(ctx, "ses_g", "req_g2", store.StateAllowedSession, "user"); err != nil {
		t.Fatal(err)
	}
	// allow-once records no grant.
	enqueue(t, db, "ses_h", "req_h1", "Bash")
	if _, err := db.Answer(ctx, "ses_h", "req_h1", store.StateAllowedOnce, "user"); err != nil {
		t.Fatal(err)
	}
	// A second allow-session of the same tool is idempotent.
	enqueue(t, db, "ses_g", "req_g3", "Bash")
	if _, err := db.Answer(ctx, "ses_g", "req_g3", store.StateAllowedSession, "user"); err != nil {
		t.Fatal(err)
	}

	has := func(s, tool string) bool {
		ok, err := db.HasGrant(ctx, s, tool)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !has("ses_g", "Bash") || !has("ses_g", "Write") {
		t.Error("ses_g lacks its allow-session grants")
	}
	if has("ses_h", "Bash") || has("ses_h", "Write") || has("ses_g", "Edit") {
		t.Error("a grant leaked to another session or tool")
	}
	gs, err := db.Grants(ctx, "ses_g")
	if err != nil || len(gs) != 2 {
		t.Fatalf("grants of ses_g: %+v, %v", gs, err)
	}
	for _, g := range gs {
		if g.SessionID != "ses_g" || g.GrantedAt == "" {
			t.Errorf("grant %+v", g)
		}
	}
	all, err := db.Grants(ctx, "")
	if err != nil || len(all) != 2 {
		t.Errorf("all grants: %+v, %v", all, err)
	}
	n, err := db.ClearGrants(ctx, "ses_g", "bash") // tool names match case-insensitively
	if err != nil || n != 1 {
		t.Fatalf("clear bash: %d, %v", n, err)
	}
	if has("ses_g", "Bash") || !has("ses_g", "Write") {
		t.Error("clear of one tool removed the wrong grants")
	}
	n, err = db.ClearGrants(ctx, "ses_g", "")
	if err != nil || n != 1 {
		t.Fatalf("clear all: %d, %v", n, err)
	}
	if gs, _ := db.Grants(ctx, ""); len(gs) != 0 {
		t.Errorf("grants left: %+v", gs)
	}
	// Deleting a session drops its grants and cancels its pending requests.
	enqueue(t, db, "ses_h", "req_h2", "Bash")
	if _, err := db.Answer(ctx, "", "req_h2", store.StateAllowedSession, "user"); err != nil {
		t.Fatal(err)
	}
	enqueue(t, db, "ses_h", "req_h3", "Bash")
	if err := db.DeleteSession(ctx, "ses_h"); err != nil {
		t.Fatal(err)
	}
	if has("ses_h", "Bash") {
		t.Error("grant survived session delete")
	}
	if st := requestState(t, db, "req_h3"); st != store.StateCancelled {
		t.Errorf("pending request after session delete: %s", st)
	}
}

func TestAuditFilterAndOrder(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	clock := time.UnixMilli(1_700_000_000_000)
	db.Now = func() time.Time { return clock }
	type spec struct{ session, tool, decision string }
	rows := []spec{
		{"ses_1", "Read", "auto_allowed"},
		{"ses_1", "Write", "allowed_once"},
		{"ses_2", "Bash", "denied"},
		{"ses_1", "Bash", "auto_allowed"},
		{"ses_2", "Read", "policy_denied"},
		{"ses_1", "Write", "auto_allowed"},
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		clock = clock.Add(time.Second)
		a := &store.AuditRow{SessionID: r.session, Turn: 1, ToolCallID: fmt.Sprintf("tc_%d", i), TraceID: "tr",
			ToolName: r.tool, ArgsHash: "sha256:x", ArgsPreview: "{}", Decision: r.decision, OK: r.decision == "auto_allowed"}
		if err := db.InsertAudit(ctx, a); err != nil {
			t.Fatal(err)
		}
		ids[i] = a.ID
	}
	list := func(f store.AuditFilter) []string {
		var out []string
		if err := db.Audit(ctx, f, func(r *store.AuditRow) error {
			out = append(out, r.ToolCallID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name string
		f    store.AuditFilter
		want []string
	}{
		{"all newest first", store.AuditFilter{}, []string{"tc_5", "tc_4", "tc_3", "tc_2", "tc_1", "tc_0"}},
		{"ascending", store.AuditFilter{Ascending: true}, []string{"tc_0", "tc_1", "tc_2", "tc_3", "tc_4", "tc_5"}},
		{"session", store.AuditFilter{SessionID: "ses_2"}, []string{"tc_4", "tc_2"}},
		{"tool any case", store.AuditFilter{Tool: "write"}, []string{"tc_5", "tc_1"}},
		{"decision", store.AuditFilter{Decision: "auto_allowed"}, []string{"tc_5", "tc_3", "tc_0"}},
		{"session+tool", store.AuditFilter{SessionID: "ses_1", Tool: "Bash"}, []string{"tc_3"}},
		{"since", store.AuditFilter{SinceMs: time.UnixMilli(1_700_000_000_000).Add(4 * time.Second).UnixMilli()},
			[]string{"tc_5", "tc_4", "tc_3"}},
		{"limit", store.AuditFilter{Limit: 2}, []string{"tc_5", "tc_4"}},
		{"limit ascending", store.AuditFilter{Limit: 2, Ascending: true}, []string{"tc_0", "tc_1"}},
		{"nothing", store.AuditFilter{Tool: "Edit"}, nil},
	}
	for _, c := range cases {
		if got := list(c.f); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Errorf("ids not increasing: %v", ids)
		}
	}
	if n, err := db.CountAudit(ctx, ""); err != nil || n != 6 {
		t.Errorf("count all: %d, %v", n, err)
	}
	if n, err := db.CountAudit(ctx, "ses_1"); err != nil || n != 4 {
		t.Errorf("count ses_1: %d, %v", n, err)
	}
	var got *store.AuditRow
	_ = db.Audit(ctx, store.AuditFilter{Limit: 1}, func(r *store.AuditRow) error { got = r; return nil })
	if got == nil || got.State != "done" || got.CreatedAt != store.Time(clock.UnixMilli()) || !got.OK {
		t.Errorf("newest row: %+v", got)
	}
}

// A provisional row (a call about to run a process) survives its owner's
// death as "running" and is then marked interrupted, never lost.
func TestAuditProvisionalAndOrphans(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	live := &store.AuditRow{SessionID: "s", ToolCallID: "tc_live", TraceID: "tr", ToolName: "Bash", ArgsHash: "h",
		ArgsPreview: "{}", Decision: "auto_allowed"}
	dead := &store.AuditRow{SessionID: "s", ToolCallID: "tc_dead", TraceID: "tr", ToolName: "Bash", ArgsHash: "h",
		ArgsPreview: "{}", Decision: "auto_allowed"}
	if err := db.BeginAudit(ctx, live, 100, "boot"); err != nil {
		t.Fatal(err)
	}
	if err := db.BeginAudit(ctx, dead, 200, "boot"); err != nil {
		t.Fatal(err)
	}
	live.OK, live.Timing.DurationMs = true, 7
	if err := db.FinishAudit(ctx, nil, live); err != nil {
		t.Fatal(err)
	}
	n, err := db.InterruptOrphanAudits(ctx, func(pid int, boot string) bool { return pid == 100 })
	if err != nil || n != 1 {
		t.Fatalf("interrupt orphans: %d, %v", n, err)
	}
	states := map[string]*store.AuditRow{}
	_ = db.Audit(ctx, store.AuditFilter{}, func(r *store.AuditRow) error { states[r.ToolCallID] = r; return nil })
	if r := states["tc_live"]; r == nil || r.State != "done" || !r.OK || r.Timing.DurationMs != 7 {
		t.Errorf("finished row: %+v", r)
	}
	if r := states["tc_dead"]; r == nil || r.State != "interrupted" || r.OK || r.ErrorCode != "TOOL_ABORTED" {
		t.Errorf("orphan row: %+v", r)
	}
	if c, _ := db.CountAudit(ctx, "s"); c != 2 {
		t.Errorf("count = %d, want 2", c)
	}
}
