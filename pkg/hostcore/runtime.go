package hostcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// tools returns this host's registry, built once per host.
func (h *Host) tools() *Registry {
	if h.registry == nil {
		r := NewRegistry()
		r.Add(h.readTool())
		r.Add(h.globTool())
		r.Add(h.grepTool())
		r.Add(h.previewTool())
		for _, t := range h.extraTools() {
			r.Add(t)
		}
		r.Add(h.toolSearchTool())
		r.Add(h.newContextTool())
		r.Add(h.enterModeTool("EnterPlanMode", ModePlan))
		r.Add(h.enterModeTool("EnterGoalMode", ModeGoal))
		h.registry = r
	}
	return h.registry
}

// Tools exposes the registry (for `pi tool schema`, docs and tests).
func (h *Host) Tools() *Registry { return h.tools() }

// registerRunning records a call in flight (for abort and for the
// only-call-in-flight rule of mode tools) and returns its unregister func.
func (h *Host) registerRunning(ctx context.Context, s *store.Session, def *ToolDef, call *Call, exclusive bool) (func(), error) {
	err := h.DB.Tx(ctx, func(tx *sql.Tx) error {
		if exclusive {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM requests WHERE session_id = ? AND state = 'pending'`, s.ID).Scan(&n); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `SELECT pid, boot_id FROM running WHERE session_id = ?`, s.ID)
			if err != nil {
				return err
			}
			for rows.Next() {
				var pid int
				var boot string
				if err := rows.Scan(&pid, &boot); err != nil {
					rows.Close()
					return err
				}
				if h.alive(pid, boot, "") {
					n++
				}
			}
			rows.Close()
			if n > 0 {
				return Errf(Conflict, "%s must be the only tool call of its batch; %d other call(s) of this session are in flight", def.Name, n)
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO running(tool_call_id, session_id, tool_name, pid, boot_id, started_at)
			VALUES(?,?,?,?,?,?)`, call.ToolCallID, s.ID, def.Name, h.PID, h.Boot, h.Now().UnixMilli())
		return err
	})
	if err != nil {
		return nil, storeErr(err, "register call")
	}
	return func() {
		_ = h.DB.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM running WHERE tool_call_id = ? AND pid = ?`, call.ToolCallID, h.PID)
			return err
		})
	}, nil
}

// acquireMutation takes the session's mutation permit, then a global slot
// (R-MUT-1): a queued mutation never holds global capacity while it waits
// for its own session. Both are file locks, so they serialise processes and
// vanish with a crashed holder.
func (h *Host) acquireMutation(ctx context.Context, sessionID string) (func(), error) {
	dir := h.LockDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, Wrap(ToolFailed, err, "lock dir")
	}
	sess := flock.New(filepath.Join(dir, "session-"+sessionID+".lock"))
	ok, err := sess.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return nil, lockErr(ctx, err)
	}
	slots := h.Cfg.MutationSlots
	if slots <= 0 {
		slots = 4
	}
	for {
		for i := 0; i < slots; i++ {
			slot := flock.New(filepath.Join(dir, fmt.Sprintf("mutation-slot-%d.lock", i)))
			if got, err := slot.TryLock(); err == nil && got {
				return func() { slot.Unlock(); sess.Unlock() }, nil
			}
		}
		select {
		case <-ctx.Done():
			sess.Unlock()
			return nil, lockErr(ctx, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func lockErr(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Errf(ToolAborted, "stopped while waiting for this session's mutation lock")
	}
	return Wrap(ToolFailed, err, "mutation lock")
}
