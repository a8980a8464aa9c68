package search

import (
	"bytes"
	"io"
	"io/fs"
	"sync/atomic"
)

// Each worker reads files through one reused buffer. A line longer than
// scanBufMax is searched in pieces of that size (a match that straddles two
// pieces can be missed, and ^/$ see the piece edges): that keeps memory at
// GOMAXPROCS × 1 MiB on minified or generated files.
const (
	scanBufInit = 128 << 10
	scanBufMax  = 1 << 20
)

type outputMode int

const (
	modeContent outputMode = iota
	modeFiles
	modeCount
)

// fileResult is what one file contributes.
type fileResult struct {
	items   []Match
	clipped []bool // parallel to items: the text was clipped
	count   int    // matching lines (count mode); 1 if any (files mode)
	binary  bool
}

// scanner searches one file at a time; one per worker.
type scanner struct {
	m        *matcher
	mode     outputMode
	context  int
	maxItems int // content mode: items worth producing per file
	maxChars int
	stop     *atomic.Bool
	buf      []byte
}

// fileScan is the state of one file's scan. buf[0] is a line start (unless
// a piece of an oversized line was dropped) whose line number is known
// through the cursor (curPos, curLine).
type fileScan struct {
	*scanner
	path     string
	buf      []byte
	curPos   int
	curLine  int
	lastLine int // last line emitted or counted
	after    int // after-context lines still owed
	afterPos int // start of line lastLine+1 when after > 0
	res      fileResult
}

// lineAt returns the 1-based number of the line holding buf[p].
func (fsn *fileScan) lineAt(p int) int {
	if p >= fsn.curPos {
		fsn.curLine += bytes.Count(fsn.buf[fsn.curPos:p], nl)
	} else {
		fsn.curLine -= bytes.Count(fsn.buf[p:fsn.curPos], nl)
	}
	fsn.curPos = p
	return fsn.curLine
}

var nl = []byte{'\n'}

// file searches one file. size is its size as listed (-1 if unknown): once
// that many bytes are in, the file is taken as read, which saves the read
// that would only report EOF (a file growing meanwhile is searched as it was
// listed). It returns nil when the file cannot be opened or read.
func (s *scanner) file(fsys fs.FS, path string, size int64) *fileResult {
	f, err := fsys.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if s.buf == nil {
		s.buf = make([]byte, scanBufInit)
	}
	fsn := &fileScan{scanner: s, path: path, buf: s.buf, curLine: 1}
	n, from := 0, 0 // valid bytes; first byte not yet searched
	eof, first := false, true
	for {
		for !eof && n < len(fsn.buf) {
			k, err := f.Read(fsn.buf[n:])
			n += k
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return nil
			} else if k == 0 || (size > 0 && int64(n) >= size && n < len(fsn.buf)) {
				eof = true // no progress, or the listed size is in
			}
		}
		if first {
			first = false
			if IsBinary(fsn.buf[:min(n, binaryPrefix)]) {
				return &fileResult{binary: true}
			}
		}
		end, piece := n, false
		if !eof {
			if i := bytes.LastIndexByte(fsn.buf[from:n], '\n'); i >= 0 {
				end = from + i + 1
			} else if len(fsn.buf) < scanBufMax {
				grown := make([]byte, 2*len(fsn.buf))
				copy(grown, fsn.buf[:n])
				fsn.buf, s.buf = grown, grown
				continue
			} else {
				piece = true
			}
		}
		if !fsn.region(from, end) || eof {
			return &fsn.res
		}
		if s.stop != nil && s.stop.Load() {
			return nil
		}
		// Keep the last context lines (if they fit in half the buffer) for
		// the before-context of a match early in the next region.
		keep := end
		if s.context > 0 && !piece {
			k := end
			for i := 0; i < s.context && k > 0; i++ {
				k = bytes.LastIndexByte(fsn.buf[:k-1], '\n') + 1
			}
			if end-k <= len(fsn.buf)/2 {
				keep = k
			}
		}
		if piece {
			fsn.after = 0 // no after-context across a dropped piece
		}
		line := fsn.lineAt(keep)
		copy(fsn.buf, fsn.buf[keep:n])
		n -= keep
		from = end - keep
		fsn.afterPos -= keep
		fsn.curPos, fsn.curLine = 0, line
	}
}

// region searches the lines of buf[from:end] (the last one may lack its
// '\n' at the end of the file or of a piece of an oversized line). It
// returns false when this file needs no more searching.
func (fsn *fileScan) region(from, end int) bool {
	for from < end {
		start, stop, ok := fsn.m.nextLine(fsn.buf, from, end)
		if !ok {
			break
		}
		from = stop + 1
		line := fsn.lineAt(start)
		if line <= fsn.lastLine {
			continue // the rest of an oversized line already reported
		}
		switch fsn.mode {
		case modeFiles:
			fsn.res.count = 1
			return false
		case modeCount:
			fsn.res.count++
			fsn.lastLine = line
			continue
		}
		fsn.flushAfter(line, end)
		fsn.before(start, line)
		fsn.emit(line, fsn.buf[start:stop], false)
		fsn.after, fsn.afterPos = fsn.context, stop+1
		if len(fsn.res.items) >= fsn.maxItems {
			return false
		}
		if fsn.stop != nil && fsn.stop.Load() {
			return false
		}
	}
	if fsn.after > 0 {
		fsn.flushAfter(int(^uint(0)>>1), end)
	}
	return true
}

// flushAfter emits owed after-context lines that come before line upTo and
// lie within buf[:end].
func (fsn *fileScan) flushAfter(upTo, end int) {
	for fsn.after > 0 && fsn.lastLine+1 < upTo && fsn.afterPos < end {
		stop := end
		if i := bytes.IndexByte(fsn.buf[fsn.afterPos:end], '\n'); i >= 0 {
			stop = fsn.afterPos + i
		}
		fsn.emit(fsn.lastLine+1, fsn.buf[fsn.afterPos:stop], true)
		fsn.after--
		fsn.afterPos = stop + 1
	}
	if fsn.lastLine+1 >= upTo {
		fsn.after = 0
	}
}

// before emits the context lines before match line `line` starting at
// start, skipping lines already emitted.
func (fsn *fileScan) before(start, line int) {
	want := min(fsn.context, line-1-fsn.lastLine)
	var starts [10]int
	k, p := 0, start
	for k < want && k < len(starts) && p > 0 {
		p = bytes.LastIndexByte(fsn.buf[:p-1], '\n') + 1
		starts[k] = p
		k++
	}
	for i := k - 1; i >= 0; i-- {
		stop := bytes.IndexByte(fsn.buf[starts[i]:], '\n') + starts[i]
		fsn.emit(line-1-i, fsn.buf[starts[i]:stop], true)
	}
}

func (fsn *fileScan) emit(line int, text []byte, ctx bool) {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	text, cut := clipRunes(text, fsn.maxChars)
	fsn.res.items = append(fsn.res.items, Match{Path: fsn.path, Line: line, Text: string(text), Context: ctx})
	fsn.res.clipped = append(fsn.res.clipped, cut)
	fsn.lastLine = line
}
