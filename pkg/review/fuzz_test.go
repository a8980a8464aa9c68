package review

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// FuzzDiffRollbackRoundTrip checks the two promises the record makes:
// its hunks turn before into after (also after a JSON round trip), and a
// rollback through snapshots gives back the exact pre-image (modify, delete)
// or the absence of the file (create).
func FuzzDiffRollbackRoundTrip(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"a\nb\n", "a\nc\n"}, {"a\nb", "a\nb\n"}, {"a\r\nb\r\n", "a\nb\n"},
		{"\ufeffx\n", "x\n"}, {"bin\x00ary", "text\n"}, {"caf\xe9", "café"},
		{numbered(30), numbered(25)}, {"\r\n\r\n", "\r\r\n"}, {"x", ""},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	// One workspace and store per fuzz worker; every input gets its own
	// session so snapshot IDs never collide.
	base, err := os.MkdirTemp("", "review-fuzz-")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	root, err := os.OpenRoot(ws)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { root.Close() })
	snaps := Snapshots{Dir: filepath.Join(base, "snap")}
	var n atomic.Int64

	f.Fuzz(func(t *testing.T, before, after []byte) {
		diffChecks(t, before, after)
		// Random bytes are mostly invalid UTF-8 (binary); the same input
		// mapped onto a tiny line-heavy alphabet exercises the text paths.
		diffChecks(t, textify(before), textify(after))

		e := &env{t: t, ws: ws, rfs: rootRestorer{root}, snaps: snaps, session: fmt.Sprintf("s%d", n.Add(1))}
		defer snaps.RemoveSession(e.session)
		defer os.Remove(filepath.Join(ws, "f"))

		// One flow per input (picked from the input, so a failure replays):
		// each flow costs several fsyncs, and the diff checks above are where
		// the fuzzer earns its keep.
		switch (len(before) + len(after)) % 3 {
		case 0: // modify / overwrite
			e.put("f", before)
			rollback(t, e, e.mutate(OpWrite, "f", after))
			wantFile(t, e, "f", before)
		case 1: // delete
			e.put("f", before)
			rollback(t, e, e.mutate(OpDelete, "f", nil))
			wantFile(t, e, "f", before)
		case 2: // create
			rollback(t, e, e.mutate(OpWrite, "f", after))
			wantAbsent(t, e, "f")
		}
	})
}

var alphabet = []string{"a", "b", "\n", "\r\n", "\r", "é", "\ufeff", "\n"}

func textify(b []byte) []byte {
	var out []byte
	for _, c := range b {
		out = append(out, alphabet[int(c)%len(alphabet)]...)
	}
	return out
}

func diffChecks(t *testing.T, before, after []byte) {
	t.Helper()
	hunks, a, d, bin, trunc := Diff(before, after, Limits{})
	if trunc {
		t.Fatal("truncated under default limits")
	}
	if bin {
		if hunks != nil || a != 0 || d != 0 {
			t.Fatalf("binary with hunks %v +%d -%d", hunks, a, d)
		}
		return
	}
	checkApply(t, before, after, hunks)
	adds, dels := 0, 0
	for _, h := range hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case KindAdd:
				adds++
			case KindDel:
				dels++
			}
		}
	}
	if adds != a || dels != d {
		t.Fatalf("counts +%d -%d, lines +%d -%d", a, d, adds, dels)
	}
	if a-d != countLines(after)-countLines(before) {
		t.Fatalf("+%d -%d does not match the line counts", a, d)
	}
	// A capped record is a prefix of valid hunks.
	capped, _, _, _, _ := Diff(before, after, Limits{MaxHunkLines: 3})
	if _, err := Apply(before, capped); err != nil {
		t.Fatalf("capped hunks do not apply: %v", err)
	}
	// The cheap count of an oversized diff is a lower bound with the same net.
	_, ra, rd, _, rtrunc := Diff(before, after, Limits{MaxDiffBytes: 1})
	if len(before)+len(after) > 2 && (!rtrunc || ra > a || rd > d || ra-rd != a-d) {
		t.Fatalf("rough +%d -%d (truncated %v) vs exact +%d -%d", ra, rd, rtrunc, a, d)
	}
	ch := Change{Path: "f", Hunks: hunks, Additions: a, Deletions: d, Status: StatusModified}
	if got, want := UnifiedFromHunks(ch, false), Unified("f", before, after, false); got != want {
		t.Fatalf("UnifiedFromHunks != Unified:\n%q\n%q", got, want)
	}
}

func rollback(t testing.TB, e *env, c Change) Change {
	t.Helper()
	got, err := Rollback(e.snaps, e.session, c, e.rfs)
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	if got.State != StateRolledBack {
		t.Fatalf("state %q", got.State)
	}
	return got
}

func wantFile(t testing.TB, e *env, path string, want []byte) {
	t.Helper()
	got, ok := e.read(path)
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("%s = %q (exists %v), want %q", path, got, ok, want)
	}
}

func wantAbsent(t testing.TB, e *env, path string) {
	t.Helper()
	if b, ok := e.read(path); ok {
		t.Fatalf("%s exists with %q", path, b)
	}
}

func BenchmarkDiff100KBOneLineEdit(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 100<<10; i++ {
		fmt.Fprintf(&buf, "\tline %d: some ordinary source text, x := y + %d\n", i, i*7)
	}
	before := buf.Bytes()
	after := bytes.Replace(before, []byte("line 1000:"), []byte("line one thousand:"), 1)
	b.SetBytes(int64(len(before)))
	b.ReportAllocs()
	for b.Loop() {
		if _, a, d, _, _ := Diff(before, after, Limits{}); a != 1 || d != 1 {
			b.Fatalf("+%d -%d", a, d)
		}
	}
}

func BenchmarkSaveFrom50MB(b *testing.B) {
	data := make([]byte, 50<<20)
	rand.NewChaCha8([32]byte{3}).Read(data)
	s := Snapshots{Dir: b.TempDir()}
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		i++
		if _, _, err := s.SaveFrom("bench", fmt.Sprintf("s%d", i), bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.RemoveSession("bench")
		b.StartTimer()
	}
}
