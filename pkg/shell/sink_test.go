package shell

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// feed writes data into a fresh sink in chunks of the given sizes (cycled)
// and returns the result; this is exactly what Run's pumps do.
func feed(t *testing.T, tail bool, keep StreamLimits, spillDir string, data []byte, chunks ...int) StreamResult {
	t.Helper()
	s := newSink(map[bool]string{false: "stdout", true: "stderr"}[tail], tail, keep, DefaultCapture, spillDir, "test", nil)
	if len(chunks) == 0 {
		chunks = []int{len(data) + 1}
	}
	for i, k := 0, 0; i < len(data); k++ {
		n := min(chunks[k%len(chunks)], len(data)-i)
		if w, err := s.Write(data[i : i+n]); w != n || err != nil {
			t.Fatalf("write %d: %d %v", n, w, err)
		}
		i += n
	}
	return s.finish()
}

func lines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	return b.String()
}

func TestSinkSelection(t *testing.T) {
	ten := lines(1, 10)
	tenL := strings.SplitAfter(ten, "\n")
	cases := []struct {
		name      string
		tail      bool
		keep      StreamLimits
		in        string
		text      string
		truncated bool
		marker    []string
	}{
		{"empty", false, StreamLimits{100, 10}, "", "", false, nil},
		{"fits", false, StreamLimits{1000, 10}, ten, ten, false, nil},
		{"fits unterminated", true, StreamLimits{10, 2}, "a\nb", "a\nb", false, nil},
		{"head by lines", false, StreamLimits{1000, 3}, ten, strings.Join(tenL[:3], ""), true,
			[]string{"[pi: stdout truncated: kept the first 3 of 10 lines", "limit 1000 B / 3 lines", "full output not saved]"}},
		{"tail by lines", true, StreamLimits{1000, 3}, ten, strings.Join(tenL[7:10], ""), true,
			[]string{"[pi: stderr truncated: kept the last 3 of 10 lines"}},
		{"head by bytes", false, StreamLimits{20, 100}, ten, strings.Join(tenL[:2], ""), true,
			[]string{"kept the first 2 of 10 lines (", "limit 20 B / 100 lines"}},
		{"tail by bytes", true, StreamLimits{20, 100}, ten, strings.Join(tenL[8:10], ""), true, nil},
		{"tail unterminated last line counts", true, StreamLimits{100, 2}, "a\nb\nc", "b\nc", true,
			[]string{"kept the last 2 of 3 lines"}},
		{"head giant line clipped", false, StreamLimits{10, 5}, strings.Repeat("y", 100) + "\nz\n", strings.Repeat("y", 10), true,
			[]string{"kept the first 10 B of 103 B", "clipped", "2 lines in total"}},
		{"tail giant line clipped", true, StreamLimits{10, 5}, "a\n" + strings.Repeat("y", 99) + "Z", strings.Repeat("y", 9) + "Z", true,
			[]string{"kept the last 10 B"}},
		{"head skips giant later line", false, StreamLimits{10, 5}, "ab\ncd\n" + strings.Repeat("y", 50), "ab\ncd\n", true, nil},
		{"head exact byte fit", false, StreamLimits{6, 5}, "ab\ncd\n", "ab\ncd\n", false, nil},
		{"head exact line fit then more", false, StreamLimits{100, 2}, "ab\ncd\ne", "ab\ncd\n", true, nil},
		{"clip does not split rune", false, StreamLimits{5, 5}, strings.Repeat("é", 10), "éé", true, nil},
		{"tail clip does not split rune", true, StreamLimits{5, 5}, strings.Repeat("é", 10), "éé", true, nil},
		{"kib limit shown", false, StreamLimits{2048, 1}, "a\nb\n", "a\n", true, []string{"limit 2 KiB / 1 lines"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, chunk := range []int{1, 3, 1 << 20} {
				r := feed(t, c.tail, c.keep, "", []byte(c.in), chunk)
				if r.Text != c.text || r.Truncated != c.truncated {
					t.Fatalf("chunk %d: text %q truncated %v; want %q %v", chunk, r.Text, r.Truncated, c.text, c.truncated)
				}
				if r.TotalBytes != int64(len(c.in)) {
					t.Errorf("total %d", r.TotalBytes)
				}
				if len(r.Text) > c.keep.Bytes {
					t.Errorf("text %d bytes over limit %d", len(r.Text), c.keep.Bytes)
				}
				wantKept := "all"
				if c.truncated {
					wantKept = map[bool]string{false: "head", true: "tail"}[c.tail]
				} else if r.Marker != "" {
					t.Errorf("marker without truncation: %q", r.Marker)
				}
				if r.Kept != wantKept {
					t.Errorf("kept %q want %q", r.Kept, wantKept)
				}
				for _, m := range c.marker {
					if !strings.Contains(r.Marker, m) {
						t.Errorf("marker %q lacks %q", r.Marker, m)
					}
				}
			}
		})
	}
}

func TestSinkInvalidUTF8(t *testing.T) {
	dir := t.TempDir()
	// 80 raw bytes fit Keep, but each lone 0xff becomes a 3-byte U+FFFD:
	// the text would be 160 bytes, so it is truncated and the raw bytes
	// spill even though the stream never passed Keep while streaming.
	in := bytes.Repeat([]byte("\xffa"), 40)
	for _, tail := range []bool{false, true} {
		r := feed(t, tail, StreamLimits{100, 10}, dir, in, 7)
		if !utf8.ValidString(r.Text) || len(r.Text) > 100 || !strings.Contains(r.Text, "\uFFFDa") {
			t.Fatalf("text %q (%d)", r.Text, len(r.Text))
		}
		if !r.Truncated || r.SpillPath == "" {
			t.Fatalf("want truncated with spill: %+v", r)
		}
		if got, _ := os.ReadFile(r.SpillPath); !bytes.Equal(got, in) {
			t.Errorf("spill is not the raw bytes")
		}
	}
	r := feed(t, false, StreamLimits{100, 10}, "", []byte("ok \xfe\xfd bytes\n"))
	if r.Truncated || r.Text != "ok \uFFFD bytes\n" {
		t.Errorf("short binary: %+v", r)
	}
}

func TestSinkSpill(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "scratch", "tool-output")
	in := []byte(lines(1, 5000))
	r := feed(t, false, StreamLimits{1000, 100}, "", in[:500])
	if _, err := os.Stat(dir); !os.IsNotExist(err) || r.SpillPath != "" {
		t.Fatal("spill dir must not be created when nothing is truncated")
	}
	for _, tail := range []bool{false, true} {
		r := feed(t, tail, StreamLimits{1000, 100}, dir, in, 4096, 1, 17)
		if r.SpillPath == "" || filepath.Dir(r.SpillPath) != dir {
			t.Fatalf("spill path %q", r.SpillPath)
		}
		got, err := os.ReadFile(r.SpillPath)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("spill content differs (%d vs %d bytes) %v", len(got), len(in), err)
		}
		stream := map[bool]string{false: "stdout", true: "stderr"}[tail]
		if !strings.HasPrefix(filepath.Base(r.SpillPath), "test-"+stream+"-") || !strings.HasSuffix(r.SpillPath, ".log") {
			t.Errorf("name %q", r.SpillPath)
		}
		if !strings.HasSuffix(r.Marker, "full output: "+r.SpillPath+"]") {
			t.Errorf("marker %q", r.Marker)
		}
		fi, _ := os.Stat(r.SpillPath)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("spill mode %v", fi.Mode())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode())
	}
	// A label cannot move the file out of the directory.
	s := newSink("stdout", false, StreamLimits{10, 10}, DefaultCapture, dir, "../evil", nil)
	s.Write(in)
	r = s.finish()
	if filepath.Dir(r.SpillPath) != dir {
		t.Errorf("label escaped: %q", r.SpillPath)
	}
}

func TestSinkSpillFailure(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)
	r := feed(t, true, StreamLimits{10, 10}, filepath.Join(notDir, "sub"), []byte(lines(1, 100)))
	if !r.Truncated || r.SpillPath != "" || !strings.Contains(r.Marker, "full output could not be saved") {
		t.Fatalf("%+v", r)
	}
	if !strings.HasSuffix(r.Text, lines(100, 100)) {
		t.Errorf("tail lost on spill failure: %q", r.Text)
	}
}

// TestSinkMatchesWholeStream checks the streaming sink (bounded buffers,
// ring, arbitrary chunking) against selection over the whole stream held
// in memory, on random valid UTF-8 with long and short lines.
func TestSinkMatchesWholeStream(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", "é", "世", "🎉", "\n", "\n", " "}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		n := rng.Intn(3000)
		for b.Len() < n {
			if rng.Intn(50) == 0 {
				b.WriteString(strings.Repeat("L", rng.Intn(400)))
			}
			b.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		in := []byte(b.String())
		keep := StreamLimits{Bytes: 1 + rng.Intn(300), Lines: 1 + rng.Intn(40)}
		chunk := 1 + rng.Intn(200)
		for _, tail := range []bool{false, true} {
			r := feed(t, tail, keep, "", in, chunk, 1+rng.Intn(5))
			var want selection
			if tail {
				want = selectTail(in, true, keep.Bytes, keep.Lines)
			} else {
				want = selectHead(in, true, keep.Bytes, keep.Lines)
			}
			if r.Text != want.text {
				t.Fatalf("case %d tail=%v keep=%+v chunk=%d:\n got %q\nwant %q", i, tail, keep, chunk, r.Text, want.text)
			}
			if len(r.Text) > keep.Bytes || int64(strings.Count(r.Text, "\n")) > int64(keep.Lines) {
				t.Fatalf("case %d over limits", i)
			}
			if r.Truncated != (len(in) != len(r.Text)) {
				t.Fatalf("case %d truncated=%v with %d of %d", i, r.Truncated, len(r.Text), len(in))
			}
			if r.TotalLines != int64(strings.Count(string(in), "\n")+boolInt(len(in) > 0 && in[len(in)-1] != '\n')) {
				t.Fatalf("case %d lines %d", i, r.TotalLines)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRing(t *testing.T) {
	r := newRing(5)
	var all []byte
	for _, s := range []string{"ab", "c", "defgh", "", "ijklmnopq", "r"} {
		r.write([]byte(s))
		all = append(all, s...)
		want := all[max(0, len(all)-5):]
		if got := r.contents(); !bytes.Equal(got, want) {
			t.Fatalf("after %q: %q want %q", s, got, want)
		}
	}
}

func TestFmt(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 98304: "96.0 KiB", 1288490189: "1.2 GiB"} {
		if got := fmtSize(n); got != want {
			t.Errorf("fmtSize(%d)=%q want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{96 * 1024: "96 KiB", 1 << 20: "1 MiB", 1000: "1000 B", 1536: "1.5 KiB"} {
		if got := fmtLimit(n); got != want {
			t.Errorf("fmtLimit(%d)=%q want %q", n, got, want)
		}
	}
}
