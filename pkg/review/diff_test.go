package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func ctx(s string) Line { return Line{Kind: KindContext, Text: s} }
func add(s string) Line { return Line{Kind: KindAdd, Text: s} }
func del(s string) Line { return Line{Kind: KindDel, Text: s} }
func crlf(l Line) Line  { l.EOL = EOLCRLF; return l }
func noEOL(l Line) Line { l.EOL = EOLNone; return l }
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestDiff(t *testing.T) {
	ten := numbered(10)
	tests := []struct {
		name          string
		before, after string
		lim           Limits
		hunks         []Hunk // nil: not compared
		add, del      int
		binary, trunc bool
	}{
		{name: "identical", before: "a\nb\n", after: "a\nb\n", hunks: []Hunk{}},
		{name: "both empty", hunks: []Hunk{}},
		{name: "append line", before: "a\nb\n", after: "a\nb\nc\n", add: 1,
			hunks: []Hunk{{1, 2, 1, 3, []Line{ctx("a"), ctx("b"), add("c")}}}},
		{name: "modify middle keeps 3 context lines", before: ten,
			after: strings.Replace(ten, "line 5\n", "five\n", 1), add: 1, del: 1,
			hunks: []Hunk{{2, 7, 2, 7, []Line{ctx("line 2"), ctx("line 3"), ctx("line 4"),
				del("line 5"), add("five"), ctx("line 6"), ctx("line 7"), ctx("line 8")}}}},
		{name: "delete lines", before: "a\nb\nc\nd\n", after: "a\nd\n", del: 2,
			hunks: []Hunk{{1, 4, 1, 2, []Line{ctx("a"), del("b"), del("c"), ctx("d")}}}},
		{name: "from empty file", before: "", after: "x\ny\n", add: 2,
			hunks: []Hunk{{0, 0, 1, 2, []Line{add("x"), add("y")}}}},
		{name: "to empty file", before: "x\n", after: "", del: 1,
			hunks: []Hunk{{1, 1, 0, 0, []Line{del("x")}}}},
		{name: "final newline added", before: "a\nb", after: "a\nb\n", add: 1, del: 1,
			hunks: []Hunk{{1, 2, 1, 2, []Line{ctx("a"), noEOL(del("b")), add("b")}}}},
		{name: "no trailing newline edit", before: "a\nb", after: "a\nc", add: 1, del: 1,
			hunks: []Hunk{{1, 2, 1, 2, []Line{ctx("a"), noEOL(del("b")), noEOL(add("c"))}}}},
		{name: "crlf edit keeps CR out of text", before: "a\r\nb\r\n", after: "a\r\nc\r\n", add: 1, del: 1,
			hunks: []Hunk{{1, 2, 1, 2, []Line{crlf(ctx("a")), crlf(del("b")), crlf(add("c"))}}}},
		{name: "line endings alone change", before: "a\r\nb\r\n", after: "a\nb\n", add: 2, del: 2,
			hunks: []Hunk{{1, 2, 1, 2, []Line{crlf(del("a")), crlf(del("b")), add("a"), add("b")}}}},
		{name: "lone CR stays in text", before: "a\rb\n", after: "a\rc\n", add: 1, del: 1,
			hunks: []Hunk{{1, 1, 1, 1, []Line{del("a\rb"), add("a\rc")}}}},
		{name: "bom kept in text", before: "\ufeffa\nb\n", after: "\ufeffa\nc\n", add: 1, del: 1,
			hunks: []Hunk{{1, 2, 1, 2, []Line{ctx("\ufeffa"), del("b"), add("c")}}}},
		{name: "bom added is a change", before: "a\n", after: "\ufeffa\n", add: 1, del: 1,
			hunks: []Hunk{{1, 1, 1, 1, []Line{del("a"), add("\ufeffa")}}}},
		{name: "far edits make two hunks", before: numbered(20),
			after: strings.NewReplacer("line 2\n", "two\n", "line 19\n", "nineteen\n").Replace(numbered(20)), add: 2, del: 2,
			hunks: []Hunk{
				{1, 5, 1, 5, []Line{ctx("line 1"), del("line 2"), add("two"), ctx("line 3"), ctx("line 4"), ctx("line 5")}},
				{16, 5, 16, 5, []Line{ctx("line 16"), ctx("line 17"), ctx("line 18"), del("line 19"), add("nineteen"), ctx("line 20")}},
			}},
		{name: "edits 6 lines apart share a hunk", before: ten,
			after: strings.NewReplacer("line 2\n", "two\n", "line 9\n", "nine\n").Replace(ten), add: 2, del: 2,
			hunks: []Hunk{{1, 10, 1, 10, nil}}},
		{name: "NUL is binary", before: "a\x00b", after: "a", binary: true},
		{name: "invalid utf-8 is binary", before: "ok\n", after: "caf\xe9\n", binary: true},
		{name: "invalid utf-8 after 8 KiB is binary", before: strings.Repeat("a", 9000) + "\xff", after: "x", binary: true},
		{name: "rune cut at 8 KiB is text", before: strings.Repeat("a", sniffLen-1) + "é\n", after: strings.Repeat("a", sniffLen-1) + "è\n", add: 1, del: 1},
		{name: "huge is truncated with cheap counts", before: numbered(300),
			after: strings.Replace(numbered(300), "line 150\n", "x\ny\n", 1), lim: Limits{MaxDiffBytes: 1000},
			add: 2, del: 1, trunc: true, hunks: []Hunk{}},
		{name: "huge binary is binary", before: strings.Repeat("\x00", 5000), after: "", lim: Limits{MaxDiffBytes: 1000}, binary: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hunks, a, d, bin, trunc := Diff([]byte(tt.before), []byte(tt.after), tt.lim)
			if a != tt.add || d != tt.del || bin != tt.binary || trunc != tt.trunc {
				t.Fatalf("got +%d -%d binary=%v truncated=%v, want +%d -%d %v %v",
					a, d, bin, trunc, tt.add, tt.del, tt.binary, tt.trunc)
			}
			if tt.hunks != nil {
				if len(hunks) != len(tt.hunks) {
					t.Fatalf("got %d hunks %+v, want %d", len(hunks), hunks, len(tt.hunks))
				}
				for i, h := range tt.hunks {
					got := hunks[i]
					if h.Lines == nil {
						got.Lines = nil
					}
					if !reflect.DeepEqual(got, h) {
						t.Errorf("hunk %d:\n got %+v\nwant %+v", i, got, h)
					}
				}
			}
			if !bin && !trunc {
				checkApply(t, []byte(tt.before), []byte(tt.after), hunks)
			}
		})
	}
}

// checkApply proves the hunks rebuild after, also after a JSON round trip
// (the stored form).
func checkApply(t testing.TB, before, after []byte, hunks []Hunk) {
	t.Helper()
	got, err := Apply(before, hunks)
	if err != nil || !bytes.Equal(got, after) {
		t.Fatalf("Apply: %q, %v; want %q", got, err, after)
	}
	js, err := json.Marshal(hunks)
	if err != nil {
		t.Fatal(err)
	}
	var back []Hunk
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if got, err := Apply(before, back); err != nil || !bytes.Equal(got, after) {
		t.Fatalf("Apply after JSON: %q, %v; want %q", got, err, after)
	}
}

func TestDiffHunkLineCap(t *testing.T) {
	before := numbered(100)
	after := strings.NewReplacer("line 10\n", "ten\n", "line 50\n", "fifty\n", "line 90\n", "ninety\n").Replace(before)
	hunks, a, d, _, trunc := Diff([]byte(before), []byte(after), Limits{MaxHunkLines: 10})
	if !trunc || a != 3 || d != 3 {
		t.Fatalf("truncated=%v +%d -%d, want true +3 -3", trunc, a, d)
	}
	n := 0
	for _, h := range hunks {
		n += len(h.Lines)
	}
	if n != 10 || len(hunks) != 2 {
		t.Fatalf("kept %d lines in %d hunks, want 10 in 2", n, len(hunks))
	}
	// The cut hunk is still a valid hunk: applying it is an ordinary partial patch.
	got, err := Apply([]byte(before), hunks)
	want := strings.Replace(before, "line 10\n", "ten\n", 1)
	if err != nil || string(got) != want {
		t.Fatalf("Apply of capped hunks: %v\n%s", err, got)
	}
}

func TestCapHunksAtStart(t *testing.T) {
	// A hunk cut down to additions only must switch to the "line before" start.
	hunks, _, _, _, trunc := Diff([]byte("a\n"), []byte("x\ny\nz\na\n"), Limits{MaxHunkLines: 2})
	want := []Hunk{{0, 0, 1, 2, []Line{add("x"), add("y")}}}
	if !trunc || !reflect.DeepEqual(hunks, want) {
		t.Fatalf("got %+v truncated=%v, want %+v", hunks, trunc, want)
	}
	if got, err := Apply([]byte("a\n"), hunks); err != nil || string(got) != "x\ny\na\n" {
		t.Fatalf("Apply: %q %v", got, err)
	}
}

func TestRoughCounts(t *testing.T) {
	tests := []struct {
		before, after string
		add, del      int
	}{
		{"", "", 0, 0},
		{"a\nb\n", "a\nb\n", 0, 0},
		{"a\nb\nc\n", "a\nx\nc\n", 1, 1},
		{"a\nb", "a\nb\n", 1, 1},
		{"", "a\nb\n", 2, 0},
		{"a\nb\nc\n", "c\nb\na\n", 0, 0}, // a reorder is invisible to a multiset: a lower bound
		{"x\nsame\n", "y\nz\nsame\n", 2, 1},
	}
	for _, tt := range tests {
		a, d := roughCounts([]byte(tt.before), []byte(tt.after))
		if a != tt.add || d != tt.del {
			t.Errorf("roughCounts(%q, %q) = +%d -%d, want +%d -%d", tt.before, tt.after, a, d, tt.add, tt.del)
		}
	}
}

func TestApplyRejectsMismatch(t *testing.T) {
	hunks, _, _, _, _ := Diff([]byte("a\nb\nc\n"), []byte("a\nB\nc\n"), Limits{})
	if _, err := Apply([]byte("a\nX\nc\n"), hunks); err == nil {
		t.Fatal("Apply to other content succeeded")
	}
	bad := []Hunk{{1, 2, 1, 1, []Line{del("a")}}}
	if _, err := Apply([]byte("a\n"), bad); err == nil {
		t.Fatal("Apply with wrong header counts succeeded")
	}
	if _, err := Apply([]byte("a\n"), []Hunk{{1, 1, 1, 1, []Line{{Kind: "ctx", Text: "a"}}}}); err == nil {
		t.Fatal("Apply with unknown kind succeeded")
	}
}
