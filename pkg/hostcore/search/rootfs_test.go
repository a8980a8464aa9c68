package search

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRootFSContainment: the handle cache never widens what the root allows:
// an escaping link is refused, an in-tree link that leaves its own directory
// still works (retried through the top root), and results equal a plain
// os.Root FS.
func TestRootFSContainment(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	base := t.TempDir()
	ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{filepath.Join(ws, "a", "b"), filepath.Join(ws, "c"), out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(out, "secret.txt"), []byte("needle OUTSIDE\n"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "c", "real.txt"), []byte("needle inside\n"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "a", "b", "deep.txt"), []byte("needle deep\n"), 0o644))
	must(os.Symlink("../../c/real.txt", filepath.Join(ws, "a", "b", "up.txt")))
	must(os.Symlink(filepath.Join(out, "secret.txt"), filepath.Join(ws, "a", "b", "out.txt")))
	must(os.Symlink(out, filepath.Join(ws, "a", "outdir")))
	root, err := os.OpenRoot(ws)
	must(err)
	defer root.Close()
	rfs := NewRootFS(root)
	defer rfs.Close()
	rfs.max = 1 // force evictions while scanning
	got, err := Grep(context.Background(), GrepOptions{FS: rfs, Base: ".", Pattern: "needle", OutputMode: OutputContent, HeadLimit: 100})
	must(err)
	plain, err := Grep(context.Background(), GrepOptions{FS: root.FS(), Base: ".", Pattern: "needle", OutputMode: OutputContent, HeadLimit: 100})
	must(err)
	var a, b []string
	for _, m := range got.Matches {
		a = append(a, m.Path+":"+m.Text)
	}
	for _, m := range plain.Matches {
		b = append(b, m.Path+":"+m.Text)
	}
	if strings.Join(a, "|") != strings.Join(b, "|") {
		t.Fatalf("RootFS %v != os.Root FS %v", a, b)
	}
	if strings.Contains(strings.Join(a, "|"), "OUTSIDE") {
		t.Fatalf("leaked outside content: %v", a)
	}
	if !strings.Contains(strings.Join(a, "|"), "a/b/up.txt:needle inside") {
		t.Fatalf("in-tree link leaving its dir was lost: %v", a)
	}
	if _, err := rfs.Open("a/outdir/secret.txt"); err == nil {
		t.Fatal("opened a file through an escaping directory link")
	}
	if _, err := rfs.Stat("a/b/out.txt"); err == nil {
		t.Fatal("stat followed an escaping link")
	}
}
