package hostcore

import (
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// DefaultSensitivePaths is the built-in deny list (R-PATH-10): credentials
// and key stores that no tool call may read or write, whatever the mode.
var DefaultSensitivePaths = []string{
	"~/.ssh", "~/.ssh/**",
	"~/.aws", "~/.aws/**",
	"~/.gnupg", "~/.gnupg/**",
	"~/.azure/**", "~/.config/gcloud/**", "~/.kube/config", "~/.docker/config.json",
	"~/.netrc", "~/.pgpass", "~/.git-credentials", "~/.npmrc", "~/.pypirc",
	"~/.config/gh/hosts.yml", "~/.password-store/**", "~/.local/share/keyrings/**",
	"~/Library/Keychains", "~/Library/Keychains/**",
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d/**",
	"/etc/ssh/ssh_host_*_key", "/private/etc/sudoers", "/Library/Keychains/**",
}

// SensitiveList matches paths against deny patterns, folded for case and
// Unicode form, so that ~/.SSH or a decomposed name does not slip through,
// and decided on strings so that files that do not exist yet are covered.
type SensitiveList struct {
	pats []sensitivePattern
}

type sensitivePattern struct{ orig, folded string }

var folder = cases.Fold()

func foldPath(p string) string {
	return folder.String(norm.NFC.String(filepath.ToSlash(p)))
}

// NewSensitiveList expands ~ in each pattern (and only there: tool paths are
// never expanded) and folds it.
func NewSensitiveList(home string, patterns ...[]string) *SensitiveList {
	l := &SensitiveList{}
	for _, ps := range patterns {
		for _, p := range ps {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			e := p
			if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
				e = filepath.Join(home, p[1:])
			} else if strings.HasPrefix(p, "~") {
				continue // ~user is not supported; skip rather than match literally
			}
			l.pats = append(l.pats, sensitivePattern{orig: p, folded: foldPath(e)})
		}
	}
	return l
}

// Match reports the first pattern that matches any of the paths.
func (l *SensitiveList) Match(paths ...string) (string, bool) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		fp := foldPath(p)
		for _, pat := range l.pats {
			if ok, _ := doublestar.Match(pat.folded, fp); ok {
				return pat.orig, true
			}
		}
	}
	return "", false
}

// Patterns returns the configured patterns as written.
func (l *SensitiveList) Patterns() []string {
	out := make([]string, len(l.pats))
	for i, p := range l.pats {
		out[i] = p.orig
	}
	return out
}

// Under returns the patterns that could match something at or below dir
// (nil if none), so a walk pays for matching only where it can matter.
func (l *SensitiveList) Under(dir string) *SensitiveList {
	fd := foldPath(dir)
	out := &SensitiveList{}
	for _, p := range l.pats {
		prefix := p.folded
		if i := strings.IndexAny(prefix, "*?[{\\"); i >= 0 {
			prefix = prefix[:i]
		}
		prefix = strings.TrimSuffix(prefix, "/")
		if strings.HasPrefix(prefix, fd+"/") || prefix == fd || strings.HasPrefix(fd+"/", prefix+"/") || prefix == "" {
			out.pats = append(out.pats, p)
		}
	}
	if len(out.pats) == 0 {
		return nil
	}
	return out
}
