package hostcore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func benchHost(b *testing.B, mode string) (*Host, string, string) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = filepath.Join(b.TempDir(), "data")
	h, err := Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	ws := filepath.Join(b.TempDir(), "ws")
	os.MkdirAll(ws, 0o755)
	v, err := h.CreateSession(context.Background(), CreateOptions{Workspace: ws, PermissionMode: mode})
	if err != nil {
		b.Fatal(err)
	}
	return h, v.ID, ws
}

// BenchmarkExecuteRead is the in-process cost of the whole road for a small
// Read: session lookup, resolver, policy, os.Root open, one audit insert.
func BenchmarkExecuteRead(b *testing.B) {
	h, sid, ws := benchHost(b, PermAuto)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	args := json.RawMessage(`{"path":"a.txt"}`)
	for b.Loop() {
		if r := h.Execute(context.Background(), &Call{SessionID: sid, Tool: "Read", Args: args}); !r.OK {
			b.Fatal(r.Message)
		}
	}
}

// BenchmarkExecuteWrite50MB writes 50 MB of text over an existing 50 MB file
// (snapshot, atomic replace, review record).
func BenchmarkExecuteWrite50MB(b *testing.B) {
	h, sid, _ := benchHost(b, PermAuto)
	line := strings.Repeat("0123456789", 10) + "\n"
	content := strings.Repeat(line, 50<<20/len(line))
	args, _ := json.Marshal(map[string]string{"path": "big.txt", "content": content})
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if r := h.Execute(context.Background(), &Call{SessionID: sid, Tool: "Write", Args: args}); !r.OK {
			b.Fatal(r.Message)
		}
	}
}
