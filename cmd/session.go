package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
)

func newSessionCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "session",
		Short: "Create, inspect, configure and delete sessions",
		Long: `A session binds an agent conversation to one workspace directory (its
canonical path and identity are fixed at creation), an operating mode
(agent, plan, goal) and a permission mode (inherit, ask, accept-edits, auto).

EXIT STATUS
  0 ok · 1 not found · 2 invalid argument · 4 blocked by a pending proposal · 5 store failure`,
	}
	c.AddCommand(newSessionCreateCmd(f), newSessionListCmd(f), newSessionShowCmd(f), newSessionConfigureCmd(f),
		newSessionTurnCmd(f), newSessionAbortCmd(f), newSessionDeleteCmd(f))
	return c
}

func sessionText(v *hostcore.SessionView) func(io.Writer) {
	return func(w io.Writer) {
		ws := v.WorkspaceRoot
		if v.Temporary {
			ws = "(temporary: no workspace)"
		}
		fmt.Fprintf(w, "%s\n  workspace  %s\n  mode       %s\n  permission %s (effective %s)\n  turn       %d\n",
			v.ID, ws, v.Mode, v.PermissionMode, v.EffectivePermissionMode, v.Turn)
		if v.ShellID != "" {
			fmt.Fprintf(w, "  shell      %s\n", v.ShellID)
		}
		if v.PendingRequests > 0 {
			fmt.Fprintf(w, "  pending    %d permission request(s)\n", v.PendingRequests)
		}
		if v.ContextReset != nil {
			fmt.Fprintf(w, "  contextReset %v\n", *v.ContextReset)
		}
	}
}

func newSessionCreateCmd(f *Factory) *cobra.Command {
	var o hostcore.CreateOptions
	c := &cobra.Command{
		Use:   "create --workspace DIR | --temporary",
		Short: "Create a session bound to a workspace",
		Long: `Create a session. The workspace is resolved to its canonical path and its
identity is recorded; tool paths resolve against it for the session's life.
A temporary session has no workspace: high-risk tools are unavailable in it.

Print only the id with: pi session create --workspace . -o json | jq -r .content.id

EXIT STATUS
  0 ok · 2 invalid argument (missing dir, not a dir, bad mode) · 5 store failure`,
		Example: `  pi session create --workspace .
  pi session create --workspace ~/src/app --mode plan --permission-mode ask
  pi session create --temporary`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				return sessionReply(h.CreateSession(cmd.Context(), o))
			})
		},
	}
	c.Flags().StringVarP(&o.Workspace, "workspace", "w", "", "workspace directory")
	c.Flags().StringVar(&o.Mode, "mode", "agent", "agent, plan or goal")
	c.Flags().StringVar(&o.PermissionMode, "permission-mode", "inherit", "inherit, ask, accept-edits or auto")
	c.Flags().BoolVar(&o.Temporary, "temporary", false, "a session without a workspace")
	_ = c.RegisterFlagCompletionFunc("mode", fixedCompletion("agent", "plan", "goal"))
	_ = c.RegisterFlagCompletionFunc("permission-mode", fixedCompletion("inherit", "ask", "accept-edits", "auto"))
	return c
}

func newSessionListCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List live sessions", Args: cobra.NoArgs,
		Long: "List live sessions, oldest first.\n\nEXIT STATUS\n  0 ok · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				vs, err := h.ListSessions(cmd.Context())
				return reply(map[string]any{"sessions": vs}, func(w io.Writer) {
					if len(vs) == 0 {
						fmt.Fprintln(w, "no sessions")
					}
					for _, v := range vs {
						ws := v.WorkspaceRoot
						if v.Temporary {
							ws = "(temporary)"
						}
						fmt.Fprintf(w, "%s  %-5s %-12s turn %-3d %s\n", v.ID, v.Mode, v.EffectivePermissionMode, v.Turn, ws)
					}
				}, err)
			})
		},
	}
}

func newSessionShowCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "show [ID]", Short: "Show a session (default: --session / PI_SESSION)", Args: cobra.MaximumNArgs(1),
		Long: "Show one session.\n\nEXIT STATUS\n  0 ok · 1 not found · 2 no session given · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				return sessionReply(h.ShowSession(cmd.Context(), f.sessionArg(args)))
			})
		},
	}
}

func newSessionConfigureCmd(f *Factory) *cobra.Command {
	var o hostcore.ConfigureOptions
	c := &cobra.Command{
		Use: "configure [ID] [--mode M] [--permission-mode M]", Short: "Change a session's mode or permission mode",
		Long: `Change the operating mode or the permission mode of a session. Refused while
a plan or goal proposal of the session is pending (PLAN_APPROVAL_PENDING).

EXIT STATUS
  0 ok · 1 not found · 2 invalid value · 4 a proposal is pending · 5 store failure`,
		Example: "  pi session configure --permission-mode accept-edits",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Mode == "" && o.PermissionMode == "" {
				return f.emit(nil, nil, hostcore.Errf(hostcore.InvalidArgument, "nothing to change: give --mode and/or --permission-mode"))
			}
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				return sessionReply(h.ConfigureSession(cmd.Context(), f.sessionArg(args), o))
			})
		},
	}
	c.Flags().StringVar(&o.Mode, "mode", "", "agent, plan or goal")
	c.Flags().StringVar(&o.PermissionMode, "permission-mode", "", "inherit, ask, accept-edits or auto")
	_ = c.RegisterFlagCompletionFunc("mode", fixedCompletion("agent", "plan", "goal"))
	_ = c.RegisterFlagCompletionFunc("permission-mode", fixedCompletion("inherit", "ask", "accept-edits", "auto"))
	return c
}

func newSessionTurnCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "turn [ID]", Short: "Start a new turn (user prompt)", Args: cobra.MaximumNArgs(1),
		Long: `Start a new turn: the counter goes up, the command shell is pinned again, the
on-demand tool set is reset, and contextReset reports a new_context request.

EXIT STATUS
  0 ok · 1 not found · 4 a proposal is pending · 5 store failure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				return sessionReply(h.NewTurn(cmd.Context(), f.sessionArg(args)))
			})
		},
	}
}

func newSessionAbortCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "abort [ID]", Short: "Stop the turn: deny every waiting request, kill running tools", Args: cobra.MaximumNArgs(1),
		Long: `Abort a session's turn (R-PERM-9): every pending permission request of the
session is denied (its waiting call returns TOOL_DENIED, audited as aborted),
running tool processes of the session are stopped (TOOL_ABORTED), and pending
ask questions are resolved as skipped.

EXIT STATUS
  0 ok · 1 not found · 5 store failure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				r, err := h.Abort(cmd.Context(), f.sessionArg(args))
				if err != nil {
					return reply(nil, nil, err)
				}
				return reply(r, func(w io.Writer) {
					fmt.Fprintf(w, "aborted %s: %d request(s) denied (%s), %d running call(s) stopped, %d question(s) skipped\n",
						r.SessionID, len(r.DeniedRequests), strings.Join(r.DeniedRequests, ", "), r.StoppedCalls, r.SkippedQuestions)
				}, nil)
			})
		},
	}
}

func newSessionDeleteCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "delete ID", Short: "Delete a session, its scratch dir and its review snapshots", Args: cobra.ExactArgs(1),
		Long: `Delete a session: its pending requests are cancelled, its grants dropped, its
scratch dir and review snapshots removed. Audit rows are kept.

EXIT STATUS
  0 ok · 1 not found · 5 store failure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				if err := h.DeleteSession(cmd.Context(), args[0]); err != nil {
					return reply(nil, nil, err)
				}
				return reply(map[string]any{"id": args[0], "deleted": true}, func(w io.Writer) { fmt.Fprintf(w, "deleted %s\n", args[0]) }, nil)
			})
		},
	}
}
