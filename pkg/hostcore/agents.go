package hostcore

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// delegateTools are the only tools a definition may list (R-SUB-2).
var delegateTools = []string{"Read", "Glob", "Grep", "BrowserPreview", "Bash", "Edit", "Write"}

// Delegate is a sub-agent definition (R-SUB-0).
type Delegate struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tools       []string `json:"tools"`
	Source      string   `json:"source"`
	Warnings    []string `json:"warnings,omitempty"`
}

// Delegates loads definitions from $XDG_CONFIG_HOME/pi/agents and
// <workspace>/.pi/agents; the workspace wins on a name clash. The workspace
// dir is read through os.Root, like every other workspace access.
func (h *Host) Delegates(ctx context.Context, s *store.Session) ([]Delegate, error) {
	byName := map[string]Delegate{}
	if h.configDir != "" {
		if root, err := os.OpenRoot(filepath.Join(h.configDir, "agents")); err == nil {
			loadDelegates(root, filepath.Join(h.configDir, "agents"), byName)
			root.Close()
		}
	}
	if s.WorkspaceRoot != "" {
		if root, err := os.OpenRoot(s.WorkspaceRoot); err == nil {
			if sub, err := root.OpenRoot(".pi/agents"); err == nil {
				loadDelegates(sub, filepath.Join(s.WorkspaceRoot, ".pi", "agents"), byName)
				sub.Close()
			}
			root.Close()
		}
	}
	out := make([]Delegate, 0, len(byName))
	for _, d := range byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func loadDelegates(root *os.Root, dir string, into map[string]Delegate) {
	ents, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := fs.ReadFile(root.FS(), e.Name())
		if err != nil || len(b) > 1<<20 {
			continue
		}
		if d, ok := parseDelegate(b); ok {
			d.Source = filepath.Join(dir, e.Name())
			if d.Name == "" {
				d.Name = strings.TrimSuffix(path.Base(e.Name()), ".md")
			}
			into[d.Name] = d
		}
	}
}

// parseDelegate reads the front matter: name, description, tools (a list,
// a comma-separated string, or "*").
func parseDelegate(b []byte) (Delegate, bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	if !bytes.HasPrefix(b, []byte("---")) {
		return Delegate{}, false
	}
	rest := b[3:]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return Delegate{}, false
	}
	var fm struct {
		Name        string    `yaml:"name"`
		Description string    `yaml:"description"`
		Tools       yaml.Node `yaml:"tools"`
	}
	if err := yaml.Unmarshal(rest[:end], &fm); err != nil {
		return Delegate{}, false
	}
	d := Delegate{Name: strings.TrimSpace(fm.Name), Description: fm.Description}
	var names []string
	switch fm.Tools.Kind {
	case yaml.ScalarNode:
		names = strings.FieldsFunc(fm.Tools.Value, func(r rune) bool { return r == ',' || r == ' ' })
	case yaml.SequenceNode:
		for _, n := range fm.Tools.Content {
			names = append(names, strings.TrimSpace(n.Value))
		}
	}
	switch {
	case len(names) == 0:
		d.Tools = []string{"Read", "Glob", "Grep"}
	case len(names) == 1 && names[0] == "*":
		d.Tools = slices.Clone(delegateTools)
	default:
		d.Tools = []string{} // listed tools that are all unknown leave none, not the default
		for _, n := range names {
			i := slices.IndexFunc(delegateTools, func(t string) bool { return strings.EqualFold(t, n) })
			if i < 0 {
				d.Warnings = append(d.Warnings, "unknown or unassignable tool "+n+" dropped")
				continue
			}
			if !slices.Contains(d.Tools, delegateTools[i]) {
				d.Tools = append(d.Tools, delegateTools[i])
			}
		}
	}
	return d, true
}

func (h *Host) hasDelegates(s *store.Session) bool {
	ds, _ := h.Delegates(context.Background(), s)
	return len(ds) > 0
}

// checkDelegate enforces R-SUB-3: a delegate's rights are its definition's.
func (h *Host) checkDelegate(ctx context.Context, s *store.Session, name string, def *ToolDef) error {
	if s.Mode != ModeAgent {
		return Errf(ToolDisabledInPlan, "delegates run only in agent mode")
	}
	ds, err := h.Delegates(ctx, s)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if d.Name == name {
			if slices.Contains(d.Tools, def.Name) {
				return nil
			}
			return Errf(ToolDenied, "delegate %s may not call %s (its tools: %s)", name, def.Name, strings.Join(d.Tools, ", "))
		}
	}
	return Errf(InvalidArgument, "no delegate definition named %q (see pi agent list)", name)
}
