package search

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync/atomic"
)

// fileEntry is one file the walk yields.
type fileEntry struct {
	path string      // relative to the FS root
	rel  string      // relative to the walk base
	name string      // base name
	d    fs.DirEntry // as listed in its directory
	link fs.FileInfo // for a symlink to a regular file: the target's info
}

// modTime is the file's mtime (the target's for a symlink), 0 if unknown.
func (e *fileEntry) modTime() int64 {
	if e.link != nil {
		return e.link.ModTime().UnixNano()
	}
	if fi, err := e.d.Info(); err == nil {
		return fi.ModTime().UnixNano()
	}
	return 0
}

// size is the file's size as listed (the target's for a symlink), -1 if
// unknown. An os.Root FS lists entries with their lstat, so this is free.
func (e *fileEntry) size() int64 {
	if e.link != nil {
		return e.link.Size()
	}
	if fi, err := e.d.Info(); err == nil {
		return fi.Size()
	}
	return -1
}

// walker lists the files under a base directory in lexical order (entries
// of a directory sorted by name, depth first), honouring ignore files,
// skipping .git, never descending into symlinked directories and skipping
// anything unreadable.
type walker struct {
	ctx      context.Context
	fsys     fs.FS
	stop     *atomic.Bool                       // optional early stop
	allowDir func(rel string) bool              // optional pruning of directories
	exclude  func(path string, isDir bool) bool // optional: never list or enter (FS-root-relative path)
	visit    func(e *fileEntry) bool            // false stops the walk
	comps    []string                           // components of the current directory
	scratch  []string
}

// cleanBase turns a caller's base ("", ".", "a/b/", "./a") into a valid
// fs.FS path, refusing anything that would leave the FS root.
func cleanBase(base string) (string, error) {
	b := path.Clean(base)
	if !fs.ValidPath(b) {
		return "", fmt.Errorf("base %q: %w", base, fs.ErrInvalid)
	}
	return b, nil
}

// baseLevel builds the ignore patterns that apply above base: those of
// .git/info/exclude (when the FS root is a repository root) and of every
// ancestor directory. An explicit base drops the ancestors (SPEC §3.1: an
// explicit path stops parent ignore files from applying); the exclude file
// then applies only when the base is the root itself.
func baseLevel(fsys fs.FS, base string, explicit bool) *ignoreLevel {
	var lvl *ignoreLevel
	if !explicit || base == "." {
		if st, err := fs.Stat(fsys, ".git"); err == nil && st.IsDir() {
			lvl = lvl.push(readIgnoreFile(fsys, ".git/info/exclude", nil))
		}
	}
	if explicit {
		return lvl
	}
	comps := splitPath(base)
	for i := range comps {
		dir := "."
		if i > 0 {
			dir = strings.Join(comps[:i], "/")
		}
		lvl = lvl.push(dirIgnores(fsys, dir, comps[:i], nil))
	}
	return lvl
}

func (w *walker) run(base string, explicit bool) {
	if base != "." && w.exclude != nil && w.exclude(base, true) {
		return // an excluded directory is not searched even when named
	}
	w.comps = splitPath(base)
	w.walkDir(base, ".", baseLevel(w.fsys, base, explicit))
}

func (w *walker) stopped() bool {
	return (w.stop != nil && w.stop.Load()) || w.ctx.Err() != nil
}

// walkDir returns false once the walk must stop.
func (w *walker) walkDir(dir, rel string, lvl *ignoreLevel) bool {
	if w.stopped() {
		return false
	}
	entries, _ := fs.ReadDir(w.fsys, dir) // unreadable: whatever was listed, maybe nothing
	has := func(name string) bool {
		_, ok := slices.BinarySearchFunc(entries, name, func(d fs.DirEntry, n string) int {
			return strings.Compare(d.Name(), n)
		})
		return ok
	}
	comps := w.comps
	lvl = lvl.push(dirIgnores(w.fsys, dir, comps, has))
	for _, d := range entries {
		name := d.Name()
		if name == ".git" {
			continue
		}
		p := joinPath(dir, name)
		isDir := false
		var link fs.FileInfo
		switch t := d.Type(); {
		case t.IsDir():
			isDir = true
		case t.IsRegular():
		case t&fs.ModeSymlink != 0:
			// The FS resolves the link; an os.Root FS refuses one that
			// escapes or loops. Linked directories are never followed.
			fi, err := fs.Stat(w.fsys, p)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			link = fi
		default:
			continue // devices, pipes, sockets: opening one could block
		}
		if lvl != nil && lvl.ignored(append(comps, name), isDir, &w.scratch) {
			continue
		}
		if w.exclude != nil && w.exclude(p, isDir) {
			continue
		}
		r := joinPath(rel, name)
		if isDir {
			if w.allowDir != nil && !w.allowDir(r) {
				continue
			}
			w.comps = append(comps, name)
			ok := w.walkDir(p, r, lvl)
			w.comps = comps
			if !ok {
				return false
			}
			continue
		}
		if !w.visit(&fileEntry{path: p, rel: r, name: name, d: d, link: link}) {
			return false
		}
	}
	return true
}
