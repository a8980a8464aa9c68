package review

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestRollbackModify(t *testing.T) {
	e := newEnv(t)
	e.put("src/a.go", []byte("package a\n\nfunc A() {}\n"))
	if runtime.GOOS != "windows" {
		os.Chmod(filepath.Join(e.ws, "src", "a.go"), 0o750)
	}
	c := e.mutate(OpEdit, "src/a.go", []byte("package a\n\nfunc A() int { return 1 }\n"))
	if c.Status != StatusModified || !c.Reversible || c.Additions != 1 || c.Deletions != 1 || len(c.Hunks) != 1 {
		t.Fatalf("record %+v", c)
	}
	rollback(t, e, c)
	wantFile(t, e, "src/a.go", []byte("package a\n\nfunc A() {}\n"))
	if runtime.GOOS != "windows" {
		if st, _ := os.Stat(filepath.Join(e.ws, "src", "a.go")); st.Mode().Perm() != 0o750 {
			t.Fatalf("mode %v, want 0750", st.Mode())
		}
	}
}

func TestRollbackCreateRemovesFile(t *testing.T) {
	e := newEnv(t)
	c := e.mutate(OpWrite, "new.txt", []byte("hello\n"))
	if c.Status != StatusAdded || !c.Reversible || c.BeforeExisted || c.BeforeHash != "" || c.Additions != 1 {
		t.Fatalf("record %+v", c)
	}
	rollback(t, e, c)
	wantAbsent(t, e, "new.txt")
}

func TestRollbackOverwrite(t *testing.T) {
	e := newEnv(t)
	e.put("cfg.json", []byte("{\"a\":1}\n"))
	c := e.mutate(OpWrite, "cfg.json", []byte("totally\ndifferent\n"))
	if c.Operation != OpWrite || c.Status != StatusModified {
		t.Fatalf("record %+v", c)
	}
	rollback(t, e, c)
	wantFile(t, e, "cfg.json", []byte("{\"a\":1}\n"))
}

func TestRollbackDeleteOperation(t *testing.T) {
	e := newEnv(t)
	e.put("gone.txt", []byte("keep me\n"))
	c := e.mutate(OpDelete, "gone.txt", nil)
	if c.Status != StatusDeleted || c.AfterHash != "" || c.Deletions != 1 || !c.Reversible {
		t.Fatalf("record %+v", c)
	}
	wantAbsent(t, e, "gone.txt")
	rollback(t, e, c)
	wantFile(t, e, "gone.txt", []byte("keep me\n"))
}

func TestRollbackConflictAfterHandEdit(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	c := e.mutate(OpEdit, "a.txt", []byte("v2\n"))
	e.put("a.txt", []byte("hand edit\n"))
	before := tree(t, filepath.Dir(e.ws))
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want ErrConflict", err)
	}
	wantFile(t, e, "a.txt", []byte("hand edit\n"))
	if after := tree(t, filepath.Dir(e.ws)); len(after) != len(before) {
		t.Fatalf("files changed: %v -> %v", before, after)
	}
}

func TestRollbackTwiceConflicts(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	c := e.mutate(OpEdit, "a.txt", []byte("v2\n"))
	done := rollback(t, e, c)
	if _, err := Rollback(e.snaps, e.session, done, e.rfs); !errors.Is(err, ErrConflict) {
		t.Fatalf("second rollback of the stored record: %v", err)
	}
	// Even a stale copy still saying "active" is refused by the hash guard.
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrConflict) {
		t.Fatalf("second rollback of a stale record: %v", err)
	}
	wantFile(t, e, "a.txt", []byte("v1\n"))
}

// A file removed by hand after a write/edit is a conflict, by choice: absent
// is not the post-tool content, and resurrecting a file someone deleted on
// purpose would override their action (see Check).
func TestRollbackFileDeletedByHandConflicts(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	c := e.mutate(OpEdit, "a.txt", []byte("v2\n"))
	os.Remove(filepath.Join(e.ws, "a.txt"))
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want ErrConflict", err)
	}
	wantAbsent(t, e, "a.txt")
}

func TestRollbackDeleteRecreatedConflicts(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	c := e.mutate(OpDelete, "a.txt", nil)
	e.put("a.txt", []byte("recreated\n"))
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrConflict) {
		t.Fatalf("err %v, want ErrConflict", err)
	}
	wantFile(t, e, "a.txt", []byte("recreated\n"))
}

func TestRollbackBinaryByteExact(t *testing.T) {
	e := newEnv(t)
	pre := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{1}).Read(pre)
	pre[10] = 0
	e.put("blob.bin", pre)
	c := e.mutate(OpWrite, "blob.bin", []byte("now text\n"))
	if !c.Binary || len(c.Hunks) != 0 || c.Additions != 0 {
		t.Fatalf("record %+v", c)
	}
	rollback(t, e, c)
	wantFile(t, e, "blob.bin", pre)
}

func TestRollbackIrreversible(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	c := NewChange(Capture{SnapshotID: "s1", Path: "a.txt", Operation: OpEdit, BeforeExisted: true,
		Before: []byte("v1\n"), After: []byte("v2\n")}, Limits{}) // not Saved
	e.put("a.txt", []byte("v2\n"))
	if c.Reversible {
		t.Fatal("unsaved pre-image marked reversible")
	}
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrIrreversible) {
		t.Fatalf("err %v", err)
	}
	wantFile(t, e, "a.txt", []byte("v2\n"))
}

func TestRollbackSnapshotGoneOrCorrupt(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	c := e.mutate(OpEdit, "a.txt", []byte("v2\n"))
	pre := filepath.Join(e.snaps.Dir, e.session, c.SnapshotID+".pre")
	if err := os.WriteFile(pre, []byte("tampered\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrIrreversible) {
		t.Fatalf("corrupt snapshot: %v", err)
	}
	wantFile(t, e, "a.txt", []byte("v2\n"))
	if err := e.snaps.RemoveSession(e.session); err != nil {
		t.Fatal(err)
	}
	if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrIrreversible) {
		t.Fatalf("missing snapshot: %v", err)
	}
	wantFile(t, e, "a.txt", []byte("v2\n"))
	entries, _ := os.ReadDir(e.ws)
	if len(entries) != 1 {
		t.Fatalf("workspace has leftovers: %v", entries)
	}
}

func TestCheckAllOrNothing(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("a1\n"))
	e.put("b.txt", []byte("b1\n"))
	ca := e.mutate(OpEdit, "a.txt", []byte("a2\n"))
	cb := e.mutate(OpEdit, "b.txt", []byte("b2\n"))
	e.put("b.txt", []byte("hand\n"))
	var firstErr error
	for _, c := range []Change{ca, cb} {
		if err := Check(c, e.rfs); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if !errors.Is(firstErr, ErrConflict) {
		t.Fatalf("Check: %v", firstErr)
	}
	wantFile(t, e, "a.txt", []byte("a2\n"))
}

func TestRollbackInvalidRecord(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", []byte("v1\n"))
	good := e.mutate(OpEdit, "a.txt", []byte("v2\n"))
	for name, mutate := range map[string]func(*Change){
		"escaping path":     func(c *Change) { c.Path = "../outside.txt" },
		"absolute path":     func(c *Change) { c.Path = "/etc/passwd" },
		"bad snapshot id":   func(c *Change) { c.SnapshotID = "../../x" },
		"no after hash":     func(c *Change) { c.AfterHash = "" },
		"added but existed": func(c *Change) { c.Status = StatusAdded },
		"version":           func(c *Change) { c.Version = 2 },
	} {
		c := good
		mutate(&c)
		if _, err := Rollback(e.snaps, e.session, c, e.rfs); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	wantFile(t, e, "a.txt", []byte("v2\n"))
}

// TestRollbackLargeStreaming: a 50 MB pre-image goes through SaveFrom and
// back through a streaming Replace, never held whole by the package.
func TestRollbackLargeStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MB")
	}
	e := newEnv(t)
	const size = 50 << 20
	f, err := os.Create(filepath.Join(e.ws, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(rand.NewChaCha8([32]byte{2}), size)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	wantSum := hex.EncodeToString(h.Sum(nil))

	src, err := e.rfs.root.Open("big.log")
	if err != nil {
		t.Fatal(err)
	}
	n, sha, err := e.snaps.SaveFrom(e.session, "big-1", src)
	src.Close()
	if err != nil || n != size || sha != wantSum {
		t.Fatalf("SaveFrom: n=%d sha=%s err=%v", n, sha, err)
	}
	after := []byte("truncated by the agent\n")
	e.put("big.log", after)
	c := NewChange(Capture{SnapshotID: "big-1", MessageID: "m", Path: "big.log", Operation: OpWrite,
		BeforeExisted: true, BeforeHash: sha, BeforeMode: 0o644, After: after, Saved: true, BeforeUnread: true}, Limits{})
	if !c.Truncated || !c.Reversible || c.AfterHash == "" {
		t.Fatalf("record %+v", c)
	}
	if used, err := e.snaps.Bytes(e.session); err != nil || used != size {
		t.Fatalf("Bytes = %d, %v", used, err)
	}
	rollback(t, e, c)
	got, ok, err := e.rfs.Hash("big.log")
	if err != nil || !ok || got != wantSum {
		t.Fatalf("restored hash %s (exists %v, %v), want %s", got, ok, err, wantSum)
	}
}
