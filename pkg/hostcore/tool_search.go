package hostcore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore/search"
)

const (
	defaultReadTimeout   = 30 * time.Second
	defaultSearchTimeout = 60 * time.Second
)

// GlobArgs are Glob's arguments.
type GlobArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Limit   *int   `json:"limit,omitempty"`
}

// GrepArgs are Grep's arguments.
type GrepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path,omitempty"`
	Include         string `json:"include,omitempty"`
	OutputMode      string `json:"outputMode,omitempty"`
	HeadLimit       *int   `json:"headLimit,omitempty"`
	CaseInsensitive bool   `json:"caseInsensitive,omitempty"`
	Context         *int   `json:"context,omitempty"`
}

func (h *Host) globTool() *ToolDef {
	return &ToolDef{
		Name: "Glob", Description: "Find files by name pattern (doublestar), newest first", Risk: RiskLow, Kind: KindRead,
		OnDemand: true, Timeout: defaultSearchTimeout,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["pattern"],"properties":{
 "pattern":{"type":"string","description":"doublestar pattern, matched against the path relative to the search dir or the base name"},
 "path":{"type":"string","description":"directory to search (default: the workspace root)"},
 "limit":{"type":"integer","minimum":1,"maximum":1000,"description":"max matches (default 100)"}}}`),
		NewArgs: func() any { return &GlobArgs{} },
		Validate: func(a any) error {
			g := a.(*GlobArgs)
			if g.Pattern == "" {
				return Errf(InvalidArgument, "Glob needs a pattern")
			}
			return inRange("limit", g.Limit, 1, 1000)
		},
		Path: func(a any) (string, PathUse) { return a.(*GlobArgs).Path, PathDir },
		Run:  h.runGlob,
	}
}

func (h *Host) grepTool() *ToolDef {
	return &ToolDef{
		Name: "Grep", Description: "Search file contents with a regular expression (RE2)", Risk: RiskLow, Kind: KindRead,
		OnDemand: true, Timeout: defaultSearchTimeout,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["pattern"],"properties":{
 "pattern":{"type":"string","description":"RE2 regular expression"},
 "path":{"type":"string","description":"file or directory to search (default: the workspace root)"},
 "include":{"type":"string","description":"glob on file names, e.g. *.go"},
 "outputMode":{"type":"string","enum":["content","filesWithMatches","count"],"default":"content"},
 "headLimit":{"type":"integer","minimum":1,"maximum":2000,"description":"max items (default 200)"},
 "caseInsensitive":{"type":"boolean"},
 "context":{"type":"integer","minimum":0,"maximum":10,"description":"lines of context around each match"}}}`),
		NewArgs: func() any { return &GrepArgs{} },
		Validate: func(a any) error {
			g := a.(*GrepArgs)
			if g.Pattern == "" {
				return Errf(InvalidArgument, "Grep needs a pattern")
			}
			switch g.OutputMode {
			case "", "content", "filesWithMatches", "count":
			case "files", "files_with_matches":
				g.OutputMode = "filesWithMatches"
			default:
				return Errf(InvalidArgument, "outputMode must be content, filesWithMatches or count")
			}
			if err := inRange("headLimit", g.HeadLimit, 1, 2000); err != nil {
				return err
			}
			return inRange("context", g.Context, 0, 10)
		},
		Path: func(a any) (string, PathUse) { return a.(*GrepArgs).Path, PathFileOrDir },
		Run:  h.runGrep,
	}
}

// searchRoot is an open search: the re-opened root, its handle-caching FS,
// the base inside it and the absolute dir the FS stands for.
type searchRoot struct {
	root    *os.Root
	fs      *search.RootFS
	base    string
	rootDir string
}

func (s *searchRoot) close() { s.fs.Close(); s.root.Close() }

// openSearch re-opens a Glob/Grep path right before the walk (R-PATH-4).
func (h *Host) openSearch(env *Env) (*searchRoot, error) {
	rp := env.Path
	if !rp.Exists {
		return nil, Errf(NotFound, "%s does not exist", rp.Input)
	}
	root, base, err := env.Roots.Reopen(rp, false)
	if err != nil {
		return nil, err
	}
	rootDir := rp.RootDir
	if rp.Class == ClassExternal && rp.IsDir {
		rootDir = rp.Canonical // an external dir is opened as the root itself
	}
	return &searchRoot{root: root, fs: search.NewRootFS(root), base: base, rootDir: rootDir}, nil
}

func orDefault(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// mapper turns FS-root-relative result paths into result paths: workspace
// paths stay relative, scratch and external ones become absolute (CLI.md).
func mapper(rp *Resolved, rootDir string) func(string) string {
	if rp.Class == ClassWorkspace {
		return func(p string) string { return p }
	}
	return func(p string) string { return filepath.Join(rootDir, filepath.FromSlash(p)) }
}

func (h *Host) runGlob(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*GlobArgs)
	rp := env.Path
	if rp.Exists && !rp.IsDir {
		return nil, Errf(InvalidArgument, "Glob.path must be a directory; %s is a file", rp.Input)
	}
	sr, err := h.openSearch(env)
	if err != nil {
		return nil, err
	}
	defer sr.close()
	rfs, base, rootDir := sr.fs, sr.base, sr.rootDir
	r, err := search.Glob(ctx, search.GlobOptions{FS: rfs, Base: base, Pattern: args.Pattern, Limit: orDefault(args.Limit, 100),
		ExplicitBase: args.Path != "" && base != ".", Exclude: h.excluder(rootDir)})
	if err != nil {
		return nil, searchErr(ctx, err)
	}
	m := mapper(rp, rootDir)
	for i, p := range r.Matches {
		r.Matches[i] = m(p)
	}
	if r.Matches == nil {
		r.Matches = []string{}
	}
	return &Outcome{Root: rp.Class, Content: r}, nil
}

func (h *Host) runGrep(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*GrepArgs)
	rp := env.Path
	sr, err := h.openSearch(env)
	if err != nil {
		return nil, err
	}
	defer sr.close()
	rfs, base, rootDir := sr.fs, sr.base, sr.rootDir
	head, ctxLines := orDefault(args.HeadLimit, 200), orDefault(args.Context, 0)
	mode := args.OutputMode
	if mode == "" {
		mode = "content"
	}
	r, err := search.Grep(ctx, search.GrepOptions{FS: rfs, Base: base, BaseIsFile: !rp.IsDir,
		Pattern: args.Pattern, CaseInsensitive: args.CaseInsensitive, Include: args.Include, OutputMode: mode,
		HeadLimit: head, Context: ctxLines, ExplicitBase: args.Path != "" && base != ".", Budget: h.budget(),
		Exclude: h.excluder(rootDir)})
	if err != nil {
		return nil, searchErr(ctx, err)
	}
	m := mapper(rp, rootDir)
	for i := range r.Matches {
		r.Matches[i].Path = m(r.Matches[i].Path)
	}
	for i := range r.Files {
		r.Files[i] = m(r.Files[i])
	}
	for i := range r.Counts {
		r.Counts[i].Path = m(r.Counts[i].Path)
	}
	// Exactly one list per mode, present even when empty (CLI.md).
	content := map[string]any{"count": r.Count, "truncated": r.Truncated}
	if r.Notice != "" {
		content["notice"] = r.Notice
	}
	switch mode {
	case "content":
		content["matches"] = orEmpty(r.Matches)
	case "filesWithMatches":
		content["files"] = orEmpty(r.Files)
	case "count":
		content["counts"] = orEmpty(r.Counts)
	}
	return &Outcome{Root: rp.Class, Content: content}, nil
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func searchErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, search.ErrBadPattern):
		return Wrap(InvalidArgument, err, "bad pattern")
	case ctx.Err() != nil:
		return Wrap(ToolTimeout, ctx.Err(), "search stopped")
	}
	return Wrap(ToolFailed, err, "search")
}

// excluder keeps walks out of pi's own state and out of sensitive paths
// that happen to sit below a search root (a workspace at $HOME contains
// ~/.ssh and maybe the data dir): they are skipped, never read.
func (h *Host) excluder(rootDir string) func(rel string, isDir bool) bool {
	var prot []string
	for _, p := range []string{h.dataDir, h.configDir} {
		if p != "" && (within(p, rootDir) || within(rootDir, p)) {
			prot = append(prot, p)
		}
	}
	sens := h.sensitive.Under(rootDir)
	if len(prot) == 0 && sens == nil {
		return nil // the common case: nothing protected below this root
	}
	return func(rel string, isDir bool) bool {
		abs := filepath.Join(rootDir, filepath.FromSlash(rel))
		for _, p := range prot {
			if within(abs, p) {
				return true
			}
		}
		if sens == nil {
			return false
		}
		_, hit := sens.Match(abs)
		return hit
	}
}
