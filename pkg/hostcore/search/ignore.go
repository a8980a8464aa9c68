package search

import (
	"bufio"
	"bytes"
	"io"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreFiles are read in every directory, lowest priority first, as
// ripgrep does (.rgignore beats .ignore beats .gitignore).
var ignoreFiles = [...]string{".gitignore", ".ignore", ".rgignore"}

// maxIgnoreFile bounds how much of one ignore file is read.
const maxIgnoreFile = 1 << 20

// ignorePattern wraps a go-git pattern with what we need to call it with
// git's semantics (see match).
type ignorePattern struct {
	p         gitignore.Pattern
	domainLen int  // path components of the directory holding the file
	glob      bool // has a '/' other than a trailing one: anchored
	allBelow  bool // ends in "/**": matches everything under a directory
}

// ignoreLevel is the patterns of one directory; parent levels have lower
// priority. Levels are immutable once built, so they are shared freely.
type ignoreLevel struct {
	parent *ignoreLevel
	pats   []ignorePattern
}

// parseIgnore parses one ignore file whose directory has components domain.
func parseIgnore(data []byte, domain []string) []ignorePattern {
	var out []ignorePattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		body := strings.TrimPrefix(line, "!")
		if !strings.HasSuffix(body, `\ `) {
			body = strings.TrimRight(body, " ")
		}
		body = strings.TrimSuffix(body, "/")
		if body == "" {
			continue
		}
		out = append(out, ignorePattern{
			p:         gitignore.ParsePattern(line, domain),
			domainLen: len(domain),
			glob:      strings.Contains(body, "/"),
			allBelow:  strings.HasSuffix(body, "/**"),
		})
	}
	return out
}

// match returns go-git's verdict for exactly path. go-git answers "does this
// pattern match path or one of its ancestors"; git asks only about path
// itself, because an excluded ancestor is never descended into. The walk
// decides every ancestor before its children, so we ask go-git only about
// the last component (slash-less patterns match a base name at any depth)
// or drop a glob verdict that really belongs to the parent. Without this,
// "!/keep" would re-include files under keep/ that "*.txt" excludes.
func (ip *ignorePattern) match(path []string, isDir bool, scratch *[]string) gitignore.MatchResult {
	if len(path) <= ip.domainLen {
		return gitignore.NoMatch
	}
	if !ip.glob {
		if len(path) == ip.domainLen+1 {
			return ip.p.Match(path, isDir)
		}
		s := append((*scratch)[:0], path[:ip.domainLen]...)
		s = append(s, path[len(path)-1])
		*scratch = s
		return ip.p.Match(s, isDir)
	}
	r := ip.p.Match(path, isDir)
	if r == gitignore.NoMatch || ip.allBelow || len(path) == ip.domainLen+1 {
		return r
	}
	if ip.p.Match(path[:len(path)-1], true) != gitignore.NoMatch {
		return gitignore.NoMatch
	}
	return r
}

// ignored reports whether path (components from the FS root) is excluded:
// the last matching pattern wins, deeper directories beat shallower ones.
func (l *ignoreLevel) ignored(path []string, isDir bool, scratch *[]string) bool {
	for lv := l; lv != nil; lv = lv.parent {
		for i := len(lv.pats) - 1; i >= 0; i-- {
			switch lv.pats[i].match(path, isDir, scratch) {
			case gitignore.Exclude:
				return true
			case gitignore.Include:
				return false
			}
		}
	}
	return false
}

// push returns the level for a directory holding pats (l itself if none).
func (l *ignoreLevel) push(pats []ignorePattern) *ignoreLevel {
	if len(pats) == 0 {
		return l
	}
	return &ignoreLevel{parent: l, pats: pats}
}

// readIgnoreFile reads an ignore file through fsys; a missing or unreadable
// file is no patterns (a permission error must not abort a search).
func readIgnoreFile(fsys fs.FS, name string, domain []string) []ignorePattern {
	f, err := fsys.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	if err != nil {
		return nil
	}
	return parseIgnore(data, domain)
}

// dirIgnores reads the ignore files of directory dir (components domain).
// has, when not nil, says which names exist, saving failed opens.
func dirIgnores(fsys fs.FS, dir string, domain []string, has func(string) bool) []ignorePattern {
	var pats []ignorePattern
	for _, name := range ignoreFiles {
		if has != nil && !has(name) {
			continue
		}
		pats = append(pats, readIgnoreFile(fsys, joinPath(dir, name), domain)...)
	}
	return pats
}

func joinPath(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

func splitPath(p string) []string {
	if p == "." || p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
