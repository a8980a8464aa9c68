package review

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
)

// ErrTooLarge: a pre-image exceeds Snapshots.MaxBytes; nothing is kept.
var ErrTooLarge = errors.New("review: snapshot too large")

// Snapshots stores pre-images outside the workspace, one dir per session:
//
//	<Dir>/<sessionID>/<snapshotID>.pre
//
// (absent if the file did not exist before, or was not captured). Files are
// 0600 and dirs 0700 (pre-images may hold secrets), written atomically (temp
// + fsync + rename + dir fsync) so a crash never leaves a half snapshot under
// the final name. Everything below Dir is reached through os.Root, so a
// symlink planted in the data dir cannot redirect a write or a removal.
type Snapshots struct {
	Dir string
	// MaxBytes caps what Save/SaveFrom accept (0: no cap). The cap is
	// enforced by counting what is read, not by trusting a stat, so a file
	// that grows while it is copied cannot blow past it.
	MaxBytes int64
}

const snapExt = ".pre"

// validID keeps session and snapshot IDs to one plain path component that is
// portable to Windows too; they come from the host, but a stored record is
// data and must not name "../x".
func validID(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func checkIDs(ids ...string) error {
	for _, id := range ids {
		if !validID(id) {
			return fmt.Errorf("review: invalid snapshot or session id %q", id)
		}
	}
	return nil
}

func (s Snapshots) openRoot(create bool) (*os.Root, error) {
	if s.Dir == "" {
		return nil, errors.New("review: snapshot dir not set")
	}
	if create {
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return nil, err
		}
	}
	return os.OpenRoot(s.Dir)
}

// Save stores pre as the pre-image of snapshotID.
func (s Snapshots) Save(sessionID, snapshotID string, pre []byte) error {
	_, _, err := s.SaveFrom(sessionID, snapshotID, bytes.NewReader(pre))
	return err
}

// SaveFrom streams a pre-image into the store and returns its size and
// sha256 hex (the Change's BeforeHash), so a big file is read once. An
// existing snapshot is never overwritten: an ID names one pre-image forever,
// and replacing it would silently change what an older rollback restores.
func (s Snapshots) SaveFrom(sessionID, snapshotID string, r io.Reader) (n int64, sha string, err error) {
	if err := checkIDs(sessionID, snapshotID); err != nil {
		return 0, "", err
	}
	root, err := s.openRoot(true)
	if err != nil {
		return 0, "", err
	}
	defer root.Close()
	if err := root.MkdirAll(sessionID, 0o700); err != nil {
		return 0, "", err
	}
	final := sessionID + "/" + snapshotID + snapExt
	if _, err := root.Lstat(final); err == nil {
		return 0, "", fmt.Errorf("review: snapshot %s/%s: %w", sessionID, snapshotID, fs.ErrExist)
	}
	tmp := sessionID + "/." + snapshotID + "." + rand.Text() + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, "", err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			root.Remove(tmp)
		}
	}()
	src := r
	if s.MaxBytes > 0 {
		src = io.LimitReader(r, s.MaxBytes+1)
	}
	h := sha256.New()
	buf := make([]byte, 256<<10)
	n, err = io.CopyBuffer(io.MultiWriter(f, h), src, buf)
	if err != nil {
		return 0, "", err
	}
	if s.MaxBytes > 0 && n > s.MaxBytes {
		return 0, "", fmt.Errorf("%w: more than %d bytes", ErrTooLarge, s.MaxBytes)
	}
	if err := f.Sync(); err != nil {
		return 0, "", err
	}
	if err := f.Close(); err != nil {
		root.Remove(tmp)
		done = true
		return 0, "", err
	}
	done = true
	if err := root.Rename(tmp, final); err != nil {
		root.Remove(tmp)
		return 0, "", err
	}
	syncDir(root, sessionID)
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// syncDir makes the rename durable. Windows cannot fsync a directory (and
// its rename is already journaled), so errors are ignored there.
func syncDir(root *os.Root, dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if d, err := root.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Open returns the stored pre-image; the error wraps fs.ErrNotExist when
// there is none.
func (s Snapshots) Open(sessionID, snapshotID string) (io.ReadCloser, error) {
	if err := checkIDs(sessionID, snapshotID); err != nil {
		return nil, err
	}
	root, err := s.openRoot(false)
	if err != nil {
		return nil, err
	}
	defer root.Close() // files opened through a root outlive it
	f, err := root.Open(sessionID + "/" + snapshotID + snapExt)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("review: snapshot %s/%s is not a regular file", sessionID, snapshotID)
	}
	return f, nil
}

// RemoveSession deletes a session's snapshots (R-REV-4); a missing session
// is not an error, so deleting twice is harmless.
func (s Snapshots) RemoveSession(sessionID string) error {
	if err := checkIDs(sessionID); err != nil {
		return err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer root.Close()
	return root.RemoveAll(sessionID)
}

// Remove deletes one snapshot (a mutation that failed after its pre-image
// was saved); a missing one is not an error.
func (s Snapshots) Remove(sessionID, snapshotID string) error {
	if err := checkIDs(sessionID, snapshotID); err != nil {
		return err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(sessionID + "/" + snapshotID + snapExt); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Sessions lists the session dirs present, for sweeping orphans. Entries
// that are not valid session dirs are left out (and so never swept).
func (s Snapshots) Sessions() ([]string, error) {
	if s.Dir == "" {
		return nil, errors.New("review: snapshot dir not set")
	}
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && validID(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Bytes is the disk use of one session's snapshots (temp files included:
// they take space too). A missing session uses 0.
func (s Snapshots) Bytes(sessionID string) (int64, error) {
	if err := checkIDs(sessionID); err != nil {
		return 0, err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	defer root.Close()
	d, err := root.Open(sessionID)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil {
			total += info.Size()
		}
	}
	return total, nil
}
