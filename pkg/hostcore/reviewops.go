package hostcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/pi-cli/pi/pkg/fsx"
	"github.com/pi-cli/pi/pkg/hostcore/store"
	"github.com/pi-cli/pi/pkg/review"
)

// ReviewFilter narrows `pi review list`.
type ReviewFilter = store.ChangeFilter

// ListChanges lists review records of a session, newest first.
func (h *Host) ListChanges(ctx context.Context, f ReviewFilter) ([]*store.ChangeRow, error) {
	if f.SessionID != "" {
		if _, err := h.Session(ctx, f.SessionID); err != nil {
			return nil, err
		}
	}
	if f.State != "" && f.State != "active" && f.State != "rolledBack" {
		return nil, Errf(InvalidArgument, "--state must be active or rolledBack")
	}
	rows, err := h.DB.Changes(ctx, f)
	return rows, storeErr(err, "list review records")
}

// ShowChange returns one record and, with patch, its unified diff: from the
// snapshot and current bytes when they still tell the story, else from the
// stored hunks.
func (h *Host) ShowChange(ctx context.Context, sessionID, id string, patch, color bool) (*store.ChangeRow, string, error) {
	rows, err := h.DB.Changes(ctx, store.ChangeFilter{ID: id, SessionID: sessionID})
	if err != nil {
		return nil, "", storeErr(err, "review record")
	}
	if len(rows) == 0 {
		return nil, "", Errf(NotFound, "review record %s not found", id)
	}
	r := rows[0]
	if !patch {
		return r, "", nil
	}
	return r, review.UnifiedFromHunks(r.Change, color), nil
}

// restorer is review.Restorer over a workspace os.Root, so rollback goes
// through the same containment as every tool.
type restorer struct{ root *os.Root }

var _ review.Restorer = restorer{}

func (r restorer) Hash(p string) (string, bool, error) {
	f, _, err := fsx.OpenRegular(r.root, p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := r.root.Lstat(p); lerr == nil {
			return "", true, errors.New("not a regular file")
		}
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	defer f.Close()
	hh := sha256.New()
	if _, err := io.Copy(hh, f); err != nil {
		return "", true, err
	}
	return hex.EncodeToString(hh.Sum(nil)), true, nil
}

func (r restorer) Replace(p string, src io.Reader, mode fs.FileMode) error {
	if d := path.Dir(p); d != "." {
		if err := r.root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	_, err := fsx.WriteAtomic(r.root, p, src, mode)
	return err
}

func (r restorer) Remove(p string) error { return r.root.Remove(p) }

// RollbackResult is what `pi review rollback` reports.
type RollbackResult struct {
	RolledBack []*store.ChangeRow `json:"rolledBack"`
}

// Rollback undoes one change (by id) or every change of a message (newest
// first, all-or-nothing: every guard is checked before anything is touched),
// under the session's mutation lock (R-REV-3, R-MUT-1).
func (h *Host) Rollback(ctx context.Context, sessionID, id, messageID string) (*RollbackResult, error) {
	s, err := h.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	f := store.ChangeFilter{SessionID: s.ID, ID: id, MessageID: messageID}
	if (id == "") == (messageID == "") {
		return nil, Errf(InvalidArgument, "give one review id or --message MSG")
	}
	rows, err := h.DB.Changes(ctx, f)
	if err != nil {
		return nil, storeErr(err, "review records")
	}
	if len(rows) == 0 {
		return nil, Errf(NotFound, "no review record %s%s in this session", id, messageID)
	}
	release, err := h.acquireMutation(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	defer release()
	root, _, err := h.roots(s).Reopen(&Resolved{Class: ClassWorkspace, Rel: "."}, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rs := restorer{root}
	// Re-read under the lock: a concurrent rollback may have won.
	rows, err = h.DB.Changes(ctx, f)
	if err != nil {
		return nil, storeErr(err, "review records")
	}
	// Newest first; a message touching one path twice is checked against the
	// state each earlier rollback leaves, so check sequentially on hashes.
	for _, r := range rows {
		if err := review.Check(r.Change, rs); err != nil && !(messageID != "" && laterSamePath(rows, r)) {
			return nil, rollbackErr(r, err)
		}
	}
	out := &RollbackResult{RolledBack: []*store.ChangeRow{}}
	for _, r := range rows {
		ch, err := review.Rollback(h.snapshots(), s.ID, r.Change, rs)
		if err != nil {
			return out, rollbackErr(r, err)
		}
		if err := h.DB.SetChangeState(context.WithoutCancel(ctx), r.SnapshotID, "active", "rolledBack"); err != nil {
			return out, storeErr(err, "mark rolled back")
		}
		r.Change = ch
		out.RolledBack = append(out.RolledBack, r)
	}
	return out, nil
}

// laterSamePath reports whether a newer change in rows touched r's path, in
// which case r's guard can only be checked after that one is rolled back.
func laterSamePath(rows []*store.ChangeRow, r *store.ChangeRow) bool {
	for _, o := range rows {
		if o == r {
			return false
		}
		if o.Path == r.Path {
			return true
		}
	}
	return false
}

func rollbackErr(r *store.ChangeRow, err error) error {
	switch {
	case errors.Is(err, review.ErrConflict):
		if r.State == "rolledBack" {
			return &Error{Code: Conflict, Message: r.SnapshotID + " (" + r.Path + ") is already rolled back; nothing was touched", Err: err}
		}
		return &Error{Code: Conflict, Message: r.Path + " changed since " + r.SnapshotID + " (its content no longer matches the post-tool hash); nothing was touched", Err: err}
	case errors.Is(err, review.ErrIrreversible):
		return &Error{Code: Conflict, Message: r.SnapshotID + " (" + r.Path + ") is not reversible (no pre-image was kept); nothing was touched", Err: err}
	}
	return Wrap(ToolFailed, err, "rollback %s", r.SnapshotID)
}
