package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
	"github.com/pi-cli/pi/pkg/hostcore/store"
)

func newAuditCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "audit",
		Short: "Inspect and export the audit log (one row per tool call)",
		Long: `Every tool call leaves one audit row, allowed or not: session, turn, tool call
id, tool, delegate, args hash and redacted preview, path class, decision,
outcome and timing segments.

EXIT STATUS
  0 ok · 2 invalid filter · 5 store failure`,
	}
	var fl struct {
		tool, decision, since string
		limit                 int
		all                   bool
	}
	filter := func() (store.AuditFilter, error) {
		af := store.AuditFilter{Tool: fl.tool, Decision: fl.decision, Limit: fl.limit}
		if !fl.all {
			af.SessionID = f.SessionID()
		}
		if fl.since != "" {
			d, err := time.ParseDuration(fl.since)
			if err != nil || d <= 0 {
				return af, hostcore.Errf(hostcore.InvalidArgument, "--since must be a duration like 10m or 24h")
			}
			af.SinceMs = time.Now().Add(-d).UnixMilli()
		}
		return af, nil
	}
	list := &cobra.Command{
		Use: "list [--tool T] [--decision D] [--since DURATION] [--limit N]", Short: "List audit rows, newest first", Args: cobra.NoArgs,
		Long:    "List audit rows of --session / PI_SESSION (every session when none is set, or with --all), newest first.\n\nEXIT STATUS\n  0 ok · 2 invalid filter · 5 store failure",
		Example: "  pi audit list --decision denied --since 1h",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				af, err := filter()
				if err != nil {
					return reply(nil, nil, err)
				}
				rows := []*store.AuditRow{}
				err = h.DB.Audit(cmd.Context(), af, func(r *store.AuditRow) error { rows = append(rows, r); return nil })
				if err != nil {
					err = hostcore.Wrap(hostcore.StoreError, err, "read audit")
				}
				return reply(map[string]any{"rows": rows}, func(w io.Writer) {
					for _, r := range rows {
						outcome := "ok"
						if !r.OK {
							outcome = r.ErrorCode
						}
						fmt.Fprintf(w, "%s %s t%d %-14s %-15s %-22s %5dms  %s\n", r.CreatedAt, r.SessionID, r.Turn, r.ToolName,
							r.Decision, outcome, r.Timing.TotalMs, r.ArgsPreview)
					}
				}, err)
			})
		},
	}
	list.Flags().StringVar(&fl.tool, "tool", "", "only this tool")
	list.Flags().StringVar(&fl.decision, "decision", "", "only this decision (auto_allowed, granted, allowed_once, allowed_session, denied, timeout_denied, cancelled, aborted, policy_denied)")
	list.Flags().StringVar(&fl.since, "since", "", "only rows newer than this duration ago")
	list.Flags().IntVar(&fl.limit, "limit", 50, "max rows")
	list.Flags().BoolVar(&fl.all, "all", false, "every session, even when PI_SESSION is set")
	_ = list.RegisterFlagCompletionFunc("decision", fixedCompletion("auto_allowed", "granted", "allowed_once", "allowed_session", "denied", "timeout_denied", "cancelled", "aborted", "policy_denied"))
	var format string
	export := &cobra.Command{
		Use: "export [--format jsonl]", Short: "Write audit rows as JSON Lines (oldest first, no envelope)", Args: cobra.NoArgs,
		Long: "Write every matching audit row as one JSON object per line, oldest first, whatever --output says. Filters as for list; no limit unless --limit is given.\n\nEXIT STATUS\n  0 ok · 2 invalid filter · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "jsonl" {
				return f.emit(nil, nil, hostcore.Errf(hostcore.InvalidArgument, "--format must be jsonl"))
			}
			h, err := f.Host(cmd.Context())
			if err != nil {
				return f.emit(nil, nil, err)
			}
			af, err := filter()
			if err != nil {
				return f.emit(nil, nil, err)
			}
			if !cmd.Flags().Changed("limit") {
				af.Limit = 0
			}
			af.Ascending = true
			f.printed = true
			err = h.DB.Audit(cmd.Context(), af, func(r *store.AuditRow) error { writeJSON(f.IO.Out, r); return nil })
			if err != nil {
				f.fail(hostcore.Wrap(hostcore.StoreError, err, "read audit"))
			}
			return nil
		},
	}
	export.Flags().StringVar(&format, "format", "jsonl", "jsonl")
	export.Flags().StringVar(&fl.tool, "tool", "", "only this tool")
	export.Flags().StringVar(&fl.decision, "decision", "", "only this decision")
	export.Flags().StringVar(&fl.since, "since", "", "only rows newer than this duration ago")
	export.Flags().IntVar(&fl.limit, "limit", 0, "max rows")
	export.Flags().BoolVar(&fl.all, "all", false, "every session, even when PI_SESSION is set")
	c.AddCommand(list, export)
	return c
}

func newAgentCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "agent", Short: "Delegate (sub-agent) definitions",
		Long: "Delegate definitions are Markdown files with front matter (name, description, tools) in <workspace>/.pi/agents/ and $XDG_CONFIG_HOME/pi/agents/; the workspace wins on a name clash.\n\nEXIT STATUS\n  0 ok · 1 session not found · 5 store failure"}
	c.AddCommand(&cobra.Command{
		Use: "list", Short: "Delegate definitions found for the session", Args: cobra.NoArgs,
		Long: "List the delegate definitions a session sees (workspace .pi/agents wins over the user's), with the tools each may call; dropped tool names are warned about on stderr.\n\nEXIT STATUS\n  0 ok · 1 session not found · 2 no session given · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				s, err := h.Session(cmd.Context(), f.SessionID())
				if err != nil {
					return reply(nil, nil, err)
				}
				ds, err := h.Delegates(cmd.Context(), s)
				return reply(map[string]any{"agents": ds}, func(w io.Writer) {
					for _, d := range ds {
						fmt.Fprintf(w, "%-16s %v  %s\n", d.Name, d.Tools, d.Description)
						for _, warn := range d.Warnings {
							fmt.Fprintf(f.IO.ErrOut, "pi: warning: %s (%s): %s\n", d.Name, d.Source, warn)
						}
					}
				}, err)
			})
		},
	})
	return c
}

func storeSchemaVersion() int { return store.SchemaVersion() }
