package review

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestSnapshotsSaveOpen(t *testing.T) {
	s := Snapshots{Dir: filepath.Join(t.TempDir(), "data", "review")}
	if err := s.Save("s1", "a", []byte("pre-image\x00bytes")); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Open("s1", "a")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "pre-image\x00bytes" {
		t.Fatalf("got %q", got)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]fs.FileMode{s.Dir: 0o700, filepath.Join(s.Dir, "s1"): 0o700, filepath.Join(s.Dir, "s1", "a.pre"): 0o600} {
			if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
				t.Errorf("%s: mode %v (%v), want %v", p, st.Mode().Perm(), err, want)
			}
		}
	}
	// One ID names one pre-image forever.
	if err := s.Save("s1", "a", []byte("other")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("overwrite: %v", err)
	}
	if _, err := s.Open("s1", "missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := (Snapshots{Dir: filepath.Join(t.TempDir(), "nope")}).Open("s1", "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing dir: %v", err)
	}
}

func TestSnapshotsMaxBytes(t *testing.T) {
	s := Snapshots{Dir: t.TempDir(), MaxBytes: 10}
	if err := s.Save("s1", "ok", []byte("0123456789")); err != nil {
		t.Fatalf("at the cap: %v", err)
	}
	// The cap counts what is read, whatever a stat said.
	if _, _, err := s.SaveFrom("s1", "big", strings.NewReader("0123456789x")); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the cap: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(s.Dir, "s1"))
	if len(ents) != 1 || ents[0].Name() != "ok.pre" {
		t.Fatalf("left behind: %v", ents)
	}
}

type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk on fire")
	}
	f.n--
	return copy(p, "chunk"), nil
}

func TestSnapshotsReadErrorLeavesNothing(t *testing.T) {
	s := Snapshots{Dir: t.TempDir()}
	if _, _, err := s.SaveFrom("s1", "x", &failingReader{n: 3}); err == nil {
		t.Fatal("no error")
	}
	if n, err := s.Bytes("s1"); err != nil || n != 0 {
		t.Fatalf("Bytes = %d, %v", n, err)
	}
	if _, err := s.Open("s1", "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open: %v", err)
	}
}

func TestSnapshotsSessionsBytesRemove(t *testing.T) {
	s := Snapshots{Dir: t.TempDir()}
	if got, err := (Snapshots{Dir: filepath.Join(s.Dir, "absent")}).Sessions(); err != nil || got != nil {
		t.Fatalf("absent dir: %v %v", got, err)
	}
	s.Save("s1", "a", []byte("12345"))
	s.Save("s1", "b", []byte("123"))
	s.Save("s2", "a", []byte("1"))
	os.WriteFile(filepath.Join(s.Dir, "stray-file"), nil, 0o600)
	os.Mkdir(filepath.Join(s.Dir, ".hidden"), 0o700)
	got, err := s.Sessions()
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"s1", "s2"}) {
		t.Fatalf("Sessions = %v, %v", got, err)
	}
	if n, err := s.Bytes("s1"); err != nil || n != 8 {
		t.Fatalf("Bytes(s1) = %d, %v", n, err)
	}
	if n, err := s.Bytes("nobody"); err != nil || n != 0 {
		t.Fatalf("Bytes(nobody) = %d, %v", n, err)
	}
	if err := s.RemoveSession("s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveSession("s1"); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	got, _ = s.Sessions()
	if !slices.Equal(got, []string{"s2"}) {
		t.Fatalf("after remove: %v", got)
	}
}

func TestSnapshotsRejectBadIDs(t *testing.T) {
	s := Snapshots{Dir: t.TempDir()}
	for _, id := range []string{"", "..", ".", "../x", "a/b", `a\b`, ".hidden", "a\x00", "c:x", strings.Repeat("a", 129)} {
		if err := s.Save(id, "ok", nil); err == nil {
			t.Errorf("session %q accepted", id)
		}
		if err := s.Save("ok", id, nil); err == nil {
			t.Errorf("snapshot %q accepted", id)
		}
		if err := s.RemoveSession(id); err == nil {
			t.Errorf("RemoveSession(%q) accepted", id)
		}
	}
}

// A symlink planted in the data dir must not carry a snapshot write or a
// session removal outside it.
func TestSnapshotsSymlinkEscape(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o700)
	os.WriteFile(filepath.Join(outside, "precious"), []byte("keep"), 0o600)
	s := Snapshots{Dir: filepath.Join(base, "review")}
	os.Mkdir(s.Dir, 0o700)
	if err := os.Symlink(outside, filepath.Join(s.Dir, "evil")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	if err := s.Save("evil", "x", []byte("data")); err == nil {
		t.Fatal("write through an escaping symlink succeeded")
	}
	if err := s.RemoveSession("evil"); err != nil {
		t.Fatalf("RemoveSession: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "precious")); err != nil || !bytes.Equal(b, []byte("keep")) {
		t.Fatalf("outside touched: %q %v", b, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatalf("outside has %v", ents)
	}
}
