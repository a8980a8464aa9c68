package review

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
)

// Restorer is the file side of a rollback; the host implements it with
// os.Root so every path goes through its resolver. Paths are the Change's
// workspace-relative, '/'-separated paths.
type Restorer interface {
	// Hash returns sha256 hex of the current file at path, exists=false if
	// absent. It must not follow a final symlink out of the workspace.
	Hash(path string) (sha string, exists bool, err error)
	// Replace atomically writes content (read from r to EOF) with mode to
	// path, creating it if needed. If reading r fails, path must be left
	// untouched: Rollback relies on that to refuse a corrupt snapshot.
	Replace(path string, r io.Reader, mode fs.FileMode) error
	// Remove deletes path.
	Remove(path string) error
}

// Check is the guard of R-REV-3 alone, so a host can check every change of
// a message before touching any (all-or-nothing). It reads, never writes.
//
// The file must still be exactly what the change left: for write/edit its
// hash must equal AfterHash; for a delete it must still be absent. A file
// removed by hand after a write/edit is a conflict too, not an implicit
// "restore": absent is not the post-tool content, and bringing back a file
// someone deleted on purpose would undo their action without asking.
func Check(c Change, rfs Restorer) error {
	if err := c.validate(); err != nil {
		return err
	}
	if c.State == StateRolledBack {
		return fmt.Errorf("%w: %s: already rolled back", ErrConflict, c.Path)
	}
	if !c.Reversible {
		return fmt.Errorf("%w: %s: no pre-image was captured", ErrIrreversible, c.Path)
	}
	sha, exists, err := rfs.Hash(c.Path)
	if err != nil {
		return fmt.Errorf("review: hash %s: %w", c.Path, err)
	}
	switch {
	case c.Status == StatusDeleted && exists:
		return fmt.Errorf("%w: %s: exists again since it was deleted", ErrConflict, c.Path)
	case c.Status == StatusDeleted:
		return nil
	case !exists:
		return fmt.Errorf("%w: %s: removed since the change", ErrConflict, c.Path)
	case sha != c.AfterHash:
		return fmt.Errorf("%w: %s: changed since the change", ErrConflict, c.Path)
	}
	return nil
}

// Rollback undoes one change under the hash guard (see Check): it restores
// the pre-image from snapshots, or removes a file the change created. On any
// error nothing is touched; on success it returns c with State rolledBack
// (the caller stores it, which is what makes a second rollback a conflict).
//
// Check and the write are not atomic against other writers of the
// workspace; the host runs rollbacks under the session's mutation lock
// (R-MUT-1), which is the same guarantee the tools themselves have.
func Rollback(s Snapshots, sessionID string, c Change, rfs Restorer) (Change, error) {
	if err := Check(c, rfs); err != nil {
		return c, err
	}
	if !c.BeforeExisted {
		if err := rfs.Remove(c.Path); err != nil {
			return c, fmt.Errorf("review: remove %s: %w", c.Path, err)
		}
		c.State = StateRolledBack
		return c, nil
	}
	// Open before touching anything: a lost snapshot must not leave the
	// file half-restored (or removed).
	rc, err := s.Open(sessionID, c.SnapshotID)
	if errors.Is(err, fs.ErrNotExist) {
		return c, fmt.Errorf("%w: %s: snapshot %s is gone", ErrIrreversible, c.Path, c.SnapshotID)
	} else if err != nil {
		return c, err
	}
	defer rc.Close()
	var src io.Reader = rc
	if c.BeforeHash != "" {
		// Verify while streaming rather than in a first pass: a 50 MB
		// pre-image is read once, and a mismatch fails the read, which makes
		// the atomic Replace abandon its temp file.
		src = &verifyReader{r: rc, h: sha256.New(), want: c.BeforeHash}
	}
	mode := fs.FileMode(c.BeforeMode).Perm()
	if mode == 0 {
		mode = 0o644
	}
	if err := rfs.Replace(c.Path, src, mode); err != nil {
		return c, fmt.Errorf("review: restore %s: %w", c.Path, err)
	}
	c.State = StateRolledBack
	return c, nil
}

// errSnapshotCorrupt: the stored pre-image does not hash to BeforeHash.
var errSnapshotCorrupt = errors.New("review: snapshot does not match the recorded pre-image hash")

type verifyReader struct {
	r    io.Reader
	h    hash.Hash
	want string
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if err == io.EOF && hex.EncodeToString(v.h.Sum(nil)) != v.want {
		return n, fmt.Errorf("%w (%w)", errSnapshotCorrupt, ErrIrreversible)
	}
	return n, err
}
