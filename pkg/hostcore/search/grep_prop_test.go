package search

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestGrepMatchesReference compares Grep with a naive line-by-line search
// on random files larger than the scan buffer, so that matches and context
// straddle buffer refills and the buffer grows for long lines.
func TestGrepMatchesReference(t *testing.T) {
	patterns := []struct {
		re string
		ci bool
	}{
		{"needle", false}, {"needle", true}, {"ne+dle", false}, {"^needle", false}, {"needle$", false},
		{`\bfoo\w*`, false}, {"[0-9]{3}", false}, {"a.c", false}, {"(foo|bar)baz", true},
		{"[^a-z]needle", false}, {"x*", false}, {"^$", false}, {"(?i)Z{2}", false},
	}
	words := []string{"needle", "NEEDLE", "foo", "foobar", "barbaz", "abc", "a c", "123", "zz", "é", "\t", " "}
	for iter := range 24 {
		rng := rand.New(rand.NewPCG(uint64(iter), 7))
		files := map[string]string{}
		for f := range 3 {
			var b strings.Builder
			target := 150<<10 + rng.IntN(300<<10)
			for b.Len() < target {
				n := rng.IntN(12)
				if rng.IntN(200) == 0 {
					n = 2000 + rng.IntN(6000) // a long line
				}
				for range n {
					if rng.IntN(30) == 0 {
						b.WriteString(words[rng.IntN(len(words))])
					} else {
						b.WriteByte(byte('a' + rng.IntN(26)))
					}
				}
				if rng.IntN(20) == 0 {
					b.WriteByte('\r')
				}
				b.WriteByte('\n')
			}
			s := b.String()
			if rng.IntN(2) == 0 {
				s = strings.TrimSuffix(s, "\n")
			}
			files[fmt.Sprintf("d%d/f%d.txt", f%2, f)] = s
		}
		dir := t.TempDir()
		writeTree(t, dir, files)
		fsys := openRoot(t, dir)
		p := patterns[iter%len(patterns)]
		ctxLines := rng.IntN(4)
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range files {
				if !yield(k) {
					return
				}
			}
		})
		o := GrepOptions{FS: fsys, Base: ".", Pattern: p.re, CaseInsensitive: p.ci, Context: ctxLines,
			HeadLimit: 1 << 30, Budget: Budget{MaxBytes: 1 << 30, MaxLines: 1 << 30}}
		got := grep(t, o)
		want, counts := referenceGrep(p.re, p.ci, ctxLines, names, files)
		if !slices.Equal(got.Matches, want) {
			i := 0
			for i < min(len(got.Matches), len(want)) && got.Matches[i] == want[i] {
				i++
			}
			t.Fatalf("iter %d %q ci=%v ctx=%d: %d matches, want %d; first difference at %d: got %+v want %+v",
				iter, p.re, p.ci, ctxLines, len(got.Matches), len(want), i, at(got.Matches, i), at(want, i))
		}
		o.OutputMode = OutputCount
		if got := grep(t, o); !slices.Equal(got.Counts, counts) {
			t.Fatalf("iter %d %q: counts %+v, want %+v", iter, p.re, got.Counts, counts)
		}
	}
}

func at(ms []Match, i int) any {
	if i < len(ms) {
		m := ms[i]
		if len(m.Text) > 40 {
			m.Text = m.Text[:40] + "…"
		}
		return m
	}
	return nil
}

// referenceGrep is the obvious implementation: split lines, match each.
func referenceGrep(pattern string, ci bool, c int, names []string, files map[string]string) ([]Match, []FileCount) {
	if ci {
		pattern = "(?i)" + pattern
	}
	re := regexp.MustCompile(pattern)
	var out []Match
	var counts []FileCount
	for _, name := range names {
		content := files[name]
		lines := strings.Split(content, "\n")
		if strings.HasSuffix(content, "\n") {
			lines = lines[:len(lines)-1]
		}
		hit := make([]bool, len(lines))
		n := 0
		for i, l := range lines {
			stripped := strings.TrimSuffix(l, "\r")
			if re.MatchString(l) || re.MatchString(stripped) {
				hit[i] = true
				n++
			}
		}
		if n > 0 {
			counts = append(counts, FileCount{name, n})
		}
		for i := range lines {
			show := false
			for j := max(0, i-c); j <= min(len(lines)-1, i+c); j++ {
				show = show || hit[j]
			}
			if !show {
				continue
			}
			text := strings.TrimSuffix(lines[i], "\r")
			if utf8.RuneCountInString(text) > 2000 {
				text = string([]rune(text)[:2000])
			}
			out = append(out, Match{Path: name, Line: i + 1, Text: text, Context: !hit[i]})
		}
	}
	return out, counts
}

// TestGrepHugeLine: a line longer than the largest scan buffer is searched
// in pieces; a match in it is still found, once.
func TestGrepHugeLine(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("a", 3<<20) + "needle" + strings.Repeat("b", 2<<20) + "needle\n"
	writeTree(t, dir, map[string]string{"f.txt": "first\n" + huge + "needle last\n"})
	res := grep(t, GrepOptions{FS: openRoot(t, dir), Base: ".", Pattern: "needle"})
	var lines []int
	for _, m := range res.Matches {
		lines = append(lines, m.Line)
	}
	if !slices.Equal(lines, []int{2, 3}) {
		t.Errorf("lines %v", lines)
	}
	res = grep(t, GrepOptions{FS: openRoot(t, dir), Base: ".", Pattern: "needle", OutputMode: OutputCount})
	if len(res.Counts) != 1 || res.Counts[0].Count != 2 {
		t.Errorf("counts %+v", res.Counts)
	}
}
