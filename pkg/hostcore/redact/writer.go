package redact

import (
	"bytes"
	"io"
)

// maxLine bounds the writer's memory: a longer line is redacted in pieces
// (cut after a blank where possible, so a token is rarely split; a secret
// that straddles a cut can escape the rules).
const maxLine = 64 << 10

// NewWriter returns a writer that redacts what is written to it line by
// line before passing it on to w; a private-key block's body is hidden from
// its BEGIN line to its END line. For input made of whole lines the output
// is exactly String of the whole input, however the writes are split.
// Close writes any unterminated last line; it does not close w.
func NewWriter(w io.Writer) io.WriteCloser {
	return &writer{w: w}
}

type writer struct {
	w     io.Writer
	buf   []byte // the unterminated line so far
	inKey bool
	err   error
}

func (rw *writer) Write(p []byte) (int, error) {
	if rw.err != nil {
		return 0, rw.err
	}
	n := len(p)
	for len(p) > 0 && rw.err == nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			rw.buf = append(rw.buf, p...)
			for len(rw.buf) >= maxLine && rw.err == nil {
				cut := pieceEnd(rw.buf)
				rw.line(rw.buf[:cut], false)
				rw.buf = rw.buf[:copy(rw.buf, rw.buf[cut:])]
			}
			break
		}
		line := p[:i+1]
		if len(rw.buf) > 0 {
			rw.buf = append(rw.buf, line...)
			line = rw.buf
		}
		rw.line(line, true)
		rw.buf = rw.buf[:0]
		p = p[i+1:]
	}
	if rw.err != nil {
		return 0, rw.err
	}
	return n, nil
}

// pieceEnd picks where to cut an overlong line: after the last blank in
// its final 4 KiB, or at maxLine.
func pieceEnd(b []byte) int {
	if i := bytes.LastIndexAny(b[maxLine-4096:maxLine], " \t"); i >= 0 {
		return maxLine - 4096 + i + 1
	}
	return maxLine
}

// line redacts one line (with its '\n' when complete) and writes it.
// Clean lines outside a key block go through untouched, without copying.
func (rw *writer) line(b []byte, complete bool) {
	if !rw.inKey && len(dirtyLines(b)) == 0 {
		_, rw.err = rw.w.Write(b)
		return
	}
	s := string(b)
	end, _ := lineEnd(s, 0)
	if !complete && end < len(s) { // a piece ending in '\r' keeps it as text
		end = len(s)
	}
	out := processLine(s[:end], s[end:], &rw.inKey)
	if out != "" {
		_, rw.err = io.WriteString(rw.w, out)
	}
}

// Close writes the unterminated last line, if any.
func (rw *writer) Close() error {
	if rw.err == nil && len(rw.buf) > 0 {
		rw.line(rw.buf, true)
		rw.buf = rw.buf[:0]
	}
	return rw.err
}
