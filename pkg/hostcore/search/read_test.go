package search

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

func ptr(i int) *int { return &i }

func TestReadWindow(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("line ")
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString("\n")
		}
		return b.String()
	}
	ten := lines(10)
	tenLines := strings.SplitAfter(ten, "\n")
	long := strings.Repeat("é", 2500) // 2500 runes, 5000 bytes

	tests := []struct {
		name          string
		in            string
		offset, limit int
		budget        Budget
		content       string
		lineCount     int
		total         int
		next          *int
		truncated     bool
		notice        string // substring
	}{
		{name: "whole file", in: ten, limit: 500, content: ten, lineCount: 10, total: 10},
		{name: "offset and limit", in: ten, offset: 2, limit: 3, content: strings.Join(tenLines[2:5], ""),
			lineCount: 3, total: 10, next: ptr(5), notice: "continue with offset 5"},
		{name: "limit reaches the end exactly", in: ten, offset: 7, limit: 3, content: strings.Join(tenLines[7:10], ""),
			lineCount: 3, total: 10},
		{name: "offset past the end", in: ten, offset: 12, limit: 5, total: 10, notice: "past the end"},
		{name: "default limit", in: lines(600), limit: 0, content: lines(500), lineCount: 500, total: 600, next: ptr(500)},
		{name: "empty file", in: "", limit: 10, notice: "empty file"},
		{name: "no trailing newline", in: "a\nb", limit: 10, content: "a\nb", lineCount: 2, total: 2},
		{name: "only a newline", in: "\n", limit: 10, content: "\n", lineCount: 1, total: 1},
		{name: "crlf kept", in: "a\r\nb\r\nc", offset: 1, limit: 10, content: "b\r\nc", lineCount: 2, total: 3},
		{name: "lone cr is not a terminator", in: "a\rb\n", limit: 10, content: "a\rb\n", lineCount: 1, total: 1},
		{name: "bom kept", in: "\ufeffpackage x\nfunc f() {}\n", limit: 1, content: "\ufeffpackage x\n",
			lineCount: 1, total: 2, next: ptr(1)},
		{name: "long line clipped by runes", in: "a\n" + long + "\r\nb\n", limit: 10,
			content: "a\n" + strings.Repeat("é", 2000) + "\r\nb\n", lineCount: 3, total: 3, truncated: true,
			notice: "1 line clipped at 2000 characters"},
		{name: "max lines budget", in: ten, limit: 10, budget: Budget{MaxLines: 4}, content: strings.Join(tenLines[:4], ""),
			lineCount: 4, total: 10, next: ptr(4), truncated: true, notice: "budget"},
		{name: "max bytes keeps whole lines", in: "aaaa\nbbbb\ncccc\n", limit: 10, budget: Budget{MaxBytes: 12},
			content: "aaaa\nbbbb\n", lineCount: 2, total: 3, next: ptr(2), truncated: true},
		{name: "single line over max bytes is cut", in: "abcdefghij\nk\n", limit: 10, budget: Budget{MaxBytes: 4},
			content: "abcd", lineCount: 1, total: 2, next: ptr(1), truncated: true, notice: "line 1 is longer"},
		{name: "cut respects utf-8", in: "ééé\n", limit: 10, budget: Budget{MaxBytes: 5},
			content: "éé", lineCount: 1, total: 1, truncated: true, notice: "longer than"},
		{name: "max line chars", in: "abcdef\nxy\n", limit: 10, budget: Budget{MaxLineChars: 3},
			content: "abc\nxy\n", lineCount: 2, total: 2, truncated: true, notice: "clipped at 3 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ReadWindow(strings.NewReader(tt.in), tt.offset, tt.limit, tt.budget)
			if err != nil {
				t.Fatal(err)
			}
			if w.Content != tt.content {
				t.Errorf("content = %q, want %q", w.Content, tt.content)
			}
			if w.LineCount != tt.lineCount || w.TotalLines != tt.total || w.Offset != max(tt.offset, 0) {
				t.Errorf("lineCount, total, offset = %d, %d, %d; want %d, %d, %d", w.LineCount, w.TotalLines, w.Offset, tt.lineCount, tt.total, tt.offset)
			}
			if w.FileBytes != int64(len(tt.in)) {
				t.Errorf("fileBytes = %d, want %d", w.FileBytes, len(tt.in))
			}
			if (w.NextOffset == nil) != (tt.next == nil) || (w.NextOffset != nil && *w.NextOffset != *tt.next) {
				t.Errorf("nextOffset = %v, want %v", deref(w.NextOffset), deref(tt.next))
			}
			if w.Truncated != tt.truncated {
				t.Errorf("truncated = %v, want %v", w.Truncated, tt.truncated)
			}
			if !strings.Contains(w.Notice, tt.notice) {
				t.Errorf("notice = %q, want it to contain %q", w.Notice, tt.notice)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestReadWindowBinary(t *testing.T) {
	for _, in := range []string{"abc\x00def", "\x01\x02\x03\x04abc", strings.Repeat("\xff\xfe", 100)} {
		if _, err := ReadWindow(strings.NewReader(in), 0, 10, Budget{}); !errors.Is(err, ErrBinary) {
			t.Errorf("%q: err = %v, want ErrBinary", in, err)
		}
	}
	// A NUL after the first 4 KiB is not looked at.
	in := strings.Repeat("a", 5000) + "\x00"
	if _, err := ReadWindow(strings.NewReader(in), 0, 10, Budget{}); err != nil {
		t.Errorf("late NUL: %v", err)
	}
}

func TestIsBinary(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"plain text\n\twith tabs\r\n", false},
		{"\x1b[31mred\x1b[0m log line\n", false},
		{"日本語のテキスト, ελληνικά, русский\n", false},
		{"abc\x00", true},
		{"\x01\x02\x03abcdefg", false},           // 3 of 10 bytes: exactly 30% is not "more than"
		{"\x01\x02\x03\x04abcdefg", true},        // 4 of 11
		{"\x01\x02abcdefgh", false},              // 2 of 10
		{"caf\xe9 cr\xe8me br\xfbl\xe9e", false}, // Latin-1: 4 of 20 bytes invalid
		{strings.Repeat("\xe9\xe8", 10), true},
		{strings.Repeat("a", 4095) + "\xe2\x82", false}, // rune cut at the boundary
	}
	for _, tt := range tests {
		if got := IsBinary([]byte(tt.in)); got != tt.want {
			t.Errorf("IsBinary(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// genReader yields size bytes of text whose line lengths come from next,
// without holding them: ReadWindow's memory must stay bounded whatever the
// file is.
type genReader struct {
	left    int64
	lineLen func(i int) int
	line    int
	inLine  int
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && g.left > 0 {
		if g.inLine >= g.lineLen(g.line) {
			p[n] = '\n'
			g.line++
			g.inLine = 0
		} else {
			p[n] = 'a' + byte(g.inLine%26)
			g.inLine++
		}
		n++
		g.left--
	}
	return n, nil
}

func TestReadWindowBoundedMemory(t *testing.T) {
	// 50 MB with a 5 MB single line at line 3 and 100-byte lines around.
	g := &genReader{left: 50 << 20, lineLen: func(i int) int {
		if i == 3 {
			return 5 << 20
		}
		return 99
	}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := ReadWindow(g, 0, 2000, Budget{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("allocated %d bytes reading a 50 MB file", alloc)
	}
	if w.FileBytes != 50<<20 || w.TotalLines != g.line+1 && w.TotalLines != g.line {
		t.Errorf("fileBytes %d totalLines %d (generator made %d)", w.FileBytes, w.TotalLines, g.line)
	}
	if !strings.Contains(w.Notice, "clipped") || w.NextOffset == nil || len(w.Content) > 48*1024 {
		t.Errorf("notice %q next %v len %d", w.Notice, deref(w.NextOffset), len(w.Content))
	}
	wantFirst := strings.Repeat("abcdefghijklmnopqrstuvwxyz", 4)[:99] + "\n"
	if !strings.HasPrefix(w.Content, wantFirst+wantFirst+wantFirst+strings.Repeat("abcdefghijklmnopqrstuvwxyz", 100)[:2000]+"\n") {
		t.Errorf("content starts %q", w.Content[:200])
	}
}

// hasControl is the fast gate of IsBinary: it must never miss a byte that
// controlByte counts (it may also answer true for VT, FF, BS and ESC).
func TestHasControl(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		p := make([]byte, rng.IntN(20))
		for i := range p {
			p[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				p[i] = "a\n\t\r \x7f\x01\x1f\x20\x80"[rng.IntN(10)]
			}
		}
		want := false
		for _, c := range p {
			want = want || controlByte[c] != 0
		}
		if got := hasControl(p); got != want && !(got && bytes.ContainsAny(p, "\v\f\b\x1b")) {
			t.Fatalf("hasControl(%q) = %v", p, got)
		}
	}
}
