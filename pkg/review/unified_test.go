package review

import (
	"strings"
	"testing"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/difftest"
)

func TestUnified(t *testing.T) {
	before := "one\ntwo\nthree\n"
	after := "one\n2\nthree\nfour"
	want := `--- a/dir/f.txt
+++ b/dir/f.txt
@@ -1,3 +1,4 @@
 one
-two
+2
 three
+four
\ No newline at end of file
`
	if got := Unified("dir/f.txt", []byte(before), []byte(after), false); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := Unified("f", []byte("same\n"), []byte("same\n"), false); got != "" {
		t.Fatalf("equal content: %q", got)
	}
}

func TestUnifiedMatchesUdiffGolden(t *testing.T) {
	// go-udiff's golden cases (from gopls) pin the GNU format details:
	// "-0,0", ",1" omitted, the no-newline marker. Its char-level edits can
	// split a line differently from a line LCS, so only cases where both
	// agree on the hunks are comparable; count them so this cannot pass empty.
	compared := 0
	for _, tc := range difftest.TestCases {
		if tc.NoDiff || !utf8.ValidString(tc.In) || !utf8.ValidString(tc.Out) || strings.ContainsRune(tc.In+tc.Out, '\r') {
			continue
		}
		hunks, a, d, bin, trunc := Diff([]byte(tc.In), []byte(tc.Out), Limits{})
		got := render(difftest.FileA, difftest.FileB, hunks, a, d, bin, trunc, false)
		lineLevel := udiff.Unified(difftest.FileA, difftest.FileB, tc.In, tc.Out)
		if got != lineLevel {
			t.Errorf("%s: got\n%s\nudiff.Unified:\n%s", tc.Name, got, lineLevel)
		}
		if got == tc.Unified {
			compared++
		}
	}
	if compared < 10 {
		t.Fatalf("only %d golden cases matched exactly", compared)
	}
}

func TestUnifiedCRLFAndColor(t *testing.T) {
	before, after := []byte("a\r\nb\r\n"), []byte("a\r\nc\r\n")
	// Plain output is byte-faithful, so it is still a valid patch.
	want := "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
	if got := Unified("w.txt", before, after, false); got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	col := Unified("w.txt", before, after, true)
	for _, s := range []string{"\x1b[1m--- a/w.txt\x1b[m", "\x1b[36m@@ -1,2 +1,2 @@\x1b[m", "\x1b[31m-b\x1b[m\n", "\x1b[32m+c\x1b[m\n"} {
		if !strings.Contains(col, s) {
			t.Errorf("color output lacks %q:\n%q", s, col)
		}
	}
	if strings.Contains(col, "\r") || strings.Contains(col, "^M") {
		t.Errorf("uniform CRLF should not be marked: %q", col)
	}
	// A line-ending-only change is marked, or -a/+a would look identical.
	col = Unified("w.txt", []byte("a\r\n"), []byte("a\n"), true)
	if !strings.Contains(col, "\x1b[31m-a\x1b[m\x1b[2m^M\x1b[m\n") || !strings.Contains(col, "\x1b[32m+a\x1b[m\n") {
		t.Errorf("EOL change not visible: %q", col)
	}
	// File content must not drive the terminal.
	col = Unified("w.txt", []byte("x\n"), []byte("\x1b]0;pwned\x07\u009b\n"), true)
	if strings.Contains(col, "\x1b]") || strings.Contains(col, "\x07") || !strings.Contains(col, "+^[]0;pwned^G\\u009b") {
		t.Errorf("control characters not escaped: %q", col)
	}
}

func TestUnifiedPathQuoting(t *testing.T) {
	got := Unified("evil\n@@ -1 +1 @@", []byte("a\n"), []byte("b\n"), false)
	if !strings.HasPrefix(got, `--- "a/evil\n@@ -1 +1 @@"`+"\n") {
		t.Fatalf("path not quoted: %q", got)
	}
}

func TestUnifiedBinaryAndTruncated(t *testing.T) {
	if got := Unified("img.png", []byte("\x89PNG\x00"), []byte("\x89PNG\x00\x01"), false); got != "Binary files a/img.png and b/img.png differ\n" {
		t.Fatalf("binary: %q", got)
	}
	c := Change{Path: "big.txt", Status: StatusModified, Truncated: true, Additions: 5, Deletions: 2, Hunks: []Hunk{}}
	want := "--- a/big.txt\n+++ b/big.txt\n\\ Diff truncated: 5 additions, 2 deletions in total\n"
	if got := UnifiedFromHunks(c, false); got != want {
		t.Fatalf("truncated: %q", got)
	}
}

func TestUnifiedFromHunks(t *testing.T) {
	before, after := []byte("one\ntwo\nthree\n"), []byte("one\n2\nthree\nfour")
	ch := NewChange(Capture{Path: "f.txt", Operation: OpEdit, BeforeExisted: true, Before: before, After: after, Saved: true}, Limits{})
	if got, want := UnifiedFromHunks(ch, false), Unified("f.txt", before, after, false); got != want {
		t.Fatalf("stored hunks render differently:\n%s\nvs\n%s", got, want)
	}
	ch = NewChange(Capture{Path: "new.txt", Operation: OpWrite, After: []byte("hi\n")}, Limits{})
	want := "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
	if got := UnifiedFromHunks(ch, false); got != want {
		t.Fatalf("added: %q want %q", got, want)
	}
	ch = NewChange(Capture{Path: "old.txt", Operation: OpDelete, BeforeExisted: true, Before: []byte("bye\n"), Saved: true}, Limits{})
	want = "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
	if got := UnifiedFromHunks(ch, false); got != want {
		t.Fatalf("deleted: %q want %q", got, want)
	}
}
