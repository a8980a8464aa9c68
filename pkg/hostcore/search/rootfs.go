package search

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
)

// RootFS is an fs.FS over an os.Root that keeps handles (sub-roots) on
// recently used directories. Through a plain os.Root FS every open walks the
// path one component at a time (an openat and a close per directory level);
// beneath a cached directory handle it is a single openat. Containment is
// unchanged: every handle is an os.Root opened through its parent root, and
// anything a sub-root refuses (a link leaving that directory but staying in
// the tree) is retried through the top root, which decides as before.
type RootFS struct {
	root  *os.Root
	mu    sync.Mutex
	dirs  map[string]*dirRef
	clock uint64
	max   int
}

type dirRef struct {
	r       *os.Root
	refs    int
	used    uint64
	evicted bool
}

// NewRootFS wraps root; Close releases the cached directory handles (the
// root itself stays the caller's).
func NewRootFS(root *os.Root) *RootFS {
	return &RootFS{root: root, dirs: map[string]*dirRef{}, max: 64}
}

// Close closes every cached directory handle.
func (f *RootFS) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, d := range f.dirs {
		d.evicted = true
		if d.refs == 0 {
			d.r.Close()
		}
		delete(f.dirs, k)
	}
	return nil
}

// acquire returns a handle on dir and its release func.
func (f *RootFS) acquire(dir string) (*os.Root, func(), error) {
	if dir == "." || dir == "" {
		return f.root, func() {}, nil
	}
	f.mu.Lock()
	if d, ok := f.dirs[dir]; ok {
		d.refs++
		f.clock++
		d.used = f.clock
		f.mu.Unlock()
		return d.r, f.releaser(d), nil
	}
	f.mu.Unlock()
	parent, release, err := f.acquire(path.Dir(dir))
	if err != nil {
		return nil, nil, err
	}
	sub, err := parent.OpenRoot(path.Base(dir))
	release()
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.dirs[dir]; ok { // another goroutine won the race
		sub.Close()
		d.refs++
		return d.r, f.releaser(d), nil
	}
	f.clock++
	d := &dirRef{r: sub, refs: 1, used: f.clock}
	f.dirs[dir] = d
	f.evict()
	return sub, f.releaser(d), nil
}

func (f *RootFS) releaser(d *dirRef) func() {
	return func() {
		f.mu.Lock()
		d.refs--
		if d.refs == 0 && d.evicted {
			d.r.Close()
		}
		f.mu.Unlock()
	}
}

// evict drops the least recently used handles beyond max (f.mu held).
func (f *RootFS) evict() {
	for len(f.dirs) > f.max {
		var oldK string
		var old *dirRef
		for k, d := range f.dirs {
			if old == nil || d.used < old.used {
				oldK, old = k, d
			}
		}
		delete(f.dirs, oldK)
		old.evicted = true
		if old.refs == 0 {
			old.r.Close()
		}
	}
}

func split(name string) (string, string) {
	dir, base := path.Split(name)
	if dir == "" {
		return ".", base
	}
	return path.Clean(dir), base
}

// Open opens name beneath its directory's handle.
func (f *RootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return f.root.Open(".")
	}
	dir, base := split(name)
	r, release, err := f.acquire(dir)
	if err == nil {
		file, oerr := r.Open(base)
		release()
		if oerr == nil || errors.Is(oerr, fs.ErrNotExist) {
			return file, oerr
		}
	}
	return f.root.Open(name)
}

// Stat stats name (following links, within the root).
func (f *RootFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return f.root.Stat(".")
	}
	dir, base := split(name)
	r, release, err := f.acquire(dir)
	if err == nil {
		fi, serr := r.Stat(base)
		release()
		if serr == nil || errors.Is(serr, fs.ErrNotExist) {
			return fi, serr
		}
	}
	return f.root.Stat(name)
}

// ReadDir lists name sorted by file name.
func (f *RootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	r, release, err := f.acquire(name)
	if err != nil {
		return fs.ReadDir(f.root.FS(), name)
	}
	defer release()
	d, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	sortEntries(ents)
	return ents, err
}

var (
	_ fs.StatFS    = (*RootFS)(nil)
	_ fs.ReadDirFS = (*RootFS)(nil)
)

func sortEntries(ents []fs.DirEntry) {
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}
