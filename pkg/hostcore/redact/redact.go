// Package redact hides secrets in text before it is stored or shown
// (SPEC R-TOOL-3, SECURITY.md "Secrets"): provider-prefixed tokens,
// private-key blocks, JWTs, passwords in URLs, Authorization header values
// and the values of secret-named settings. The secret is replaced by Mask;
// names, schemes, users and hosts stay so the text still reads.
//
// Redaction is line by line: no rule matches across a line break except a
// private-key block, whose body is hidden from its BEGIN line to its END
// line. That is what lets NewWriter stream command output and still give
// exactly what String gives on the whole text. Redacting twice is the same
// as redacting once.
package redact

import (
	"strings"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

// String returns s with its secrets replaced by Mask. Text without any
// trigger word (see needles) is returned as is, without allocating.
func String(s string) string {
	spans := dirtyLines(s)
	if len(spans) == 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	if strings.Contains(s, keyMarker) {
		// A key block hides clean lines too: walk every line.
		var inKey bool
		for start := 0; start < len(s); {
			end, next := lineEnd(s, start)
			out.WriteString(processLine(s[start:end], s[end:next], &inKey))
			start = next
		}
		return out.String()
	}
	prev := 0
	for _, sp := range spans {
		end, _ := lineEnd(s, sp)
		out.WriteString(s[prev:sp])
		out.WriteString(redactLine(s[sp:end]))
		prev = end
	}
	out.WriteString(s[prev:])
	return out.String()
}

// Bytes is String for a byte slice. It returns b itself when nothing needs
// redacting, and a new slice otherwise; b is never modified.
func Bytes(b []byte) []byte {
	if len(dirtyLines(b)) == 0 {
		return b
	}
	return []byte(String(string(b)))
}

// lineEnd returns the end of the line starting at start (before "\r\n" or
// "\n") and the start of the next line.
func lineEnd(s string, start int) (end, next int) {
	i := strings.IndexByte(s[start:], '\n')
	if i < 0 {
		end, next = len(s), len(s)
	} else {
		end, next = start+i, start+i+1
	}
	if end > start && s[end-1] == '\r' {
		end--
	}
	return end, next
}

// processLine redacts one line: content without its terminator term
// ("\n", "\r\n" or "" at the end). inKey carries the private-key state from
// line to line. It returns the output for the line with its terminator, or
// "" for a line inside a key body.
func processLine(content, term string, inKey *bool) string {
	if *inKey {
		loc := rx().keyFooter.FindStringIndex(content)
		if loc == nil {
			return ""
		}
		*inKey = false
		content = content[loc[0]:]
	}
	if !strings.Contains(content, keyMarker) {
		return redactLine(content) + term
	}
	// Replace the bodies of blocks that end on this line; a block that does
	// not end here hides everything up to its END line.
	for pos := 0; ; {
		h := rx().keyHeader.FindStringIndex(content[pos:])
		if h == nil {
			break
		}
		hEnd := pos + h[1]
		f := rx().keyFooter.FindStringIndex(content[hEnd:])
		if f == nil {
			*inKey = true
			return redactLine(content[:hEnd]) + term + Mask + term
		}
		content = content[:hEnd] + Mask + content[hEnd+f[0]:]
		pos = hEnd + len(Mask) + (f[1] - f[0])
	}
	return redactLine(content) + term
}
