package search

import (
	"bytes"

	"github.com/pi-cli/pi/internal/ascii"
)

// foldLit finds an ASCII literal case-insensitively at close to
// bytes.IndexByte speed: it scans for the literal's rarest byte (both cases
// of it, with two IndexByte scans) and verifies each candidate with an ASCII
// case-folded compare. That avoids lower-casing every buffer.
type foldLit struct {
	lit    []byte // lower-case
	off    int    // index in lit of the scanned byte
	lo, up byte   // the scanned byte in both cases (equal if not a letter)
	ks     bool   // lit has k or s, which Unicode folds from non-ASCII runes
}

func newFoldLit(s string) *foldLit {
	f := &foldLit{lit: make([]byte, len(s))}
	best := 1 << 30
	for i := 0; i < len(s); i++ {
		c := ascii.Lower(s[i])
		f.lit[i] = c
		if c == 'k' || c == 's' {
			f.ks = true
		}
		cost := byteFreq(c)
		if u := ascii.Upper(c); u != c {
			cost += byteFreq(u)
		}
		if cost < best {
			best, f.off, f.lo, f.up = cost, i, c, ascii.Upper(c)
		}
	}
	return f
}

// unsafeIn reports whether b holds the KELVIN SIGN or LONG S, which fold to
// k and s under Unicode rules but not under ASCII ones: the prefilter would
// miss them, so the caller falls back to the regexp for that buffer.
func (f *foldLit) unsafeIn(b []byte) bool {
	return f.ks && (bytes.Contains(b, []byte("\u212a")) || bytes.Contains(b, []byte("\u017f")))
}

// index returns the first case-insensitive occurrence of f.lit in h, or -1.
func (f *foldLit) index(h []byte) int {
	n := len(f.lit)
	pLo, pUp := -2, -2 // next positions of lo / up; -2 unknown, -1 none
	from := f.off
	for {
		if pLo != -1 && pLo < from {
			pLo = indexFrom(h, f.lo, from)
		}
		if f.up == f.lo {
			pUp = pLo
		} else if pUp != -1 && pUp < from {
			pUp = indexFrom(h, f.up, from)
		}
		p := pLo
		if p == -1 || (pUp != -1 && pUp < p) {
			p = pUp
		}
		if p == -1 {
			return -1
		}
		if start := p - f.off; start+n <= len(h) && equalFoldASCII(h[start:start+n], f.lit) {
			return start
		}
		from = p + 1
	}
}

func indexFrom(h []byte, c byte, from int) int {
	if from >= len(h) {
		return -1
	}
	i := bytes.IndexByte(h[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

// equalFoldASCII compares a to the lower-case lit, folding ASCII only.
func equalFoldASCII(a, lit []byte) bool {
	for i, c := range a {
		if ascii.Lower(c) != lit[i] {
			return false
		}
	}
	return true
}

// byteFreq is a rough frequency rank of a byte in source code and prose;
// only the order matters. Rarer bytes make fewer false candidates.
func byteFreq(c byte) int {
	switch {
	case c == ' ' || c == '\t':
		return 100
	case 'a' <= c && c <= 'z':
		return letterFreq[c-'a']
	case 'A' <= c && c <= 'Z':
		return letterFreq[c-'A'] / 3
	case '0' <= c && c <= '9':
		return 12
	case bytes.IndexByte([]byte("()._,;:\"=/{}*-"), c) >= 0:
		return 30
	default:
		return 8
	}
}

var letterFreq = [26]int{
	80, 20, 55, 50, 90, 40, 30, 55, 76, 5, 10, 60, 40, // a..m
	75, 78, 35, 3, 70, 72, 85, 45, 15, 25, 8, 25, 3, // n..z
}
