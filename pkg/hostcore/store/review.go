package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/pi-cli/pi/pkg/review"
)

// ChangeRow is a stored review record with its host fields.
type ChangeRow struct {
	review.Change
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	CreatedAt  string `json:"createdAt"`
	createdMs  int64
}

// InsertChange stores the record of one Write/Edit with its tool call.
func (db *DB) InsertChange(ctx context.Context, sessionID, toolCallID string, c *review.Change) error {
	rec, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO review_changes(snapshot_id, session_id, tool_call_id, message_id, path, state, record, created_at)
			VALUES(?,?,?,?,?,?,?,?)`, c.SnapshotID, sessionID, toolCallID, c.MessageID, c.Path, c.State, string(rec), db.nowMs())
		return err
	})
}

// ChangeFilter narrows review listings.
type ChangeFilter struct {
	SessionID string
	Path      string
	State     string
	MessageID string
	ID        string
}

// Changes lists review records, newest first.
func (db *DB) Changes(ctx context.Context, f ChangeFilter) ([]*ChangeRow, error) {
	var where []string
	var args []any
	add := func(c string, v string) {
		if v != "" {
			where, args = append(where, c), append(args, v)
		}
	}
	add("session_id = ?", f.SessionID)
	add("path = ?", f.Path)
	add("state = ?", f.State)
	add("message_id = ?", f.MessageID)
	add("snapshot_id = ?", f.ID)
	q := `SELECT snapshot_id, session_id, tool_call_id, state, record, created_at FROM review_changes`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := db.sql.QueryContext(ctx, q+` ORDER BY created_at DESC, rowid DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*ChangeRow{}
	for rows.Next() {
		var r ChangeRow
		var id, state, rec string
		if err := rows.Scan(&id, &r.SessionID, &r.ToolCallID, &state, &rec, &r.createdMs); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(rec), &r.Change); err != nil {
			return nil, err
		}
		r.State = state
		r.CreatedAt = Time(r.createdMs)
		out = append(out, &r)
	}
	return out, rows.Err()
}

// SetChangeState moves a record from active to rolledBack, guarded so a
// second rollback loses (ErrStale).
func (db *DB) SetChangeState(ctx context.Context, id, from, to string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE review_changes SET state = ?,
			record = json_set(record, '$.state', ?) WHERE snapshot_id = ? AND state = ?`, to, to, id, from)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrStale
		}
		return nil
	})
}

// DeleteChange removes a record whose write failed after it was stored.
func (db *DB) DeleteChange(ctx context.Context, id string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM review_changes WHERE snapshot_id = ?`, id)
		return err
	})
}
