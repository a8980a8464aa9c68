package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Request states (SPEC §1).
const (
	StatePending        = "pending"
	StateAllowedOnce    = "allowed_once"
	StateAllowedSession = "allowed_session"
	StateDenied         = "denied"
	StateTimeoutDenied  = "timeout_denied"
	StateCancelled      = "cancelled"
)

// ErrNotHead is returned when an answer targets a request that is queued
// behind another one of its session (R-PERM-8: only the head is answerable).
var ErrNotHead = errors.New("request is not at the head of its session's queue")

// Request is one permission card. JSON names are the CLI.md contract.
type Request struct {
	RequestID     string          `json:"requestId"`
	SessionID     string          `json:"sessionId"`
	ToolCallID    string          `json:"toolCallId"`
	ToolName      string          `json:"toolName"`
	Risk          string          `json:"risk"`
	Rationale     string          `json:"rationale"`
	ArgsPreview   string          `json:"argsPreview"`
	Workspace     string          `json:"workspace"`
	Delegate      string          `json:"delegate"`
	State         string          `json:"state"`
	DecidedBy     string          `json:"decidedBy,omitempty"`
	CreatedAt     string          `json:"createdAt"`
	Deadline      string          `json:"deadline"`
	DecidedAt     string          `json:"decidedAt,omitempty"`
	QueuePosition int             `json:"queuePosition"`
	Waiting       int             `json:"waiting"`
	Target        json.RawMessage `json:"target,omitempty"`

	Seq         int64  `json:"-"`
	CreatedMs   int64  `json:"-"`
	DeadlineMs  int64  `json:"-"`
	WaiterPID   int    `json:"-"`
	WaiterBoot  string `json:"-"`
	WaiterStart string `json:"-"`
}

const requestCols = `request_id, seq, session_id, tool_call_id, tool_name, risk, rationale, args_preview, workspace,
 delegate, state, decided_by, created_at, deadline, COALESCE(decided_at, 0), waiter_pid, waiter_boot, waiter_start, target`

func scanRequest(row interface{ Scan(...any) error }) (*Request, error) {
	var r Request
	var decided int64
	var target string
	err := row.Scan(&r.RequestID, &r.Seq, &r.SessionID, &r.ToolCallID, &r.ToolName, &r.Risk, &r.Rationale,
		&r.ArgsPreview, &r.Workspace, &r.Delegate, &r.State, &r.DecidedBy, &r.CreatedMs, &r.DeadlineMs, &decided,
		&r.WaiterPID, &r.WaiterBoot, &r.WaiterStart, &target)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r.CreatedAt, r.Deadline, r.DecidedAt = Time(r.CreatedMs), Time(r.DeadlineMs), Time(decided)
	if target != "" && target != "{}" {
		r.Target = json.RawMessage(target)
	}
	return &r, nil
}

// EnqueueRequest appends r to its session's queue (FIFO by a global sequence).
func (db *DB) EnqueueRequest(ctx context.Context, r *Request) error {
	r.CreatedMs = db.nowMs()
	if r.DeadlineMs == 0 {
		return fmt.Errorf("enqueue request: no deadline")
	}
	r.State = StatePending
	target := "{}"
	if len(r.Target) > 0 {
		target = string(r.Target)
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM requests`).Scan(&r.Seq); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO requests (request_id, seq, session_id, tool_call_id, tool_name, risk,
			rationale, args_preview, workspace, delegate, state, created_at, deadline, waiter_pid, waiter_boot, waiter_start, target)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			r.RequestID, r.Seq, r.SessionID, r.ToolCallID, r.ToolName, r.Risk, r.Rationale, r.ArgsPreview, r.Workspace,
			r.Delegate, r.State, r.CreatedMs, r.DeadlineMs, r.WaiterPID, r.WaiterBoot, r.WaiterStart, target)
		r.CreatedAt, r.Deadline = Time(r.CreatedMs), Time(r.DeadlineMs)
		return err
	})
}

// Request returns one request by id (any state), with its queue position.
func (db *DB) Request(ctx context.Context, id string) (*Request, error) {
	r, err := scanRequest(db.sql.QueryRowContext(ctx, `SELECT `+requestCols+` FROM requests WHERE request_id = ?`, id))
	if err != nil {
		return nil, err
	}
	return r, db.fillQueue(ctx, db.sql, r)
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// fillQueue sets QueuePosition (1 = head, 0 = not pending) and Waiting (the
// number of pending requests in the session).
func (db *DB) fillQueue(ctx context.Context, q querier, r *Request) error {
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM requests WHERE session_id = ? AND state = 'pending'`,
		r.SessionID).Scan(&r.Waiting); err != nil {
		return err
	}
	r.QueuePosition = 0
	if r.State == StatePending {
		return q.QueryRowContext(ctx, `SELECT count(*) FROM requests WHERE session_id = ? AND state = 'pending' AND seq <= ?`,
			r.SessionID, r.Seq).Scan(&r.QueuePosition)
	}
	return nil
}

// Requests lists requests: pending ones (every position when all, else only
// each session's head), oldest first. sessionID "" means every session.
func (db *DB) Requests(ctx context.Context, sessionID string, all bool) ([]*Request, error) {
	q := `SELECT ` + requestCols + ` FROM requests r WHERE state = 'pending'`
	var args []any
	if sessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, sessionID)
	}
	if !all {
		q += ` AND seq = (SELECT MIN(seq) FROM requests h WHERE h.session_id = r.session_id AND h.state = 'pending')`
	}
	q += ` ORDER BY seq`
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var out []*Request
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, r := range out {
		if err := db.fillQueue(ctx, db.sql, r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Answer moves a head request from pending to state (allowed_once,
// allowed_session or denied) in one guarded transaction; allowed_session
// also records the grant. It returns ErrNotFound for an unknown id or one
// owned by another session (when sessionID is set), ErrStale (with the
// current row) when it is no longer pending, ErrNotHead when it is queued
// behind another request.
func (db *DB) Answer(ctx context.Context, sessionID, id, state, by string) (*Request, error) {
	var out *Request
	err := db.tx(ctx, func(tx *sql.Tx) error {
		r, err := scanRequest(tx.QueryRowContext(ctx, `SELECT `+requestCols+` FROM requests WHERE request_id = ?`, id))
		if err != nil {
			return err
		}
		if sessionID != "" && r.SessionID != sessionID {
			return ErrNotFound
		}
		out = r
		if r.State != StatePending {
			return ErrStale
		}
		var head string
		if err := tx.QueryRowContext(ctx, `SELECT request_id FROM requests WHERE session_id = ? AND state = 'pending'
			ORDER BY seq LIMIT 1`, r.SessionID).Scan(&head); err != nil {
			return err
		}
		if head != r.RequestID {
			return fmt.Errorf("%w (head is %s)", ErrNotHead, head)
		}
		if err := db.transition(ctx, tx, r, state, by); err != nil {
			return err
		}
		if state == StateAllowedSession {
			if _, err := tx.ExecContext(ctx, `INSERT INTO grants(session_id, tool_name, granted_at) VALUES(?,?,?)
				ON CONFLICT(session_id, tool_name) DO NOTHING`, r.SessionID, r.ToolName, db.nowMs()); err != nil {
				return err
			}
		}
		return db.fillQueue(ctx, tx, r)
	})
	return out, err
}

func (db *DB) transition(ctx context.Context, tx *sql.Tx, r *Request, state, by string) error {
	now := db.nowMs()
	res, err := tx.ExecContext(ctx, `UPDATE requests SET state = ?, decided_by = ?, decided_at = ?
		WHERE request_id = ? AND state = 'pending'`, state, by, now, r.RequestID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrStale
	}
	r.State, r.DecidedBy, r.DecidedAt = state, by, Time(now)
	return nil
}

// CloseRequest is a host-side close (timeout, cancel) of a request wherever it
// sits in the queue. It returns ErrStale with the current row if it was
// already decided: the caller then honours that decision instead.
func (db *DB) CloseRequest(ctx context.Context, id, state, by string) (*Request, error) {
	var out *Request
	err := db.tx(ctx, func(tx *sql.Tx) error {
		r, err := scanRequest(tx.QueryRowContext(ctx, `SELECT `+requestCols+` FROM requests WHERE request_id = ?`, id))
		if err != nil {
			return err
		}
		out = r
		if r.State != StatePending {
			return ErrStale
		}
		return db.transition(ctx, tx, r, state, by)
	})
	return out, err
}

// CloseByToolCall closes the pending requests of a tool call, wherever they
// sit in the queue (R-PERM-8), and returns how many it closed.
func (db *DB) CloseByToolCall(ctx context.Context, toolCallID, state, by string) (int, error) {
	var n int64
	err := db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE requests SET state = ?, decided_by = ?, decided_at = ?
			WHERE tool_call_id = ? AND state = 'pending'`, state, by, db.nowMs(), toolCallID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// DenyQueue denies every pending request of a session (abort, R-PERM-9) and
// returns their ids.
func (db *DB) DenyQueue(ctx context.Context, sessionID, by string) ([]string, error) {
	var ids []string
	err := db.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT request_id FROM requests WHERE session_id = ? AND state = 'pending' ORDER BY seq`, sessionID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		_, err = tx.ExecContext(ctx, `UPDATE requests SET state = 'denied', decided_by = ?, decided_at = ?
			WHERE session_id = ? AND state = 'pending'`, by, db.nowMs(), sessionID)
		return err
	})
	return ids, err
}

// PendingRequests returns every pending request (for liveness and deadline
// sweeps).
func (db *DB) PendingRequests(ctx context.Context) ([]*Request, error) {
	return db.Requests(ctx, "", true)
}

// Grant is an allow-session grant (R-PERM-2, R-PERM-12).
type Grant struct {
	SessionID string `json:"sessionId"`
	ToolName  string `json:"toolName"`
	GrantedAt string `json:"grantedAt"`
}

// HasGrant reports whether the session holds an allow-session grant for tool.
func (db *DB) HasGrant(ctx context.Context, sessionID, tool string) (bool, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM grants WHERE session_id = ? AND tool_name = ?`, sessionID, tool).Scan(&n)
	return n > 0, err
}

// Grants lists grants of a session ("" = all sessions).
func (db *DB) Grants(ctx context.Context, sessionID string) ([]Grant, error) {
	q, args := `SELECT session_id, tool_name, granted_at FROM grants`, []any{}
	if sessionID != "" {
		q, args = q+` WHERE session_id = ?`, append(args, sessionID)
	}
	rows, err := db.sql.QueryContext(ctx, q+` ORDER BY granted_at, tool_name`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Grant{}
	for rows.Next() {
		var g Grant
		var at int64
		if err := rows.Scan(&g.SessionID, &g.ToolName, &at); err != nil {
			return nil, err
		}
		g.GrantedAt = Time(at)
		out = append(out, g)
	}
	return out, rows.Err()
}

// ClearGrants removes a session's grants (tool "" = all) and returns the count.
func (db *DB) ClearGrants(ctx context.Context, sessionID, tool string) (int, error) {
	var n int64
	err := db.tx(ctx, func(tx *sql.Tx) error {
		q, args := `DELETE FROM grants WHERE session_id = ?`, []any{sessionID}
		if tool != "" {
			q, args = q+` AND tool_name = ? COLLATE NOCASE`, append(args, tool)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
