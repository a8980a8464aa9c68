package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
	"github.com/pi-cli/pi/pkg/hostcore/store"
)

func mutationToolCmds(f *Factory) []*cobra.Command {
	return []*cobra.Command{newToolWriteCmd(f), newToolEditCmd(f)}
}

func newToolWriteCmd(f *Factory) *cobra.Command {
	var o callOpts
	var content, messageID string
	c := &cobra.Command{
		Use:   "write PATH [--content S | stdin]",
		Short: "Create or replace a file atomically (high risk, reviewed)",
		Long: `Create or replace a file: parent dirs are created, the file is replaced
atomically (temp file, fsync, rename), an existing file's mode is kept, a
final symlink or hard link is replaced, never written through. Workspace
writes get a review record (pi review …); scratch writes need no card.
Without --content the content is read from stdin.
` + toolExit,
		Example: "  pi tool write notes/todo.md --content '- ship it'\n  go doc fmt | pi tool write docs/fmt.txt",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("content") {
				b, err := io.ReadAll(io.LimitReader(f.IO.In, 1<<30))
				if err != nil {
					return f.emit(nil, nil, hostcore.Wrap(hostcore.InvalidArgument, err, "read content from stdin"))
				}
				content = string(b)
			}
			raw, _ := jsonMarshal(map[string]any{"path": args[0], "content": content})
			return f.callRaw(cmd, &o, "Write", raw, func(c *hostcore.Call) { c.MessageID = messageID })
		},
	}
	o.bind(c)
	c.Flags().StringVar(&content, "content", "", "the new content (default: stdin)")
	c.Flags().StringVar(&messageID, "message-id", "", "the tool message the review record belongs to (default: the tool call id)")
	return c
}

func newToolEditCmd(f *Factory) *cobra.Command {
	var o callOpts
	var oldS, newS, messageID string
	var all bool
	c := &cobra.Command{
		Use:   "edit PATH --old S --new S [--replace-all]",
		Short: "Replace an exact string in a file (high risk, reviewed)",
		Long: `Replace old with new. old must match exactly one place (or use
--replace-all); there is no fuzzy matching. A UTF-8 BOM is kept; a CRLF file
is matched in LF and written back in CRLF. A second failed Edit of the same
path in a turn is terminal (MUTATION_RETRY_BUDGET_EXHAUSTED, terminate: true).
` + toolExit,
		Example: "  pi tool edit main.go --old 'println(\"hi\")' --new 'fmt.Println(\"hi\")'",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, _ := jsonMarshal(map[string]any{"path": args[0], "old_string": oldS, "new_string": newS, "replace_all": all})
			return f.callRaw(cmd, &o, "Edit", raw, func(c *hostcore.Call) { c.MessageID = messageID })
		},
	}
	o.bind(c)
	c.Flags().StringVar(&oldS, "old", "", "exact text to replace")
	c.Flags().StringVar(&newS, "new", "", "replacement text")
	c.Flags().BoolVar(&all, "replace-all", false, "replace every occurrence")
	c.Flags().StringVar(&messageID, "message-id", "", "the tool message the review record belongs to (default: the tool call id)")
	return c
}

const reviewExit = `
EXIT STATUS
  0 ok · 1 not found · 2 invalid argument · 4 conflict (changed since, already
  rolled back, irreversible: nothing was touched) · 5 store failure`

func newReviewCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "review",
		Short: "Review and roll back the session's Write/Edit changes",
		Long: `Every successful workspace Write/Edit leaves a review record with the
pre-image kept outside the workspace. Rollback is hash-guarded: it restores
the captured bytes (or removes a created file) only if the file still equals
what the tool wrote; otherwise CONFLICT and nothing is touched.` + reviewExit,
	}
	var path, state string
	list := &cobra.Command{
		Use: "list [--path P] [--state active|rolledBack]", Short: "List review records, newest first", Args: cobra.NoArgs,
		Long: "List review records of --session / PI_SESSION, newest first." + reviewExit,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				rows, err := h.ListChanges(cmd.Context(), hostcore.ReviewFilter{SessionID: f.SessionID(), Path: path, State: state})
				return reply(map[string]any{"changes": rows}, func(w io.Writer) {
					if len(rows) == 0 {
						fmt.Fprintln(w, "no changes")
					}
					for _, r := range rows {
						fmt.Fprintf(w, "%s %s %-9s %-8s +%d -%d %s  (message %s)\n", r.SnapshotID, r.CreatedAt, r.State, r.Status, r.Additions, r.Deletions, r.Path, r.MessageID)
					}
				}, err)
			})
		},
	}
	list.Flags().StringVar(&path, "path", "", "only this workspace-relative path")
	list.Flags().StringVar(&state, "state", "", "active or rolledBack")
	_ = list.RegisterFlagCompletionFunc("state", fixedCompletion("active", "rolledBack"))
	var patch bool
	show := &cobra.Command{
		Use: "show ID [--patch]", Short: "Show one review record (with --patch, a unified diff)", Args: cobra.ExactArgs(1),
		Long: "Show one record; --patch adds a unified diff (coloured on a terminal in text mode)." + reviewExit,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				color := f.outputMode() == "text" && f.IO.OutTTY && f.Getenv("NO_COLOR") == ""
				r, p, err := h.ShowChange(cmd.Context(), f.SessionID(), args[0], patch, color)
				if err != nil {
					return reply(nil, nil, err)
				}
				var content any = r
				if patch {
					content = struct {
						*store.ChangeRow
						Patch string `json:"patch"`
					}{r, p}
				}
				return reply(content, func(w io.Writer) {
					fmt.Fprintf(w, "%s %s %s %s +%d -%d (state %s, reversible %v)\n", r.SnapshotID, r.Operation, r.Status, r.Path, r.Additions, r.Deletions, r.State, r.Reversible)
					if patch {
						io.WriteString(w, p)
					}
				}, nil)
			})
		},
	}
	show.Flags().BoolVar(&patch, "patch", false, "include a unified diff")
	var message string
	rollback := &cobra.Command{
		Use: "rollback ID | rollback --message MSG", Short: "Undo a change, or every change of one message", Args: cobra.MaximumNArgs(1),
		Long: "Undo one change by id, or every change of a tool message (newest first, all-or-nothing: every guard is checked before anything is touched)." + reviewExit,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				id := ""
				if len(args) == 1 {
					id = args[0]
				}
				r, err := h.Rollback(cmd.Context(), f.SessionID(), id, message)
				if err != nil {
					return reply(r, nil, err)
				}
				return reply(r, func(w io.Writer) {
					for _, c := range r.RolledBack {
						fmt.Fprintf(w, "rolled back %s %s\n", c.SnapshotID, c.Path)
					}
				}, nil)
			})
		},
	}
	rollback.Flags().StringVar(&message, "message", "", "roll back every change of this message id")
	c.AddCommand(list, show, rollback)
	return c
}
