// Package store is pi's one SQLite database: sessions, permission requests,
// grants, audit rows, review records and device state. Every pi process opens
// it; SQLite's locking (WAL, busy_timeout, immediate write transactions) is
// what lets any number of single-shot processes share it.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrNewerSchema means the store was written by a newer pi.
var ErrNewerSchema = errors.New("store was written by a newer pi")

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// ErrStale is returned by a guarded transition that lost its race: the row
// was no longer in the state the caller expected.
var ErrStale = errors.New("state changed")

// DB is the open store.
type DB struct {
	sql  *sql.DB
	Path string
	Now  func() time.Time
}

// FileName is the store's file inside the data directory.
const FileName = "pi.db"

// Open opens (creating if needed) the store in dataDir and applies pending
// migrations. The pragmas live in the DSN so every pooled connection gets
// them; busy_timeout comes first so that even the WAL switch waits instead of
// failing with "database is locked".
//
// Setting up a fresh store (creating the file, switching it to WAL, the first
// migration) can answer SQLITE_BUSY without waiting on the busy handler when
// many processes start at once; Open then retries with jittered backoff for
// up to 30 s instead of surfacing "database is locked".
func Open(ctx context.Context, dataDir string) (*DB, error) {
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 1; ; attempt++ {
		db, err := open(ctx, dataDir)
		if err == nil || !IsBusy(err) || time.Now().After(deadline) {
			return db, err
		}
		wait := time.Duration(attempt*5+mrand.IntN(20)) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(wait, 200*time.Millisecond)):
		}
	}
}

// IsBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func IsBusy(err error) bool {
	var se interface{ Code() int }
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == 5 || c == 6
	}
	return err != nil && strings.Contains(err.Error(), "database is locked")
}

func open(ctx context.Context, dataDir string) (*DB, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	p := filepath.Join(dataDir, FileName)
	dsn := "file:" + filepath.ToSlash(p) +
		"?_pragma=busy_timeout(30000)&_pragma=journal_mode(wal)&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(normal)&_txlock=immediate&_time_format=sqlite"
	sdb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// Single-shot processes need few connections; a small pool bounds file
	// handles while letting a waiter read while another goroutine writes.
	sdb.SetMaxOpenConns(4)
	sdb.SetConnMaxIdleTime(time.Minute)
	db := &DB{sql: sdb, Path: p, Now: time.Now}
	var mode string
	if err := sdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		sdb.Close()
		return nil, fmt.Errorf("open store: journal_mode is %q, want wal", mode)
	}
	if err := db.migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the store.
func (db *DB) Close() error { return db.sql.Close() }

// SQL exposes the handle for tests and benchmarks.
func (db *DB) SQL() *sql.DB { return db.sql }

type migration struct {
	version int
	name    string
	body    string
}

func migrations() ([]migration, error) {
	ents, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range ents {
		n, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("bad migration name %q", e.Name())
		}
		b, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, e.Name(), string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int {
	ms, _ := migrations()
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate applies forward-only migrations, each in its own immediate
// transaction that re-reads user_version, so concurrent first runs of many
// processes apply each migration exactly once.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	latest := ms[len(ms)-1].version
	var cur int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if cur > latest {
		return fmt.Errorf("%w (schema %d, this pi knows %d): upgrade pi", ErrNewerSchema, cur, latest)
	}
	for _, m := range ms {
		if m.version <= cur {
			continue
		}
		err := db.tx(ctx, func(tx *sql.Tx) error {
			var v int
			if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
				return err
			}
			if v >= m.version {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.body); err != nil {
				return fmt.Errorf("apply %s: %w", m.name, err)
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version))
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	return nil
}

// tx runs fn in one immediate transaction: begin, defer rollback, work, commit.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Tx exposes a write transaction to packages that compose several writes.
func (db *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error { return db.tx(ctx, fn) }

func (db *DB) nowMs() int64 { return db.Now().UnixMilli() }

// Time formats a stored millisecond timestamp as RFC 3339 UTC.
func Time(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
