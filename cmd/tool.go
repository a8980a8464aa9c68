package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// callOpts are the flags common to every `pi tool` command.
type callOpts struct {
	ToolCallID string
	Delegate   string
}

func (o *callOpts) bind(c *cobra.Command) {
	c.Flags().StringVar(&o.ToolCallID, "tool-call-id", "", "caller-supplied tool call id (default: generated)")
	c.Flags().StringVar(&o.Delegate, "delegate", "", "the sub-agent making this call (see pi agent list)")
}

const toolExit = `
EXIT STATUS
  0 ok · 1 the tool failed (NOT_FOUND, TOOL_FAILED, TOOL_TIMEOUT, TOOL_BINARY_CONTENT, …) ·
  2 invalid argument, unknown or inactive tool · 3 refused (TOOL_DENIED, PERMISSION_TIMEOUT,
  PATH_OUTSIDE_WORKSPACE, *_DISABLED_IN_PLAN) · 4 conflict · 5 store failure · 130 interrupted`

func newToolCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "tool",
		Short: "Call a tool through the policy, the permission queue and the audit",
		Long: `Every tool call takes the same road: session → arguments → mode matrix →
paths → policy → permission (may wait for 'pi permission respond') → run →
review record → audit → one JSON result envelope on stdout.
` + toolExit,
	}
	c.AddCommand(newToolListCmd(f), newToolSchemaCmd(f), newToolCallCmd(f), newToolReadCmd(f), newToolGlobCmd(f),
		newToolGrepCmd(f), newToolPreviewCmd(f), newToolSearchCmd(f), newToolNewContextCmd(f),
		newToolEnterModeCmd(f, "enter-plan-mode", "EnterPlanMode", "plan"),
		newToolEnterModeCmd(f, "enter-goal-mode", "EnterGoalMode", "goal"), newToolBashCmd(f))
	for _, sub := range mutationToolCmds(f) {
		c.AddCommand(sub)
	}
	return c
}

// call hands one call to the single Execute road and prints its envelope.
func (f *Factory) call(cmd *cobra.Command, o *callOpts, tool string, args any) error {
	raw, err := json.Marshal(args)
	if err != nil {
		return f.emit(nil, nil, hostcore.Wrap(hostcore.InvalidArgument, err, "args"))
	}
	return f.callRaw(cmd, o, tool, raw, nil)
}

func (f *Factory) callRaw(cmd *cobra.Command, o *callOpts, tool string, raw json.RawMessage, tweak func(*hostcore.Call)) error {
	if err := f.checkOutputFlag(); err != nil {
		return f.emit(nil, nil, err)
	}
	h, err := f.Host(cmd.Context())
	if err != nil {
		return f.emit(nil, nil, err)
	}
	call := &hostcore.Call{SessionID: f.SessionID(), Tool: tool, Args: raw, ToolCallID: o.ToolCallID, Delegate: o.Delegate}
	if tweak != nil {
		tweak(call)
	}
	return f.emitResult(h.Execute(cmd.Context(), call))
}

func newToolListCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "Active tools and the on-demand catalog for this session and turn", Args: cobra.NoArgs,
		Long: "List the tools the session may call now and the on-demand catalog (activate with pi tool search).\n" + toolExit,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				l, err := h.ListTools(cmd.Context(), f.SessionID())
				if err != nil {
					return reply(nil, nil, err)
				}
				return reply(l, func(w io.Writer) {
					fmt.Fprintf(w, "mode %s, turn %d\nactive:\n", l.Mode, l.Turn)
					for _, t := range l.Active {
						fmt.Fprintf(w, "  %-15s %-6s %s\n", t.Name, t.Risk, t.Description)
					}
					if len(l.OnDemand) > 0 {
						fmt.Fprintln(w, "on demand (pi tool search NAME):")
						for _, t := range l.OnDemand {
							mark := " "
							if t.Active {
								mark = "*"
							}
							fmt.Fprintf(w, " %s%-15s %-6s %s\n", mark, t.Name, t.Risk, t.Description)
						}
					}
				}, nil)
			})
		},
	}
}

func newToolSchemaCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "schema NAME", Short: "Print the JSON schema of a tool's arguments", Args: cobra.ExactArgs(1),
		Long:    "Print the JSON schema of a tool's arguments (camelCase; snake_case aliases are accepted).\n" + toolExit,
		Example: "  pi tool schema Grep",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				s, name, err := h.Schema(args[0])
				if err != nil {
					return reply(nil, nil, err)
				}
				return reply(map[string]any{"name": name, "schema": s}, func(w io.Writer) {
					var v any
					_ = json.Unmarshal(s, &v)
					b, _ := json.MarshalIndent(v, "", "  ")
					fmt.Fprintln(w, string(b))
				}, nil)
			})
		},
	}
}

func newToolCallCmd(f *Factory) *cobra.Command {
	var o callOpts
	var argsFlag, messageID string
	c := &cobra.Command{
		Use:   "call NAME --args JSON|-",
		Short: "Call any tool by its model-facing name with JSON args",
		Long:  "The generic entry point: any tool by its model-facing name (Read, Grep, Write, Bash, plugin_…), args as a JSON object, or - to read them from stdin.\n" + toolExit,
		Example: `  pi tool call Read --args '{"path":"README.md","limit":20}'
  echo '{"pattern":"TODO","outputMode":"count"}' | pi tool call Grep --args -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := []byte(argsFlag)
			if argsFlag == "-" {
				b, err := io.ReadAll(io.LimitReader(f.IO.In, 64<<20))
				if err != nil {
					return f.emit(nil, nil, hostcore.Wrap(hostcore.InvalidArgument, err, "read args from stdin"))
				}
				raw = b
			}
			return f.callRaw(cmd, &o, args[0], raw, func(c *hostcore.Call) { c.MessageID = messageID })
		},
	}
	o.bind(c)
	c.Flags().StringVar(&argsFlag, "args", "{}", "tool arguments as a JSON object, or - for stdin")
	c.Flags().StringVar(&messageID, "message-id", "", "the tool message a review record belongs to (Write/Edit)")
	return c
}

func newToolReadCmd(f *Factory) *cobra.Command {
	var o callOpts
	var offset, limit int
	c := &cobra.Command{
		Use:   "read PATH [--offset N] [--limit N]",
		Short: "Read a window of a text file",
		Long: `Read lines [offset, offset+limit) of a text file, byte-faithful (no line numbers).
Results are capped at 48 KB / 2000 lines; nextOffset says where to continue.
` + toolExit,
		Example: "  pi tool read src/main.go\n  pi tool read big.log --offset 500 --limit 100",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := map[string]any{"path": args[0]}
			if cmd.Flags().Changed("offset") {
				a["offset"] = offset
			}
			if cmd.Flags().Changed("limit") {
				a["limit"] = limit
			}
			return f.call(cmd, &o, "Read", a)
		},
	}
	o.bind(c)
	c.Flags().IntVar(&offset, "offset", 0, "0-based first line")
	c.Flags().IntVar(&limit, "limit", 500, "lines to return (max 2000)")
	return c
}

func newToolGlobCmd(f *Factory) *cobra.Command {
	var o callOpts
	var path string
	var limit int
	c := &cobra.Command{
		Use:   "glob PATTERN [--path DIR] [--limit N]",
		Short: "Find files by doublestar pattern, newest first",
		Long: `Find files whose path (relative to the search dir) or base name matches a
doublestar pattern. Honours .gitignore/.ignore, includes hidden files, skips .git.
An on-demand tool in agent mode: activate it with 'pi tool search Glob'.
` + toolExit,
		Example: "  pi tool glob '**/*.go'\n  pi tool glob '*.md' --path docs --limit 20",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := map[string]any{"pattern": args[0]}
			if path != "" {
				a["path"] = path
			}
			if cmd.Flags().Changed("limit") {
				a["limit"] = limit
			}
			return f.call(cmd, &o, "Glob", a)
		},
	}
	o.bind(c)
	c.Flags().StringVar(&path, "path", "", "directory to search (default: the workspace)")
	c.Flags().IntVar(&limit, "limit", 100, "max matches (max 1000)")
	return c
}

func newToolGrepCmd(f *Factory) *cobra.Command {
	var o callOpts
	var path, include, mode string
	var ci bool
	var ctxLines, head int
	c := &cobra.Command{
		Use:   "grep PATTERN [--path P] [--include GLOB] [--output-mode content|files|count] [-i] [-C N] [--head-limit N]",
		Short: "Search file contents with an RE2 regular expression",
		Long: `Search contents. Honours .gitignore/.ignore, includes hidden files, skips .git
and binary files. --output-mode files is the JSON argument's filesWithMatches.
An on-demand tool in agent mode: activate it with 'pi tool search Grep'.
` + toolExit,
		Example: "  pi tool grep 'func \\w+\\(' --include '*.go'\n  pi tool grep TODO --output-mode count",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := map[string]any{"pattern": args[0]}
			if path != "" {
				a["path"] = path
			}
			if include != "" {
				a["include"] = include
			}
			if mode != "" {
				if mode == "files" {
					mode = "filesWithMatches"
				}
				a["outputMode"] = mode
			}
			if ci {
				a["caseInsensitive"] = true
			}
			if cmd.Flags().Changed("context") {
				a["context"] = ctxLines
			}
			if cmd.Flags().Changed("head-limit") {
				a["headLimit"] = head
			}
			return f.call(cmd, &o, "Grep", a)
		},
	}
	o.bind(c)
	c.Flags().StringVar(&path, "path", "", "file or directory to search (default: the workspace)")
	c.Flags().StringVar(&include, "include", "", "only files whose name matches this glob")
	c.Flags().StringVar(&mode, "output-mode", "", "content (default), files or count")
	c.Flags().BoolVarP(&ci, "ignore-case", "i", false, "case-insensitive")
	c.Flags().IntVarP(&ctxLines, "context", "C", 0, "lines of context (0-10)")
	c.Flags().IntVar(&head, "head-limit", 200, "max items (max 2000)")
	_ = c.RegisterFlagCompletionFunc("output-mode", fixedCompletion("content", "files", "count"))
	return c
}

func newToolPreviewCmd(f *Factory) *cobra.Command {
	var o callOpts
	var open bool
	c := &cobra.Command{
		Use: "browser-preview PATH [--open]", Short: "Resolve a workspace file to a file:// preview URL",
		Long:    "Resolve a workspace file and print its file:// URL; --open launches the system opener. Paths outside the workspace are refused in every mode.\n" + toolExit,
		Example: "  pi tool browser-preview site/index.html --open",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.call(cmd, &o, "BrowserPreview", map[string]any{"path": args[0], "open": open})
		},
	}
	o.bind(c)
	c.Flags().BoolVar(&open, "open", false, "open the URL with the system opener")
	return c
}

func newToolSearchCmd(f *Factory) *cobra.Command {
	var o callOpts
	c := &cobra.Command{
		Use: "search QUERY", Short: "ToolSearch: activate on-demand tools for this turn",
		Long:    "Activate on-demand tools (Glob, Grep, BrowserPreview, plugin tools) for the current turn, by exact name or by a query over the catalog. Searches in one turn accumulate; a new turn resets them.\n" + toolExit,
		Example: "  pi tool search Glob,Grep\n  pi tool search 'search file contents'",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.call(cmd, &o, "ToolSearch", map[string]any{"query": strings.Join(args, " ")})
		},
	}
	o.bind(c)
	return c
}

func newToolNewContextCmd(f *Factory) *cobra.Command {
	var o callOpts
	c := &cobra.Command{
		Use: "new-context", Short: "Ask for a fresh context at the next turn boundary", Args: cobra.NoArgs,
		Long: "Record a new_context request; the next 'pi session turn' reports contextReset: true.\n" + toolExit,
		RunE: func(cmd *cobra.Command, args []string) error { return f.call(cmd, &o, "new_context", map[string]any{}) },
	}
	o.bind(c)
	return c
}

func newToolEnterModeCmd(f *Factory, use, tool, mode string) *cobra.Command {
	var o callOpts
	c := &cobra.Command{
		Use: use, Short: "Move the session from agent to " + mode + " mode", Args: cobra.NoArgs,
		Long: "Move the session from agent to " + mode + " mode. Only in agent mode, and only as the sole tool call in flight.\n" + toolExit,
		RunE: func(cmd *cobra.Command, args []string) error { return f.call(cmd, &o, tool, map[string]any{}) },
	}
	o.bind(c)
	return c
}
