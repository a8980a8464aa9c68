package hostcore

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

func schema(s string) json.RawMessage {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic("bad schema: " + err.Error())
	}
	b, _ := json.Marshal(v)
	return b
}

// alwaysActiveAgent are the tools each Agent turn activates (R-TOOL-4).
var alwaysActiveAgent = []string{"Read", "Bash", "Edit", "Write"}

// isActive reports whether a tool may be called now: on-demand tools in
// Agent mode need a ToolSearch activation in this turn; Plan and Goal keep
// their read/inspect core always active.
func (h *Host) isActive(s *store.Session, t *ToolDef) bool {
	if t.NeedsRoot && s.WorkspaceRoot == "" {
		return false // a temporary session has no high-risk tools (R-PATH-9)
	}
	if !t.OnDemand || s.Mode != ModeAgent {
		return true
	}
	return slices.Contains(s.ActiveTools, t.Name)
}

func (h *Host) activeTools(s *store.Session) []string {
	var out []string
	for _, t := range h.tools().All() {
		if d := Evaluate(PolicyInput{Mode: s.Mode, Tool: t.Name, Kind: t.Kind, ModeOf: t.ModeOf, HasDelegates: true,
			PermissionMode: PermAsk, Risk: t.Risk}); d.Action == Deny {
			continue
		}
		if h.isActive(s, t) {
			out = append(out, t.Name)
		}
	}
	return out
}

func (h *Host) checkActive(s *store.Session, t *ToolDef) error {
	if h.isActive(s, t) {
		return nil
	}
	return &Error{Code: ToolNotActive, Message: t.Name + " is an on-demand tool and is not active in this turn; activate it first: pi tool search " + t.Name,
		Details: map[string]any{"hint": map[string]any{"tool": "ToolSearch", "args": map[string]any{"query": t.Name}}}}
}

// ToolInfo is one row of `pi tool list`.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Risk        Risk   `json:"risk"`
	Active      bool   `json:"active"`
	OnDemand    bool   `json:"onDemand"`
}

// ToolList is the content of `pi tool list`: active tools and the bounded
// on-demand catalog for the session's mode and turn.
type ToolList struct {
	Mode     string     `json:"mode"`
	Turn     int        `json:"turn"`
	Active   []ToolInfo `json:"active"`
	OnDemand []ToolInfo `json:"onDemand"`
}

// ListTools lists what the session may call now and what it can activate.
func (h *Host) ListTools(ctx context.Context, sessionID string) (*ToolList, error) {
	s, err := h.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := &ToolList{Mode: s.Mode, Turn: s.Turn, Active: []ToolInfo{}, OnDemand: []ToolInfo{}}
	hasDelegates := h.hasDelegates(s)
	for _, t := range h.tools().All() {
		d := Evaluate(PolicyInput{Mode: s.Mode, Tool: t.Name, Kind: t.Kind, ModeOf: t.ModeOf, HasDelegates: hasDelegates,
			PermissionMode: PermAsk, Risk: t.Risk})
		if d.Action == Deny {
			continue
		}
		info := ToolInfo{Name: t.Name, Description: t.Description, Risk: t.Risk, OnDemand: t.OnDemand && s.Mode == ModeAgent}
		info.Active = h.isActive(s, t)
		if info.Active {
			out.Active = append(out.Active, info)
		}
		if info.OnDemand {
			out.OnDemand = append(out.OnDemand, info)
		}
	}
	return out, nil
}

// Schema returns a tool's argument schema.
func (h *Host) Schema(name string) (json.RawMessage, string, error) {
	t, ok := h.tools().Lookup(name)
	if !ok {
		return nil, "", Errf(ToolNotFound, "unknown tool %q (see pi tool list)", name)
	}
	return t.Schema, t.Name, nil
}

// ToolSearchArgs are ToolSearch's arguments.
type ToolSearchArgs struct {
	Query string `json:"query"`
}

func (h *Host) toolSearchTool() *ToolDef {
	return &ToolDef{
		Name: "ToolSearch", Description: "Activate on-demand tools for this turn by exact name or a query", Risk: RiskLow,
		Kind: KindControl,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["query"],"properties":{
 "query":{"type":"string","description":"exact tool names (comma or space separated) or words to match in the catalog"}}}`),
		NewArgs: func() any { return &ToolSearchArgs{} },
		Validate: func(a any) error {
			if strings.TrimSpace(a.(*ToolSearchArgs).Query) == "" {
				return Errf(InvalidArgument, "ToolSearch needs a query")
			}
			return nil
		},
		Run: h.runToolSearch,
	}
}

// runToolSearch never touches the workspace and never bypasses policy: it
// only adds catalog names to this turn's active set (they still go through
// the whole road when called).
func (h *Host) runToolSearch(ctx context.Context, env *Env, a any) (*Outcome, error) {
	q := strings.TrimSpace(a.(*ToolSearchArgs).Query)
	q = strings.TrimPrefix(q, "select:")
	var catalog []*ToolDef
	for _, t := range h.tools().All() {
		if t.OnDemand && env.Session.Mode == ModeAgent {
			catalog = append(catalog, t)
		}
	}
	var found []string
	words := strings.FieldsFunc(q, func(r rune) bool { return r == ',' || r == ' ' })
	for _, t := range catalog {
		for _, w := range words {
			if canonKey(w) == canonKey(t.Name) {
				found = append(found, t.Name)
				break
			}
		}
	}
	if len(found) == 0 {
		lq := strings.ToLower(q)
		for _, t := range catalog {
			hay := strings.ToLower(t.Name + " " + t.Description)
			for _, w := range strings.Fields(lq) {
				if len(w) >= 3 && strings.Contains(hay, w) {
					found = append(found, t.Name)
					break
				}
			}
		}
	}
	s, err := h.DB.UpdateSession(ctx, env.Session.ID, func(_ *sql.Tx, s *store.Session) error {
		for _, n := range found {
			if !slices.Contains(s.ActiveTools, n) {
				s.ActiveTools = append(s.ActiveTools, n)
			}
		}
		sort.Strings(s.ActiveTools)
		return nil
	})
	if err != nil {
		return nil, storeErr(err, "activate tools")
	}
	if found == nil {
		found = []string{}
	}
	return &Outcome{Content: map[string]any{"activated": found, "active": h.activeTools(s), "query": q}}, nil
}

func (h *Host) newContextTool() *ToolDef {
	return &ToolDef{
		Name: "new_context", Description: "Ask for a fresh context at the next turn boundary", Risk: RiskLow, Kind: KindControl,
		Exclusive: true, // R-MODE-3: the only tool call of its batch
		Schema:    schema(`{"type":"object","additionalProperties":false,"properties":{}}`),
		NewArgs:   func() any { return &struct{}{} },
		Run: func(ctx context.Context, env *Env, _ any) (*Outcome, error) {
			_, err := h.DB.UpdateSession(ctx, env.Session.ID, func(_ *sql.Tx, s *store.Session) error {
				s.ContextReset = true
				return nil
			})
			if err != nil {
				return nil, storeErr(err, "new_context")
			}
			return &Outcome{Content: map[string]any{"contextReset": "requested", "atTurn": env.Session.Turn + 1}}, nil
		},
	}
}

// PreviewArgs are BrowserPreview's arguments.
type PreviewArgs struct {
	Path string `json:"path"`
	Open bool   `json:"open,omitempty"`
}

func (h *Host) previewTool() *ToolDef {
	return &ToolDef{
		Name: "BrowserPreview", Description: "Resolve a workspace file to a preview URL (optionally open it)", Risk: RiskLow,
		Kind: KindPreview, OnDemand: true, NeedsRoot: true, WorkspaceOnly: true, Timeout: defaultReadTimeout,
		Schema: schema(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
 "path":{"type":"string","description":"workspace-relative file to preview"},
 "open":{"type":"boolean","description":"launch the system opener"}}}`),
		NewArgs: func() any { return &PreviewArgs{} },
		Validate: func(a any) error {
			if a.(*PreviewArgs).Path == "" {
				return Errf(InvalidArgument, "BrowserPreview needs a path")
			}
			return nil
		},
		Path: func(a any) (string, PathUse) { return a.(*PreviewArgs).Path, PathFile },
		Run:  h.runPreview,
	}
}

// runPreview stays workspace-relative in v1: anything else is
// PATH_OUTSIDE_WORKSPACE in every mode (SPEC §3); Execute refuses it before
// the policy (WorkspaceOnly), and the body checks again.
func (h *Host) runPreview(ctx context.Context, env *Env, a any) (*Outcome, error) {
	args := a.(*PreviewArgs)
	rp := env.Path
	if rp.Class != ClassWorkspace {
		return nil, Errf(PathOutsideWorkspace, "BrowserPreview only opens files inside the workspace")
	}
	root, name, err := env.Roots.Reopen(rp, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fi, err := root.Stat(name)
	if err != nil {
		return nil, openErr(args.Path, err)
	}
	abs := filepath.Join(env.Session.WorkspaceRoot, filepath.FromSlash(rp.Rel))
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	if runtime.GOOS == "windows" {
		u.Path = "/" + filepath.ToSlash(abs)
	}
	content := map[string]any{"path": rp.Rel, "root": rp.Class, "url": u.String(), "isDir": fi.IsDir(), "opened": false}
	if args.Open {
		if err := openURL(ctx, u.String()); err != nil {
			return &Outcome{Content: content}, Wrap(ToolFailed, err, "open %s", u.String())
		}
		content["opened"] = true
	}
	return &Outcome{Content: content}, nil
}

func openURL(ctx context.Context, u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", u)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", u)
	}
	return cmd.Start()
}

// EnterModeArgs is empty: the target mode is the tool's.
type EnterModeArgs struct{}

func (h *Host) enterModeTool(name, mode string) *ToolDef {
	return &ToolDef{
		Name: name, Description: "Move this session from agent to " + mode + " mode", Risk: RiskLow, Kind: KindEnterMode,
		ModeOf: mode, Exclusive: true,
		Schema:  schema(`{"type":"object","additionalProperties":false,"properties":{}}`),
		NewArgs: func() any { return &EnterModeArgs{} },
		Run: func(ctx context.Context, env *Env, _ any) (*Outcome, error) {
			s, err := h.DB.UpdateSession(ctx, env.Session.ID, func(tx *sql.Tx, s *store.Session) error {
				if s.Mode != ModeAgent {
					return Errf(ToolDisabledInPlan, "%s is only available in agent mode (the session is in %s mode)", name, s.Mode)
				}
				if err := pendingProposalGuard(ctx, tx, s.ID); err != nil {
					return err
				}
				s.Mode = mode
				s.ActiveTools = nil
				return nil
			})
			if err != nil {
				return nil, storeErr(err, name)
			}
			return &Outcome{Content: map[string]any{"mode": s.Mode, "activeTools": h.activeTools(s)}}, nil
		},
	}
}
