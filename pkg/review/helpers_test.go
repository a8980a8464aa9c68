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
	"path/filepath"
	"testing"
)

// rootRestorer is a real Restorer over a workspace directory, built the way
// the host builds it: every operation through os.Root, writes atomic.
type rootRestorer struct{ root *os.Root }

func (r rootRestorer) Hash(path string) (string, bool, error) {
	name := filepath.FromSlash(path)
	st, err := r.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	if !st.Mode().IsRegular() {
		return "", false, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := r.root.Open(name)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", false, err
	}
	return hex.EncodeToString(h.Sum(nil)), true, nil
}

func (r rootRestorer) Replace(path string, src io.Reader, mode fs.FileMode) (err error) {
	name := filepath.FromSlash(path)
	if dir := filepath.Dir(name); dir != "." {
		if err := r.root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+"."+rand.Text()+".tmp")
	f, err := r.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			r.root.Remove(tmp)
		}
	}()
	if _, err = io.Copy(f, src); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = r.root.Chmod(tmp, mode); err != nil {
		return err
	}
	return r.root.Rename(tmp, name)
}

func (r rootRestorer) Remove(path string) error { return r.root.Remove(filepath.FromSlash(path)) }

// env is one session: a workspace, its restorer and a snapshot store.
type env struct {
	t       testing.TB
	ws      string
	rfs     rootRestorer
	snaps   Snapshots
	session string
	seq     int
}

func newEnv(t testing.TB) *env {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &env{t: t, ws: ws, rfs: rootRestorer{root}, snaps: Snapshots{Dir: filepath.Join(base, "data", "review")}, session: "sess-1"}
}

func (e *env) put(path string, b []byte) {
	e.t.Helper()
	if err := e.rfs.Replace(path, bytes.NewReader(b), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(path string) ([]byte, bool) {
	e.t.Helper()
	b, err := e.rfs.root.ReadFile(filepath.FromSlash(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	} else if err != nil {
		e.t.Fatal(err)
	}
	return b, true
}

// mutate does what the host does for a Write/Edit/delete: capture the
// previous file (or its absence), apply the change, build the record.
func (e *env) mutate(op, path string, after []byte) Change {
	e.t.Helper()
	e.seq++
	c := Capture{SnapshotID: fmt.Sprintf("snap-%d", e.seq), MessageID: "msg-1", Path: path, Operation: op}
	name := filepath.FromSlash(path)
	if st, err := e.rfs.root.Lstat(name); err == nil {
		f, err := e.rfs.root.Open(name)
		if err != nil {
			e.t.Fatal(err)
		}
		var buf bytes.Buffer
		_, sha, err := e.snaps.SaveFrom(e.session, c.SnapshotID, io.TeeReader(f, &buf))
		f.Close()
		if err != nil {
			e.t.Fatal(err)
		}
		c.BeforeExisted, c.Before, c.BeforeHash, c.BeforeMode, c.Saved = true, buf.Bytes(), sha, st.Mode(), true
	}
	if op == OpDelete {
		if err := e.rfs.Remove(path); err != nil {
			e.t.Fatal(err)
		}
	} else {
		mode := fs.FileMode(0o644)
		if c.BeforeExisted {
			mode = c.BeforeMode.Perm()
		}
		if err := e.rfs.Replace(path, bytes.NewReader(after), mode); err != nil {
			e.t.Fatal(err)
		}
		c.After = after
	}
	return NewChange(c, Limits{})
}

// tree lists every file under dir with its content, to prove "touches nothing".
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return m
}
