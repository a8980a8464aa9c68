package shell

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBashNotFound is wrapped by every FindBash failure, so a caller can map
// it to SHELL_NOT_FOUND while showing the error's own guidance text.
var ErrBashNotFound = errors.New("bash not found")

// unixBashPaths is the R-BASH-7 well-known order: system bash first, then
// Homebrew (Intel, Apple silicon, Linuxbrew), then PATH.
var unixBashPaths = []string{
	"/bin/bash",
	"/usr/bin/bash",
	"/usr/local/bin/bash",
	"/opt/homebrew/bin/bash",
	"/home/linuxbrew/.linuxbrew/bin/bash",
}

// FindBash implements R-BASH-7 discovery and returns the bash executable.
//
// PI_DESKTOP_BASH, when set, is the only candidate: an override that does
// not resolve is reported, never silently replaced by another bash. It must
// be an absolute path so the result cannot depend on the working directory.
func FindBash(env Env) (string, error) {
	env = env.filled()
	if v := env.Getenv("PI_DESKTOP_BASH"); v != "" {
		switch {
		case !isAbsFor(env.GOOS, v):
			return "", notFound(env.GOOS, fmt.Sprintf("PI_DESKTOP_BASH=%q is not an absolute path", v))
		case !env.IsExec(v):
			return "", notFound(env.GOOS, fmt.Sprintf("PI_DESKTOP_BASH=%q is not an executable file", v))
		}
		return v, nil
	}
	if env.GOOS == "windows" {
		return findGitBash(env)
	}
	for _, p := range unixBashPaths {
		if env.IsExec(p) {
			return p, nil
		}
	}
	if p, err := env.LookPath("bash"); err == nil && isAbsFor(env.GOOS, p) && env.IsExec(p) {
		return p, nil
	}
	return "", notFound(env.GOOS, "no bash in the well-known locations ("+strings.Join(unixBashPaths, ", ")+") or on PATH")
}

func findGitBash(env Env) (string, error) {
	// 1. Derive from git on PATH: the Git for Windows install that the user
	// actually runs is the best guess for the bash that matches it.
	if g, err := env.LookPath("git"); err == nil && isAbsFor("windows", g) {
		for _, c := range gitBashFromGit(g) {
			if env.IsExec(c) {
				return c, nil
			}
		}
	}
	// 2. Standard install directories (machine-wide, 32-bit, per-user).
	var tried []string
	for _, root := range []struct{ env, sub string }{
		{"ProgramFiles", "Git"},
		{"ProgramW6432", "Git"},
		{"ProgramFiles(x86)", "Git"},
		{"LocalAppData", `Programs\Git`},
	} {
		base := strings.TrimSpace(env.Getenv(root.env))
		if base == "" {
			continue
		}
		c := winJoin(base, root.sub, "bin", "bash.exe")
		tried = append(tried, c)
		if env.IsExec(c) {
			return c, nil
		}
	}
	// 3. PATH, skipping System32 (bash.exe there is the WSL launcher, which
	// runs commands in a Linux VM with other paths) and WindowsApps (the
	// Store's alias for the same launcher).
	for _, dir := range strings.Split(env.Getenv("PATH"), ";") {
		dir = strings.Trim(strings.TrimSpace(dir), `"`)
		if dir == "" || !isAbsFor("windows", dir) || isWSLDir(dir) {
			continue
		}
		if c := winJoin(dir, "bash.exe"); env.IsExec(c) {
			return c, nil
		}
	}
	detail := "no Git for Windows bash.exe next to git on PATH"
	if len(tried) > 0 {
		detail += ", in " + strings.Join(tried, ", ")
	}
	detail += " or on PATH (System32's WSL bash.exe is not used)"
	return "", notFound("windows", detail)
}

// gitBashFromGit maps a git.exe location to the bash.exe candidates of the
// same Git for Windows install:
//
//	…\Git\cmd\git.exe          → …\Git\bin\bash.exe
//	…\Git\bin\git.exe          → …\Git\bin\bash.exe
//	…\Git\mingw64\bin\git.exe  → …\Git\bin\bash.exe
//
// with …\Git\usr\bin\bash.exe as the second choice (bin\bash.exe is the
// launcher that sets up the MSYS environment, so it is preferred).
func gitBashFromGit(git string) []string {
	dir := winDir(git)
	root := ""
	switch strings.ToLower(winBase(dir)) {
	case "cmd", "bin":
		root = winDir(dir)
		switch strings.ToLower(winBase(root)) {
		case "mingw64", "mingw32", "clangarm64", "usr":
			root = winDir(root)
		}
	}
	if root == "" || root == dir {
		return nil
	}
	return []string{winJoin(root, "bin", "bash.exe"), winJoin(root, "usr", "bin", "bash.exe")}
}

func isWSLDir(dir string) bool {
	for _, part := range strings.FieldsFunc(dir, isWinSep) {
		switch strings.ToLower(part) {
		case "system32", "sysnative", "windowsapps":
			return true
		}
	}
	return false
}

func notFound(goos, detail string) error {
	return fmt.Errorf("%w: %s; %s", ErrBashNotFound, detail, bashGuidance(goos))
}

func bashGuidance(goos string) string {
	switch goos {
	case "windows":
		return "install Git for Windows (https://git-scm.com/download/win, or `winget install Git.Git`), " +
			"which provides Git Bash, or set PI_DESKTOP_BASH to the absolute path of a bash.exe"
	case "darwin":
		return "install bash (`brew install bash`) or set PI_DESKTOP_BASH to the absolute path of a bash executable"
	}
	return "install bash with your package manager (e.g. `apt install bash`, `dnf install bash`, `apk add bash`) " +
		"or set PI_DESKTOP_BASH to the absolute path of a bash executable"
}

// The windows path helpers below accept both separators and never consult
// runtime.GOOS, so windows discovery is testable on any host. Results use
// the separator the input already used (backslash by default).

func isWinSep(r rune) bool { return r == '\\' || r == '/' }

func isAbsFor(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if len(p) >= 3 && p[1] == ':' && isWinSep(rune(p[2])) && isLetter(p[0]) {
		return true // C:\x or C:/x
	}
	// \\server\share, or a rooted path on the current drive: neither depends
	// on the working directory's position within the drive.
	return len(p) >= 1 && isWinSep(rune(p[0]))
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func winSep(p string) string {
	if !strings.Contains(p, `\`) && strings.Contains(p, "/") {
		return "/"
	}
	return `\`
}

func winJoin(base string, elems ...string) string {
	sep := winSep(base)
	out := strings.TrimRightFunc(base, isWinSep)
	for _, e := range elems {
		if sep == "/" {
			e = strings.ReplaceAll(e, `\`, "/")
		}
		out += sep + e
	}
	return out
}

func winDir(p string) string {
	p = strings.TrimRightFunc(p, isWinSep)
	i := strings.LastIndexAny(p, `\/`)
	if i < 0 {
		return ""
	}
	return p[:i]
}

func winBase(p string) string {
	p = strings.TrimRightFunc(p, isWinSep)
	return p[strings.LastIndexAny(p, `\/`)+1:]
}
