// Package search implements the pure parts of the Read, Glob and Grep tools:
// a bounded window over a file, and ignore-aware, budgeted searches over an
// fs.FS. Every file access goes through the fs.FS the caller passes (an
// os.Root FS in production), which is what keeps the search contained; this
// package never touches the os package's path-based functions.
package search

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Budget bounds a tool result. Zero fields take the defaults of
// DefaultBudget, so a zero Budget is usable.
type Budget struct {
	MaxBytes     int // total result text
	MaxLines     int // result lines (Read) or items (Glob, Grep)
	MaxLineChars int // characters (runes) kept of any single line
}

// Defaults from SPEC §3.1: 48 KB or 2000 lines, lines clipped at 2000 chars.
const (
	defaultMaxBytes     = 48 * 1024
	defaultMaxLines     = 2000
	defaultMaxLineChars = 2000
)

// DefaultBudget returns the budget of SPEC §3.1.
func DefaultBudget() Budget {
	return Budget{MaxBytes: defaultMaxBytes, MaxLines: defaultMaxLines, MaxLineChars: defaultMaxLineChars}
}

func (b Budget) normalized() Budget {
	if b.MaxBytes <= 0 {
		b.MaxBytes = defaultMaxBytes
	}
	if b.MaxLines <= 0 {
		b.MaxLines = defaultMaxLines
	}
	if b.MaxLineChars <= 0 {
		b.MaxLineChars = defaultMaxLineChars
	}
	return b
}

// clipRunes returns the prefix of s holding at most n runes (an invalid byte
// counts as one rune) and whether anything was cut.
func clipRunes(s []byte, n int) ([]byte, bool) {
	if len(s) <= n { // fast path: n bytes are at most n runes
		return s, false
	}
	i, count := 0, 0
	for i < len(s) {
		if count == n {
			return s[:i], true
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRune(s[i:])
			i += size
		}
		count++
	}
	return s, false
}

// clipBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func clipBytes(s []byte, n int) []byte {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) { // invalid text: cut on the byte limit
		i = n
	}
	return s[:i]
}

func clippedNotice(n, limit int) string {
	if n == 0 {
		return ""
	}
	if n == 1 {
		return fmt.Sprintf("1 line clipped at %d characters", limit)
	}
	return fmt.Sprintf("%d lines clipped at %d characters", n, limit)
}

func joinNotice(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}
