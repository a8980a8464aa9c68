package redact

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// viaWriter streams in through NewWriter, cutting the writes at the given
// sizes in turn.
func viaWriter(in string, sizes []int) string {
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := 0; len(in) > 0; i++ {
		n := min(max(sizes[i%len(sizes)], 1), len(in))
		if _, err := w.Write([]byte(in[:n])); err != nil {
			panic(err)
		}
		in = in[n:]
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return out.String()
}

// fragments of command output, secrets and not, to build random inputs.
var fragments = []string{
	"ok\n", "building pi...\n", "\n", "\r\n", "PASSWORD=hunter2\n", "export API_TOKEN='abc def'\n",
	"  token: " + ghp + "\n", "Authorization: Bearer " + jwt + "\r\n", "https://u:p4ss@host/x\n",
	"-----BEGIN RSA PRIVATE KEY-----\n", "MIIEowIBAAKCAQEAu1SU1LfVLPHC\n", "-----END RSA PRIVATE KEY-----\n",
	`{"password": "x", "n": 1}` + "\n", "tokenizer := x\n", "café ünïcödé ✓\n", "--token abc --verbose\n",
	akia + " " + aiza + "\n", "sk-" + strings.Repeat("Z9", 12) + "\n", "no newline at the end",
	"-----BEGIN PRIVATE KEY-----AAAA-----END PRIVATE KEY-----\n", "xoxb-" + strings.Repeat("1", 12) + "\n",
}

// TestWriterMatchesString: NewWriter over any chunking gives String of the
// whole input.
func TestWriterMatchesString(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(fragments[rng.IntN(len(fragments))])
		}
		in := b.String()
		want := String(in)
		sizes := []int{1 + rng.IntN(40), 1 + rng.IntN(3), 1 + rng.IntN(200)}
		if got := viaWriter(in, sizes); got != want {
			t.Fatalf("iter %d, writes of %v:\ninput  %q\nwriter %q\nstring %q", iter, sizes, in, got, want)
		}
		if again := String(want); again != want {
			t.Fatalf("iter %d: not idempotent:\n%q\n%q", iter, want, again)
		}
	}
}

func FuzzWriterMatchesString(f *testing.F) {
	for _, s := range fragments {
		f.Add(s, uint8(3))
	}
	f.Add(strings.Join(fragments, ""), uint8(1))
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		want := String(in)
		if got := viaWriter(in, []int{int(step)}); got != want {
			t.Fatalf("writer %q, string %q", got, want)
		}
		if again := String(want); again != want {
			t.Fatalf("not idempotent: %q → %q", want, again)
		}
	})
}

func TestWriterLongLine(t *testing.T) {
	// 1 MB without a newline is passed on in pieces: memory stays bounded,
	// a token surrounded by blanks is still caught.
	var out bytes.Buffer
	w := NewWriter(&out).(*writer)
	chunk := strings.Repeat("word ", 1000) + ghp + " "
	for range 200 {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
		if cap(w.buf) > 4*maxLine {
			t.Fatalf("buffer grew to %d", cap(w.buf))
		}
	}
	w.Close()
	if strings.Contains(out.String(), ghp) || out.Len() < 200*len(chunk)-200*len(ghp) {
		t.Errorf("long line: leaked or lost bytes (len %d)", out.Len())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterError(t *testing.T) {
	w := NewWriter(failWriter{})
	if _, err := w.Write([]byte("a\n")); err == nil {
		t.Error("write error lost")
	}
	if err := w.Close(); err == nil {
		t.Error("close after error: nil")
	}
}
