package hostcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// PathUse says how a tool uses its explicit path argument.
type PathUse int

// The uses.
const (
	PathNone      PathUse = iota
	PathFile              // an existing regular file (Read, Edit): follows a final symlink
	PathDir               // a directory search root (Glob)
	PathFileOrDir         // a file or a tree (Grep)
	PathEntry             // a directory entry to create or replace (Write): never follows a final symlink
)

// Env is what a tool body gets: the session, the resolved path and a root
// that was re-opened immediately before the body ran.
type Env struct {
	Host    *Host
	Session *store.Session
	Roots   *Roots
	Call    *Call
	Path    *Resolved // nil when the tool has no path
	TraceID string
	Stdout  io.Writer // live output (bash --stream), may be nil
	Stderr  io.Writer
}

// Outcome is a tool body's result. Content is kept even when the body also
// returns an error (Bash keeps stdout/stderr on a non-zero exit).
type Outcome struct {
	Content any
	Root    PathClass
	Review  any
	Message string
	// Terminate and Extra are merged into the envelope for edit recovery.
	Terminate bool
}

// ToolDef describes one tool: its contract, its place in the policy and its body.
type ToolDef struct {
	Name          string // model-facing name
	Description   string // one line, shown in the on-demand catalog
	Risk          Risk
	Kind          Kind
	ModeOf        string        // enter-mode / submit tools: the mode they belong to
	OnDemand      bool          // Agent mode: needs ToolSearch activation (R-TOOL-4)
	Timeout       time.Duration // the body's budget (R-TOOL-1)
	Schema        json.RawMessage
	NewArgs       func() any // a pointer to the args struct
	Validate      func(args any) error
	Path          func(args any) (string, PathUse) // the explicit path argument ("" = default)
	Run           func(ctx context.Context, env *Env, args any) (*Outcome, error)
	Exclusive     bool                  // must be the only tool call of the session in flight (R-MODE-3)
	NeedsRoot     bool                  // unavailable without a workspace (temporary sessions)
	WorkspaceOnly bool                  // an explicit path outside the workspace is PATH_OUTSIDE_WORKSPACE, never a card
	Mutates       bool                  // serialised per session (R-MUT-1)
	Redact        func(args any) string // optional custom preview
	NoAudit       bool
}

// Registry holds the tools of this host.
type Registry struct {
	byName map[string]*ToolDef
	order  []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*ToolDef{}} }

// Add registers a tool; a duplicate name is a programming error.
func (r *Registry) Add(t *ToolDef) {
	if _, dup := r.byName[t.Name]; dup {
		panic("duplicate tool " + t.Name)
	}
	r.byName[t.Name] = t
	r.order = append(r.order, t.Name)
}

// Lookup finds a tool by its model-facing name, exactly or case-insensitively
// (ignoring '_' and '-': "browser-preview" finds BrowserPreview).
func (r *Registry) Lookup(name string) (*ToolDef, bool) {
	if t, ok := r.byName[name]; ok {
		return t, true
	}
	k := canonKey(name)
	for _, n := range r.order {
		if canonKey(n) == k {
			return r.byName[n], true
		}
	}
	return nil, false
}

// All returns the tools in registration order.
func (r *Registry) All() []*ToolDef {
	out := make([]*ToolDef, len(r.order))
	for i, n := range r.order {
		out[i] = r.byName[n]
	}
	return out
}

func canonKey(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

// DecodeArgs parses JSON args into the tool's struct. Keys are matched to
// json tags ignoring case, '_' and '-' (camelCase aliases: old_string ==
// oldString); an unknown key, a wrong type or trailing data is
// INVALID_ARGUMENT.
func DecodeArgs(t *ToolDef, raw json.RawMessage) (any, []byte, error) {
	args := t.NewArgs()
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return nil, nil, Errf(InvalidArgument, "args for %s: trailing data after the JSON object", t.Name)
		}
		return nil, nil, Errf(InvalidArgument, "args for %s must be a JSON object: %v", t.Name, err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	rv := reflect.ValueOf(args).Elem()
	fields := map[string]int{}
	for i := 0; i < rv.NumField(); i++ {
		tag, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		if tag != "" && tag != "-" {
			fields[canonKey(tag)] = i
		}
	}
	norm := make(map[string]json.RawMessage, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	spelled := true // every key already spelled as its tag
	for _, k := range keys {
		i, ok := fields[canonKey(k)]
		if !ok {
			return nil, nil, Errf(InvalidArgument, "%s has no argument %q (see `pi tool schema %s`)", t.Name, k, t.Name)
		}
		tag, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		if _, dup := norm[tag]; dup {
			return nil, nil, Errf(InvalidArgument, "%s: argument %q given twice", t.Name, tag)
		}
		norm[tag] = m[k]
		spelled = spelled && tag == k
		// Each value is decoded straight into its field: one pass over a
		// 50 MB Write's content instead of a re-encode and a second decode.
		if err := json.Unmarshal(m[k], rv.Field(i).Addr().Interface()); err != nil {
			return nil, nil, Errf(InvalidArgument, "args for %s: %s", t.Name, cleanJSONErr(tag, err))
		}
	}
	// The canonical form (tags, sorted keys) is what the args hash covers;
	// big args already spelled canonically are hashed as they came.
	canon := []byte(raw)
	if !spelled || len(raw) < 1<<20 {
		canon, _ = json.Marshal(norm)
	}
	if t.Validate != nil {
		if err := t.Validate(args); err != nil {
			return nil, nil, err
		}
	}
	return args, canon, nil
}

func cleanJSONErr(field string, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s must be %s, not %s", field, te.Type.String(), te.Value)
	}
	return field + ": " + err.Error()
}

// inRange checks an optional integer argument against its bounds.
func inRange(name string, v *int, lo, hi int) error {
	if v != nil && (*v < lo || *v > hi) {
		return Errf(InvalidArgument, "%s must be between %d and %d", name, lo, hi)
	}
	return nil
}
