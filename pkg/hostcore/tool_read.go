package hostcore

import (
	"context"
	"errors"
	"io/fs"

	"github.com/pi-cli/pi/pkg/fsx"
	"github.com/pi-cli/pi/pkg/hostcore/search"
)

// ReadArgs are Read's arguments (SPEC §3.1).
type ReadArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
}

// ReadContent is Read's result content.
type ReadContent struct {
	Path       string    `json:"path"`
	Root       PathClass `json:"root"`
	Content    string    `json:"content"`
	Offset     int       `json:"offset"`
	LineCount  int       `json:"lineCount"`
	TotalLines int       `json:"totalLines"`
	FileBytes  int64     `json:"fileBytes"`
	Truncated  bool      `json:"truncated"` // more of the file exists after this window (like Glob/Grep)
	NextOffset *int      `json:"nextOffset,omitempty"`
	Notice     string    `json:"notice,omitempty"`
}

func (h *Host) readTool() *ToolDef {
	return &ToolDef{
		Name: "Read", Description: "Read a text file (a window of lines)", Risk: RiskLow, Kind: KindRead,
		Timeout: defaultReadTimeout,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
 "path":{"type":"string","description":"file path, relative to the workspace or absolute"},
 "offset":{"type":"integer","minimum":0,"description":"0-based first line (default 0)"},
 "limit":{"type":"integer","minimum":1,"maximum":2000,"description":"lines to return (default 500)"}}}`),
		NewArgs: func() any { return &ReadArgs{} },
		Validate: func(a any) error {
			r := a.(*ReadArgs)
			if r.Path == "" {
				return Errf(InvalidArgument, "Read needs a path")
			}
			if r.Offset != nil && *r.Offset < 0 {
				return Errf(InvalidArgument, "offset must be ≥ 0")
			}
			return inRange("limit", r.Limit, 1, h.Cfg.ReadLimitMax)
		},
		Path: func(a any) (string, PathUse) { return a.(*ReadArgs).Path, PathFile },
		Run:  h.runRead,
	}
}

func (h *Host) runRead(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*ReadArgs)
	rp := env.Path
	root, name, err := env.Roots.Reopen(rp, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, fi, err := fsx.OpenRegular(root, name)
	switch {
	case errors.Is(err, fsx.ErrIsDir):
		return nil, &Error{Code: InvalidArgument, Message: args.Path + " is a directory; Read takes a file (use Glob to list a directory)",
			Details: map[string]any{"suggestion": map[string]any{"tool": "Glob", "args": map[string]any{"pattern": "*", "path": args.Path}}}}
	case errors.Is(err, fsx.ErrNotRegular):
		return nil, Errf(InvalidArgument, "%s is not a regular file (%s)", args.Path, fi.Mode().Type())
	case errors.Is(err, fs.ErrNotExist):
		return nil, Errf(NotFound, "%s does not exist", args.Path)
	case err != nil:
		return nil, openErr(args.Path, err)
	}
	defer f.Close()
	if err := rp.VerifyOpened(f); err != nil {
		return nil, err
	}
	offset, limit := orDefault(args.Offset, 0), orDefault(args.Limit, h.Cfg.ReadLimitDefault)
	w, err := search.ReadWindow(ctxReader{ctx, f}, offset, limit, h.budget())
	if errors.Is(err, search.ErrBinary) {
		return nil, Errf(ToolBinaryContent, "%s looks binary (NUL or mostly non-printable bytes); Read returns text only", args.Path)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, Wrap(ToolTimeout, ctx.Err(), "read %s", args.Path)
		}
		return nil, Wrap(ToolFailed, err, "read %s", args.Path)
	}
	return &Outcome{Root: rp.Class, Content: &ReadContent{
		Path: rp.Display(), Root: rp.Class, Content: w.Content, Offset: w.Offset, LineCount: w.LineCount,
		TotalLines: w.TotalLines, FileBytes: w.FileBytes, Truncated: w.Truncated || w.NextOffset != nil, NextOffset: w.NextOffset, Notice: w.Notice,
	}}, nil
}

func (h *Host) budget() search.Budget {
	b := search.DefaultBudget()
	if h.Cfg.OutputBytes > 0 {
		b.MaxBytes = h.Cfg.OutputBytes
	}
	if h.Cfg.OutputLines > 0 {
		b.MaxLines = h.Cfg.OutputLines
	}
	if h.Cfg.LineChars > 0 {
		b.MaxLineChars = h.Cfg.LineChars
	}
	return b
}

// openErr maps an open error through os.Root: an escaping link is refused
// like any other path outside the roots.
func openErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errf(NotFound, "%s does not exist", p)
	case errors.Is(err, fs.ErrPermission):
		return Wrap(ToolFailed, err, "open %s", p)
	case isEscape(err):
		return Errf(PathOutsideWorkspace, "%s leads outside the session roots (a symlink changed after it was checked)", p)
	}
	return Wrap(ToolFailed, err, "open %s", p)
}

func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}

// ctxReader stops a long read when the call's deadline passes.
type ctxReader struct {
	ctx context.Context
	r   interface{ Read([]byte) (int, error) }
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
