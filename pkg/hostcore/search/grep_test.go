package search

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func grep(t *testing.T, o GrepOptions) *GrepResult {
	t.Helper()
	if o.Base == "" {
		o.Base = "."
	}
	res, err := Grep(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Matches) + len(res.Files) + len(res.Counts); n != res.Count {
		t.Errorf("count %d but %d items", res.Count, n)
	}
	return res
}

func matchPaths(res *GrepResult) []string {
	var out []string
	for _, m := range res.Matches {
		out = append(out, m.Path)
	}
	return out
}

func TestGrepIgnoreRules(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for name, content := range ignoreTree {
		files[name] = content + "\nNEEDLE\n"
	}
	writeTree(t, dir, files)
	res := grep(t, GrepOptions{FS: openRoot(t, dir), Pattern: "NEEDLE", OutputMode: OutputFilesWithMatches})
	if !slices.Equal(res.Files, ignoreTreeVisible) { // walk order equals sorted order here
		t.Errorf("files:\n got %q\nwant %q", res.Files, ignoreTreeVisible)
	}
}

func TestGrepSymlinks(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "TOPSECRET needle\n", "d/f.txt": "needle in linked dir\n"})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"real/f.txt": "needle real\n", "a.txt": "needle a\n"})
	symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "escape.txt"))
	symlink(t, filepath.Join(outside, "d"), filepath.Join(dir, "escdir"))
	symlink(t, "real", filepath.Join(dir, "inner"))      // a linked directory inside: not followed
	symlink(t, "a.txt", filepath.Join(dir, "alias.txt")) // a linked file inside: searched
	symlink(t, "loop2", filepath.Join(dir, "loop1"))     // a loop
	symlink(t, "loop1", filepath.Join(dir, "loop2"))
	symlink(t, "missing", filepath.Join(dir, "dangling"))
	symlink(t, "../"+filepath.Base(dir)+"/a.txt", filepath.Join(dir, "roundabout.txt")) // leaves the root lexically
	fsys := openRoot(t, dir)

	g := globAll(t, GlobOptions{FS: fsys, Base: ".", Pattern: "**"})
	if want := []string{"a.txt", "alias.txt", "real/f.txt"}; !slices.Equal(g, want) {
		t.Errorf("glob = %q, want %q", g, want)
	}
	res := grep(t, GrepOptions{FS: fsys, Pattern: "needle|TOPSECRET"})
	for _, m := range res.Matches {
		if strings.Contains(m.Text, "TOPSECRET") || strings.Contains(m.Text, "linked dir") {
			t.Errorf("content from outside the root: %+v", m)
		}
	}
	if want := []string{"a.txt", "alias.txt", "real/f.txt"}; !slices.Equal(matchPaths(res), want) {
		t.Errorf("grep paths = %q, want %q", matchPaths(res), want)
	}
	// Naming the escaping link itself fails the open, it is not searched.
	if res, err := Grep(context.Background(), GrepOptions{FS: fsys, Base: "escape.txt", BaseIsFile: true, Pattern: "needle"}); err == nil && res.Count > 0 {
		t.Errorf("escaping link searched: %+v", res)
	}
}

func TestGrepSkipsBinaryAndUnreadable(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"bin.dat": "needle\x00\x01\x02", "text.txt": "needle\n", "img.png": "\x89PNG\r\n\x1a\n\x00\x00needle",
	})
	fsys := openRoot(t, dir)
	res := grep(t, GrepOptions{FS: fsys, Pattern: "needle", OutputMode: OutputFilesWithMatches})
	if !slices.Equal(res.Files, []string{"text.txt"}) || res.Notice != "" {
		t.Errorf("files %q notice %q", res.Files, res.Notice)
	}
	res = grep(t, GrepOptions{FS: fsys, Base: "bin.dat", BaseIsFile: true, Pattern: "needle"})
	if res.Count != 0 || !strings.Contains(res.Notice, "binary") {
		t.Errorf("named binary file: %+v", res)
	}
	// An FS that refuses some files: they are skipped, the search goes on.
	res = grep(t, GrepOptions{FS: failingFS{fsys, "text.txt"}, Pattern: "needle"})
	if res.Count != 0 {
		t.Errorf("unreadable file: %+v", res)
	}
}

func TestGrepContent(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.go":          "package a\n\nfunc Alpha() {}\nfunc beta() {}\n",
		"sub/b.go":      "package sub\r\n// TODO: alpha\r\nvar x = 1\r\n",
		"sub/c.txt":     "Alpha in text\n",
		"sub/deep/d.go": "alphabet\n",
		"z.go":          "no trailing newline alpha",
	})
	fsys := openRoot(t, dir)
	res := grep(t, GrepOptions{FS: fsys, Pattern: "alpha", CaseInsensitive: true})
	want := []Match{
		{Path: "a.go", Line: 3, Text: "func Alpha() {}"},
		{Path: "sub/b.go", Line: 2, Text: "// TODO: alpha"},
		{Path: "sub/c.txt", Line: 1, Text: "Alpha in text"},
		{Path: "sub/deep/d.go", Line: 1, Text: "alphabet"},
		{Path: "z.go", Line: 1, Text: "no trailing newline alpha"},
	}
	if !slices.Equal(res.Matches, want) || res.Truncated {
		t.Errorf("matches:\n got %+v\nwant %+v", res.Matches, want)
	}
	res = grep(t, GrepOptions{FS: fsys, Pattern: `alpha\b`, Include: "*.go"})
	if got := matchPaths(res); !slices.Equal(got, []string{"sub/b.go", "z.go"}) {
		t.Errorf("include *.go: %q", got)
	}
	res = grep(t, GrepOptions{FS: fsys, Pattern: "(?i)alpha", Include: "sub/**/*.go"})
	if got := matchPaths(res); !slices.Equal(got, []string{"sub/b.go", "sub/deep/d.go"}) {
		t.Errorf("include with a path: %q", got)
	}
	res = grep(t, GrepOptions{FS: fsys, Base: "sub", Pattern: "alpha", CaseInsensitive: true, OutputMode: OutputCount})
	if want := []FileCount{{"sub/b.go", 1}, {"sub/c.txt", 1}, {"sub/deep/d.go", 1}}; !slices.Equal(res.Counts, want) {
		t.Errorf("counts: %+v", res.Counts)
	}
	// A named file is searched alone and include still filters its name.
	res = grep(t, GrepOptions{FS: fsys, Base: "sub/c.txt", BaseIsFile: true, Pattern: "Alpha"})
	if res.Count != 1 || res.Matches[0].Path != "sub/c.txt" {
		t.Errorf("named file: %+v", res)
	}
	res = grep(t, GrepOptions{FS: fsys, Base: "sub/c.txt", BaseIsFile: true, Pattern: "Alpha", Include: "*.go"})
	if res.Count != 0 {
		t.Errorf("named file filtered by include: %+v", res)
	}
}

func TestGrepRegexLineSemantics(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"lf.txt":   "foo\nbar\n\nfoo bar\nxfoo\n",
		"crlf.txt": "foo\r\nbar\r\n\r\n",
		"k.txt":    "temperature 300\u212a\nplain\n",
	})
	fsys := openRoot(t, dir)
	lines := func(o GrepOptions) []string {
		o.FS = fsys
		var out []string
		for _, m := range grep(t, o).Matches {
			out = append(out, m.Path+":"+itoa(m.Line))
		}
		return out
	}
	tests := []struct {
		o    GrepOptions
		want []string
	}{
		{GrepOptions{Pattern: "^foo$"}, []string{"crlf.txt:1", "lf.txt:1"}},
		{GrepOptions{Pattern: "^$"}, []string{"crlf.txt:3", "lf.txt:3"}},
		{GrepOptions{Pattern: `\Afoo`}, []string{"crlf.txt:1", "lf.txt:1", "lf.txt:4"}},
		{GrepOptions{Pattern: "foo[^x]bar"}, []string{"lf.txt:4"}}, // [^x] never spans lines
		{GrepOptions{Pattern: `foo\sbar`}, []string{"lf.txt:4"}},
		{GrepOptions{Pattern: "(?s)foo.bar"}, []string{"lf.txt:4"}},
		{GrepOptions{Pattern: "300k", CaseInsensitive: true}, []string{"k.txt:1"}}, // KELVIN SIGN folds to k
		{GrepOptions{Pattern: "r\\z", Base: "lf.txt"}, []string{"lf.txt:2", "lf.txt:4"}},
	}
	for _, tt := range tests {
		if got := lines(tt.o); !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.o.Pattern, got, tt.want)
		}
	}
	for _, bad := range []string{"a(b", "x{2,1}", `foo\nbar`, "[\n]"} {
		if _, err := Grep(context.Background(), GrepOptions{FS: fsys, Base: ".", Pattern: bad}); !errors.Is(err, ErrBadPattern) {
			t.Errorf("%q: err = %v, want ErrBadPattern", bad, err)
		}
	}
	if _, err := Grep(context.Background(), GrepOptions{FS: fsys, Base: ".", Pattern: "x", Include: "[z"}); !errors.Is(err, ErrBadPattern) {
		t.Errorf("bad include: %v", err)
	}
	if _, err := Grep(context.Background(), GrepOptions{FS: fsys, Base: ".", Pattern: "x", OutputMode: "lines"}); !errors.Is(err, ErrBadPattern) {
		t.Errorf("bad mode: %v", err)
	}
}

func TestGrepContext(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		if i == 2 || i == 5 || i == 12 || i == 20 {
			b.WriteString("hit " + itoa(i) + "\n")
		} else {
			b.WriteString("line " + itoa(i) + "\n")
		}
	}
	writeTree(t, dir, map[string]string{"f.txt": b.String()})
	res := grep(t, GrepOptions{FS: openRoot(t, dir), Pattern: "^hit", Context: 2})
	var got []string
	for _, m := range res.Matches {
		mark := ":"
		if m.Context {
			mark = "-"
		}
		got = append(got, itoa(m.Line)+mark+m.Text)
	}
	want := []string{
		"1-line 1", "2:hit 2", "3-line 3", "4-line 4", "5:hit 5", "6-line 6", "7-line 7",
		"10-line 10", "11-line 11", "12:hit 12", "13-line 13", "14-line 14",
		"18-line 18", "19-line 19", "20:hit 20",
	}
	if !slices.Equal(got, want) {
		t.Errorf("context:\n got %q\nwant %q", got, want)
	}
}

func TestGrepHeadLimit(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 50 {
		files[filepath.ToSlash(filepath.Join("d"+itoa(i%5), "f"+itoa(i)+".txt"))] = "match one\nnope\nmatch two\n"
	}
	writeTree(t, dir, files)
	fsys := openRoot(t, dir)
	all := grep(t, GrepOptions{FS: fsys, Pattern: "match", HeadLimit: MaxHeadLimit})
	if all.Count != 100 || all.Truncated {
		t.Fatalf("all: count %d truncated %v", all.Count, all.Truncated)
	}
	for _, mode := range []string{OutputContent, OutputFilesWithMatches, OutputCount} {
		res := grep(t, GrepOptions{FS: fsys, Pattern: "match", HeadLimit: 7, OutputMode: mode})
		if res.Count != 7 || !res.Truncated || !strings.Contains(res.Notice, "headLimit 7") {
			t.Errorf("%s: count %d truncated %v notice %q", mode, res.Count, res.Truncated, res.Notice)
		}
		if mode == OutputContent && !slices.Equal(res.Matches, all.Matches[:7]) {
			t.Errorf("head is not the first matches in walk order: %+v", res.Matches)
		}
		if mode == OutputCount && res.Counts[0].Count != 2 {
			t.Errorf("count mode counts whole files: %+v", res.Counts)
		}
	}
	// Exactly HeadLimit results is not truncated.
	if res := grep(t, GrepOptions{FS: fsys, Pattern: "match", HeadLimit: 50, OutputMode: OutputFilesWithMatches}); res.Truncated || res.Count != 50 {
		t.Errorf("exact head: %+v", res.Count)
	}
}

func TestGrepBudgetLongLines(t *testing.T) {
	dir := t.TempDir()
	// 10 MB: 1000 lines of 10,000 characters, each holding a match.
	line := strings.Repeat("abcdefghij", 500) + " needle " + strings.Repeat("klmnopqrst", 499) + "\n"
	writeTree(t, dir, map[string]string{"big.txt": strings.Repeat(line, 1000)})
	start := time.Now()
	res := grep(t, GrepOptions{FS: openRoot(t, dir), Pattern: "needle", HeadLimit: MaxHeadLimit})
	if !res.Truncated || res.Count == 0 || res.Count > 30 {
		t.Errorf("count %d truncated %v", res.Count, res.Truncated)
	}
	size := 0
	for _, m := range res.Matches {
		if len([]rune(m.Text)) != 2000 {
			t.Fatalf("line not clipped at 2000 chars: %d", len(m.Text))
		}
		size += len(m.Text)
	}
	if size > 48*1024 || !strings.Contains(res.Notice, "budget") || !strings.Contains(res.Notice, "clipped at 2000") {
		t.Errorf("size %d notice %q", size, res.Notice)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestGrepCancelled(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "x\n", "b/c.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Grep(ctx, GrepOptions{FS: openRoot(t, dir), Base: ".", Pattern: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// failingFS refuses to open one file, as a permission error would.
type failingFS struct {
	fs.FS
	deny string
}

func (f failingFS) Open(name string) (fs.File, error) {
	if name == f.deny {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.FS.Open(name)
}
