package hostcore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ScratchPath returns the session's scratch dir (R-PATH-6); it is created on
// first use, not here.
func (h *Host) ScratchPath(ctx context.Context, sessionID string) (string, error) {
	if _, err := h.Session(ctx, sessionID); err != nil {
		return "", err
	}
	return h.ScratchDir(sessionID), nil
}

// Paste copies a file the user names into scratch/<id>/pasted/ and returns
// its absolute path, for an @ reference (R-PATH-8). The source is checked
// against pi's own dirs and the deny list: pasting is no way around them.
func (h *Host) Paste(ctx context.Context, sessionID, src string) (string, error) {
	if _, err := h.Session(ctx, sessionID); err != nil {
		return "", err
	}
	if err := CheckPathString(src); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", Wrap(InvalidArgument, err, "paste %s", src)
	}
	canon, _, err := Canonicalize(abs, true)
	if err != nil {
		return "", Wrap(ToolFailed, err, "paste %s", src)
	}
	for _, p := range []string{h.dataDir, h.configDir} {
		if p != "" && (within(abs, p) || within(canon, p)) {
			return "", Errf(ToolDenied, "%s is inside pi's own data or settings", src)
		}
	}
	if pat, hit := h.sensitive.Match(abs, canon); hit {
		return "", Errf(ToolDenied, "%s is on the sensitive-path deny list (%s)", src, pat)
	}
	in, err := os.Open(canon)
	if err != nil {
		return "", openErr(src, err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", Errf(InvalidArgument, "%s is not a regular file", src)
	}
	dir := filepath.Join(h.ScratchDir(sessionID), "pasted")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", Wrap(ToolFailed, err, "create pasted dir")
	}
	base := filepath.Base(canon)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	for i := 0; i < 10000; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		dst := filepath.Join(dir, name)
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", Wrap(ToolFailed, err, "paste")
		}
		_, cerr := io.Copy(out, in)
		if err := out.Close(); cerr == nil {
			cerr = err
		}
		if cerr != nil {
			os.Remove(dst)
			return "", Wrap(ToolFailed, cerr, "paste")
		}
		return dst, nil
	}
	return "", Errf(ToolFailed, "too many pasted files named %s", base)
}

// SweepResult is what `pi scratch sweep` reports.
type SweepResult struct {
	Removed []string `json:"removed"`
	Kept    int      `json:"kept"`
	DryRun  bool     `json:"dryRun"`
}

// Sweep removes scratch dirs of sessions that no longer exist or that were
// untouched for longer than maxAge, and snapshot dirs of sessions that no
// longer exist (R-PATH-9, R-REV-4). It is explicit: ordinary calls never
// delete anything.
func (h *Host) Sweep(ctx context.Context, maxAge time.Duration, dryRun bool) (*SweepResult, error) {
	live := map[string]bool{}
	ss, err := h.DB.Sessions(ctx)
	if err != nil {
		return nil, storeErr(err, "list sessions")
	}
	for _, s := range ss {
		live[s.ID] = true
	}
	out := &SweepResult{Removed: []string{}, DryRun: dryRun}
	cutoff := h.Now().Add(-maxAge)
	sweepDir := func(dir string, stale func(name, path string) bool) error {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := filepath.Join(dir, e.Name())
			if !e.IsDir() || !stale(e.Name(), p) {
				out.Kept++
				continue
			}
			if !dryRun {
				if err := os.RemoveAll(p); err != nil {
					return err
				}
			}
			out.Removed = append(out.Removed, p)
		}
		return nil
	}
	err = sweepDir(filepath.Join(h.dataDir, "scratch"), func(name, p string) bool {
		return !live[name] || newestMtime(p).Before(cutoff)
	})
	if err == nil {
		err = sweepDir(h.SnapshotDir(), func(name, _ string) bool { return !live[name] })
	}
	if err != nil {
		return out, Wrap(ToolFailed, err, "sweep")
	}
	return out, nil
}

// newestMtime is the newest modification time of dir and everything in it
// (links are not followed).
func newestMtime(dir string) time.Time {
	var newest time.Time
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		return nil
	})
	return newest
}
