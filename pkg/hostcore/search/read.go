package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrBinary reports content that looks binary (TOOL_BINARY_CONTENT).
var ErrBinary = errors.New("binary content")

// binaryPrefix is how much of a file IsBinary looks at (SPEC §3.1: 4 KB).
const binaryPrefix = 4096

// DefaultReadLimit is Read's default line count (SPEC §3.1).
const DefaultReadLimit = 500

// Window is one Read result: lines [Offset, Offset+LineCount) of the file.
type Window struct {
	Content    string // byte-faithful lines, terminators kept, no line numbers
	Offset     int    // 0-based index of the first line
	LineCount  int
	TotalLines int   // every line of the file; a final line without newline counts
	FileBytes  int64 // bytes read from r
	Truncated  bool  // the budget cut the window short or clipped a line
	NextOffset *int  // set when lines remain after the window
	Notice     string
}

// IsBinary reports whether prefix (the first 4 KiB are looked at) holds a NUL
// byte or is more than 30% non-printable. Valid UTF-8 of any script is
// printable; a rune cut off by the end of prefix is not held against it.
func IsBinary(prefix []byte) bool {
	if len(prefix) > binaryPrefix {
		prefix = prefix[:binaryPrefix]
	}
	if len(prefix) == 0 {
		return false
	}
	if bytes.IndexByte(prefix, 0) >= 0 {
		return true
	}
	// This runs on every file Grep opens. Text rarely holds a control byte
	// other than LF, tab or CR, so first ask, 8 bytes at a time, whether
	// there is any; count them one by one only if so.
	bad := 0
	if hasControl(prefix) {
		for _, c := range prefix {
			bad += int(controlByte[c])
		}
	}
	// Drop a rune cut by the 4 KiB boundary, then look at non-ASCII bytes
	// only when they are not valid UTF-8 (rare: Latin-1 text, binaries).
	body := prefix
	for i := len(body) - 1; i >= 0 && i >= len(body)-utf8.UTFMax; i-- {
		if utf8.RuneStart(body[i]) {
			if !utf8.FullRune(body[i:]) {
				body = body[:i]
			}
			break
		}
	}
	if !utf8.Valid(body) {
		for i := 0; i < len(body); {
			if body[i] < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && size == 1 {
				bad++
			}
			i += size
		}
	}
	return bad*10 > len(prefix)*3
}

const lsb, msb = 0x0101010101010101, 0x8080808080808080

// below returns a word with bit 7 set in each byte of x that is < n
// (1 <= n <= 0x80); exact per byte, no carry crosses bytes.
func below(x, n uint64) uint64 {
	return ^((x &^ msb) + (0x80-n)*lsb) &^ x & msb
}

// hasControl reports whether p may hold a byte that controlByte counts:
// it is exact except that VT, FF, BS and ESC also answer true.
func hasControl(p []byte) bool {
	for len(p) >= 8 {
		x := binary.LittleEndian.Uint64(p)
		ctl := below(x, 0x20)
		if ctl != 0 { // most often a newline or tab: drop those
			ctl &^= below(x^('\n'*lsb), 1) | below(x^('\t'*lsb), 1) | below(x^('\r'*lsb), 1)
		}
		del := ((x &^ msb) + lsb) &^ x & msb // bytes == 0x7f
		if ctl|del != 0 {
			return true
		}
		p = p[8:]
	}
	for _, c := range p {
		if controlByte[c] != 0 {
			return true
		}
	}
	return false
}

// controlByte marks the ASCII bytes that are not text. Tab, LF, VT, FF, CR,
// BS and ESC (coloured logs) are text.
var controlByte = func() (t [256]uint8) {
	for c := 0; c < 0x20; c++ {
		switch c {
		case '\t', '\n', '\v', '\f', '\r', '\b', 0x1b:
		default:
			t[c] = 1
		}
	}
	t[0x7f] = 1
	return t
}()

// readChunk bounds the memory of ReadWindow: lines longer than this arrive
// in pieces, and only the part kept after clipping is ever held.
const readChunk = 64 * 1024

// ReadWindow streams r and returns lines [offset, offset+limit) within budget
// b (zero fields = defaults). limit <= 0 means DefaultReadLimit. Lines keep
// their terminators ("\r\n" stays) and a UTF-8 BOM stays in the first line,
// so the content is byte-faithful except where a line is clipped at
// b.MaxLineChars runes. The window holds whole lines only and stops before a
// line that would pass b.MaxBytes or b.MaxLines; a single first line longer
// than b.MaxBytes is cut at b.MaxBytes instead. The rest of r is read (not
// kept) to count TotalLines. Returns ErrBinary for binary content and read
// errors wrapped.
func ReadWindow(r io.Reader, offset, limit int, b Budget) (*Window, error) {
	b = b.normalized()
	if offset < 0 {
		offset = 0
	}
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	br := bufio.NewReaderSize(r, readChunk)
	head, err := br.Peek(binaryPrefix)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("read: %w", err)
	}
	if IsBinary(head) {
		return nil, ErrBinary
	}

	w := &Window{Offset: offset}
	var (
		content  bytes.Buffer
		line     []byte                           // kept part of the current line, without its '\n'
		keepMax  = b.MaxLineChars*utf8.UTFMax + 1 // enough for MaxLineChars runes and a '\r'
		lineIdx  int                              // index of the line being read
		inLine   bool                             // bytes of lineIdx seen
		overflow bool                             // line holds only a prefix of the line
		last     byte                             // last byte of the line before '\n'
		closed   bool                             // the window is complete
		cutShort bool                             // the budget, not limit, closed it
		cutLine  bool                             // the first line was cut at MaxBytes
		clipped  int
		next     = -1
	)
	closeAt := func(idx int, byBudget bool) {
		closed, next = true, idx
		cutShort = cutShort || byBudget
	}
	// finish handles the end of line lineIdx; nl says it ended with '\n'.
	finish := func(nl bool) {
		defer func() { line, inLine, overflow, last = line[:0], false, false, 0 }()
		if closed || lineIdx < offset {
			return
		}
		text, term := line, ""
		if nl {
			term = "\n"
			if last == '\r' {
				term = "\r\n"
				if !overflow { // the kept text ends with that '\r'
					text = text[:len(text)-1]
				}
			}
		}
		if t, cut := clipRunes(text, b.MaxLineChars); cut {
			text = t
			clipped++
		}
		size := len(text) + len(term)
		switch {
		case w.LineCount >= b.MaxLines:
			closeAt(lineIdx, true)
			return
		case w.LineCount == 0 && size > b.MaxBytes:
			// A lone line longer than the budget is the one partial line allowed.
			content.Write(clipBytes(text, b.MaxBytes))
			w.LineCount++
			cutLine = true
			closeAt(lineIdx+1, true)
			return
		case content.Len()+size > b.MaxBytes:
			closeAt(lineIdx, true)
			return
		}
		content.Write(text)
		content.WriteString(term)
		w.LineCount++
		if w.LineCount == limit {
			closeAt(lineIdx+1, false)
		}
	}

	for {
		piece, err := br.ReadSlice('\n')
		w.FileBytes += int64(len(piece))
		if len(piece) > 0 {
			inLine = true
			nl := piece[len(piece)-1] == '\n'
			body := piece
			if nl {
				body = piece[:len(piece)-1]
			}
			if len(body) > 0 {
				last = body[len(body)-1]
			}
			if !closed && lineIdx >= offset {
				if room := keepMax - len(line); len(body) > room {
					body, overflow = body[:room], true
				}
				line = append(line, body...)
			}
			if nl {
				finish(true)
				lineIdx++
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			if inLine {
				finish(false)
				lineIdx++
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
	}

	w.Content = content.String()
	w.TotalLines = lineIdx
	if next >= 0 && next < w.TotalLines {
		n := next
		w.NextOffset = &n
	}
	w.Truncated = cutShort || clipped > 0
	var more string
	switch {
	case w.TotalLines == 0:
		more = "empty file"
	case offset >= w.TotalLines:
		more = fmt.Sprintf("offset %d is past the end of the file (%d lines)", offset, w.TotalLines)
	case w.NextOffset != nil && cutShort:
		more = fmt.Sprintf("output budget reached: showing lines %d-%d of %d; continue with offset %d",
			offset+1, offset+w.LineCount, w.TotalLines, *w.NextOffset)
	case w.NextOffset != nil:
		more = fmt.Sprintf("showing lines %d-%d of %d; continue with offset %d",
			offset+1, offset+w.LineCount, w.TotalLines, *w.NextOffset)
	}
	var cut string
	if cutLine {
		cut = fmt.Sprintf("line %d is longer than the %d-byte budget and was cut", offset+1, b.MaxBytes)
	}
	w.Notice = joinNotice(cut, more, clippedNotice(clipped, b.MaxLineChars))
	return w, nil
}
