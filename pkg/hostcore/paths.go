package hostcore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/pi-cli/pi/pkg/fsx"
)

// PathClass is where an explicit path lands (R-PATH-3, R-PATH-6).
type PathClass string

// The classes.
const (
	ClassWorkspace PathClass = "workspace"
	ClassScratch   PathClass = "scratch"
	ClassExternal  PathClass = "external"
)

// Roots are the legal roots of one session plus pi's own protected dirs.
type Roots struct {
	Workspace   string // canonical absolute; "" for a temporary session
	WorkspaceID fsx.ID
	Scratch     string // canonical absolute <data>/scratch/<session>
	Protected   []string
	Sensitive   *SensitiveList
}

// Resolved is the outcome of resolving one explicit path argument.
type Resolved struct {
	Input     string    `json:"input"`
	Class     PathClass `json:"class"`
	Abs       string    `json:"abs"`       // lexical absolute path
	Canonical string    `json:"canonical"` // symlink-free absolute path of the entry the tool will touch
	RootDir   string    `json:"-"`         // the root to open: workspace, scratch, or (external) the canonical parent / the dir itself
	Rel       string    `json:"-"`         // slash path inside RootDir, "." for the root itself
	Exists    bool      `json:"exists"`
	IsDir     bool      `json:"isDir"`
	Escape    string    `json:"escape,omitempty"` // external: "absolute" | "dotdot" | "symlink"
	ParentID  fsx.ID    `json:"parentId"`
	TargetID  fsx.ID    `json:"targetId"`
	follow    bool
}

// Display is the path as results show it: workspace-relative with '/', else absolute.
func (r *Resolved) Display() string {
	if r.Class == ClassWorkspace {
		return r.Rel
	}
	return r.Canonical
}

// maxLinks bounds symlink expansion (Linux uses 40).
const maxLinks = 40

// errLoop is returned for too many levels of symbolic links.
var errLoop = errors.New("too many levels of symbolic links")

// CheckPathString rejects what no path may contain (SECURITY.md): empty,
// NUL, invalid UTF-8. Nothing is expanded (~, $VAR stay literal).
func CheckPathString(p string) error {
	switch {
	case p == "":
		return Errf(InvalidArgument, "path is empty")
	case strings.ContainsRune(p, 0):
		return Errf(InvalidArgument, "path contains a NUL byte")
	case !utf8.ValidString(p):
		return Errf(InvalidArgument, "path is not valid UTF-8")
	}
	return nil
}

// within reports whether p is root or below it. Both must be clean absolute
// paths; the separator check is what a string-prefix test gets wrong
// (/srv/app vs /srv/app-evil).
func within(p, root string) bool {
	if root == "" {
		return false
	}
	if p == root {
		return true
	}
	if strings.HasSuffix(root, string(filepath.Separator)) {
		return strings.HasPrefix(p, root)
	}
	return strings.HasPrefix(p, root+string(filepath.Separator))
}

func relTo(root, p string) string {
	if p == root {
		return "."
	}
	r, _ := filepath.Rel(root, p)
	return filepath.ToSlash(r)
}

// Canonicalize resolves every symlink in abs, component by component, the
// way the kernel would. Components after the first missing one are appended
// lexically (a create lands there); a dangling link is followed to where its
// target would be created, so a create can never be steered through it.
// followFinal=false leaves the last component as it is (the entry itself).
// exists reports whether the final path exists.
func Canonicalize(abs string, followFinal bool) (canon string, exists bool, err error) {
	vol := filepath.VolumeName(abs)
	sep := string(filepath.Separator)
	cur := vol + sep
	pending := splitPath(abs[len(vol):])
	links := 0
	missing := false
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if missing || (!followFinal && len(pending) == 0) {
			if !missing && !followFinal {
				if _, lerr := os.Lstat(next); lerr != nil {
					if !errors.Is(lerr, fs.ErrNotExist) {
						return "", false, lerr
					}
					missing = true
				}
			}
			cur = next
			continue
		}
		fi, lerr := os.Lstat(next)
		if lerr != nil {
			if errors.Is(lerr, fs.ErrNotExist) || errors.Is(lerr, errNotDir) {
				missing = true
				cur = next
				continue
			}
			return "", false, lerr
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			links++
			if links > maxLinks {
				return "", false, errLoop
			}
			target, rerr := os.Readlink(next)
			if rerr != nil {
				return "", false, rerr
			}
			if filepath.IsAbs(target) {
				tv := filepath.VolumeName(target)
				cur = tv + sep
				target = target[len(tv):]
			}
			pending = append(splitPath(target), pending...)
			continue
		}
		cur = next
	}
	return cur, !missing, nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator })
}

// ResolveOptions say how a tool uses its path.
type ResolveOptions struct {
	FollowFinal bool // reads and edits follow a final symlink; writes replace the entry
}

// Resolve classifies one explicit path argument (R-PATH-3..6, R-PATH-10).
// It never grants access: an external result is a request the policy must
// approve, and every execution re-opens through Reopen.
func (rt *Roots) Resolve(input string, o ResolveOptions) (*Resolved, error) {
	if err := CheckPathString(input); err != nil {
		return nil, err
	}
	res := &Resolved{Input: input, follow: o.FollowFinal}
	raw := input
	if filepath.IsAbs(input) {
		res.Escape = "absolute"
	} else {
		if rt.Workspace == "" {
			return nil, Errf(WorkspaceRequired, "a relative path needs a session with a workspace (this session is temporary)")
		}
		raw = rt.Workspace + string(filepath.Separator) + input
		res.Escape = "dotdot"
	}
	// Layer 1, lexical: where the string says it goes.
	res.Abs = filepath.Clean(raw)
	lexScratch := within(res.Abs, rt.Scratch)

	// Layer 2, canonical: where the kernel would go. ".." is applied after
	// the links before it, so "link/../x" is judged by where it lands.
	canon, exists, err := Canonicalize(raw, o.FollowFinal)
	if err != nil {
		return nil, Wrap(ToolFailed, err, "resolve %q", input)
	}
	res.Canonical, res.Exists = canon, exists

	if lexScratch && !within(canon, rt.Scratch) {
		return nil, Errf(PathOutsideWorkspace, "%s: a symlink in the scratch dir points outside it; scratch links reach nothing", input)
	}
	// pi's own state (store, other sessions' scratch, snapshots, settings) is
	// never a tool target, whatever the mode or workspace.
	if !within(canon, rt.Scratch) {
		for _, p := range rt.Protected {
			if within(res.Abs, p) || within(canon, p) {
				return nil, &Error{Code: ToolDenied, Message: fmt.Sprintf("%s is inside pi's own data or settings; tools never touch it", input),
					Details: map[string]any{"reason": "protected"}}
			}
		}
	}
	if rt.Sensitive != nil {
		if pat, hit := rt.Sensitive.Match(res.Abs, canon); hit {
			return nil, &Error{Code: ToolDenied, Message: fmt.Sprintf("%s is on the sensitive-path deny list (%s)", input, pat),
				Details: map[string]any{"reason": "sensitive", "pattern": pat}}
		}
	}

	// The canonical answer decides, and execution opens the canonical name
	// through os.Root, which refuses anything that escapes by then.
	switch {
	case within(canon, rt.Scratch):
		res.Class, res.RootDir, res.Rel, res.Escape = ClassScratch, rt.Scratch, relTo(rt.Scratch, canon), ""
	case within(canon, rt.Workspace):
		res.Class, res.RootDir, res.Rel, res.Escape = ClassWorkspace, rt.Workspace, relTo(rt.Workspace, canon), ""
	default:
		res.Class = ClassExternal
		if within(res.Abs, rt.Workspace) || lexScratch {
			res.Escape = "symlink"
		}
		if err := res.recordIdentity(); err != nil {
			return nil, err
		}
	}
	if res.Exists {
		if fi, err := os.Stat(canon); err == nil {
			res.IsDir = fi.IsDir()
		}
	}
	return res, nil
}

// recordIdentity notes, at request time, the identity of the canonical
// target and its parent, so execution can prove it touches the same thing.
func (r *Resolved) recordIdentity() error {
	parent := filepath.Dir(r.Canonical)
	r.RootDir, r.Rel = parent, filepath.Base(r.Canonical)
	if r.Canonical == parent { // the filesystem root itself
		r.Rel = "."
	}
	if id, err := fsx.StatID(parent); err == nil {
		r.ParentID = id
	}
	if r.Exists {
		if id, err := fsx.StatID(r.Canonical); err == nil {
			r.TargetID = id
		}
	}
	return nil
}

// ErrTargetChanged is wrapped by Reopen when an approved external target is
// no longer the thing that was approved.
var ErrTargetChanged = errors.New("target changed since it was approved")

// Reopen opens the root a resolved path executes in, immediately before
// execution (R-PATH-4): the workspace root is re-opened and its identity
// compared with the one bound at session creation; an external target is
// canonicalised again and its parent and target identities compared with
// those recorded at request time. It returns the root and the name inside it.
func (rt *Roots) Reopen(r *Resolved, create bool) (*os.Root, string, error) {
	switch r.Class {
	case ClassWorkspace:
		root, err := os.OpenRoot(rt.Workspace)
		if err != nil {
			return nil, "", Wrap(NotFound, err, "open workspace")
		}
		if !rt.WorkspaceID.IsZero() {
			id, err := rootID(root)
			if rt.WorkspaceID.Gen == 0 { // recorded before generations were kept
				id.Gen = 0
			}
			if err != nil || id != rt.WorkspaceID {
				root.Close()
				return nil, "", Errf(ToolDenied, "the workspace root %s is no longer the directory bound to this session", rt.Workspace)
			}
		}
		return root, r.Rel, nil
	case ClassScratch:
		if create {
			if err := os.MkdirAll(rt.Scratch, 0o700); err != nil {
				return nil, "", Wrap(ToolFailed, err, "create scratch dir")
			}
		}
		root, err := os.OpenRoot(rt.Scratch)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, "", Errf(NotFound, "%s does not exist (the scratch dir is empty)", r.Input)
			}
			return nil, "", Wrap(ToolFailed, err, "open scratch dir")
		}
		return root, r.Rel, nil
	}
	// External: never trust a fresh answer; compare it with the approved one.
	canon, exists, err := Canonicalize(r.Abs, r.follow)
	if err != nil || canon != r.Canonical || exists != r.Exists {
		return nil, "", &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
	}
	dir, name := r.RootDir, r.Rel
	want := r.ParentID
	if r.IsDir {
		dir, name, want = r.Canonical, ".", r.TargetID
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
	}
	id, err := rootID(root)
	if err != nil || id != want {
		root.Close()
		return nil, "", &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
	}
	if name != "." {
		fi, err := root.Lstat(name)
		switch {
		case err == nil && (fi.Mode()&fs.ModeSymlink != 0 || !r.Exists):
			root.Close()
			return nil, "", &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
		case err == nil && r.Exists:
			if fid, ierr := fsx.StatID(filepath.Join(dir, name)); ierr != nil || fid != r.TargetID {
				root.Close()
				return nil, "", &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
			}
		case err != nil && r.Exists:
			root.Close()
			return nil, "", &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
		}
	}
	return root, name, nil
}

// VerifyOpened compares an opened external file with the approved identity,
// closing the window between Reopen's check and the open itself.
func (r *Resolved) VerifyOpened(f *os.File) error {
	if r.Class != ClassExternal || r.TargetID.IsZero() {
		return nil
	}
	id, err := fsx.IDOfFile(f)
	if err != nil || id != r.TargetID {
		return &Error{Code: ToolDenied, Message: fmt.Sprintf("%s: %v", r.Input, ErrTargetChanged), Err: ErrTargetChanged}
	}
	return nil
}

// rootID reads the identity of an opened root directory.
func rootID(root *os.Root) (fsx.ID, error) {
	f, err := root.Open(".")
	if err != nil {
		return fsx.ID{}, err
	}
	defer f.Close()
	return fsx.IDOfFile(f)
}

var errNotDir = syscall.ENOTDIR
