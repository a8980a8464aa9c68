package redact

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sourceText is 1 MB of ordinary Go source from GOROOT (synthetic text if
// GOROOT has no sources). It mentions tokens, keys and passwords the way
// code does, which is the realistic load for the prefilter.
func sourceText(b *testing.B) string {
	b.Helper()
	var sb strings.Builder
	for _, dir := range []string{"strings", "bytes", "fmt", "sort", "go/scanner", "go/parser", "net/url", "encoding/json", "text/template"} {
		files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", dir, "*.go"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err == nil {
				sb.Write(data)
			}
			if sb.Len() >= 1<<20 {
				return sb.String()[:1<<20]
			}
		}
	}
	for sb.Len() < 1<<20 {
		sb.WriteString("func (s *Scanner) next() token.Token { return s.tok } // ordinary code\n")
	}
	return sb.String()[:1<<20]
}

func BenchmarkString(b *testing.B) {
	s := sourceText(b)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		String(s)
	}
}

func BenchmarkWriter(b *testing.B) {
	s := []byte(sourceText(b))
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		w := NewWriter(io.Discard)
		for i := 0; i < len(s); i += 32 << 10 {
			w.Write(s[i:min(i+32<<10, len(s))])
		}
		w.Close()
	}
}
