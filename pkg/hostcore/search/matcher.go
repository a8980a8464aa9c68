package search

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// matcher finds matching lines in a buffer of whole lines. The regexp is
// rewritten so that no match can cross a '\n' (see lineOnly), which lets us
// run it, or a literal prefilter, over a whole buffer at once instead of
// line by line: the cost of a non-matching file is one fast scan.
type matcher struct {
	re *regexp.Regexp
	// lit is a literal every match contains; nil when there is none.
	lit  []byte
	fold *foldLit // case-folded form of lit (lit is then lower-case ASCII)
	// whole: the pattern is exactly lit, so a prefilter hit is a match.
	whole bool
}

func newMatcher(pattern string, caseInsensitive bool) (*matcher, error) {
	flags := syntax.Perl
	if caseInsensitive {
		flags |= syntax.FoldCase
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	tree = tree.Simplify()
	m := &matcher{}
	if lit, fold, whole := requiredLiteral(tree); len(lit) > 0 {
		switch {
		case !fold:
			m.lit, m.whole = []byte(lit), whole
		case isASCII(lit):
			m.fold = newFoldLit(lit)
			m.lit, m.whole = m.fold.lit, whole
		}
	}
	if err := lineOnly(tree); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPattern, err)
	}
	m.re = re
	return m, nil
}

// lineOnly rewrites tree in place so that it matches within a line exactly
// as the original matches a line on its own: classes and '.' lose '\n',
// text anchors become line anchors, and '$' also allows a '\r' before the
// '\n' so CRLF files behave like LF ones. A literal newline can never match
// a single line, so it is refused, as ripgrep does.
func lineOnly(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return fmt.Errorf("%w: the pattern contains a line break, but the search is line by line", ErrBadPattern)
			}
		}
	case syntax.OpCharClass:
		re.Rune = withoutNewline(re.Rune)
		if len(re.Rune) == 0 {
			*re = syntax.Regexp{Op: syntax.OpNoMatch}
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText, syntax.OpEndLine:
		cr := &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{'\r'}}
		*re = syntax.Regexp{Op: syntax.OpConcat, Sub: []*syntax.Regexp{
			{Op: syntax.OpQuest, Sub: []*syntax.Regexp{cr}},
			{Op: syntax.OpEndLine},
		}}
		return nil
	}
	for _, sub := range re.Sub {
		if err := lineOnly(sub); err != nil {
			return err
		}
	}
	return nil
}

// withoutNewline removes '\n' from a class given as [lo, hi] rune pairs.
func withoutNewline(rs []rune) []rune {
	out := make([]rune, 0, len(rs)+2)
	for i := 0; i+1 < len(rs); i += 2 {
		lo, hi := rs[i], rs[i+1]
		if lo <= '\n' && '\n' <= hi {
			if lo < '\n' {
				out = append(out, lo, '\n'-1)
			}
			if hi > '\n' {
				out = append(out, '\n'+1, hi)
			}
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// requiredLiteral finds the longest literal that every match must contain,
// whether it is case-folded, and whether the pattern is that literal alone.
func requiredLiteral(re *syntax.Regexp) (lit string, fold, whole bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0 && hasLetter(re.Rune), true
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpPlus:
		lit, fold, _ = requiredLiteral(re.Sub[0])
		return lit, fold, false
	case syntax.OpRepeat:
		if re.Min >= 1 {
			lit, fold, _ = requiredLiteral(re.Sub[0])
		}
		return lit, fold, false
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			l, f, _ := requiredLiteral(sub)
			if len(l) > len(lit) || (len(l) == len(lit) && fold && !f) {
				lit, fold = l, f
			}
		}
		return lit, fold, false
	}
	return "", false, false
}

func hasLetter(rs []rune) bool {
	for _, r := range rs {
		if 'a' <= r|0x20 && r|0x20 <= 'z' || r >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// nextLine returns the bounds [start, end) (end excludes the '\n') of the
// first line of buf[from:limit] that matches, or ok=false. from must be a
// line start.
func (m *matcher) nextLine(buf []byte, from, limit int) (start, end int, ok bool) {
	useLit := m.lit != nil
	if m.fold != nil && m.fold.unsafeIn(buf[from:limit]) {
		useLit = false
	}
	for from < limit {
		var at int
		if useLit {
			var i int
			if m.fold != nil {
				i = m.fold.index(buf[from:limit])
			} else {
				i = bytes.Index(buf[from:limit], m.lit)
			}
			if i < 0 {
				return 0, 0, false
			}
			at = from + i
		} else {
			loc := m.re.FindIndex(buf[from:limit])
			if loc == nil {
				return 0, 0, false
			}
			at = from + loc[0]
			// An empty match just after the final '\n' is not a line.
			if at == limit && limit > 0 && buf[limit-1] == '\n' {
				return 0, 0, false
			}
		}
		start = from + bytes.LastIndexByte(buf[from:at], '\n') + 1
		end = limit
		if j := bytes.IndexByte(buf[at:limit], '\n'); j >= 0 {
			end = at + j
		}
		if !useLit || m.whole || m.re.Match(buf[start:end]) {
			return start, end, true
		}
		from = end + 1
	}
	return 0, 0, false
}
