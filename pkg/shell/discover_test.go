package shell

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// fakeMachine is a temp dir standing in for a machine's file system: the
// path /usr/bin/bash (or C:\Git\bin\bash.exe) of the fake machine is the
// real file <root>/usr/bin/bash (<root>/C/Git/bin/bash.exe). Discovery then
// runs against real files, with only the root moved.
type fakeMachine struct {
	t    *testing.T
	root string
	goos string
	vars map[string]string
}

func newFake(t *testing.T, goos string) *fakeMachine {
	return &fakeMachine{t: t, root: t.TempDir(), goos: goos, vars: map[string]string{}}
}

func (f *fakeMachine) real(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' {
		p = p[:1] + p[2:] // C:/x → C/x
	}
	return filepath.Join(f.root, filepath.FromSlash(p))
}

// file creates an executable (mode 0755) or plain (0644) file on the fake.
func (f *fakeMachine) file(p string, mode os.FileMode) {
	f.t.Helper()
	r := f.real(p)
	if err := os.MkdirAll(filepath.Dir(r), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(r, []byte("#!/bin/sh\n"), mode); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeMachine) isExec(p string) bool {
	fi, err := os.Stat(f.real(p))
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return f.goos == "windows" || runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

func (f *fakeMachine) lookPath(name string) (string, error) {
	sep, listSep := "/", ":"
	if f.goos == "windows" {
		sep, listSep = `\`, ";"
		if !strings.HasSuffix(strings.ToLower(name), ".exe") {
			name += ".exe"
		}
	}
	for _, dir := range strings.Split(f.vars["PATH"], listSep) {
		if dir == "" {
			continue
		}
		c := strings.TrimRight(dir, `\/`) + sep + name
		if f.goos == "windows" {
			c = winJoin(dir, name)
		}
		if f.isExec(c) {
			return c, nil
		}
	}
	return "", exec.ErrNotFound
}

func (f *fakeMachine) env() Env {
	return Env{GOOS: f.goos, Getenv: func(k string) string { return f.vars[k] }, LookPath: f.lookPath, IsExec: f.isExec}
}

func TestFindBash(t *testing.T) {
	type tc struct {
		name    string
		goos    string
		files   []string // executables on the fake machine
		plain   []string // non-executable files
		vars    map[string]string
		want    string
		wantErr []string // substrings of the error
	}
	cases := []tc{
		{name: "override", goos: "linux", files: []string{"/opt/custom/bash", "/bin/bash"},
			vars: map[string]string{"PI_DESKTOP_BASH": "/opt/custom/bash"}, want: "/opt/custom/bash"},
		{name: "override missing does not fall back", goos: "linux", files: []string{"/bin/bash"},
			vars:    map[string]string{"PI_DESKTOP_BASH": "/nope/bash"},
			wantErr: []string{"PI_DESKTOP_BASH", "/nope/bash", "not an executable", "install bash"}},
		{name: "override not executable", goos: "linux", plain: []string{"/opt/custom/bash"}, files: []string{"/bin/bash"},
			vars: map[string]string{"PI_DESKTOP_BASH": "/opt/custom/bash"}, wantErr: []string{"not an executable"}},
		{name: "override is a directory", goos: "linux", files: []string{"/opt/custom/bash/x"},
			vars: map[string]string{"PI_DESKTOP_BASH": "/opt/custom/bash"}, wantErr: []string{"not an executable"}},
		{name: "override relative", goos: "linux", files: []string{"/bin/bash"},
			vars: map[string]string{"PI_DESKTOP_BASH": "bash"}, wantErr: []string{"not an absolute path"}},
		{name: "bin first", goos: "linux", files: []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/x/bash"},
			vars: map[string]string{"PATH": "/x"}, want: "/bin/bash"},
		{name: "usr bin second", goos: "linux", files: []string{"/usr/bin/bash", "/usr/local/bin/bash"}, want: "/usr/bin/bash"},
		{name: "usr local before homebrew", goos: "darwin", files: []string{"/usr/local/bin/bash", "/opt/homebrew/bin/bash"},
			want: "/usr/local/bin/bash"},
		{name: "homebrew before PATH", goos: "darwin", files: []string{"/opt/homebrew/bin/bash", "/x/bash"},
			vars: map[string]string{"PATH": "/x"}, want: "/opt/homebrew/bin/bash"},
		{name: "linuxbrew", goos: "linux", files: []string{"/home/linuxbrew/.linuxbrew/bin/bash"},
			want: "/home/linuxbrew/.linuxbrew/bin/bash"},
		{name: "well-known not executable skipped", goos: "linux", plain: []string{"/bin/bash"}, files: []string{"/x/bash"},
			vars: map[string]string{"PATH": "/y:/x"}, want: "/x/bash"},
		{name: "PATH fallback", goos: "linux", files: []string{"/nix/store/abc/bin/bash"},
			vars: map[string]string{"PATH": "/nix/store/abc/bin"}, want: "/nix/store/abc/bin/bash"},
		{name: "none linux", goos: "linux", wantErr: []string{"bash not found", "apt install bash", "PI_DESKTOP_BASH"}},
		{name: "none darwin", goos: "darwin", wantErr: []string{"brew install bash"}},

		{name: "win override", goos: "windows", files: []string{`C:\tools\bash.exe`},
			vars: map[string]string{"PI_DESKTOP_BASH": `C:\tools\bash.exe`}, want: `C:\tools\bash.exe`},
		{name: "win override missing", goos: "windows", files: []string{`C:\Program Files\Git\bin\bash.exe`},
			vars:    map[string]string{"PI_DESKTOP_BASH": `C:\tools\bash.exe`, "ProgramFiles": `C:\Program Files`},
			wantErr: []string{"PI_DESKTOP_BASH", "Git for Windows"}},
		{name: "win from git cmd", goos: "windows",
			files: []string{`C:\Program Files\Git\cmd\git.exe`, `C:\Program Files\Git\bin\bash.exe`, `C:\Other\Git\bin\bash.exe`},
			vars:  map[string]string{"PATH": `C:\Windows\System32;C:\Program Files\Git\cmd`, "ProgramFiles": `C:\Other`},
			want:  `C:\Program Files\Git\bin\bash.exe`},
		{name: "win from git mingw64", goos: "windows",
			files: []string{`D:\Git\mingw64\bin\git.exe`, `D:\Git\bin\bash.exe`},
			vars:  map[string]string{"PATH": `D:\Git\mingw64\bin`}, want: `D:\Git\bin\bash.exe`},
		{name: "win from git usr bin", goos: "windows",
			files: []string{`D:\Git\cmd\git.exe`, `D:\Git\usr\bin\bash.exe`},
			vars:  map[string]string{"PATH": `D:\Git\cmd`}, want: `D:\Git\usr\bin\bash.exe`},
		{name: "win from git forward slashes", goos: "windows",
			files: []string{`C:/Git/cmd/git.exe`, `C:/Git/bin/bash.exe`},
			vars:  map[string]string{"PATH": `C:/Git/cmd`}, want: `C:/Git/bin/bash.exe`},
		{name: "win program files", goos: "windows", files: []string{`C:\Program Files\Git\bin\bash.exe`},
			vars: map[string]string{"ProgramFiles": `C:\Program Files`}, want: `C:\Program Files\Git\bin\bash.exe`},
		{name: "win program files x86", goos: "windows", files: []string{`C:\Program Files (x86)\Git\bin\bash.exe`},
			vars: map[string]string{"ProgramFiles": `C:\Program Files`, "ProgramFiles(x86)": `C:\Program Files (x86)`},
			want: `C:\Program Files (x86)\Git\bin\bash.exe`},
		{name: "win local app data", goos: "windows", files: []string{`C:\Users\me\AppData\Local\Programs\Git\bin\bash.exe`},
			vars: map[string]string{"LocalAppData": `C:\Users\me\AppData\Local`},
			want: `C:\Users\me\AppData\Local\Programs\Git\bin\bash.exe`},
		{name: "win program files forward slashes", goos: "windows", files: []string{`C:/PF/Git/bin/bash.exe`},
			vars: map[string]string{"ProgramFiles": `C:/PF/`}, want: `C:/PF/Git/bin/bash.exe`},
		{name: "win PATH skips System32", goos: "windows",
			files: []string{`C:\Windows\System32\bash.exe`, `C:\msys64\usr\bin\bash.exe`},
			vars:  map[string]string{"PATH": `C:\Windows\system32;"C:\msys64\usr\bin"`}, want: `C:\msys64\usr\bin\bash.exe`},
		{name: "win only WSL launchers", goos: "windows",
			files:   []string{`C:\Windows\System32\bash.exe`, `C:\Users\me\AppData\Local\Microsoft\WindowsApps\bash.exe`},
			vars:    map[string]string{"PATH": `C:\Windows\System32;C:\Users\me\AppData\Local\Microsoft\WindowsApps`},
			wantErr: []string{"bash not found", "System32", "Git for Windows", "winget install Git.Git"}},
		{name: "win git elsewhere has no bash", goos: "windows",
			files: []string{`C:\scoop\shims\git.exe`, `C:\Program Files\Git\bin\bash.exe`},
			vars:  map[string]string{"PATH": `C:\scoop\shims`, "ProgramFiles": `C:\Program Files`},
			want:  `C:\Program Files\Git\bin\bash.exe`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.goos)
			for _, p := range c.files {
				f.file(p, 0o755)
			}
			for _, p := range c.plain {
				f.file(p, 0o644)
			}
			for k, v := range c.vars {
				f.vars[k] = v
			}
			got, err := FindBash(f.env())
			if c.wantErr != nil {
				if err == nil {
					t.Fatalf("got %q, want error", got)
				}
				if !errors.Is(err, ErrBashNotFound) {
					t.Errorf("error %v does not wrap ErrBashNotFound", err)
				}
				for _, s := range c.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	t.Run("unix", func(t *testing.T) {
		f := newFake(t, "linux")
		f.file("/usr/bin/bash", 0o755)
		got := Discover(f.env())
		want := []Entry{{ID: IDBash, Available: true, Path: "/usr/bin/bash", Dialect: DialectPOSIX}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %+v", got)
		}
		if _, ok := Lookup(got, IDCmd); ok {
			t.Error("cmd must be unknown on unix")
		}
	})
	t.Run("unix none", func(t *testing.T) {
		got := Discover(newFake(t, "linux").env())
		if len(got) != 1 || got[0].Available || !strings.Contains(got[0].Reason, "install bash") {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("windows", func(t *testing.T) {
		f := newFake(t, "windows")
		f.vars["SystemRoot"] = `C:\Windows`
		f.file(`C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, 0o755)
		f.file(`C:\Windows\System32\cmd.exe`, 0o755)
		f.file(`C:\Windows\System32\bash.exe`, 0o755) // WSL: must not count
		f.vars["PATH"] = `C:\Windows\System32`
		got := Discover(f.env())
		ids := []string{}
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if !reflect.DeepEqual(ids, []string{IDGitBash, IDWindowsPowerShell, IDCmd}) {
			t.Fatalf("order %v", ids)
		}
		if got[0].Available || got[0].Dialect != DialectPOSIX || !strings.Contains(got[0].Reason, "Git for Windows") {
			t.Errorf("git-bash %+v", got[0])
		}
		if !got[1].Available || got[1].Path != `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe` || got[1].Dialect != DialectPowerShell {
			t.Errorf("powershell %+v", got[1])
		}
		if !got[2].Available || got[2].Path != `C:\Windows\System32\cmd.exe` || got[2].Dialect != DialectCmd {
			t.Errorf("cmd %+v", got[2])
		}
		e, err := Effective(got, IDGitBash)
		if err != nil || e.ID != IDWindowsPowerShell {
			t.Errorf("effective fallback %+v %v", e, err)
		}
	})
	t.Run("windows default SystemRoot and git bash", func(t *testing.T) {
		f := newFake(t, "windows")
		f.file(`C:\Windows\System32\cmd.exe`, 0o755)
		f.file(`C:\Program Files\Git\bin\bash.exe`, 0o755)
		f.vars["ProgramFiles"] = `C:\Program Files`
		got := Discover(f.env())
		if !got[0].Available || got[1].Available || !strings.Contains(got[1].Reason, "powershell.exe") || !got[2].Available {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("real machine", func(t *testing.T) {
		got := Discover(DefaultEnv())
		if len(got) == 0 {
			t.Fatal("empty catalog")
		}
		for _, e := range got {
			if !KnownID(e.ID) || (e.Available && e.Path == "") || (!e.Available && e.Reason == "") {
				t.Errorf("bad entry %+v", e)
			}
		}
	})
}

func TestEffective(t *testing.T) {
	bash := Entry{ID: IDGitBash, Available: true, Path: "b", Dialect: DialectPOSIX}
	ps := Entry{ID: IDWindowsPowerShell, Available: true, Path: "p", Dialect: DialectPowerShell}
	cmdOff := Entry{ID: IDCmd, Dialect: DialectCmd, Reason: "gone"}
	bashOff := Entry{ID: IDGitBash, Dialect: DialectPOSIX, Reason: "no git"}
	cases := []struct {
		name    string
		entries []Entry
		def     string
		want    string
		err     bool
	}{
		{"default available", []Entry{bash, ps}, IDWindowsPowerShell, IDWindowsPowerShell, false},
		{"default unavailable falls back to first", []Entry{bash, ps, cmdOff}, IDCmd, IDGitBash, false},
		{"first unavailable", []Entry{bashOff, ps, cmdOff}, IDCmd, IDWindowsPowerShell, false},
		{"empty default", []Entry{bashOff, ps}, "", IDWindowsPowerShell, false},
		{"unknown default", []Entry{bash}, "zsh", IDGitBash, false},
		{"none", []Entry{bashOff, cmdOff}, IDGitBash, "", true},
		{"empty catalog", nil, IDBash, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := Effective(c.entries, c.def)
			if c.err {
				if !errors.Is(err, ErrNoShell) {
					t.Fatalf("err %v", err)
				}
				if len(c.entries) > 0 && !strings.Contains(err.Error(), "no git") {
					t.Errorf("reasons missing: %v", err)
				}
				return
			}
			if err != nil || e.ID != c.want {
				t.Fatalf("got %+v %v", e, err)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	cases := []struct {
		e    Entry
		goos string
		want []string
	}{
		{Entry{ID: IDBash, Path: "/bin/bash", Dialect: DialectPOSIX}, "linux", []string{"/bin/bash", "-lc", "echo hi"}},
		{Entry{ID: IDBash, Path: "/bin/bash", Dialect: DialectPOSIX}, "darwin", []string{"/bin/bash", "-lc", "echo hi"}},
		{Entry{ID: IDGitBash, Path: `C:\Git\bin\bash.exe`, Dialect: DialectPOSIX}, "windows", []string{`C:\Git\bin\bash.exe`, "-c", "echo hi"}},
		{Entry{ID: IDWindowsPowerShell, Path: "ps.exe", Dialect: DialectPowerShell}, "windows",
			[]string{"ps.exe", "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", "echo hi"}},
		{Entry{ID: IDCmd, Path: "cmd.exe", Dialect: DialectCmd}, "windows", []string{"cmd.exe", "/d", "/s", "/c", "echo hi"}},
	}
	for _, c := range cases {
		if got := Argv(c.e, c.goos, "echo hi"); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s/%s: got %q want %q", c.e.ID, c.goos, got, c.want)
		}
	}
}

func TestKnownIDAndLookup(t *testing.T) {
	for _, id := range []string{IDBash, IDGitBash, IDWindowsPowerShell, IDCmd} {
		if !KnownID(id) {
			t.Errorf("%s unknown", id)
		}
	}
	for _, id := range []string{"", "zsh", "/bin/bash", "Bash"} {
		if KnownID(id) {
			t.Errorf("%q known", id)
		}
	}
	if _, ok := Lookup(nil, IDBash); ok {
		t.Error("lookup in empty")
	}
}

func TestWinPathHelpers(t *testing.T) {
	if got := gitBashFromGit(`C:\Git\cmd\git.exe`); !reflect.DeepEqual(got, []string{`C:\Git\bin\bash.exe`, `C:\Git\usr\bin\bash.exe`}) {
		t.Errorf("got %q", got)
	}
	if got := gitBashFromGit(`C:\tools\git.exe`); got != nil {
		t.Errorf("unrelated dir gave %q", got)
	}
	for p, want := range map[string]bool{`C:\x`: true, `c:/x`: true, `\\srv\share`: true, `x\y`: false, `C:x`: false, "": false} {
		if isAbsFor("windows", p) != want {
			t.Errorf("isAbs(%q) != %v", p, want)
		}
	}
}
