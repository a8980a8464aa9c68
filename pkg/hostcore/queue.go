package hostcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// backstop is the slow poll under the directory notification: if a wake-up
// is ever lost (a file system without inotify), the store is still read.
const backstop = time.Second

// Decision strings a person (or script) gives (CLI.md).
const (
	DecideAllowOnce    = "allow-once"
	DecideAllowSession = "allow-session"
	DecideDeny         = "deny"
)

// target is what a card records about an explicit path: both strings (the
// one supplied and the canonical one) so a person sees what the link hides.
type target struct {
	Input     string    `json:"input"`
	Canonical string    `json:"canonical"`
	Class     PathClass `json:"class"`
	Escape    string    `json:"escape,omitempty"`
}

// askPermission enqueues a card and blocks until it is answered, times out,
// is aborted or the caller goes away. It returns the audit decision and the
// request id; a nil error means the call may run.
func (h *Host) askPermission(ctx context.Context, s *store.Session, def *ToolDef, call *Call, rp *Resolved, preview, rationale string) (string, string, error) {
	h.sweepSession(ctx, s.ID)
	req := &store.Request{
		RequestID: NewID("req_"), SessionID: s.ID, ToolCallID: call.ToolCallID, ToolName: def.Name,
		Risk: string(def.Risk), Rationale: rationale, ArgsPreview: preview, Workspace: s.WorkspaceRoot,
		Delegate: call.Delegate, DeadlineMs: h.Now().Add(h.permissionTimeout()).UnixMilli(),
		WaiterPID: h.PID, WaiterBoot: h.Boot, WaiterStart: h.Start,
	}
	if rp != nil {
		if rp.Class == ClassExternal {
			req.Risk = string(maxRisk(def.Risk, RiskMedium))
		}
		req.Target, _ = json.Marshal(target{Input: rp.Input, Canonical: rp.Canonical, Class: rp.Class, Escape: rp.Escape})
	}
	// Watch before enqueueing, so an answer that races the enqueue is not lost.
	w := h.watch(req.RequestID)
	defer w.close()
	if err := h.DB.EnqueueRequest(ctx, req); err != nil {
		return "policy_denied", "", storeErr(err, "enqueue permission request")
	}
	defer os.Remove(filepath.Join(h.WakeDir(), req.RequestID))
	h.wake(queueWakeName)
	fmt.Fprintf(h.Notices, "waiting for permission %s: pi permission respond %s --decision allow-once|allow-session|deny\n",
		req.RequestID, req.RequestID)

	for {
		cur, err := h.DB.Request(context.WithoutCancel(ctx), req.RequestID)
		if err != nil {
			return "cancelled", req.RequestID, storeErr(err, "read permission request")
		}
		if cur.State != store.StatePending {
			return outcomeOf(cur, def)
		}
		remaining := time.UnixMilli(cur.DeadlineMs).Sub(h.Now())
		if remaining <= 0 {
			r, err := h.DB.CloseRequest(context.WithoutCancel(ctx), req.RequestID, store.StateTimeoutDenied, "timeout")
			if err != nil && !errors.Is(err, store.ErrStale) {
				return "timeout_denied", req.RequestID, storeErr(err, "close permission request")
			}
			return outcomeOf(r, def)
		}
		select {
		case <-ctx.Done():
			// The caller went away: its tool call's requests are host-closed
			// by tool call id, wherever they sit in the queue (R-PERM-8).
			dctx := context.WithoutCancel(ctx)
			if _, err := h.DB.CloseByToolCall(dctx, call.ToolCallID, store.StateCancelled, "caller"); err != nil {
				return "cancelled", req.RequestID, storeErr(err, "close permission request")
			}
			h.wake(queueWakeName)
			if r, err := h.DB.Request(dctx, req.RequestID); err == nil && r.State != store.StateCancelled {
				// An answer won the race; the caller is gone all the same.
				return "cancelled", req.RequestID, Errf(ToolAborted, "the waiting call was interrupted")
			}
			return "cancelled", req.RequestID, Errf(ToolAborted, "the waiting call was interrupted; its permission request was cancelled")
		case <-w.C:
		case <-time.After(min(remaining, backstop)):
		}
	}
}

func maxRisk(a, b Risk) Risk {
	rank := map[Risk]int{RiskLow: 0, RiskMedium: 1, RiskHigh: 2}
	if rank[a] >= rank[b] {
		return a
	}
	return b
}

func (h *Host) permissionTimeout() time.Duration {
	if h.Cfg.PermissionTimeout > 0 {
		return h.Cfg.PermissionTimeout
	}
	return 120 * time.Second
}

// outcomeOf maps a decided request to the audit decision and the error the
// waiting call returns (nil = run).
func outcomeOf(r *store.Request, def *ToolDef) (string, string, error) {
	switch r.State {
	case store.StateAllowedOnce:
		return "allowed_once", r.RequestID, nil
	case store.StateAllowedSession:
		return "allowed_session", r.RequestID, nil
	case store.StateTimeoutDenied:
		return "timeout_denied", r.RequestID, Errf(PermissionTimeout, "permission request for %s timed out and was denied (no answer before %s)", def.Name, r.Deadline)
	case store.StateCancelled:
		return "cancelled", r.RequestID, Errf(ToolDenied, "permission request for %s was cancelled (%s)", def.Name, r.DecidedBy)
	}
	if r.DecidedBy == "abort" {
		return "aborted", r.RequestID, Errf(ToolDenied, "user denied permission for %s (the session was aborted)", def.Name)
	}
	return "denied", r.RequestID, Errf(ToolDenied, "user denied permission for %s", def.Name)
}

// wake tells waiters that a request (or session) changed: the store is the
// truth, this file is only the nudge.
func (h *Host) wake(names ...string) {
	dir := h.WakeDir()
	_ = os.MkdirAll(dir, 0o700)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600); err == nil {
			_, _ = f.Write([]byte{'.'})
			f.Close()
		}
	}
}

// watcher is a directory notification on the wake dir, filtered to a few
// names. C gets a (coalesced) tick per relevant write; if notification is
// unavailable C never fires and the backstop poll drives the loop.
type watcher struct {
	w *fsnotify.Watcher
	C chan struct{}
}

func (h *Host) watch(names ...string) *watcher {
	dir := h.WakeDir()
	_ = os.MkdirAll(dir, 0o700)
	out := &watcher{C: make(chan struct{}, 1)}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return out
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return out
	}
	out.w = fw
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	go func() {
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if len(want) == 0 || want[filepath.Base(ev.Name)] {
					out.tick()
				}
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
				out.tick() // overflow: re-read the store
			}
		}
	}()
	return out
}

func (w *watcher) tick() {
	select {
	case w.C <- struct{}{}:
	default:
	}
}

func (w *watcher) close() {
	if w.w != nil {
		w.w.Close()
	}
}

// sweepSession closes requests of a session whose deadline passed
// (timeout_denied) or whose waiting process is gone (cancelled), so that
// nothing waits forever behind a dead card.
func (h *Host) sweepSession(ctx context.Context, sessionID string) {
	reqs, err := h.DB.Requests(ctx, sessionID, true)
	if err != nil {
		return
	}
	h.sweep(ctx, reqs)
}

func (h *Host) sweep(ctx context.Context, reqs []*store.Request) {
	now := h.Now().UnixMilli()
	for _, r := range reqs {
		switch {
		case r.WaiterPID == h.PID && r.WaiterBoot == h.Boot:
			continue
		case !h.alive(r.WaiterPID, r.WaiterBoot, r.WaiterStart):
			if _, err := h.DB.CloseRequest(ctx, r.RequestID, store.StateCancelled, "waiter-gone"); err == nil {
				h.wake(r.RequestID)
			}
		case r.DeadlineMs <= now:
			if _, err := h.DB.CloseRequest(ctx, r.RequestID, store.StateTimeoutDenied, "timeout"); err == nil {
				h.wake(r.RequestID)
			}
		}
	}
}

// ListRequests returns head cards (or every pending request with all) after
// closing dead and expired ones.
func (h *Host) ListRequests(ctx context.Context, sessionID string, all bool) ([]*store.Request, error) {
	if sessionID != "" {
		if _, err := h.Session(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	if pend, err := h.DB.Requests(ctx, sessionID, true); err == nil {
		h.sweep(ctx, pend)
	}
	reqs, err := h.DB.Requests(ctx, sessionID, all)
	if err != nil {
		return nil, storeErr(err, "list requests")
	}
	if reqs == nil {
		reqs = []*store.Request{}
	}
	return reqs, nil
}

// ShowRequest returns one request. With sessionID set, a request of another
// session is NOT_FOUND (CLI.md).
func (h *Host) ShowRequest(ctx context.Context, sessionID, id string) (*store.Request, error) {
	if pend, err := h.DB.Requests(ctx, "", true); err == nil {
		h.sweep(ctx, pend)
	}
	r, err := h.DB.Request(ctx, id)
	if err != nil || (sessionID != "" && r.SessionID != sessionID) {
		return nil, Errf(NotFound, "permission request %s not found", id)
	}
	return r, nil
}

// Respond answers a request by id (R-PERM-8): unknown or foreign ids are
// NOT_FOUND, answered or expired ones CONFLICT, a request queued behind its
// session's head CONFLICT; the transition is one guarded transaction.
func (h *Host) Respond(ctx context.Context, sessionID, id, decision string) (*store.Request, error) {
	state := map[string]string{DecideAllowOnce: store.StateAllowedOnce, DecideAllowSession: store.StateAllowedSession,
		DecideDeny: store.StateDenied}[decision]
	if state == "" {
		return nil, Errf(InvalidArgument, "invalid decision %q (allow-once, allow-session or deny)", decision)
	}
	if pend, err := h.DB.Requests(ctx, "", true); err == nil {
		h.sweep(ctx, pend)
	}
	r, err := h.DB.Answer(ctx, sessionID, id, state, "user")
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, Errf(NotFound, "permission request %s not found", id)
	case errors.Is(err, store.ErrStale):
		return r, &Error{Code: Conflict, Message: fmt.Sprintf("permission request %s is no longer pending (it is %s)", id, r.State),
			Details: map[string]any{"state": r.State}}
	case errors.Is(err, store.ErrNotHead):
		return nil, Errf(Conflict, "permission request %s is queued; answer the head of its session's queue first: %v", id, err)
	case err != nil:
		return nil, storeErr(err, "answer request")
	}
	h.wake(r.RequestID)
	return r, nil
}

const queueWakeName = "queue"

// QueueChanges returns a channel that ticks whenever any request is
// enqueued or decided (for `pi permission watch`), and its stop func.
func (h *Host) QueueChanges() (<-chan struct{}, func()) {
	w := h.watch()
	return w.C, w.close
}

// Grants lists allow-session grants of a session ("" = every session).
func (h *Host) Grants(ctx context.Context, sessionID string) ([]store.Grant, error) {
	if sessionID != "" {
		if _, err := h.Session(ctx, sessionID); err != nil {
			return nil, err
		}
	}
	gs, err := h.DB.Grants(ctx, sessionID)
	return gs, storeErr(err, "list grants")
}

// ClearGrants revokes a session's grants (tool "" = all).
func (h *Host) ClearGrants(ctx context.Context, sessionID, tool string) (int, error) {
	if _, err := h.Session(ctx, sessionID); err != nil {
		return 0, err
	}
	n, err := h.DB.ClearGrants(ctx, sessionID, tool)
	return n, storeErr(err, "clear grants")
}
