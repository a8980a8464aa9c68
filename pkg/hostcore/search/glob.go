package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrBadPattern wraps an invalid glob, include or regular expression
// (INVALID_ARGUMENT for the caller).
var ErrBadPattern = errors.New("invalid pattern")

// Glob limits (SPEC §3.1); the caller validates the range.
const (
	DefaultGlobLimit = 100
	MaxGlobLimit     = 1000
)

// GlobOptions configure Glob.
type GlobOptions struct {
	FS           fs.FS
	Base         string // directory relative to the FS root ("." = root)
	Pattern      string // doublestar; matched against the path relative to Base or the base name
	Limit        int    // default 100
	ExplicitBase bool   // the user named Base: ignore files above it do not apply
	Budget       Budget // zero = DefaultBudget
	// Exclude, when set, names FS-root-relative paths that are never listed,
	// entered or read (pi's own state, deny-listed credentials).
	Exclude func(path string, isDir bool) bool
}

// GlobResult is Glob's answer. Count is len(Matches); Truncated says more
// matches exist than were returned.
type GlobResult struct {
	Matches   []string `json:"matches"`
	Count     int      `json:"count"`
	Truncated bool     `json:"truncated"`
	Notice    string   `json:"notice,omitempty"`
}

type globHit struct {
	path string
	mod  int64
}

// newerFirst orders hits newest mtime first, ties by path.
func newerFirst(a, b globHit) int {
	if a.mod != b.mod {
		if a.mod > b.mod {
			return -1
		}
		return 1
	}
	return strings.Compare(a.path, b.path)
}

// Glob lists the files (regular files and symlinks to regular files inside
// the FS) under Base that match Pattern, newest first. Matches are relative
// to the FS root. Errors: ErrBadPattern, a wrapped fs error when Base is
// missing or not a directory, or the context's error.
func Glob(ctx context.Context, o GlobOptions) (*GlobResult, error) {
	pattern := strings.TrimPrefix(o.Pattern, "./")
	if pattern == "" || !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("%w: glob %q", ErrBadPattern, o.Pattern)
	}
	limit := o.Limit
	if limit <= 0 {
		limit = DefaultGlobLimit
	}
	b := o.Budget.normalized()
	base, err := cleanBase(o.Base)
	if err != nil {
		return nil, err
	}
	if st, err := fs.Stat(o.FS, base); err != nil {
		return nil, fmt.Errorf("glob: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("glob: %s: not a directory", base)
	}

	// Keep at most a few times limit hits: sorting and trimming as we go
	// bounds memory on huge trees without changing the answer.
	var hits []globHit
	total := 0
	trim := func() {
		slices.SortFunc(hits, newerFirst)
		if len(hits) > limit {
			hits = hits[:limit]
		}
	}
	w := &walker{
		ctx:      ctx,
		fsys:     o.FS,
		exclude:  o.Exclude,
		allowDir: prefixPruner(pattern),
		visit: func(e *fileEntry) bool {
			if doublestar.MatchUnvalidated(pattern, e.rel) || doublestar.MatchUnvalidated(pattern, e.name) {
				total++
				hits = append(hits, globHit{e.path, e.modTime()})
				if len(hits) >= 4*limit+64 {
					trim()
				}
			}
			return true
		},
	}
	w.run(base, o.ExplicitBase)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	trim()

	res := &GlobResult{Matches: make([]string, 0, len(hits))}
	size := 0
	for _, h := range hits {
		if len(res.Matches) >= b.MaxLines || size+len(h.path)+1 > b.MaxBytes {
			break
		}
		size += len(h.path) + 1
		res.Matches = append(res.Matches, h.path)
	}
	res.Count = len(res.Matches)
	res.Truncated = total > res.Count
	if res.Truncated {
		why := fmt.Sprintf("limit %d", limit)
		if res.Count < limit {
			why = "output budget"
		}
		res.Notice = fmt.Sprintf("showing %d of %d matches (newest first, %s); narrow the pattern or path", res.Count, total, why)
	}
	return res, nil
}

// prefixPruner limits the walk to the literal leading directories of a
// pattern ("cmd/pi/**/*.go" only needs cmd/pi). Such a pattern can never
// match a slash-less base name, so the pruning loses nothing. It returns
// nil when the pattern starts with a wildcard.
func prefixPruner(pattern string) func(string) bool {
	parts := strings.Split(pattern, "/")
	n := 0
	for n < len(parts)-1 && parts[n] != "" && !strings.ContainsAny(parts[n], `*?[]{}\`) {
		n++
	}
	if n == 0 {
		return nil
	}
	prefix := strings.Join(parts[:n], "/")
	return func(rel string) bool {
		return rel == prefix || strings.HasPrefix(prefix, rel+"/") || strings.HasPrefix(rel, prefix+"/")
	}
}
