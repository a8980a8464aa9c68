package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
	"github.com/pi-cli/pi/pkg/hostcore/store"
)

const permExit = `
EXIT STATUS
  0 ok · 1 request not found (or owned by another session) · 2 invalid decision ·
  4 the request is no longer pending, or is queued behind its session's head · 5 store failure`

func newPermissionCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "permission",
		Short: "List, show, answer and watch permission requests",
		Long: `A tool call that needs consent waits in its own process for an answer given
here, from any terminal or script. Each session shows only the head of its
queue; answers match by request id. Unanswered requests are denied after
permissionTimeout (120s).` + permExit,
	}
	c.AddCommand(newPermissionListCmd(f), newPermissionShowCmd(f), newPermissionRespondCmd(f), newPermissionWatchCmd(f))
	return c
}

// card renders one request for a person (R-PERM-10).
func card(w io.Writer, r *store.Request, now time.Time) {
	fmt.Fprintf(w, "── %s  [%s]\n", r.RequestID, r.SessionID)
	fmt.Fprintf(w, "   tool       %s (risk %s)\n", r.ToolName, r.Risk)
	if r.Delegate != "" {
		fmt.Fprintf(w, "   requested by %s sub-agent\n", r.Delegate)
	}
	fmt.Fprintf(w, "   why        %s\n", r.Rationale)
	fmt.Fprintf(w, "   args       %s\n", r.ArgsPreview)
	if len(r.Target) > 0 {
		var t struct{ Input, Canonical, Class, Escape string }
		if json.Unmarshal(r.Target, &t) == nil {
			if t.Canonical != "" && t.Canonical != t.Input {
				fmt.Fprintf(w, "   path       %s → %s (%s, via %s)\n", t.Input, t.Canonical, t.Class, t.Escape)
			} else {
				fmt.Fprintf(w, "   path       %s (%s)\n", t.Input, t.Class)
			}
		}
	}
	fmt.Fprintf(w, "   workspace  %s\n", r.Workspace)
	dl, _ := time.Parse(time.RFC3339, r.Deadline)
	left := dl.Sub(now).Round(time.Second)
	if left < 0 {
		left = 0
	}
	fmt.Fprintf(w, "   deadline   %s (%s left)\n", r.Deadline, left)
	if r.Waiting > 1 {
		fmt.Fprintf(w, "   %d requests waiting\n", r.Waiting)
	}
	fmt.Fprintf(w, "   answer     pi permission respond %s --decision allow-once|allow-session|deny\n", r.RequestID)
}

func newPermissionListCmd(f *Factory) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use: "list [--all]", Short: "Pending requests: each session's head card (or all with --all)", Args: cobra.NoArgs,
		Long: "List pending permission requests, oldest first: the head card of each session, or every queued request with --all. Restricted to --session / PI_SESSION when given." + permExit,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				reqs, err := h.ListRequests(cmd.Context(), f.SessionID(), all)
				if err != nil {
					return reply(nil, nil, err)
				}
				return reply(map[string]any{"requests": reqs}, func(w io.Writer) {
					if len(reqs) == 0 {
						fmt.Fprintln(w, "no pending requests")
					}
					for _, r := range reqs {
						card(w, r, time.Now())
					}
				}, nil)
			})
		},
	}
	c.Flags().BoolVar(&all, "all", false, "every queued request, not only each session's head")
	return c
}

func newPermissionShowCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "show REQUEST", Short: "Show one request (any state)", Args: cobra.ExactArgs(1),
		Long: "Show one permission request in any state." + permExit,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				r, err := h.ShowRequest(cmd.Context(), f.SessionID(), args[0])
				if err != nil {
					return reply(nil, nil, err)
				}
				return reply(r, func(w io.Writer) { card(w, r, time.Now()); fmt.Fprintf(w, "   state      %s\n", r.State) }, nil)
			})
		},
	}
}

func newPermissionRespondCmd(f *Factory) *cobra.Command {
	var decision string
	c := &cobra.Command{
		Use: "respond REQUEST --decision allow-once|allow-session|deny", Short: "Answer a pending request",
		Long: `Answer a request by id. allow-once runs only that call; allow-session also
grants the tool for the rest of the session (pi grant clear revokes); deny
refuses it. Unknown ids, ids of another session (with --session) and
requests already answered or expired are errors, never a silent success.` + permExit,
		Example: "  pi permission respond req_abc --decision allow-once",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				if decision == "" {
					return reply(nil, nil, hostcore.Errf(hostcore.InvalidArgument, "--decision is required (allow-once, allow-session or deny)"))
				}
				r, err := h.Respond(cmd.Context(), f.SessionID(), args[0], decision)
				if err != nil {
					return reply(r, nil, err)
				}
				return reply(r, func(w io.Writer) { fmt.Fprintf(w, "%s: %s\n", r.RequestID, r.State) }, nil)
			})
		},
	}
	c.Flags().StringVar(&decision, "decision", "", "allow-once, allow-session or deny")
	_ = c.RegisterFlagCompletionFunc("decision", fixedCompletion("allow-once", "allow-session", "deny"))
	return c
}

func newPermissionWatchCmd(f *Factory) *cobra.Command {
	var once bool
	c := &cobra.Command{
		Use:   "watch",
		Short: "Show each session's head card and answer it from the keyboard",
		Long: `Watch pending requests. On a terminal, the head card of each session is shown
with its countdown; press o (allow once), s (allow for the session), d (deny)
or n (skip to the next card), q to quit. Without a terminal it prints cards as
plain text as they arrive (answer them with 'pi permission respond').` + permExit,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := f.Host(cmd.Context())
			if err != nil {
				return f.emit(nil, nil, err)
			}
			f.printed = true
			return watchLoop(cmd.Context(), f, h, once)
		},
	}
	c.Flags().BoolVar(&once, "once", false, "print the current cards once and exit")
	return c
}

func newGrantCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "grant",
		Short: "List or clear this session's allow-session grants",
		Long:  "Grants come from answering a card with allow-session; they are per tool name, for one session, never persisted across sessions.\n\nEXIT STATUS\n  0 ok · 1 session not found · 5 store failure",
	}
	c.AddCommand(&cobra.Command{
		Use: "list", Short: "List grants (of --session, or every session)", Args: cobra.NoArgs,
		Long: "List allow-session grants of --session / PI_SESSION, or of every session when none is set.\n\nEXIT STATUS\n  0 ok · 1 session not found · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				gs, err := h.Grants(cmd.Context(), f.SessionID())
				return reply(map[string]any{"grants": gs}, func(w io.Writer) {
					if len(gs) == 0 {
						fmt.Fprintln(w, "no grants")
					}
					for _, g := range gs {
						fmt.Fprintf(w, "%s  %-12s %s\n", g.SessionID, g.ToolName, g.GrantedAt)
					}
				}, err)
			})
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "clear [TOOL]", Short: "Revoke the session's grants (all, or one tool)", Args: cobra.MaximumNArgs(1),
		Long:    "Revoke the session's allow-session grants: every tool, or only TOOL. Later calls ask again.\n\nEXIT STATUS\n  0 ok · 1 session not found · 2 no session given · 5 store failure",
		Example: "  pi grant clear Bash",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				tool := ""
				if len(args) == 1 {
					tool = args[0]
				}
				n, err := h.ClearGrants(cmd.Context(), f.SessionID(), tool)
				return reply(map[string]any{"cleared": n}, func(w io.Writer) { fmt.Fprintf(w, "cleared %d grant(s)\n", n) }, err)
			})
		},
	})
	return c
}
