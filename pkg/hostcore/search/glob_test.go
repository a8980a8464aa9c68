package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// ignoreTree exercises gitignore semantics: negation, anchoring, dir-only
// patterns, nested files, .ignore/.rgignore priority, .git/info/exclude.
var ignoreTree = map[string]string{
	".gitignore":        "# comment\n*.log\n!keep.log\nbuild/\n/rootonly.txt\ndocs/*.md\n\n",
	"a.log":             "x",
	"keep.log":          "x",
	"build/x.go":        "x",
	"sub/build":         "a file named build: dir-only pattern does not apply",
	"rootonly.txt":      "x",
	"sub/rootonly.txt":  "anchored pattern does not apply here",
	"docs/a.md":         "x",
	"docs/deep/b.md":    "docs/*.md does not reach deeper",
	"sub/.gitignore":    "!*.log\nsecret/\n",
	"sub/x.log":         "re-included by the nested negation",
	"sub/secret/s.go":   "x",
	"secret/t.go":       "sub's pattern does not apply at the root",
	".hidden/h.go":      "hidden files are searched",
	".env":              "X=1",
	".git/config":       "never listed",
	".git/info/exclude": "excluded.txt\n",
	"excluded.txt":      "x",
	".ignore":           "ig*.txt\n",
	".rgignore":         "!ig2.txt\n",
	"ig1.txt":           "x",
	"ig2.txt":           ".rgignore beats .ignore",
	"wl/.gitignore":     "*\n!*/\n!*.go\n!.gitignore\n",
	"wl/a.go":           "x",
	"wl/a.txt":          "x",
	"wl/d/b.go":         "x",
	"wl/d/b.txt":        "x",
	"k/.gitignore":      "*.txt\n!/keepdir\n",
	"k/keepdir/a.txt":   "re-including the directory does not re-include its *.txt",
	"k/keepdir/a.go":    "x",
	"crlf/.gitignore":   "*.tmp\r\n",
	"crlf/a.tmp":        "x",
	"crlf/b.go":         "x",
}

var ignoreTreeVisible = []string{
	".env", ".gitignore", ".hidden/h.go", ".ignore", ".rgignore",
	"crlf/.gitignore", "crlf/b.go",
	"docs/deep/b.md", "ig2.txt",
	"k/.gitignore", "k/keepdir/a.go", "keep.log",
	"secret/t.go", "sub/.gitignore", "sub/build", "sub/rootonly.txt", "sub/x.log",
	"wl/.gitignore", "wl/a.go", "wl/d/b.go",
}

func globAll(t *testing.T, o GlobOptions) []string {
	t.Helper()
	o.Limit = MaxGlobLimit
	res, err := Glob(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(res.Matches)
	slices.Sort(got)
	return got
}

func TestGlobIgnoreRules(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, ignoreTree)
	got := globAll(t, GlobOptions{FS: openRoot(t, dir), Base: ".", Pattern: "**"})
	if !slices.Equal(got, ignoreTreeVisible) {
		t.Errorf("visible files:\n got %q\nwant %q", got, ignoreTreeVisible)
	}
}

func TestGlobExplicitBase(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore":        "*.log\n",
		".git/info/exclude": "*.tmp\n",
		"other/z.log":       "x",
		"other/z.tmp":       "x",
		"other/z.go":        "x",
		"other/.gitignore":  "*.go\n",
	})
	fsys := openRoot(t, dir)
	// The parent .gitignore and the repository exclude file apply when the
	// base is implicit, not when the user named it; other/.gitignore always.
	if got := globAll(t, GlobOptions{FS: fsys, Base: "other", Pattern: "*"}); !slices.Equal(got, []string{"other/.gitignore"}) {
		t.Errorf("implicit base: %q", got)
	}
	want := []string{"other/.gitignore", "other/z.log", "other/z.tmp"}
	if got := globAll(t, GlobOptions{FS: fsys, Base: "other", Pattern: "*", ExplicitBase: true}); !slices.Equal(got, want) {
		t.Errorf("explicit base: %q, want %q", got, want)
	}
}

func TestGlobPatterns(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.go": "", "cmd/pi/main.go": "", "cmd/pi/main_test.go": "", "pkg/a/a.go": "",
		"pkg/a/README.md": "", "web/app.ts": "", "web/app.tsx": "", ".github/ci.yml": "",
	})
	fsys := openRoot(t, dir)
	tests := []struct {
		base, pattern string
		want          []string
	}{
		{".", "*.go", []string{"cmd/pi/main.go", "cmd/pi/main_test.go", "main.go", "pkg/a/a.go"}}, // base name
		{".", "**/*.go", []string{"cmd/pi/main.go", "cmd/pi/main_test.go", "main.go", "pkg/a/a.go"}},
		{".", "cmd/**/*_test.go", []string{"cmd/pi/main_test.go"}},
		{".", "cmd/pi/*.go", []string{"cmd/pi/main.go", "cmd/pi/main_test.go"}},
		{".", "pkg/*.go", nil},
		{".", "web/*.{ts,tsx}", []string{"web/app.ts", "web/app.tsx"}},
		{".", "*.yml", []string{".github/ci.yml"}},
		{"cmd", "pi/*.go", []string{"cmd/pi/main.go", "cmd/pi/main_test.go"}}, // relative to base, result root-relative
		{"cmd/pi", "main.go", []string{"cmd/pi/main.go"}},
		{"./pkg/", "**", []string{"pkg/a/README.md", "pkg/a/a.go"}},
	}
	for _, tt := range tests {
		if got := globAll(t, GlobOptions{FS: fsys, Base: tt.base, Pattern: tt.pattern}); !slices.Equal(got, tt.want) {
			t.Errorf("Glob(%q, %q) = %q, want %q", tt.base, tt.pattern, got, tt.want)
		}
	}
	if _, err := Glob(context.Background(), GlobOptions{FS: fsys, Base: ".", Pattern: "[a-"}); !errors.Is(err, ErrBadPattern) {
		t.Errorf("bad pattern: %v", err)
	}
	if _, err := Glob(context.Background(), GlobOptions{FS: fsys, Base: "nope", Pattern: "*"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing base: %v", err)
	}
	if _, err := Glob(context.Background(), GlobOptions{FS: fsys, Base: "../x", Pattern: "*"}); err == nil {
		t.Error("escaping base accepted")
	}
}

func TestGlobOrderAndLimit(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a.txt", "b.txt", "c.txt", "d/e.txt", "d/f.txt"}
	files := map[string]string{}
	for _, n := range names {
		files[n] = n
	}
	writeTree(t, dir, files)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	mtimes := map[string]time.Duration{"a.txt": 1, "b.txt": 3, "c.txt": 3, "d/e.txt": 2, "d/f.txt": 5}
	for n, d := range mtimes {
		ts := base.Add(d * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, n), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	fsys := openRoot(t, dir)
	res, err := Glob(context.Background(), GlobOptions{FS: fsys, Base: ".", Pattern: "**/*.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d/f.txt", "b.txt", "c.txt", "d/e.txt", "a.txt"} // newest first, ties by path
	if !slices.Equal(res.Matches, want) || res.Count != 5 || res.Truncated {
		t.Errorf("got %q count %d truncated %v", res.Matches, res.Count, res.Truncated)
	}
	res, err = Glob(context.Background(), GlobOptions{FS: fsys, Base: ".", Pattern: "**/*.txt", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Matches, want[:2]) || res.Count != 2 || !res.Truncated || res.Notice == "" {
		t.Errorf("limited: %+v", res)
	}
	// The byte budget truncates too.
	res, err = Glob(context.Background(), GlobOptions{FS: fsys, Base: ".", Pattern: "**/*.txt", Budget: Budget{MaxBytes: 17}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Matches, want[:2]) || !res.Truncated {
		t.Errorf("budget: %+v", res)
	}
}

func TestGlobManyFilesTrimmed(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 700 {
		files[filepath.ToSlash(filepath.Join("d", string(rune('a'+i%26)), "f"+itoa(i)+".txt"))] = ""
	}
	writeTree(t, dir, files)
	newest := filepath.Join(dir, "d", "c", "f2.txt")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(newest, future, future); err != nil {
		t.Fatal(err)
	}
	res, err := Glob(context.Background(), GlobOptions{FS: openRoot(t, dir), Base: ".", Pattern: "**/*.txt", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 10 || !res.Truncated || res.Matches[0] != "d/c/f2.txt" {
		t.Errorf("count %d truncated %v first %q notice %q", res.Count, res.Truncated, res.Matches[0], res.Notice)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestGlobCancelled(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.go": ""})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Glob(ctx, GlobOptions{FS: openRoot(t, dir), Base: ".", Pattern: "*"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestExclude(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.txt": "needle", ".pi/state.db": "needle", "keys/id_rsa": "needle", "keys/pub.txt": "needle",
	})
	fsys := openRoot(t, dir)
	exclude := func(p string, isDir bool) bool {
		return (p == ".pi" && isDir) || p == "keys/id_rsa"
	}
	if got := globAll(t, GlobOptions{FS: fsys, Base: ".", Pattern: "**", Exclude: exclude}); !slices.Equal(got, []string{"a.txt", "keys/pub.txt"}) {
		t.Errorf("glob: %q", got)
	}
	if got := globAll(t, GlobOptions{FS: fsys, Base: ".pi", Pattern: "**", Exclude: exclude}); len(got) != 0 {
		t.Errorf("glob in an excluded base: %q", got)
	}
	res, err := Grep(context.Background(), GrepOptions{FS: fsys, Base: ".", Pattern: "needle", OutputMode: OutputFilesWithMatches, Exclude: exclude})
	if err != nil || !slices.Equal(res.Files, []string{"a.txt", "keys/pub.txt"}) {
		t.Errorf("grep: %v %q", err, res.Files)
	}
	res, err = Grep(context.Background(), GrepOptions{FS: fsys, Base: "keys/id_rsa", BaseIsFile: true, Pattern: "needle", Exclude: exclude})
	if err != nil || res.Count != 0 {
		t.Errorf("grep of an excluded named file: %v %+v", err, res)
	}
}
