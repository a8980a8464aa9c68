package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
)

func newScratchCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "scratch", Short: "The session's scratch dir: path, paste, sweep",
		Long: `Every session has a scratch dir outside its workspace (<data>/scratch/<id>/)
for throw-away files: Write/Edit there need no card and leave no review record.

EXIT STATUS
  0 ok · 1 not found · 2 invalid argument · 3 refused (deny list) · 5 store failure`}
	c.AddCommand(&cobra.Command{
		Use: "path", Short: "Print the session's scratch dir", Args: cobra.NoArgs,
		Long: "Print the absolute path of the session's scratch dir (created on first use). Bash exports it as PI_SCRATCH_DIR.\n\nEXIT STATUS\n  0 ok · 1 session not found · 2 no session given · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				p, err := h.ScratchPath(cmd.Context(), f.SessionID())
				return reply(map[string]any{"path": p}, func(w io.Writer) { fmt.Fprintln(w, p) }, err)
			})
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "paste FILE", Short: "Copy a file into scratch/<id>/pasted/ and print its absolute path", Args: cobra.ExactArgs(1),
		Long:    "Copy FILE into the session's scratch/pasted/ (a new name if one exists) and print its absolute path, for an @ reference. pi's own dirs and deny-listed paths are refused.\n\nEXIT STATUS\n  0 ok · 1 not found · 2 not a regular file · 3 refused (deny list) · 5 store failure",
		Example: "  pi scratch paste ~/Desktop/screenshot.png",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				p, err := h.Paste(cmd.Context(), f.SessionID(), args[0])
				return reply(map[string]any{"path": p}, func(w io.Writer) { fmt.Fprintln(w, p) }, err)
			})
		},
	})
	var dry bool
	var maxAge time.Duration
	sweep := &cobra.Command{
		Use: "sweep [--dry-run] [--max-age 168h]", Short: "Remove scratch and snapshot dirs of gone sessions and stale scratch dirs", Args: cobra.NoArgs,
		Long: `Remove scratch dirs whose session no longer exists or that were untouched
(newest mtime of the dir and its entries) for longer than --max-age, and
review snapshot dirs of sessions that no longer exist. Run it from cron or a
CI teardown; ordinary pi calls never delete anything.

EXIT STATUS
  0 ok · 2 invalid argument · 5 store failure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxAge <= 0 {
				return f.emit(nil, nil, hostcore.Errf(hostcore.InvalidArgument, "--max-age must be positive"))
			}
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				r, err := h.Sweep(cmd.Context(), maxAge, dry)
				return reply(r, func(w io.Writer) {
					verb := "removed"
					if r.DryRun {
						verb = "would remove"
					}
					for _, p := range r.Removed {
						fmt.Fprintf(w, "%s %s\n", verb, p)
					}
					fmt.Fprintf(w, "%d %s, %d kept\n", len(r.Removed), verb, r.Kept)
				}, err)
			})
		},
	}
	sweep.Flags().BoolVar(&dry, "dry-run", false, "only report")
	sweep.Flags().DurationVar(&maxAge, "max-age", 7*24*time.Hour, "remove scratch dirs untouched for longer than this")
	c.AddCommand(sweep)
	return c
}

func newHostCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "host", Short: "Host-level maintenance",
		Long: "Host-level maintenance.\n\nEXIT STATUS\n  0 ok · 5 store failure"}
	c.AddCommand(&cobra.Command{
		Use: "recover", Short: "Interrupt pending/queued/running work, as a host restart would", Args: cobra.NoArgs,
		Long: `Do what a host restart does, on demand (after a crash, or in a test): every
pending permission request is cancelled (a live waiter gets TOOL_DENIED),
pending/queued/running plan and goal proposals become interrupted without
replay, audit rows left running by dead processes become interrupted, and
registrations of dead tool processes are dropped. Nothing is executed.

EXIT STATUS
  0 ok · 5 store failure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				r, err := h.Recover(cmd.Context())
				return reply(r, func(w io.Writer) {
					fmt.Fprintf(w, "cancelled %d request(s), interrupted %d audit row(s) and %d proposal(s), dropped %d dead registration(s)\n",
						len(r.CancelledRequests), r.InterruptedAudits, r.InterruptedProposals, r.DroppedRunning)
				}, err)
			})
		},
	})
	return c
}
