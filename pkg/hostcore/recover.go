package hostcore

import (
	"context"
	"database/sql"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// RecoverResult is what `pi host recover` reports.
type RecoverResult struct {
	Boot                 string   `json:"bootId"`
	CancelledRequests    []string `json:"cancelledRequests"`
	InterruptedAudits    int      `json:"interruptedAudits"`
	DroppedRunning       int      `json:"droppedRunning"`
	InterruptedProposals int      `json:"interruptedProposals"`
}

// Recover does on demand what a host restart does (R-PLAN-6): every pending
// permission request is cancelled (its waiter, if alive, gets TOOL_DENIED),
// pending/queued/running proposals become interrupted without replay, audit
// rows left running by a dead process become interrupted, and registrations
// of dead tool processes are dropped. Nothing is executed.
func (h *Host) Recover(ctx context.Context) (*RecoverResult, error) {
	out := &RecoverResult{Boot: h.Boot, CancelledRequests: []string{}}
	reqs, err := h.DB.PendingRequests(ctx)
	if err != nil {
		return nil, storeErr(err, "pending requests")
	}
	for _, r := range reqs {
		if _, err := h.DB.CloseRequest(ctx, r.RequestID, store.StateCancelled, "recover"); err == nil {
			out.CancelledRequests = append(out.CancelledRequests, r.RequestID)
		}
	}
	h.wake(append(out.CancelledRequests, queueWakeName)...)
	n, err := h.DB.InterruptOrphanAudits(ctx, func(pid int, boot string) bool { return h.alive(pid, boot, "") })
	if err != nil {
		return nil, storeErr(err, "interrupt audits")
	}
	out.InterruptedAudits = n
	err = h.DB.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE proposals SET state = 'interrupted', decided_at = ?
			WHERE state IN ('pending', 'resolving', 'queued', 'running')`, h.Now().UnixMilli())
		if err != nil {
			return err
		}
		p, _ := res.RowsAffected()
		out.InterruptedProposals = int(p)
		return nil
	})
	if err != nil {
		return nil, storeErr(err, "interrupt proposals")
	}
	ss, err := h.DB.Sessions(ctx)
	if err != nil {
		return nil, storeErr(err, "sessions")
	}
	before := h.countRunning(ctx)
	for _, s := range ss {
		h.sweepRunning(ctx, s.ID)
	}
	out.DroppedRunning = before - h.countRunning(ctx)
	return out, nil
}

func (h *Host) countRunning(ctx context.Context) int {
	var n int
	_ = h.DB.SQL().QueryRowContext(ctx, `SELECT count(*) FROM running`).Scan(&n)
	return n
}
