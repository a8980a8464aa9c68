package search

import (
	"context"
	"fmt"
	"io/fs"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
)

// Grep limits (SPEC §3.1); the caller validates the ranges.
const (
	DefaultHeadLimit = 200
	MaxHeadLimit     = 2000
	MaxContext       = 10
)

// Output modes.
const (
	OutputContent          = "content"
	OutputFilesWithMatches = "filesWithMatches"
	OutputCount            = "count"
)

// GrepOptions configure Grep.
type GrepOptions struct {
	FS              fs.FS
	Base            string // file or directory relative to the FS root
	BaseIsFile      bool   // informational: Grep stats Base itself
	Pattern         string // RE2
	CaseInsensitive bool
	Include         string // glob on the base name, or on the path relative to Base if it has a '/'
	OutputMode      string // content (default) | filesWithMatches | count
	HeadLimit       int    // default 200
	Context         int    // 0..10 lines before and after (content mode)
	ExplicitBase    bool   // the user named Base: ignore files above it do not apply
	Budget          Budget // zero = DefaultBudget
	// Exclude, when set, names FS-root-relative paths that are never listed,
	// entered or read (pi's own state, deny-listed credentials).
	Exclude func(path string, isDir bool) bool
}

// Match is one content line: Line is 1-based, Text is the line without its
// terminator (a CRLF's '\r' dropped too), clipped at Budget.MaxLineChars
// characters, and Context marks a context line.
type Match struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Context bool   `json:"context,omitempty"`
}

// FileCount is the number of matching lines of one file.
type FileCount struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

// GrepResult is Grep's answer. Count is the number of items returned in the
// mode's list; Truncated says more exist (head limit or budget).
type GrepResult struct {
	Matches   []Match     `json:"matches,omitempty"`
	Files     []string    `json:"files,omitempty"`
	Counts    []FileCount `json:"counts,omitempty"`
	Count     int         `json:"count"`
	Truncated bool        `json:"truncated"`
	Notice    string      `json:"notice,omitempty"`
}

// Grep searches the files under Base (or the file Base) for lines matching
// Pattern. Files are searched in parallel and reported in walk order
// (lexical per directory, depth first), lines ascending. Binary and
// unreadable files are skipped silently. Errors: ErrBadPattern (pattern,
// include or output mode), a wrapped fs error when Base is missing, or the
// context's error.
func Grep(ctx context.Context, o GrepOptions) (*GrepResult, error) {
	mode, err := parseMode(o.OutputMode)
	if err != nil {
		return nil, err
	}
	m, err := newMatcher(o.Pattern, o.CaseInsensitive)
	if err != nil {
		return nil, err
	}
	if o.Include != "" && !doublestar.ValidatePattern(o.Include) {
		return nil, fmt.Errorf("%w: include %q", ErrBadPattern, o.Include)
	}
	base, err := cleanBase(o.Base)
	if err != nil {
		return nil, err
	}
	st, err := fs.Stat(o.FS, base)
	if err != nil {
		return nil, fmt.Errorf("grep: %w", err)
	}
	head := o.HeadLimit
	if head <= 0 {
		head = DefaultHeadLimit
	}
	b := o.Budget.normalized()
	c := &collector{mode: mode, head: head, b: b}
	newScanner := func(stop *atomic.Bool) *scanner {
		return &scanner{m: m, mode: mode, context: min(max(o.Context, 0), MaxContext),
			maxItems: min(head, b.MaxLines) + 1, maxChars: b.MaxLineChars, stop: stop}
	}

	if !st.IsDir() && !st.Mode().IsRegular() {
		// Opening a named pipe or a device could block or never end.
		return nil, fmt.Errorf("grep: %s: not a regular file or directory", base)
	}
	if !st.IsDir() {
		// A named file is searched alone; include still filters its name.
		name := base[strings.LastIndexByte(base, '/')+1:]
		excluded := o.Exclude != nil && o.Exclude(base, false)
		if !excluded && (o.Include == "" || doublestar.MatchUnvalidated(o.Include, name)) {
			if fr := newScanner(nil).file(o.FS, base, st.Size()); fr != nil {
				if fr.binary {
					c.notice = "the file looks binary and was not searched"
				}
				c.add(base, fr)
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return c.result(), nil
	}
	if err := grepTree(ctx, o, base, c, newScanner); err != nil {
		return nil, err
	}
	return c.result(), nil
}

func parseMode(s string) (outputMode, error) {
	switch s {
	case "", OutputContent:
		return modeContent, nil
	case OutputFilesWithMatches:
		return modeFiles, nil
	case OutputCount:
		return modeCount, nil
	}
	return 0, fmt.Errorf("%w: output mode %q", ErrBadPattern, s)
}

// grepJob is one file; done closes once res is set.
type grepJob struct {
	path string
	size int64
	res  *fileResult
	done chan struct{}
}

// grepTree runs one walker, GOMAXPROCS scanners and the collector (this
// goroutine). The walker hands each job to the scanners and, in walk order,
// to the collector, which waits for each job in turn: output order is
// deterministic while the files are searched in parallel. The collector
// stops everything once it has enough.
func grepTree(parent context.Context, o GrepOptions, base string, c *collector, newScanner func(*atomic.Bool) *scanner) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var stop atomic.Bool
	jobs := make(chan *grepJob, 256)
	ordered := make(chan *grepJob, 1024)
	var wg sync.WaitGroup

	incl, inclPath := o.Include, strings.Contains(o.Include, "/")
	w := &walker{ctx: ctx, fsys: o.FS, stop: &stop, exclude: o.Exclude, visit: func(e *fileEntry) bool {
		if incl != "" {
			subject := e.name
			if inclPath {
				subject = e.rel
			}
			if !doublestar.MatchUnvalidated(incl, subject) {
				return true
			}
		}
		j := &grepJob{path: e.path, size: e.size(), done: make(chan struct{})}
		select {
		case ordered <- j:
		case <-ctx.Done():
			return false
		}
		select {
		case jobs <- j:
			return true
		case <-ctx.Done():
			close(j.done) // never searched; the collector is gone or going
			return false
		}
	}}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(ordered)
		w.run(base, o.ExplicitBase)
	}()
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newScanner(&stop)
			for j := range jobs {
				if !stop.Load() {
					j.res = sc.file(o.FS, j.path, j.size)
				}
				close(j.done)
			}
		}()
	}

collect:
	for j := range ordered {
		select {
		case <-j.done:
		case <-ctx.Done():
			break collect
		}
		if j.res != nil && !c.add(j.path, j.res) {
			break collect
		}
	}
	stop.Store(true)
	cancel()
	wg.Wait()
	if !c.full {
		return parent.Err() // a cancelled search is an error, not a short answer
	}
	return nil
}

// collector applies head limit and budget to results taken in order.
type collector struct {
	mode    outputMode
	head    int
	b       Budget
	res     GrepResult
	items   int
	size    int
	clipped int
	full    bool   // a limit was hit: Truncated
	why     string // which limit
	notice  string
}

// take accounts one item of cost bytes; false once a limit is hit.
func (c *collector) take(cost int) bool {
	switch {
	case c.items >= c.head:
		c.why = fmt.Sprintf("headLimit %d reached", c.head)
	case c.items >= c.b.MaxLines || c.size+cost > c.b.MaxBytes:
		c.why = fmt.Sprintf("output budget of %d KB / %d lines reached", c.b.MaxBytes/1024, c.b.MaxLines)
	default:
		c.items++
		c.size += cost
		return true
	}
	c.full = true
	return false
}

// add merges one file's result; false once nothing more can be taken.
func (c *collector) add(path string, fr *fileResult) bool {
	switch c.mode {
	case modeContent:
		for i, it := range fr.items {
			if !c.take(len(path) + len(it.Text) + len(strconv.Itoa(it.Line)) + 3) {
				return false
			}
			c.res.Matches = append(c.res.Matches, it)
			if fr.clipped[i] {
				c.clipped++
			}
		}
	case modeFiles:
		if fr.count > 0 {
			if !c.take(len(path) + 1) {
				return false
			}
			c.res.Files = append(c.res.Files, path)
		}
	case modeCount:
		if fr.count > 0 {
			if !c.take(len(path) + len(strconv.Itoa(fr.count)) + 2) {
				return false
			}
			c.res.Counts = append(c.res.Counts, FileCount{Path: path, Count: fr.count})
		}
	}
	return true
}

func (c *collector) result() *GrepResult {
	r := c.res
	r.Count = c.items
	r.Truncated = c.full
	var trunc string
	if c.full {
		trunc = "results truncated (" + c.why + "); narrow the pattern, path or include"
	}
	r.Notice = joinNotice(c.notice, trunc, clippedNotice(c.clipped, c.b.MaxLineChars))
	return &r
}
