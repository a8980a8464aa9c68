//go:build unix

package shell

import (
	"context"
	"os"
	"testing"
)

func BenchmarkRunTrue(b *testing.B) {
	e := bashEntry(b)
	for b.Loop() {
		if r, err := Run(context.Background(), RunOptions{Entry: e, Command: "true"}); err != nil || r.ExitCode != 0 {
			b.Fatal(err, r)
		}
	}
}

// BenchmarkRunOverhead isolates Run's own cost (session, pipes, pumps,
// wait) from bash's login-profile start-up: /bin/true ignores "-lc true".
func BenchmarkRunOverhead(b *testing.B) {
	e := Entry{ID: IDBash, Path: "/bin/true", Dialect: DialectPOSIX}
	if !isExecutable(e.Path) {
		b.Skip("no /bin/true")
	}
	for b.Loop() {
		if r, err := Run(context.Background(), RunOptions{Entry: e, Command: "true"}); err != nil || r.ExitCode != 0 {
			b.Fatal(err, r)
		}
	}
}

// BenchmarkFlood measures drain throughput: 100 MB of lines through the
// stdout sink and into a spill file.
func BenchmarkFlood(b *testing.B) {
	e := bashEntry(b)
	const size = 100_000_000
	b.SetBytes(size)
	dir := b.TempDir()
	for b.Loop() {
		r, err := Run(context.Background(), RunOptions{Entry: e, Command: "yes 'a line of benchmark output' | head -c 100000000",
			SpillDir: dir, SpillLabel: "bench"})
		if err != nil || r.Stdout.TotalBytes != size {
			b.Fatal(err, r.Stdout.TotalBytes)
		}
		os.Remove(r.Stdout.SpillPath) // keep the temp dir from growing by 100 MB a round
	}
}
