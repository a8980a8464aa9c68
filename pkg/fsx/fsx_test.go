package fsx

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func openRoot(t *testing.T) (*os.Root, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir
}

// TestWriteAtomicTemps: a stale temp left by a killed writer is removed by
// the next write; a fresh one (a live writer) is left alone; a symlink
// planted at the temp name is never followed.
func TestWriteAtomicTemps(t *testing.T) {
	root, dir := openRoot(t)
	stale := filepath.Join(dir, ".a.txt.pi-tmp")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * StaleTemp)
	os.Chtimes(stale, old, old)
	if _, err := WriteAtomic(root, "a.txt", strings.NewReader("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temp survived: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "new\n" {
		t.Fatalf("a.txt = %q", b)
	}

	fresh := filepath.Join(dir, ".b.txt.pi-tmp")
	os.WriteFile(fresh, []byte("live writer"), 0o600)
	if _, err := WriteAtomic(root, "b.txt", strings.NewReader("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(fresh); string(b) != "live writer" {
		t.Fatalf("a live writer's temp was touched: %q", b)
	}

	if runtime.GOOS == "windows" {
		return
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, ".c.txt.pi-tmp")); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, ".c.txt.pi-tmp"), old, old)
	if _, err := WriteAtomic(root, "c.txt", strings.NewReader("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("write followed a planted temp link: victim = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "c.txt")); string(b) != "c\n" {
		t.Fatalf("c.txt = %q", b)
	}
}

// TestWriteAtomicReplacesLinkAndKeepsHardLink: the rename replaces a final
// symlink or a hard link's entry; neither target is written through.
func TestWriteAtomicReplacesLinkAndKeepsHardLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("links")
	}
	root, dir := openRoot(t)
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("target"), 0o644)
	os.Symlink(target, filepath.Join(dir, "link"))
	if _, err := WriteAtomic(root, "link", strings.NewReader("replaced"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "target" {
		t.Fatalf("wrote through a symlink: %q", b)
	}
	fi, _ := os.Lstat(filepath.Join(dir, "link"))
	if !fi.Mode().IsRegular() {
		t.Fatalf("link entry is %v, want a regular file", fi.Mode())
	}
	os.WriteFile(filepath.Join(dir, "h1"), []byte("shared"), 0o644)
	os.Link(filepath.Join(dir, "h1"), filepath.Join(dir, "h2"))
	if _, err := WriteAtomic(root, "h1", strings.NewReader("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "h2")); string(b) != "shared" {
		t.Fatalf("wrote through a hard link: %q", b)
	}
}

// TestOpenRegularRefusesFIFO: a FIFO would block a plain open; it is refused.
func TestOpenRegularRefusesFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fifo")
	}
	root, dir := openRoot(t)
	if err := mkfifo(filepath.Join(dir, "p")); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := OpenRegular(root, "p"); done <- err }()
	select {
	case err := <-done:
		if err != ErrNotRegular {
			t.Fatalf("OpenRegular(fifo) = %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenRegular blocked on a FIFO")
	}
}
