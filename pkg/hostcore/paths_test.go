package hostcore

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pi-cli/pi/pkg/fsx"
)

// fixture lays out a workspace, a scratch dir, a data dir and an outside dir
// with real files and symlinks.
type fixture struct {
	ws, scratch, data, outside, home string
	roots                            *Roots
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symlink fixtures need unix")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		ws: filepath.Join(base, "ws"), data: filepath.Join(base, "data"),
		outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home"),
	}
	f.scratch = filepath.Join(f.data, "scratch", "ses_a")
	for _, d := range []string{f.ws, f.outside, f.scratch, filepath.Join(f.data, "scratch", "ses_b"), filepath.Join(f.home, ".ssh"), filepath.Join(f.ws, "sub")} {
		mustMkdir(t, d)
	}
	write(t, filepath.Join(f.ws, "a.txt"), "inside\n")
	write(t, filepath.Join(f.ws, "sub", "b.txt"), "inside b\n")
	write(t, filepath.Join(f.outside, "secret.txt"), "OUTSIDE SECRET\n")
	write(t, filepath.Join(f.home, ".ssh", "id_rsa"), "KEY\n")
	write(t, filepath.Join(f.data, "scratch", "ses_b", "other.txt"), "other session\n")
	write(t, filepath.Join(f.scratch, "mine.txt"), "mine\n")
	link(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.ws, "out-link"))
	link(t, f.outside, filepath.Join(f.ws, "out-dir"))
	link(t, "sub/b.txt", filepath.Join(f.ws, "in-link"))
	link(t, filepath.Join(f.outside, "nope.txt"), filepath.Join(f.ws, "dangling-out"))
	link(t, "loop2", filepath.Join(f.ws, "loop1"))
	link(t, "loop1", filepath.Join(f.ws, "loop2"))
	link(t, f.outside, filepath.Join(f.scratch, "escape"))
	link(t, filepath.Join(f.home, ".ssh"), filepath.Join(f.ws, "keys"))
	id, err := fsx.StatID(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	f.roots = &Roots{Workspace: f.ws, WorkspaceID: id, Scratch: f.scratch, Protected: []string{f.data},
		Sensitive: NewSensitiveList(f.home, DefaultSensitivePaths)}
	return f
}

func mustMkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t testing.TB, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// TestResolveClasses covers R-PATH-3/4/6/10 with real links.
func TestResolveClasses(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name, in string
		write    bool
		class    PathClass
		code     Code
		escape   string
	}{
		{"relative file", "a.txt", false, ClassWorkspace, "", ""},
		{"nested", "sub/b.txt", false, ClassWorkspace, "", ""},
		{"absolute inside", filepath.Join(f.ws, "a.txt"), false, ClassWorkspace, "", ""},
		{"dotdot staying inside", "sub/../a.txt", false, ClassWorkspace, "", ""},
		{"dotdot escape", "../outside/secret.txt", false, ClassExternal, "", "dotdot"},
		{"prefix sibling is not inside", f.ws + "-evil/x", false, ClassExternal, "", "absolute"},
		{"symlink out", "out-link", false, ClassExternal, "", "symlink"},
		{"symlinked ancestor out", "out-dir/secret.txt", false, ClassExternal, "", "symlink"},
		// ".." applies after the link before it, as the kernel does: this lands
		// back in the workspace (a.txt), and is judged by that.
		{"dotdot after symlink lands inside", "out-dir/../ws/a.txt", false, ClassWorkspace, "", ""},
		{"dotdot after symlink lands outside", "out-dir/../outside/secret.txt", false, ClassExternal, "", "symlink"},
		{"in-root link", "in-link", false, ClassWorkspace, "", ""},
		{"dangling link out (create through it)", "dangling-out", false, ClassExternal, "", "symlink"},
		{"write replaces a link entry", "out-link", true, ClassWorkspace, "", ""},
		{"new file", "new/dir/file.txt", true, ClassWorkspace, "", ""},
		{"absolute outside", filepath.Join(f.outside, "secret.txt"), false, ClassExternal, "", "absolute"},
		{"own scratch", filepath.Join(f.scratch, "mine.txt"), false, ClassScratch, "", ""},
		{"own scratch new", filepath.Join(f.scratch, "x/y.txt"), true, ClassScratch, "", ""},
		{"scratch link reaches nothing", filepath.Join(f.scratch, "escape", "secret.txt"), false, "", PathOutsideWorkspace, ""},
		{"other session's scratch", filepath.Join(f.data, "scratch", "ses_b", "other.txt"), false, "", ToolDenied, ""},
		{"the store", filepath.Join(f.data, "pi.db"), true, "", ToolDenied, ""},
		{"sensitive", filepath.Join(f.home, ".ssh", "id_rsa"), false, "", ToolDenied, ""},
		{"sensitive via link", "keys/id_rsa", false, "", ToolDenied, ""},
		{"sensitive case-folded", filepath.Join(f.home, ".SSH", "ID_RSA"), false, "", ToolDenied, ""},
		{"sensitive not yet existing", filepath.Join(f.home, ".aws", "credentials"), true, "", ToolDenied, ""},
		{"loop", "loop1", false, "", ToolFailed, ""},
		{"NUL", "a\x00b", false, "", InvalidArgument, ""},
		{"invalid utf8", "a\xffb", false, "", InvalidArgument, ""},
		{"empty", "", false, "", InvalidArgument, ""},
		{"tilde is literal", "~/x", true, ClassWorkspace, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := f.roots.Resolve(c.in, ResolveOptions{FollowFinal: !c.write})
			if c.code != "" {
				if CodeOf(err) != c.code {
					t.Fatalf("Resolve(%q) err = %v (%s), want %s", c.in, err, CodeOf(err), c.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", c.in, err)
			}
			if r.Class != c.class || r.Escape != c.escape {
				t.Fatalf("Resolve(%q) = %s/%q (canonical %s), want %s/%q", c.in, r.Class, r.Escape, r.Canonical, c.class, c.escape)
			}
			if r.Class == ClassWorkspace && (strings.HasPrefix(r.Rel, "..") || filepath.IsAbs(r.Rel)) {
				t.Fatalf("workspace rel %q escapes", r.Rel)
			}
			if c.name == "dotdot after symlink lands inside" && r.Rel != "a.txt" {
				t.Fatalf("rel = %q, want a.txt", r.Rel)
			}
		})
	}
}

// TestReopenRefusesSwappedTarget: a symlink approved for one file and swapped
// to another before execution is refused (R-PATH-4, R-PATH-5).
func TestReopenRefusesSwappedTarget(t *testing.T) {
	f := newFixture(t)
	write(t, filepath.Join(f.outside, "other.txt"), "OTHER\n")
	r, err := f.roots.Resolve("out-link", ResolveOptions{FollowFinal: true})
	if err != nil || r.Class != ClassExternal {
		t.Fatalf("resolve: %v %v", r, err)
	}
	// Swap the link after "approval".
	os.Remove(filepath.Join(f.ws, "out-link"))
	link(t, filepath.Join(f.outside, "other.txt"), filepath.Join(f.ws, "out-link"))
	if _, _, err := f.roots.Reopen(r, false); !errors.Is(err, ErrTargetChanged) || CodeOf(err) != ToolDenied {
		t.Fatalf("Reopen after swap = %v, want TOOL_DENIED target changed", err)
	}
	// Replace the target file itself (same path, new inode).
	r2, err := f.roots.Resolve(filepath.Join(f.outside, "other.txt"), ResolveOptions{FollowFinal: true})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(f.outside, "other.txt"))
	write(t, filepath.Join(f.outside, "other.txt"), "REPLACED\n")
	if _, _, err := f.roots.Reopen(r2, false); !errors.Is(err, ErrTargetChanged) {
		t.Fatalf("Reopen after replace = %v, want target changed", err)
	}
	// Unchanged target: allowed, and the root contains only that dir.
	r3, _ := f.roots.Resolve(filepath.Join(f.outside, "secret.txt"), ResolveOptions{FollowFinal: true})
	root, name, err := f.roots.Reopen(r3, false)
	if err != nil {
		t.Fatalf("Reopen unchanged: %v", err)
	}
	defer root.Close()
	b, err := root.ReadFile(name)
	if err != nil || string(b) != "OUTSIDE SECRET\n" {
		t.Fatalf("read approved target: %q %v", b, err)
	}
}

// TestReopenWorkspaceSwapped: replacing the workspace dir itself is noticed.
func TestReopenWorkspaceSwapped(t *testing.T) {
	f := newFixture(t)
	r, err := f.roots.Resolve("a.txt", ResolveOptions{FollowFinal: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.ws, f.ws+".old"); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, f.ws)
	write(t, filepath.Join(f.ws, "a.txt"), "impostor\n")
	if _, _, err := f.roots.Reopen(r, false); CodeOf(err) != ToolDenied {
		t.Fatalf("Reopen of swapped workspace = %v, want TOOL_DENIED", err)
	}
}

// TestOSRootRefusesEscapeAtOpen: a path that was inside at resolve time but
// became an escaping link before open is refused by os.Root itself.
func TestOSRootRefusesEscapeAtOpen(t *testing.T) {
	f := newFixture(t)
	r, err := f.roots.Resolve("sub/b.txt", ResolveOptions{FollowFinal: true})
	if err != nil || r.Class != ClassWorkspace {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(f.ws, "sub"))
	link(t, f.outside, filepath.Join(f.ws, "sub"))
	os.Rename(filepath.Join(f.outside, "secret.txt"), filepath.Join(f.outside, "b.txt"))
	root, name, err := f.roots.Reopen(r, false)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if b, err := root.ReadFile(name); err == nil {
		t.Fatalf("os.Root followed an escaping link: %q", b)
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "sub/../../outside/secret.txt", "out-dir/../../x", "/etc/passwd", "in-link", "loop1/x", "a/./b//c", "~/.ssh/id_rsa", "keys/../a.txt"} {
		f.Add(s)
	}
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := fx.roots.Resolve(in, ResolveOptions{FollowFinal: true})
		if err != nil {
			return
		}
		switch r.Class {
		case ClassWorkspace:
			if !within(r.Canonical, fx.ws) {
				t.Fatalf("%q classed workspace but canonical %s is outside", in, r.Canonical)
			}
			root, name, err := fx.roots.Reopen(r, false)
			if err != nil {
				return
			}
			defer root.Close()
			if b, err := root.ReadFile(name); err == nil && strings.Contains(string(b), "SECRET") {
				t.Fatalf("%q leaked outside bytes through the workspace root", in)
			}
		case ClassScratch:
			if !within(r.Canonical, fx.scratch) {
				t.Fatalf("%q classed scratch but canonical %s is outside", in, r.Canonical)
			}
		case ClassExternal:
			if within(r.Canonical, fx.ws) || within(r.Canonical, fx.data) {
				t.Fatalf("%q classed external but canonical %s is inside a root or the data dir", in, r.Canonical)
			}
		}
		if _, hit := fx.roots.Sensitive.Match(r.Canonical); hit {
			t.Fatalf("%q resolved onto a sensitive path %s", in, r.Canonical)
		}
	})
}
