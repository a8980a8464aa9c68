package search

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The benchmarks search the Go source tree ($(go env GOROOT)/src, ~10k
// files), the corpus we compare against ripgrep with, e.g.
// `rg -c ErrShortWrite $(go env GOROOT)/src`. HeadLimit is at its maximum so
// that a run scans the whole tree rather than stopping at the first 200 hits.

func goSrcFS(b *testing.B) (*os.Root, int64) {
	b.Helper()
	dir := filepath.Join(runtime.GOROOT(), "src")
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Skipf("no GOROOT/src: %v", err)
	}
	b.Cleanup(func() { root.Close() })
	var size int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	return root, size
}

func benchGrep(b *testing.B, o GrepOptions) {
	root, size := goSrcFS(b)
	o.FS, o.Base, o.HeadLimit = NewRootFS(root), ".", MaxHeadLimit
	b.SetBytes(size)
	b.ReportAllocs()
	var count int
	for b.Loop() {
		res, err := Grep(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		count = res.Count
	}
	b.ReportMetric(float64(count), "items")
}

func BenchmarkGrepLiteral(b *testing.B) {
	benchGrep(b, GrepOptions{Pattern: "ErrShortWrite"})
}

func BenchmarkGrepLiteralCaseInsensitive(b *testing.B) {
	benchGrep(b, GrepOptions{Pattern: "errshortwrite", CaseInsensitive: true})
}

func BenchmarkGrepRegexLiteralPart(b *testing.B) {
	benchGrep(b, GrepOptions{Pattern: `func \w+Reader\(`})
}

func BenchmarkGrepFilesWithMatches(b *testing.B) {
	benchGrep(b, GrepOptions{Pattern: "TODO", OutputMode: OutputFilesWithMatches})
}

func BenchmarkGlob(b *testing.B) {
	root, _ := goSrcFS(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Glob(context.Background(), GlobOptions{FS: NewRootFS(root), Base: ".", Pattern: "**/*.go"}); err != nil {
			b.Fatal(err)
		}
	}
}
