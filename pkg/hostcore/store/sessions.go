package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Session is one agent conversation bound to a workspace (SPEC §1).
type Session struct {
	ID             string
	WorkspaceRoot  string
	RootDev        uint64
	RootIno        uint64
	RootGen        int64
	Temporary      bool
	Mode           string
	PermissionMode string
	Turn           int
	ShellID        string
	ShellDialect   string
	ShellPath      string
	ActiveTools    []string
	ContextReset   bool
	AbortEpoch     int64
	CreatedAt      int64
}

const sessionCols = `id, workspace_root, root_dev, root_ino, root_gen, temporary, mode, permission_mode, turn,
 shell_id, shell_dialect, shell_path, active_tools, context_reset, abort_epoch, created_at`

func scanSession(row interface{ Scan(...any) error }) (*Session, error) {
	var s Session
	var tools string
	var tmp, reset int
	err := row.Scan(&s.ID, &s.WorkspaceRoot, &s.RootDev, &s.RootIno, &s.RootGen, &tmp, &s.Mode, &s.PermissionMode,
		&s.Turn, &s.ShellID, &s.ShellDialect, &s.ShellPath, &tools, &reset, &s.AbortEpoch, &s.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.Temporary, s.ContextReset = tmp != 0, reset != 0
	if err := json.Unmarshal([]byte(tools), &s.ActiveTools); err != nil {
		return nil, fmt.Errorf("session %s: active tools: %w", s.ID, err)
	}
	return &s, nil
}

// CreateSession inserts s; CreatedAt is set to now.
func (db *DB) CreateSession(ctx context.Context, s *Session) error {
	s.CreatedAt = db.nowMs()
	if s.ActiveTools == nil {
		s.ActiveTools = []string{}
	}
	tools, _ := json.Marshal(s.ActiveTools)
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			s.ID, s.WorkspaceRoot, s.RootDev, s.RootIno, s.RootGen, b2i(s.Temporary), s.Mode, s.PermissionMode, s.Turn,
			s.ShellID, s.ShellDialect, s.ShellPath, string(tools), b2i(s.ContextReset), s.AbortEpoch, s.CreatedAt)
		return err
	})
}

// Session returns a live (not deleted) session, or ErrNotFound.
func (db *DB) Session(ctx context.Context, id string) (*Session, error) {
	return scanSession(db.sql.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ? AND deleted_at IS NULL`, id))
}

// Sessions lists live sessions, oldest first.
func (db *DB) Sessions(ctx context.Context) ([]*Session, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE deleted_at IS NULL ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// UpdateSession runs fn on the current row inside one immediate transaction
// and writes back what fn changed. fn may return an error to abort.
func (db *DB) UpdateSession(ctx context.Context, id string, fn func(tx *sql.Tx, s *Session) error) (*Session, error) {
	var out *Session
	err := db.tx(ctx, func(tx *sql.Tx) error {
		s, err := scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ? AND deleted_at IS NULL`, id))
		if err != nil {
			return err
		}
		if err := fn(tx, s); err != nil {
			return err
		}
		tools, _ := json.Marshal(s.ActiveTools)
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET mode=?, permission_mode=?, turn=?, shell_id=?, shell_dialect=?,
			shell_path=?, active_tools=?, context_reset=?, abort_epoch=? WHERE id=?`,
			s.Mode, s.PermissionMode, s.Turn, s.ShellID, s.ShellDialect, s.ShellPath, string(tools),
			b2i(s.ContextReset), s.AbortEpoch, s.ID)
		out = s
		return err
	})
	return out, err
}

// DeleteSession marks the session deleted and drops its grants and pending
// requests (cancelled), in one transaction.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	now := db.nowMs()
	return db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL`, now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM grants WHERE session_id = ?`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE requests SET state='cancelled', decided_by='session-delete', decided_at=?
			WHERE session_id = ? AND state = 'pending'`, now, id)
		return err
	})
}

// DeviceState reads a device-level value ("" if unset).
func (db *DB) DeviceState(ctx context.Context, key string) (string, error) {
	var v string
	err := db.sql.QueryRowContext(ctx, `SELECT value FROM device_state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetDeviceState writes a device-level value.
func (db *DB) SetDeviceState(ctx context.Context, key, value string) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO device_state(key, value) VALUES(?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}
