package hostcore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pi-cli/pi/pkg/fsx"
	"github.com/pi-cli/pi/pkg/review"
)

// WriteArgs are Write's arguments.
type WriteArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// EditArgs are Edit's arguments (snake_case names are the contract; camelCase
// aliases are accepted by DecodeArgs).
type EditArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// WriteContent is Write's result content.
type WriteContent struct {
	Path    string    `json:"path"`
	Root    PathClass `json:"root"`
	Bytes   int       `json:"bytes"`
	Created bool      `json:"created"`
}

// EditContent is Edit's result content.
type EditContent struct {
	Path             string    `json:"path"`
	Root             PathClass `json:"root"`
	Replacements     int       `json:"replacements"`
	Diff             string    `json:"diff"`
	FirstChangedLine int       `json:"firstChangedLine"`
}

func (h *Host) writeTool() *ToolDef {
	return &ToolDef{
		Name: "Write", Description: "Create or overwrite a file (atomically, under review)", Risk: RiskHigh, Kind: KindWrite,
		NeedsRoot: true, Mutates: true, Timeout: defaultSearchTimeout,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["path","content"],"properties":{
 "path":{"type":"string","description":"file to create or replace; parent dirs are created"},
 "content":{"type":"string","description":"the whole new content"}}}`),
		NewArgs: func() any { return &WriteArgs{} },
		Validate: func(a any) error {
			w := a.(*WriteArgs)
			if w.Path == "" {
				return Errf(InvalidArgument, "Write needs a path")
			}
			if w.Content == nil {
				return Errf(InvalidArgument, "Write needs content (use \"\" for an empty file)")
			}
			return nil
		},
		Path: func(a any) (string, PathUse) { return a.(*WriteArgs).Path, PathEntry },
		Redact: func(a any) string {
			w := a.(*WriteArgs)
			return string(mustJSON(map[string]any{"path": redactClip(w.Path), "content": redactClip(*w.Content)}))
		},
		Run: h.runWrite,
	}
}

func (h *Host) editTool() *ToolDef {
	return &ToolDef{
		Name: "Edit", Description: "Replace an exact string in a file (atomically, under review)", Risk: RiskHigh, Kind: KindEdit,
		NeedsRoot: true, Mutates: true, Timeout: defaultSearchTimeout,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["path","old_string","new_string"],"properties":{
 "path":{"type":"string"},
 "old_string":{"type":"string","description":"exact text to replace; must match exactly one place unless replace_all"},
 "new_string":{"type":"string","description":"replacement text (must differ from old_string)"},
 "replace_all":{"type":"boolean","default":false}}}`),
		NewArgs: func() any { return &EditArgs{} },
		Validate: func(a any) error {
			e := a.(*EditArgs)
			switch {
			case e.Path == "":
				return Errf(InvalidArgument, "Edit needs a path")
			case e.OldString == "":
				return Errf(InvalidArgument, "old_string is empty; use Write to create or replace a whole file")
			case e.OldString == e.NewString:
				return Errf(InvalidArgument, "old_string and new_string are the same; nothing to change")
			}
			return nil
		},
		Path: func(a any) (string, PathUse) { return a.(*EditArgs).Path, PathFile },
		Run:  h.runEdit,
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// preImage is what a mutation found before it changed anything.
type preImage struct {
	existed bool
	isLink  bool
	data    []byte
	mode    fs.FileMode
	id      fsx.ID
	big     bool   // too large to load: streamed into the snapshot
	hash    string // set when big
	saved   bool
}

// capturePre reads the current file (or notes its absence) through the root.
// For a workspace file it saves the snapshot before anything changes.
func (h *Host) capturePre(env *Env, root *os.Root, name, snapID string, follow bool) (*preImage, error) {
	p := &preImage{}
	fi, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, nil
	case err != nil:
		return nil, openErr(env.Path.Input, err)
	}
	p.existed = true
	if fi.Mode()&fs.ModeSymlink != 0 && !follow {
		// Write replaces the link entry itself; the link is not captured.
		p.isLink = true
		return p, nil
	}
	f, fi, err := fsx.OpenRegular(root, name)
	switch {
	case errors.Is(err, fsx.ErrIsDir):
		return nil, Errf(InvalidArgument, "%s is a directory", env.Path.Input)
	case errors.Is(err, fsx.ErrNotRegular):
		return nil, Errf(InvalidArgument, "%s is not a regular file", env.Path.Input)
	case err != nil:
		return nil, openErr(env.Path.Input, err)
	}
	defer f.Close()
	if err := env.Path.VerifyOpened(f); err != nil {
		return nil, err
	}
	p.mode = fi.Mode().Perm()
	p.id, _ = fsx.IDOfFile(f)
	lim := review.DefaultLimits()
	reviewed := env.Path.Class == ClassWorkspace
	if fi.Size() > int64(lim.MaxDiffBytes) && reviewed {
		// Stream big pre-images straight into the snapshot: no 2× memory.
		snaps := h.snapshots()
		_, sha, err := snaps.SaveFrom(env.Session.ID, snapID, f)
		switch {
		case errors.Is(err, review.ErrTooLarge):
			p.big = true
			if _, err := f.Seek(0, io.SeekStart); err == nil {
				p.hash, _ = hashReader(f)
			}
			return p, nil
		case err != nil:
			return nil, Wrap(ToolFailed, err, "snapshot %s", env.Path.Input)
		}
		p.big, p.hash, p.saved = true, sha, true
		return p, nil
	}
	p.data, err = io.ReadAll(f)
	if err != nil {
		return nil, Wrap(ToolFailed, err, "read %s", env.Path.Input)
	}
	if reviewed {
		if err := h.snapshots().Save(env.Session.ID, snapID, p.data); err != nil {
			if !errors.Is(err, review.ErrTooLarge) {
				return nil, Wrap(ToolFailed, err, "snapshot %s", env.Path.Input)
			}
		} else {
			p.saved = true
		}
	}
	return p, nil
}

func hashReader(r io.Reader) (string, error) {
	hh := sha256.New()
	_, err := io.Copy(hh, r)
	return hex.EncodeToString(hh.Sum(nil)), err
}

func (h *Host) snapshots() review.Snapshots {
	return review.Snapshots{Dir: h.SnapshotDir(), MaxBytes: review.DefaultLimits().MaxSnapshotBytes}
}

func (h *Host) runWrite(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*WriteArgs)
	rp := env.Path
	root, name, err := env.Roots.Reopen(rp, true)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return nil, openErr(args.Path, err)
		}
	}
	snapID := NewID("rc_")
	pre, err := h.capturePre(env, root, name, snapID, false)
	if err != nil {
		return nil, err
	}
	mode := fs.FileMode(0o644)
	if pre.existed && !pre.isLink {
		mode = pre.mode
	}
	data := []byte(*args.Content)
	rec, err := h.commit(ctx, env, root, name, snapID, review.OpWrite, pre, data, mode)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Root: rp.Class, Content: &WriteContent{Path: rp.Display(), Root: rp.Class, Bytes: len(data), Created: !pre.existed}}
	if rec != nil {
		out.Review = rec
	}
	return out, nil
}

// commit records a workspace change, then replaces the file. The record
// comes first so that a process killed right after the rename still leaves
// a change a person can review and roll back (if the kill came before the
// rename, the hash guard turns that rollback into a harmless CONFLICT). A
// failed write takes its record and snapshot back: failed writes have none
// (R-REV-2).
func (h *Host) commit(ctx context.Context, env *Env, root *os.Root, name, snapID, op string, pre *preImage, after []byte, mode fs.FileMode) (*review.Change, error) {
	var rec *review.Change
	if env.Path.Class == ClassWorkspace {
		var err error
		if rec, err = h.recordChange(ctx, env, snapID, op, pre, after); err != nil {
			_ = h.snapshots().Remove(env.Session.ID, snapID)
			return nil, err
		}
	}
	if _, err := fsx.WriteAtomic(root, name, bytes.NewReader(after), mode); err != nil {
		if rec != nil {
			dctx := context.WithoutCancel(ctx)
			_ = h.DB.DeleteChange(dctx, rec.SnapshotID)
			_ = h.snapshots().Remove(env.Session.ID, snapID)
		}
		return nil, openErr(env.Path.Input, err)
	}
	return rec, nil
}

// recordChange builds and stores the review record of a workspace mutation
// (R-REV-1, R-REV-2): stored with the tool call and its message id.
func (h *Host) recordChange(ctx context.Context, env *Env, snapID, op string, pre *preImage, after []byte) (*review.Change, error) {
	msg := env.Call.MessageID
	if msg == "" {
		msg = env.Call.ToolCallID
	}
	c := review.Capture{SnapshotID: snapID, MessageID: msg, Path: env.Path.Rel, Operation: op,
		BeforeExisted: pre.existed, Before: pre.data, BeforeMode: pre.mode, After: after, Saved: pre.saved,
		BeforeUnread: pre.big || pre.isLink, BeforeHash: pre.hash}
	if pre.isLink {
		c.Saved, c.BeforeHash = false, "link"
	}
	ch := review.NewChange(c, review.DefaultLimits())
	if pre.isLink {
		ch.Reversible = false
	}
	if err := h.DB.InsertChange(context.WithoutCancel(ctx), env.Session.ID, env.Call.ToolCallID, &ch); err != nil {
		return &ch, storeErr(err, "store review record")
	}
	return &ch, nil
}

func (h *Host) runEdit(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*EditArgs)
	rp := env.Path
	root, name, err := env.Roots.Reopen(rp, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if !rp.Exists {
		return nil, Errf(ToolFailed, "%s does not exist; Edit changes existing files (use Write to create one)", args.Path)
	}
	snapID := NewID("rc_")
	pre, err := h.capturePre(env, root, name, snapID, true)
	if err != nil {
		return nil, err
	}
	if !pre.existed {
		return nil, Errf(ToolFailed, "%s does not exist; Edit changes existing files (use Write to create one)", args.Path)
	}
	if pre.big && pre.data == nil {
		// Too big to have been loaded for the snapshot path: load it now.
		b, err := root.ReadFile(name)
		if err != nil {
			return nil, openErr(args.Path, err)
		}
		pre.data = b
	}
	if !utf8.Valid(pre.data) || bytes.IndexByte(pre.data, 0) >= 0 {
		return nil, Errf(ToolBinaryContent, "%s is binary; Edit changes text files only", args.Path)
	}
	after, n, first, err := applyEdit(pre.data, args)
	if err != nil {
		return nil, err
	}
	diff := review.Unified(strings.TrimPrefix(filepath.ToSlash(rp.Display()), "/"), pre.data, after, false)
	if pre.big {
		pre.data = nil // the record takes the streamed snapshot's hash, not the bytes
	}
	rec, err := h.commit(ctx, env, root, name, snapID, review.OpEdit, pre, after, pre.mode)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Root: rp.Class, Content: &EditContent{Path: rp.Display(), Root: rp.Class, Replacements: n,
		FirstChangedLine: first, Diff: diff}}
	if rec != nil {
		out.Review = rec
	}
	return out, nil
}

// applyEdit performs the exact replacement of SPEC §3.1: a UTF-8 BOM is kept,
// a CRLF file is matched in LF and written back in CRLF, no fuzzy matching.
func applyEdit(data []byte, a *EditArgs) ([]byte, int, int, error) {
	text := string(data)
	bom := ""
	if strings.HasPrefix(text, "\ufeff") {
		bom, text = "\ufeff", text[len("\ufeff"):]
	}
	crlf := strings.Contains(text, "\r\n") && strings.Count(text, "\n") == strings.Count(text, "\r\n")
	oldS, newS := a.OldString, a.NewString
	if crlf {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		oldS = strings.ReplaceAll(oldS, "\r\n", "\n")
		newS = strings.ReplaceAll(newS, "\r\n", "\n")
	}
	n := strings.Count(text, oldS)
	switch {
	case n == 0:
		return nil, 0, 0, Errf(ToolFailed, "old_string not found in %s; re-read the file (pi tool read) and retry with its exact current text", a.Path)
	case n > 1 && !a.ReplaceAll:
		return nil, 0, 0, Errf(ToolFailed, "old_string matches %d places in %s; re-read the file and add surrounding context to make it unique, or set replace_all", n, a.Path)
	}
	idx := strings.Index(text, oldS)
	first := strings.Count(text[:idx], "\n") + 1
	if a.ReplaceAll {
		text = strings.ReplaceAll(text, oldS, newS)
	} else {
		text = strings.Replace(text, oldS, newS, 1)
	}
	if crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if !a.ReplaceAll {
		n = 1
	}
	return []byte(bom + text), n, first, nil
}
