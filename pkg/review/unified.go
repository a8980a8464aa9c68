package review

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ANSI colours as git uses them: bold headers, cyan @@, red -, green +.
const (
	ansiReset = "\x1b[m"
	ansiBold  = "\x1b[1m"
	ansiCyan  = "\x1b[36m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiDim   = "\x1b[2m"
)

// Unified renders a unified diff of before/after under the default limits
// ("" when they are equal). Without color the output is byte-faithful: line
// terminators are the file's own ("\r\n" stays), so a text diff is a valid
// patch. With color the output is meant for a terminal: control characters
// from the file are shown in caret notation (a file must not drive the
// terminal) and a line-ending difference is shown as ^M.
func Unified(path string, before, after []byte, color bool) string {
	hunks, add, del, bin, trunc := Diff(before, after, Limits{})
	return render("a/"+path, "b/"+path, hunks, add, del, bin, trunc, color)
}

// UnifiedFromHunks renders a Change's stored hunks (used when the bytes are
// gone). Created and deleted files get /dev/null on the missing side, as git
// prints them.
func UnifiedFromHunks(c Change, color bool) string {
	from, to := "a/"+c.Path, "b/"+c.Path
	switch c.Status {
	case StatusAdded:
		from = "/dev/null"
	case StatusDeleted:
		to = "/dev/null"
	}
	return render(from, to, c.Hunks, c.Additions, c.Deletions, c.Binary, c.Truncated, color)
}

func render(from, to string, hunks []Hunk, add, del int, binary, truncated, color bool) string {
	var b strings.Builder
	paint := func(code, s string) {
		if color {
			b.WriteString(code + s + ansiReset)
		} else {
			b.WriteString(s)
		}
	}
	from, to = quotePath(from), quotePath(to)
	if binary {
		paint(ansiBold, fmt.Sprintf("Binary files %s and %s differ", from, to))
		b.WriteByte('\n')
		return b.String()
	}
	if len(hunks) == 0 && !truncated {
		return ""
	}
	paint(ansiBold, "--- "+from)
	b.WriteByte('\n')
	paint(ansiBold, "+++ "+to)
	b.WriteByte('\n')
	for _, h := range hunks {
		paint(ansiCyan, fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.OldStart, h.OldLines), hunkRange(h.NewStart, h.NewLines)))
		b.WriteByte('\n')
		mark := color && mixedEOL(h)
		for _, l := range h.Lines {
			prefix, code := " ", ""
			switch l.Kind {
			case KindAdd:
				prefix, code = "+", ansiGreen
			case KindDel:
				prefix, code = "-", ansiRed
			}
			if !color {
				b.WriteString(prefix + l.Text)
				if l.EOL == EOLCRLF {
					b.WriteByte('\r')
				}
			} else {
				text := prefix + caret(l.Text)
				if code == "" {
					b.WriteString(text)
				} else {
					paint(code, text)
				}
				if mark && l.EOL == EOLCRLF && code != "" {
					paint(ansiDim, "^M")
				}
			}
			b.WriteByte('\n')
			if l.EOL == EOLNone {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	if truncated {
		b.WriteString(fmt.Sprintf("\\ Diff truncated: %d additions, %d deletions in total\n", add, del))
	}
	return b.String()
}

// hunkRange prints "start,count" the way GNU diff does (",1" omitted).
func hunkRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// mixedEOL reports whether a hunk's changed lines disagree on "\n" vs
// "\r\n"; only then is ^M worth the noise.
func mixedEOL(h Hunk) bool {
	crlf, lf := false, false
	for _, l := range h.Lines {
		if l.Kind == KindContext {
			continue
		}
		switch l.EOL {
		case EOLCRLF:
			crlf = true
		case EOLLF:
			lf = true
		}
	}
	return crlf && lf
}

// quotePath quotes a label that holds characters which would break the
// header line (a newline in a file name could forge hunks), like git does.
func quotePath(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			return strconv.Quote(p)
		}
	}
	return p
}

// caret shows C0/C1 control characters (tab excepted) in caret or \u form.
func caret(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !isControl(r):
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + 64)
		case r == 0x7f:
			b.WriteString("^?")
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0)
}
