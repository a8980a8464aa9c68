package hostcore

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// Host is the host core of one pi process: the store, the settings and the
// identity of this process. Everything that does IO arrives here, not in
// package variables, so tests build a Host over a temp data dir.
type Host struct {
	Cfg     Config
	DB      *store.DB
	Now     func() time.Time
	PID     int
	Boot    string
	Start   string    // this process's start token (pid reuse guard)
	Notices io.Writer // "waiting for permission …" and similar hints (stderr)

	dataDir   string // canonical
	configDir string
	sensitive *SensitiveList
	registry  *Registry
}

// Open opens the store in cfg.DataDir and returns a Host. A store error is
// STORE_ERROR; it never falls back to anything (R-PATH-9).
func Open(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.DataDir == "" {
		return nil, Errf(StoreError, "no data directory")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, Wrap(StoreError, err, "create data dir")
	}
	dd, err := filepath.EvalSymlinks(cfg.DataDir)
	if err != nil {
		return nil, Wrap(StoreError, err, "data dir")
	}
	dd, _ = filepath.Abs(dd)
	db, err := store.Open(ctx, dd)
	if err != nil {
		return nil, Wrap(StoreError, err, "open store")
	}
	h := &Host{Cfg: cfg, DB: db, Now: time.Now, PID: os.Getpid(), Boot: bootID(), Notices: io.Discard, dataDir: dd}
	h.Start = procStart(h.PID)
	if cfg.ConfigDir != "" {
		if c, err := filepath.Abs(cfg.ConfigDir); err == nil {
			if ce, err := filepath.EvalSymlinks(c); err == nil {
				c = ce
			}
			h.configDir = c
		}
	}
	h.sensitive = NewSensitiveList(cfg.HomeDir, DefaultSensitivePaths, cfg.SensitivePaths)
	return h, nil
}

// Close closes the store.
func (h *Host) Close() error { return h.DB.Close() }

// DataDir is the canonical data directory.
func (h *Host) DataDir() string { return h.dataDir }

// ScratchDir is the session's scratch root (R-PATH-6); it may not exist yet.
func (h *Host) ScratchDir(sessionID string) string {
	return filepath.Join(h.dataDir, "scratch", sessionID)
}

// SnapshotDir holds review pre-images, outside every workspace (R-REV-4).
func (h *Host) SnapshotDir() string { return filepath.Join(h.dataDir, "snapshots") }

// WakeDir is where waiters watch for wake-up notes.
func (h *Host) WakeDir() string { return filepath.Join(h.dataDir, "wake") }

// LockDir holds cross-process lock files.
func (h *Host) LockDir() string { return filepath.Join(h.dataDir, "locks") }

// Sensitive is the active deny list.
func (h *Host) Sensitive() *SensitiveList { return h.sensitive }

// roots builds the legal roots of a session.
func (h *Host) roots(s *store.Session) *Roots {
	prot := []string{h.dataDir}
	if h.configDir != "" {
		prot = append(prot, h.configDir)
	}
	return &Roots{
		Workspace:   s.WorkspaceRoot,
		WorkspaceID: idFrom(s.RootDev, s.RootIno, s.RootGen),
		Scratch:     h.ScratchDir(s.ID),
		Protected:   prot,
		Sensitive:   h.sensitive,
	}
}

// alive reports whether the process (pid, boot, start) still runs.
func (h *Host) alive(pid int, boot, start string) bool {
	if boot != h.Boot {
		return false
	}
	if pid == h.PID {
		return true
	}
	if !pidAlive(pid) {
		return false
	}
	if start != "" {
		if cur := procStart(pid); cur != "" && cur != start {
			return false
		}
	}
	return true
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns prefix + 16 random base32 characters (80 bits).
func NewID(prefix string) string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return prefix + idEncoding.EncodeToString(b)
}

// storeErr turns a store error into a typed one: not found stays NOT_FOUND,
// anything else is STORE_ERROR (never a fallback).
func storeErr(err error, what string) error {
	if err == nil {
		return nil
	}
	var he *Error
	if errors.As(err, &he) {
		return err
	}
	if errors.Is(err, store.ErrNotFound) {
		return Errf(NotFound, "%s not found", what)
	}
	if errors.Is(err, context.Canceled) {
		return Wrap(ToolAborted, err, "%s", what)
	}
	return Wrap(StoreError, err, "%s", what)
}

func validSessionID(id string) error {
	if id == "" {
		return Errf(InvalidArgument, "no session: pass --session ID or set PI_SESSION")
	}
	if len(id) > 128 || strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." {
		return Errf(InvalidArgument, "invalid session id %q", id)
	}
	return nil
}
