package shell

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// spillSeq makes spill names unique within the process even when two
// streams spill in the same millisecond.
var spillSeq atomic.Uint64

// sink receives one (already filtered) stream. It keeps the whole stream in
// memory only while it fits Keep; once it cannot fit, it keeps just the end
// the caller wants (head: first bytes; tail: a ring of the last bytes) and
// sends everything to the spill file. Memory is therefore bounded by the
// keep limit whatever the child prints, and Write never fails, so the pipe
// is always drained.
type sink struct {
	tail     bool   // stderr keeps its tail, stdout its head
	stream   string // "stdout" / "stderr", used in names and the marker
	limBytes int
	limLines int
	live     io.Writer
	liveErr  error

	total int64
	nl    int64
	last  byte
	over  bool   // the stream no longer fits Keep: it will be truncated
	buf   []byte // the whole stream while !over; afterwards the head (head mode)
	ring  *ring  // the last limBytes+1 bytes (tail mode, after over)

	spillDir   string
	spillLabel string
	spillF     *os.File
	spillW     *bufio.Writer
	spillPath  string
	spillErr   error
}

func newSink(stream string, tail bool, keep StreamLimits, capture int, spillDir, label string, live io.Writer) *sink {
	lb := keep.Bytes
	if capture > 1 && lb > capture-1 {
		lb = capture - 1 // Capture bounds what one stream may hold in memory
	}
	return &sink{
		tail: tail, stream: stream, limBytes: max(lb, 1), limLines: max(keep.Lines, 1),
		live: live, spillDir: spillDir, spillLabel: label,
	}
}

func (s *sink) lineCount() int64 {
	if s.total > 0 && s.last != '\n' {
		return s.nl + 1 // an unterminated last line is still a line
	}
	return s.nl
}

func (s *sink) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	if s.live != nil && s.liveErr == nil {
		// A failing live copy (closed terminal) must not stop capture.
		if _, err := s.live.Write(p); err != nil {
			s.liveErr = err
		}
	}
	s.total += int64(n)
	s.nl += int64(bytes.Count(p, []byte{'\n'}))
	s.last = p[n-1]
	if !s.over {
		if s.total <= int64(s.limBytes) && s.lineCount() <= int64(s.limLines) {
			s.buf = appendBounded(s.buf, p, s.limBytes)
			return n, nil
		}
		// First write past Keep: the spill must hold the stream from its
		// first byte, so what was buffered goes out before p.
		s.over = true
		s.spillStart()
		s.spillWrite(s.buf)
		if s.tail {
			s.ring = newRing(s.limBytes + 1)
			s.ring.write(s.buf)
			s.buf = nil
		}
	}
	s.spillWrite(p)
	if s.tail {
		s.ring.write(p)
	} else if room := s.limBytes - len(s.buf); room > 0 {
		s.buf = appendBounded(s.buf, p[:min(room, n)], s.limBytes)
	}
	return n, nil
}

// appendBounded grows b without append's doubling past limit, so a head
// buffer never holds more than limit bytes of capacity.
func appendBounded(b, p []byte, limit int) []byte {
	if need := len(b) + len(p); need > cap(b) {
		c := min(max(2*cap(b), need, 4096), max(limit, need))
		nb := make([]byte, len(b), c)
		copy(nb, b)
		b = nb
	}
	return append(b, p...)
}

func (s *sink) spillStart() {
	if s.spillDir == "" || s.spillF != nil || s.spillErr != nil {
		return
	}
	if err := os.MkdirAll(s.spillDir, 0o700); err != nil {
		s.spillErr = err
		return
	}
	label := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_' // a label must never move the file out of SpillDir
		}
		return r
	}, s.spillLabel)
	if label == "" {
		label = "output"
	}
	name := fmt.Sprintf("%s-%s-%d-%d.log", label, s.stream, time.Now().UnixMilli(), spillSeq.Add(1))
	p := filepath.Join(s.spillDir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		s.spillErr = err
		return
	}
	s.spillF, s.spillW, s.spillPath = f, bufio.NewWriterSize(f, 64*1024), p
}

// spillWrite records the first error and then drops further data: a full
// disk must not kill the child or stall the drain.
func (s *sink) spillWrite(p []byte) {
	if s.spillW == nil || s.spillErr != nil || len(p) == 0 {
		return
	}
	if _, err := s.spillW.Write(p); err != nil {
		s.spillErr = err
	}
}

func (s *sink) spillClose() {
	if s.spillF == nil {
		return
	}
	if s.spillErr == nil {
		s.spillErr = s.spillW.Flush()
	}
	if err := s.spillF.Close(); s.spillErr == nil {
		s.spillErr = err
	}
	if s.spillErr != nil {
		// A partial file would claim to be the full output; drop it.
		_ = os.Remove(s.spillPath)
		s.spillPath = ""
	}
	s.spillF, s.spillW = nil, nil
}

// finish closes the spill and computes the kept text and marker. The kept
// text is valid UTF-8 and never longer than limBytes, even after invalid
// bytes become U+FFFD.
func (s *sink) finish() StreamResult {
	r := StreamResult{TotalBytes: s.total, TotalLines: s.lineCount(), Kept: "all"}
	var sel selection
	switch {
	case !s.over:
		if t := sanitize(s.buf); len(t) <= s.limBytes {
			r.Text = t
			return r
		}
		// Only U+FFFD expansion made it overflow; the raw stream is still
		// whole in memory, so the spill can be written now.
		s.spillStart()
		s.spillWrite(s.buf)
		if s.tail {
			sel = selectTail(s.buf, true, s.limBytes, s.limLines)
		} else {
			sel = selectHead(s.buf, true, s.limBytes, s.limLines)
		}
	case s.tail:
		c := s.ring.contents()
		boundary := int64(len(c)) == s.total // window starts at the stream's start
		if len(c) > s.limBytes {
			boundary = c[0] == '\n'
			c = c[1:]
		}
		sel = selectTail(c, boundary, s.limBytes, s.limLines)
	default:
		sel = selectHead(s.buf, int64(len(s.buf)) == s.total, s.limBytes, s.limLines)
	}
	s.spillClose()
	r.Text, r.Truncated, r.SpillPath = sel.text, true, s.spillPath
	r.Kept = "head"
	if s.tail {
		r.Kept = "tail"
	}
	r.Marker = s.marker(sel)
	return r
}

func (s *sink) marker(sel selection) string {
	which := "first"
	if s.tail {
		which = "last"
	}
	var kept string
	if sel.clipped {
		kept = fmt.Sprintf("kept the %s %s of %s (a single line longer than the limit was clipped; %d lines in total)",
			which, fmtSize(sel.raw), fmtSize(s.total), s.lineCount())
	} else {
		kept = fmt.Sprintf("kept the %s %d of %d lines (%s of %s)",
			which, sel.lines, s.lineCount(), fmtSize(sel.raw), fmtSize(s.total))
	}
	var where string
	switch {
	case s.spillPath != "":
		where = "full output: " + s.spillPath
	case s.spillErr != nil:
		where = "full output could not be saved: " + s.spillErr.Error()
	default:
		where = "full output not saved"
	}
	return fmt.Sprintf("[pi: %s truncated: %s; limit %s / %d lines; %s]",
		s.stream, kept, fmtLimit(s.limBytes), s.limLines, where)
}

type selection struct {
	text    string
	raw     int64 // raw bytes of the stream the text stands for
	lines   int64
	clipped bool
}

// selectHead keeps the longest run of whole leading lines within the
// limits. complete says data is the whole stream, so its last line counts
// even without a newline. With no whole line fitting, the start is clipped.
func selectHead(data []byte, complete bool, limB, limL int) selection {
	i, sb, lines := 0, 0, 0
	for i < len(data) && lines < limL {
		end := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			end = i + j + 1
		} else if !complete {
			break // the line goes on past what we hold
		}
		l := sanitizedLen(data[i:end])
		if sb+l > limB {
			break
		}
		sb, lines, i = sb+l, lines+1, end
	}
	if lines == 0 && len(data) > 0 {
		return clipHead(data, limB)
	}
	return selection{text: sanitize(data[:i]), raw: int64(i), lines: int64(lines)}
}

// selectTail keeps the longest run of whole trailing lines. boundary says
// w[0] starts a line (the stream's start, or a newline just before w).
func selectTail(w []byte, boundary bool, limB, limL int) selection {
	end, sb, lines := len(w), 0, 0
	for end > 0 && lines < limL {
		start := 0
		if end >= 2 {
			start = bytes.LastIndexByte(w[:end-1], '\n') + 1
		}
		if start == 0 && !boundary {
			break // the first line in w began before it
		}
		l := sanitizedLen(w[start:end])
		if sb+l > limB {
			break
		}
		sb, lines, end = sb+l, lines+1, start
	}
	if lines == 0 && len(w) > 0 {
		return clipTail(w, limB)
	}
	return selection{text: sanitize(w[end:]), raw: int64(len(w) - end), lines: int64(lines)}
}

// clipHead keeps the first whole runes of data within limB bytes of text.
// Each retry shrinks by the overshoot that U+FFFD expansion caused.
func clipHead(data []byte, limB int) selection {
	n := min(len(data), limB)
	for {
		// Do not cut a valid multi-byte rune in two.
		for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
			if utf8.RuneStart(data[i]) {
				if !utf8.FullRune(data[i:n]) {
					n = i
				}
				break
			}
		}
		if t := sanitize(data[:n]); len(t) <= limB {
			return selection{text: t, raw: int64(n), lines: 1, clipped: true}
		}
		n -= max(1, sanitizedLen(data[:n])-limB)
	}
}

// clipTail keeps the last whole runes of w within limB bytes of text.
func clipTail(w []byte, limB int) selection {
	start := max(0, len(w)-limB)
	for {
		for k := 0; k < utf8.UTFMax-1 && start < len(w) && !utf8.RuneStart(w[start]); k++ {
			start++ // do not start inside a rune
		}
		if t := sanitize(w[start:]); len(t) <= limB {
			return selection{text: t, raw: int64(len(w) - start), lines: 1, clipped: true}
		}
		start += max(1, sanitizedLen(w[start:])-limB)
	}
}

// sanitize makes text JSON-safe: invalid UTF-8 becomes U+FFFD. Only the kept
// text is sanitized; the spill keeps the original bytes.
func sanitize(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

func sanitizedLen(b []byte) int {
	if utf8.Valid(b) {
		return len(b)
	}
	return len(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

func fmtSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, units := float64(n)/1024, []string{"KiB", "MiB", "GiB", "TiB"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// fmtLimit prints a configured limit the way it was most likely written.
func fmtLimit(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1024 && n%1024 == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmtSize(int64(n))
}

// ring keeps the last len(buf) bytes written.
type ring struct {
	buf  []byte
	pos  int // next write index
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]byte, n)} }

func (r *ring) write(p []byte) {
	n := len(r.buf)
	if len(p) >= n {
		copy(r.buf, p[len(p)-n:])
		r.pos, r.full = 0, true
		return
	}
	c := copy(r.buf[r.pos:], p)
	if c < len(p) {
		r.pos = copy(r.buf, p[c:])
		r.full = true
		return
	}
	r.pos += c
	if r.pos == n {
		r.pos, r.full = 0, true
	}
}

// contents returns the held bytes in stream order (a copy).
func (r *ring) contents() []byte {
	if !r.full {
		return append([]byte(nil), r.buf[:r.pos]...)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}
