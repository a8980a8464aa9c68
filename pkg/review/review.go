// Package review records what a workspace Write/Edit changed (R-REV-1), keeps
// the pre-image outside the workspace (R-REV-4) and rolls a change back under
// a hash guard (R-REV-3).
//
// The package is pure: it never prints and imports nothing else from pi. File
// access inside the workspace goes through the host's Restorer, so every path
// passes the host's resolver (os.Root); snapshot files live in a directory the
// host owns (the data dir) and are reached through os.Root as well.
package review

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Values of Line.Kind.
const (
	KindContext = "context"
	KindAdd     = "add"
	KindDel     = "del"
)

// Values of Line.EOL. The empty value is "\n" so the common case costs no
// bytes in the stored record.
const (
	EOLLF   = ""     // line ends in "\n"
	EOLCRLF = "crlf" // line ends in "\r\n"; the "\r" is not in Text
	EOLNone = "none" // last line of a file without a final newline
)

// Line is one line of a hunk. Text never holds the line terminator; EOL says
// which one the line had, so a change of line endings alone (or of the final
// newline) is still a visible change and Apply can rebuild the exact bytes.
type Line struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	EOL  string `json:"eol,omitempty"`
}

// Hunk is one unified-diff hunk. Starts are 1-based; as in GNU diff, a side
// with zero lines names the line *after which* the hunk applies (0 = top).
type Hunk struct {
	OldStart int    `json:"oldStart"`
	OldLines int    `json:"oldLines"`
	NewStart int    `json:"newStart"`
	NewLines int    `json:"newLines"`
	Lines    []Line `json:"lines"`
}

// Values of Change.Operation, Change.Status and Change.State.
const (
	OpWrite  = "write"
	OpEdit   = "edit"
	OpDelete = "delete"

	StatusAdded    = "added"
	StatusModified = "modified"
	StatusDeleted  = "deleted"

	StateActive     = "active"
	StateRolledBack = "rolledBack"
)

// Change is the record of R-REV-1 (JSON names are the contract).
type Change struct {
	Version    int    `json:"version"` // 1
	SnapshotID string `json:"snapshotId"`
	MessageID  string `json:"messageId"`
	Path       string `json:"path"`      // workspace-relative, '/' separators
	Operation  string `json:"operation"` // write | edit | delete
	Status     string `json:"status"`    // added | modified | deleted
	State      string `json:"state"`     // active | rolledBack
	Additions  int    `json:"additions"`
	Deletions  int    `json:"deletions"`
	Hunks      []Hunk `json:"hunks"`
	Binary     bool   `json:"binary,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	Reversible bool   `json:"reversible"`
	// Host-side fields: stored with the record, not shown to the model.
	BeforeHash    string `json:"beforeHash,omitempty"` // sha256 hex of the pre-image, "" if absent
	AfterHash     string `json:"afterHash,omitempty"`  // sha256 hex of the post-image, "" if deleted
	BeforeExisted bool   `json:"beforeExisted"`
	// BeforeMode is the fs.FileMode permission bits of the pre-image. 0 means
	// "unknown" and restores as 0644 (a real 0000 file is not worth a flag).
	BeforeMode uint32 `json:"beforeMode,omitempty"`
}

// Limits bound the work and the size of a record. Zero fields take defaults.
type Limits struct {
	MaxDiffBytes     int   // either side above this: no hunks, Truncated, cheap counts; default 4 MiB
	MaxHunkLines     int   // lines kept across all hunks; beyond: Truncated; default 2000
	MaxSnapshotBytes int64 // pre-images above this are not captured (Reversible=false); default 64 MiB
}

// The host enforces MaxSnapshotBytes by setting Snapshots.MaxBytes to it
// (SaveFrom then counts what it reads) and passing Capture.Saved=false when
// SaveFrom says ErrTooLarge; NewChange turns that into Reversible=false.

// DefaultLimits returns the limits used when a field is zero.
func DefaultLimits() Limits {
	return Limits{MaxDiffBytes: 4 << 20, MaxHunkLines: 2000, MaxSnapshotBytes: 64 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxDiffBytes <= 0 {
		l.MaxDiffBytes = d.MaxDiffBytes
	}
	if l.MaxHunkLines <= 0 {
		l.MaxHunkLines = d.MaxHunkLines
	}
	if l.MaxSnapshotBytes <= 0 {
		l.MaxSnapshotBytes = d.MaxSnapshotBytes
	}
	return l
}

var (
	// ErrConflict: the file is not what the change left behind (edited,
	// recreated or removed since), or the change was already rolled back.
	ErrConflict = errors.New("review: conflict")
	// ErrIrreversible: no pre-image was captured, or it is gone.
	ErrIrreversible = errors.New("review: irreversible")
	// ErrInvalid: the stored record is inconsistent; nothing is touched.
	ErrInvalid = errors.New("review: invalid change")
)

// Capture is what the host knows about one successful Write/Edit/delete.
type Capture struct {
	SnapshotID, MessageID string
	Path                  string // workspace-relative, '/' separators
	Operation             string // write | edit | delete
	BeforeExisted         bool
	Before                []byte      // the pre-image (nil when absent)
	BeforeMode            fs.FileMode // permission bits of the pre-image
	BeforeHash            string      // optional; computed from Before when empty
	After                 []byte      // the post-image; ignored for delete
	AfterHash             string      // optional; computed from After when empty
	// Saved: the pre-image is stored in Snapshots under SnapshotID. Without
	// it only a created file can be rolled back (by removing it).
	Saved bool
	// BeforeUnread: the pre-image was too large to load (a Write over a big
	// file), so Before is not its content; the record gets no hunks and
	// Truncated, and BeforeHash must be supplied (from Snapshots.SaveFrom).
	BeforeUnread bool
}

// NewChange builds the record of R-REV-1, so every host derives status,
// reversibility and hashes the same way.
func NewChange(c Capture, lim Limits) Change {
	ch := Change{
		Version: 1, SnapshotID: c.SnapshotID, MessageID: c.MessageID,
		Path: c.Path, Operation: c.Operation, State: StateActive,
		BeforeExisted: c.BeforeExisted, BeforeHash: c.BeforeHash, AfterHash: c.AfterHash,
		Hunks: []Hunk{},
	}
	after := c.After
	switch {
	case c.Operation == OpDelete:
		ch.Status, after = StatusDeleted, nil
		ch.AfterHash = ""
	case !c.BeforeExisted:
		ch.Status = StatusAdded
	default:
		ch.Status = StatusModified
	}
	before := c.Before
	if !c.BeforeExisted {
		before, ch.BeforeHash = nil, ""
	} else {
		ch.BeforeMode = uint32(c.BeforeMode.Perm())
		if ch.BeforeHash == "" && !c.BeforeUnread {
			ch.BeforeHash = hashBytes(before)
		}
	}
	if ch.Status != StatusDeleted && ch.AfterHash == "" {
		ch.AfterHash = hashBytes(after)
	}
	// Removing a file we created needs no snapshot; anything else does.
	ch.Reversible = ch.Status == StatusAdded || c.Saved
	if c.BeforeExisted && c.BeforeUnread {
		ch.Truncated = true
		return ch
	}
	hunks, add, del, bin, trunc := Diff(before, after, lim)
	if hunks != nil {
		ch.Hunks = hunks
	}
	ch.Additions, ch.Deletions, ch.Binary, ch.Truncated = add, del, bin, trunc
	return ch
}

func hashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// validate rejects records that could make Rollback do something other
// than undo exactly one change (e.g. a path that climbs out, or a "modified"
// record with no post-image hash to guard on).
func (c Change) validate() error {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalid, why) }
	switch {
	case c.Version != 1:
		return bad(fmt.Sprintf("version %d", c.Version))
	case c.Path == "" || strings.ContainsRune(c.Path, 0) || !filepath.IsLocal(filepath.FromSlash(c.Path)):
		return bad(fmt.Sprintf("path %q is not workspace-relative", c.Path))
	case c.State != StateActive && c.State != StateRolledBack:
		return bad("state " + c.State)
	case c.Operation != OpWrite && c.Operation != OpEdit && c.Operation != OpDelete:
		return bad("operation " + c.Operation)
	}
	switch c.Status {
	case StatusAdded:
		if c.BeforeExisted || c.Operation == OpDelete {
			return bad("added but the file existed")
		}
	case StatusModified:
		if !c.BeforeExisted || c.Operation == OpDelete {
			return bad("modified but the file did not exist")
		}
	case StatusDeleted:
		if !c.BeforeExisted || c.Operation != OpDelete || c.AfterHash != "" {
			return bad("deleted without a delete of an existing file")
		}
	default:
		return bad("status " + c.Status)
	}
	if c.Status != StatusDeleted && !isHash(c.AfterHash) {
		return bad("no post-image hash to guard on")
	}
	if c.BeforeHash != "" && !isHash(c.BeforeHash) {
		return bad("malformed pre-image hash")
	}
	if c.BeforeExisted && c.Reversible && !validID(c.SnapshotID) {
		return bad(fmt.Sprintf("snapshot id %q", c.SnapshotID))
	}
	return nil
}
