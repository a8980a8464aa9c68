package store

import (
	"context"
	"database/sql"
	"strings"
)

// Timing is the segmented timing of R-AUD-2.
type Timing struct {
	Prompted         bool  `json:"prompted"`
	PermissionWaitMs int64 `json:"permissionWaitMs"`
	DurationMs       int64 `json:"durationMs"`
	OverheadMs       int64 `json:"overheadMs"`
	TotalMs          int64 `json:"totalMs"`
}

// AuditRow is one tool call, allowed or not (R-AUD-1). JSON names are the
// CLI.md contract.
type AuditRow struct {
	ID           int64  `json:"id"`
	SessionID    string `json:"sessionId"`
	Turn         int    `json:"turn"`
	ToolCallID   string `json:"toolCallId"`
	TraceID      string `json:"traceId"`
	ToolName     string `json:"toolName"`
	Delegate     string `json:"delegate"`
	ArgsHash     string `json:"argsHash"`
	ArgsPreview  string `json:"argsPreview"`
	PathClass    string `json:"pathClass,omitempty"`
	ExternalPath string `json:"externalPath,omitempty"`
	Decision     string `json:"decision"`
	OK           bool   `json:"ok"`
	ErrorCode    string `json:"errorCode"`
	RequestID    string `json:"requestId,omitempty"`
	Timing       Timing `json:"timing"`
	State        string `json:"state"` // running | done | interrupted
	CreatedAt    string `json:"createdAt"`
	createdMs    int64
	pid          int
	boot         string
}

// AuditFilter narrows audit queries. Zero values mean "any".
type AuditFilter struct {
	SessionID string
	Tool      string
	Decision  string
	SinceMs   int64
	Limit     int // 0 = no limit
	Ascending bool
}

const auditCols = `id, session_id, turn, tool_call_id, trace_id, tool_name, delegate, args_hash, args_preview,
 path_class, external_path, decision, ok, error_code, request_id, prompted, permission_wait_ms, duration_ms,
 overhead_ms, total_ms, state, created_at`

// InsertAudit writes a finished row (state done) and returns its id.
func (db *DB) InsertAudit(ctx context.Context, r *AuditRow) error {
	return db.tx(ctx, func(tx *sql.Tx) error { return insertAudit(ctx, tx, r, db.nowMs()) })
}

// InsertAuditTx is InsertAudit inside a caller's transaction, so a result
// and its audit row commit together.
func (db *DB) InsertAuditTx(ctx context.Context, tx *sql.Tx, r *AuditRow) error {
	return insertAudit(ctx, tx, r, db.nowMs())
}

func insertAudit(ctx context.Context, tx *sql.Tx, r *AuditRow, now int64) error {
	if r.State == "" {
		r.State = "done"
	}
	if r.createdMs == 0 {
		r.createdMs = now
	}
	r.CreatedAt = Time(r.createdMs)
	res, err := tx.ExecContext(ctx, `INSERT INTO audit (session_id, turn, tool_call_id, trace_id, tool_name, delegate,
		args_hash, args_preview, path_class, external_path, decision, ok, error_code, request_id, prompted,
		permission_wait_ms, duration_ms, overhead_ms, total_ms, state, pid, boot_id, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.SessionID, r.Turn, r.ToolCallID, r.TraceID, r.ToolName, r.Delegate, r.ArgsHash, r.ArgsPreview,
		r.PathClass, r.ExternalPath, r.Decision, b2i(r.OK), r.ErrorCode, r.RequestID, b2i(r.Timing.Prompted),
		r.Timing.PermissionWaitMs, r.Timing.DurationMs, r.Timing.OverheadMs, r.Timing.TotalMs, r.State,
		r.pid, r.boot, r.createdMs)
	if err != nil {
		return err
	}
	r.ID, err = res.LastInsertId()
	return err
}

// BeginAudit writes a provisional row (state running) for a call that is
// about to block or run a process, so that even a SIGKILL leaves a trace;
// FinishAudit completes it. pid and boot identify the owner for recovery.
func (db *DB) BeginAudit(ctx context.Context, r *AuditRow, pid int, boot string) error {
	r.State, r.pid, r.boot = "running", pid, boot
	return db.InsertAudit(ctx, r)
}

// FinishAudit overwrites a provisional row with the final outcome.
func (db *DB) FinishAudit(ctx context.Context, tx *sql.Tx, r *AuditRow) error {
	r.State = "done"
	q := `UPDATE audit SET path_class=?, external_path=?, decision=?, ok=?, error_code=?, request_id=?, prompted=?,
		permission_wait_ms=?, duration_ms=?, overhead_ms=?, total_ms=?, state='done', args_preview=? WHERE id=?`
	args := []any{r.PathClass, r.ExternalPath, r.Decision, b2i(r.OK), r.ErrorCode, r.RequestID, b2i(r.Timing.Prompted),
		r.Timing.PermissionWaitMs, r.Timing.DurationMs, r.Timing.OverheadMs, r.Timing.TotalMs, r.ArgsPreview, r.ID}
	if tx != nil {
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	return db.tx(ctx, func(tx *sql.Tx) error { _, err := tx.ExecContext(ctx, q, args...); return err })
}

// InterruptOrphanAudits marks running rows whose owner is dead as
// interrupted (decision kept, errorCode TOOL_ABORTED). alive reports owner
// liveness.
func (db *DB) InterruptOrphanAudits(ctx context.Context, alive func(pid int, boot string) bool) (int, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, pid, boot_id FROM audit WHERE state = 'running'`)
	if err != nil {
		return 0, err
	}
	var dead []int64
	for rows.Next() {
		var id int64
		var pid int
		var boot string
		if err := rows.Scan(&id, &pid, &boot); err != nil {
			rows.Close()
			return 0, err
		}
		if !alive(pid, boot) {
			dead = append(dead, id)
		}
	}
	rows.Close()
	if len(dead) == 0 {
		return 0, rows.Err()
	}
	err = db.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range dead {
			if _, err := tx.ExecContext(ctx, `UPDATE audit SET state='interrupted', ok=0,
				error_code=CASE WHEN error_code='' THEN 'TOOL_ABORTED' ELSE error_code END WHERE id=? AND state='running'`, id); err != nil {
				return err
			}
		}
		return nil
	})
	return len(dead), err
}

// Audit lists rows, newest first unless f.Ascending.
func (db *DB) Audit(ctx context.Context, f AuditFilter, each func(*AuditRow) error) error {
	var where []string
	var args []any
	if f.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, f.SessionID)
	}
	if f.Tool != "" {
		where, args = append(where, "tool_name = ? COLLATE NOCASE"), append(args, f.Tool)
	}
	if f.Decision != "" {
		where, args = append(where, "decision = ?"), append(args, f.Decision)
	}
	if f.SinceMs > 0 {
		where, args = append(where, "created_at >= ?"), append(args, f.SinceMs)
	}
	q := `SELECT ` + auditCols + ` FROM audit`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Ascending {
		q += " ORDER BY id ASC"
	} else {
		q += " ORDER BY id DESC"
	}
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r AuditRow
		var ok, prompted int
		if err := rows.Scan(&r.ID, &r.SessionID, &r.Turn, &r.ToolCallID, &r.TraceID, &r.ToolName, &r.Delegate,
			&r.ArgsHash, &r.ArgsPreview, &r.PathClass, &r.ExternalPath, &r.Decision, &ok, &r.ErrorCode, &r.RequestID,
			&prompted, &r.Timing.PermissionWaitMs, &r.Timing.DurationMs, &r.Timing.OverheadMs, &r.Timing.TotalMs,
			&r.State, &r.createdMs); err != nil {
			return err
		}
		r.OK, r.Timing.Prompted = ok != 0, prompted != 0
		r.CreatedAt = Time(r.createdMs)
		if err := each(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CountAudit counts rows for a session ("" = all).
func (db *DB) CountAudit(ctx context.Context, sessionID string) (int, error) {
	var n int
	q, args := `SELECT count(*) FROM audit`, []any{}
	if sessionID != "" {
		q, args = q+` WHERE session_id = ?`, append(args, sessionID)
	}
	err := db.sql.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}
