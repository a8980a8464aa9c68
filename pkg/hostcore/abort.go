package hostcore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// AbortResult is what `pi session abort` reports.
type AbortResult struct {
	SessionID        string   `json:"sessionId"`
	DeniedRequests   []string `json:"deniedRequests"`
	StoppedCalls     int      `json:"stoppedCalls"`
	SkippedQuestions int      `json:"skippedQuestions"`
}

var errAborted = errors.New("session aborted")

func abortWakeName(sessionID string) string { return "abort-" + sessionID }

// Abort implements R-PERM-9: deny the session's whole queue, resolve its
// pending questions as skipped, and stop its running tool processes (they
// watch for the abort and kill their process trees).
func (h *Host) Abort(ctx context.Context, id string) (*AbortResult, error) {
	if _, err := h.Session(ctx, id); err != nil {
		return nil, err
	}
	out := &AbortResult{SessionID: id, DeniedRequests: []string{}}
	ids, err := h.DB.DenyQueue(ctx, id, "abort")
	if err != nil {
		return nil, storeErr(err, "deny queue")
	}
	out.DeniedRequests = append(out.DeniedRequests, ids...)
	var skipped int64
	var running int
	err = h.DB.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE ask_requests SET state='skipped', answers='', decided_at=? WHERE session_id=? AND state='pending'`,
			h.Now().UnixMilli(), id)
		if err != nil {
			return err
		}
		skipped, _ = res.RowsAffected()
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET abort_epoch = abort_epoch + 1 WHERE id = ?`, id); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM running WHERE session_id = ? AND tool_name = 'Bash'`, id).Scan(&running)
	})
	if err != nil {
		return nil, storeErr(err, "abort")
	}
	out.SkippedQuestions = int(skipped)
	h.wake(append(ids, abortWakeName(id))...)
	out.StoppedCalls = h.awaitStopped(ctx, id, running)
	return out, nil
}

// awaitStopped waits briefly for the session's running calls to notice the
// abort and unregister; any whose owner has died is swept. It returns how
// many calls were running when the abort was given.
func (h *Host) awaitStopped(ctx context.Context, id string, running int) int {
	if running == 0 {
		return 0
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := h.DB.SQL().QueryRowContext(ctx, `SELECT count(*) FROM running WHERE session_id = ? AND tool_name = 'Bash'`, id).Scan(&n); err != nil || n == 0 {
			break
		}
		h.sweepRunning(ctx, id)
		time.Sleep(20 * time.Millisecond)
	}
	return running
}

// sweepRunning drops running rows whose process is gone.
func (h *Host) sweepRunning(ctx context.Context, id string) {
	rows, err := h.DB.SQL().QueryContext(ctx, `SELECT tool_call_id, pid, boot_id FROM running WHERE session_id = ?`, id)
	if err != nil {
		return
	}
	var dead []string
	for rows.Next() {
		var tc, boot string
		var pid int
		if rows.Scan(&tc, &pid, &boot) == nil && !h.alive(pid, boot, "") {
			dead = append(dead, tc)
		}
	}
	rows.Close()
	for _, tc := range dead {
		_ = h.DB.Tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM running WHERE tool_call_id = ?`, tc)
			return err
		})
	}
}

// watchAbort returns a context that is cancelled (cause errAborted) when the
// session is aborted from any process after this call started.
func (h *Host) watchAbort(ctx context.Context, s *store.Session) (context.Context, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	w := h.watch(abortWakeName(s.ID))
	start := s.AbortEpoch
	check := func() bool {
		var epoch int64
		err := h.DB.SQL().QueryRowContext(cctx, `SELECT abort_epoch FROM sessions WHERE id = ?`, s.ID).Scan(&epoch)
		return err == nil && epoch != start
	}
	go func() {
		t := time.NewTicker(backstop)
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-w.C:
			case <-t.C:
			}
			if check() {
				cancel(errAborted)
				return
			}
		}
	}()
	return cctx, func() { cancel(nil); w.close() }
}
