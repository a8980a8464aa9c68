package review

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
)

const (
	contextLines = 3
	sniffLen     = 8 << 10 // bytes looked at for NUL / invalid UTF-8
	// maxCountLines bounds the memory of the cheap count for oversized
	// files (8 bytes a line); above it only the line-count delta is given.
	maxCountLines = 1 << 22
)

// Diff computes hunks (3 lines of context), additions and deletions between
// two byte slices.
//
// Binary (NUL or invalid UTF-8 in the first 8 KiB of either side) gives
// binary=true and nothing else. For content that is diffed, the whole of
// both sides must be valid UTF-8 too, or it is binary: the hunks are stored
// as JSON strings, which cannot carry invalid UTF-8 byte-exactly.
//
// Lines are compared with their terminators, so "\r\n" vs "\n" and a missing
// final newline are changes; Line.Text never holds "\r\n" (see Line.EOL).
func Diff(before, after []byte, lim Limits) (hunks []Hunk, additions, deletions int, binary, truncated bool) {
	lim = lim.withDefaults()
	if looksBinary(before) || looksBinary(after) {
		return nil, 0, 0, true, false
	}
	if len(before) > lim.MaxDiffBytes || len(after) > lim.MaxDiffBytes {
		additions, deletions = roughCounts(before, after)
		return nil, additions, deletions, false, true
	}
	if !utf8.Valid(before) || !utf8.Valid(after) {
		return nil, 0, 0, true, false
	}
	if bytes.Equal(before, after) {
		return nil, 0, 0, false, false
	}
	a, b := splitLines(string(before)), splitLines(string(after))
	diffs := lcs.DiffLines(a, b)
	for _, d := range diffs {
		deletions += d.End - d.Start
		additions += d.ReplEnd - d.ReplStart
	}
	hunks, truncated = buildHunks(a, b, diffs, lim.MaxHunkLines)
	return hunks, additions, deletions, false, truncated
}

// looksBinary sniffs the head only, like git: cheap on any size.
func looksBinary(b []byte) bool {
	head := b[:min(len(b), sniffLen)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(b) > sniffLen {
		// The cut may split a rune; an incomplete one at the edge is not an error.
		for i := len(head) - 1; i >= len(head)-utf8.UTFMax && i >= 0; i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return !utf8.Valid(head)
}

// splitLines cuts s into lines that keep their terminator, so joining them
// gives s back and equal lines mean equal bytes.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// mkLine splits a raw line into Text and EOL.
func mkLine(kind, raw string) Line {
	switch {
	case strings.HasSuffix(raw, "\r\n"):
		return Line{Kind: kind, Text: raw[:len(raw)-2], EOL: EOLCRLF}
	case strings.HasSuffix(raw, "\n"):
		return Line{Kind: kind, Text: raw[:len(raw)-1]}
	default:
		return Line{Kind: kind, Text: raw, EOL: EOLNone}
	}
}

// raw is the inverse of mkLine.
func (l Line) raw() (string, error) {
	switch l.EOL {
	case EOLLF:
		return l.Text + "\n", nil
	case EOLCRLF:
		return l.Text + "\r\n", nil
	case EOLNone:
		return l.Text, nil
	}
	return "", fmt.Errorf("review: unknown line ending %q", l.EOL)
}

// buildHunks groups the LCS edits into hunks with contextLines of context,
// merging edits whose gap is at most two contexts (as diff -u does). It
// stops building at maxLines lines, so a file rewritten end to end costs
// the cap in memory, not a Line per line of the file; the hunk that crosses
// the cap is cut and its header recomputed, so it is still a valid hunk.
func buildHunks(a, b []string, diffs []lcs.Diff, maxLines int) (hunks []Hunk, truncated bool) {
	budget := maxLines
	for i := 0; i < len(diffs); {
		j := i
		for j+1 < len(diffs) && diffs[j+1].Start-diffs[j].End <= 2*contextLines {
			j++
		}
		aStart := max(0, diffs[i].Start-contextLines)
		bStart := diffs[i].ReplStart - (diffs[i].Start - aStart)
		aEnd := min(len(a), diffs[j].End+contextLines)
		bEnd := diffs[j].ReplEnd + (aEnd - diffs[j].End)
		var lines []Line
		emit := func(kind string, ss []string) {
			for _, s := range ss {
				if len(lines) == budget {
					truncated = true
					return
				}
				lines = append(lines, mkLine(kind, s))
			}
		}
		pos := aStart
		for _, d := range diffs[i : j+1] {
			emit(KindContext, a[pos:d.Start])
			emit(KindDel, a[d.Start:d.End])
			emit(KindAdd, b[d.ReplStart:d.ReplEnd])
			pos = d.End
		}
		emit(KindContext, a[pos:aEnd])
		if truncated {
			if len(lines) > 0 {
				hunks = append(hunks, cutHunk(aStart, bStart, lines))
			}
			return hunks, true
		}
		h := Hunk{OldLines: aEnd - aStart, NewLines: bEnd - bStart, Lines: lines}
		h.OldStart, h.NewStart = hunkStart(aStart, h.OldLines), hunkStart(bStart, h.NewLines)
		hunks = append(hunks, h)
		budget -= len(lines)
		i = j + 1
	}
	return hunks, false
}

// cutHunk makes a hunk of the first lines of a longer one, counting its
// sides from the lines kept.
func cutHunk(aStart, bStart int, lines []Line) Hunk {
	h := Hunk{Lines: lines}
	for _, l := range lines {
		if l.Kind != KindAdd {
			h.OldLines++
		}
		if l.Kind != KindDel {
			h.NewLines++
		}
	}
	h.OldStart, h.NewStart = hunkStart(aStart, h.OldLines), hunkStart(bStart, h.NewLines)
	return h
}

// hunkStart converts a 0-based first line to the GNU header convention.
func hunkStart(first0, n int) int {
	if n == 0 {
		return first0
	}
	return first0 + 1
}

// roughCounts estimates additions/deletions for oversized content without an
// LCS: trim the common head and tail, then compare the middle lines as
// multisets (by hash). That is a lower bound of the real counts and costs one
// pass plus a sort. Too many lines: fall back to the line-count delta.
func roughCounts(before, after []byte) (additions, deletions int) {
	p := commonPrefixLines(before, after)
	before, after = before[p:], after[p:]
	s := commonSuffixLines(before, after)
	before, after = before[:len(before)-s], after[:len(after)-s]
	na, nb := countLines(before), countLines(after)
	if na > maxCountLines || nb > maxCountLines {
		return max(0, nb-na), max(0, na-nb)
	}
	seed := maphash.MakeSeed()
	ha, hb := lineHashes(seed, before, na), lineHashes(seed, after, nb)
	slices.Sort(ha)
	slices.Sort(hb)
	i, j := 0, 0
	for i < len(ha) && j < len(hb) {
		switch {
		case ha[i] == hb[j]:
			i, j = i+1, j+1
		case ha[i] < hb[j]:
			deletions, i = deletions+1, i+1
		default:
			additions, j = additions+1, j+1
		}
	}
	return additions + len(hb) - j, deletions + len(ha) - i
}

func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func lineHashes(seed maphash.Seed, b []byte, n int) []uint64 {
	hs := make([]uint64, 0, n)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n') + 1
		if i == 0 {
			i = len(b)
		}
		hs = append(hs, maphash.Bytes(seed, b[:i]))
		b = b[i:]
	}
	return hs
}

// commonPrefixLines is the byte length of the common prefix cut back to the
// last whole line both sides share.
func commonPrefixLines(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return i
	}
	return bytes.LastIndexByte(a[:i], '\n') + 1
}

// commonSuffixLines is the byte length of the common suffix starting at a
// line boundary on both sides.
func commonSuffixLines(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	for i > 0 {
		ai, bi := len(a)-i, len(b)-i
		if (ai == 0 || a[ai-1] == '\n') && (bi == 0 || b[bi-1] == '\n') {
			return i
		}
		i--
	}
	return 0
}

var errApply = errors.New("review: hunks do not apply")

// Apply applies hunks (as produced by Diff, not binary or truncated) to
// before and returns the result; it checks every context and deleted line
// and every header count, so a hunk that does not fit is an error.
func Apply(before []byte, hunks []Hunk) ([]byte, error) {
	lines := splitLines(string(before))
	out := make([]byte, 0, len(before))
	pos, outLines := 0, 0 // next unread line of before; lines written
	fail := func(h int, format string, args ...any) error {
		return fmt.Errorf("%w: hunk %d: %s", errApply, h+1, fmt.Sprintf(format, args...))
	}
	for hi, h := range hunks {
		start := h.OldStart - 1
		if h.OldLines == 0 {
			start = h.OldStart
		}
		if start < pos || start > len(lines) {
			return nil, fail(hi, "old start %d out of order or range", h.OldStart)
		}
		for ; pos < start; pos++ {
			out = append(out, lines[pos]...)
			outLines++
		}
		if want := hunkStart(outLines, h.NewLines); h.NewStart != want {
			return nil, fail(hi, "new start %d, want %d", h.NewStart, want)
		}
		oldN, newN := 0, 0
		for _, l := range h.Lines {
			r, err := l.raw()
			if err != nil {
				return nil, fail(hi, "%v", err)
			}
			switch l.Kind {
			case KindContext, KindDel:
				if pos >= len(lines) || lines[pos] != r {
					return nil, fail(hi, "line %d does not match", pos+1)
				}
				pos++
				oldN++
				if l.Kind == KindContext {
					out = append(out, r...)
					outLines++
					newN++
				}
			case KindAdd:
				out = append(out, r...)
				outLines++
				newN++
			default:
				return nil, fail(hi, "unknown line kind %q", l.Kind)
			}
		}
		if oldN != h.OldLines || newN != h.NewLines {
			return nil, fail(hi, "counts -%d +%d, header says -%d +%d", oldN, newN, h.OldLines, h.NewLines)
		}
	}
	for ; pos < len(lines); pos++ {
		out = append(out, lines[pos]...)
	}
	return out, nil
}
