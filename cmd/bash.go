package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
)

func newToolBashCmd(f *Factory) *cobra.Command {
	var o callOpts
	var shellID string
	var timeout int
	var stream bool
	c := &cobra.Command{
		Use:   "bash [--shell ID] [--timeout SECONDS] [--stream] -- COMMAND...",
		Short: "Run a non-interactive command in the workspace (high risk)",
		Long: `Run a command with the turn's pinned shell (bash -lc on Unix) in the
workspace root: stdin closed, no TTY, its own process group, PI_SCRATCH_DIR
exported. Timeout 60s by default (1-300). On timeout or abort the whole
process tree is killed. stdout keeps its head and stderr its tail (96 KB /
4000 lines each); the full output is spilled to the scratch dir. Secrets are
redacted. A non-zero exit is TOOL_FAILED with exitCode, stdout and stderr.
--stream copies the output live to stdout/stderr and prints the envelope last,
on its own line. Bash runs unconfined by the OS: pi gates it as a whole.
` + toolExit,
		Example: "  pi tool bash -- go test ./...\n  pi tool bash --timeout 300 --stream -- 'make build 2>&1'",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a := map[string]any{"command": strings.Join(args, " ")}
			if cmd.Flags().Changed("timeout") {
				a["timeout"] = timeout
			}
			if shellID != "" {
				a["shell"] = shellID
			}
			raw, _ := jsonMarshal(a)
			var sw *trackWriter
			return f.callRaw(cmd, &o, "Bash", raw, func(c *hostcore.Call) {
				if stream {
					sw = &trackWriter{w: f.IO.Out}
					c.Stdout, c.Stderr = sw, f.IO.ErrOut
					f.beforeEnvelope = func() {
						if sw.last != 0 && sw.last != '\n' {
							fmt.Fprintln(f.IO.Out)
						}
					}
				}
			})
		},
	}
	o.bind(c)
	c.Flags().StringVar(&shellID, "shell", "", "the shell catalog id this call expects (bash, git-bash, windows-powershell, cmd)")
	c.Flags().IntVar(&timeout, "timeout", 60, "seconds, 1-300")
	c.Flags().BoolVar(&stream, "stream", false, "copy output live, then print the envelope")
	_ = c.RegisterFlagCompletionFunc("shell", fixedCompletion("bash", "git-bash", "windows-powershell", "cmd"))
	return c
}

// trackWriter remembers the last byte written, so the envelope after a
// streamed output starts on its own line.
type trackWriter struct {
	w    io.Writer
	last byte
}

func (t *trackWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		t.last = p[len(p)-1]
	}
	return t.w.Write(p)
}

func newShellCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{Use: "shell", Short: "The command shell catalog",
		Long: "The shell catalog: stable ids bash, git-bash, windows-powershell and cmd where the platform has them.\n\nEXIT STATUS\n  0 ok · 5 store failure"}
	c.AddCommand(&cobra.Command{
		Use: "list", Short: "Show the catalog with availability and the effective default", Args: cobra.NoArgs,
		Long: "Show every shell id of this platform with its availability, executable and dialect, the effective default (defaultCommandShell, else the first available) and, with a session, the turn's pinned shell.\n\nEXIT STATUS\n  0 ok · 5 store failure",
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withHost(cmd, func(h *hostcore.Host) (any, func(io.Writer), error) {
				l, err := h.ListShells(cmd.Context(), f.SessionID())
				return reply(l, func(w io.Writer) {
					for _, s := range l.Shells {
						mark := " "
						if s.Default {
							mark = "*"
						}
						state := "available"
						if !s.Available {
							state = "unavailable: " + s.Reason
						}
						fmt.Fprintf(w, "%s %-20s %-10s %s  %s\n", mark, s.ID, s.Dialect, s.Path, state)
					}
				}, err)
			})
		},
	})
	return c
}
