//go:build unix

package search

import (
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// A named pipe is never opened: opening one would block the search.
func TestSpecialFilesSkipped(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "needle\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fsys := openRoot(t, dir)
	if got := globAll(t, GlobOptions{FS: fsys, Base: ".", Pattern: "*"}); !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("glob: %q", got)
	}
	if res := grep(t, GrepOptions{FS: fsys, Pattern: "needle"}); res.Count != 1 {
		t.Errorf("grep: %+v", res)
	}
	if _, err := Grep(context.Background(), GrepOptions{FS: fsys, Base: "pipe", BaseIsFile: true, Pattern: "x"}); err == nil {
		t.Error("named pipe searched")
	}
}
