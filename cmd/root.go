// Package cmd is pi's cobra wiring: flags become Options, Options go to
// pkg/hostcore, results are rendered. No behaviour lives here.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// Version is set at build time with -ldflags "-X github.com/pi-cli/pi/cmd.Version=…".
var Version = "dev"

// IOStreams are the process's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	OutTTY bool
	InTTY  bool
}

// Factory carries what every command needs, so nothing lives in package
// variables: streams, global flags, settings, and the lazily opened host.
type Factory struct {
	IO      IOStreams
	Getenv  func(string) string
	Flags   GlobalFlags
	Exit    int
	host    *hostcore.Host
	cfg     *settings
	printed bool
	// beforeEnvelope runs right before a tool envelope is printed (--stream).
	beforeEnvelope func()
}

// GlobalFlags are the persistent flags of CLI.md.
type GlobalFlags struct {
	DataDir string
	Session string
	Output  string
	Config  string
}

// Main runs pi with args and returns the exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &Factory{
		IO: IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
			OutTTY: isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd()),
			InTTY:  isatty.IsTerminal(os.Stdin.Fd())},
		Getenv: os.Getenv,
	}
	code := Run(ctx, f, args)
	if ctx.Err() != nil && code != ExitOK {
		return ExitInterrupt
	}
	return code
}

// Run executes the command tree with f (tests call it with fake streams).
func Run(ctx context.Context, f *Factory, args []string) int {
	root := NewRootCmd(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	if f.host != nil {
		f.host.Close()
	}
	if err != nil && !f.printed {
		// Cobra's own errors: unknown flags, bad args, unknown commands.
		f.fail(hostcore.Errf(hostcore.InvalidArgument, "%s", strings.TrimSpace(err.Error())))
		if f.outputMode() == "text" {
			fmt.Fprintln(f.IO.ErrOut, "Run 'pi --help' for usage.")
		}
	}
	return f.Exit
}

// NewRootCmd builds the whole tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "pi",
		Short: "Host core of a coding agent: tools, permissions, review and audit",
		Long: `pi is the host core of a coding agent as single-shot commands. Agents call
'pi tool read|glob|grep|write|edit|bash …' instead of touching files; every
call is resolved against its session's workspace, checked by the policy,
possibly held for a person's permission, run, recorded and audited. All pi
processes share one SQLite store, so a call in one terminal can wait for an
answer given from another ('pi permission respond').

EXIT STATUS
  0 ok · 1 the tool ran and failed · 2 usage or invalid argument ·
  3 refused (denied, timed out, outside the workspace) · 4 conflict or stale
  state · 5 store or host failure · 130 interrupted`,
		Example: `  pi session create --workspace .
  export PI_SESSION=ses_…
  pi tool read README.md
  pi tool search Grep && pi tool grep 'func main' --include '*.go'`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       Version,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return err })
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := f.checkOutputFlag(); err != nil {
			f.fail(err)
			return errPrinted
		}
		return nil
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.Flags.DataDir, "data-dir", "", "data directory: store, scratch, snapshots, locks (env PI_DATA_DIR)")
	pf.StringVarP(&f.Flags.Session, "session", "s", "", "the session a command acts on (env PI_SESSION)")
	pf.StringVarP(&f.Flags.Output, "output", "o", "", "json or text; default json when stdout is not a terminal (env PI_OUTPUT)")
	pf.StringVar(&f.Flags.Config, "config", "", "settings file (env PI_CONFIG)")
	_ = root.RegisterFlagCompletionFunc("output", fixedCompletion("json", "text"))

	root.AddCommand(newSessionCmd(f), newToolCmd(f), newPermissionCmd(f), newGrantCmd(f), newAuditCmd(f),
		newConfigCmd(f), newVersionCmd(f), newAgentCmd(f), newCompletionCmd(f), newShellCmd(f), newScratchCmd(f), newReviewCmd(f), newHostCmd(f))
	root.SetVersionTemplate("pi {{.Version}} (store schema " + fmt.Sprint(storeSchemaVersion()) + ")\n")
	strictGroups(root)
	return root
}

// strictGroups makes every command group refuse an unknown subcommand with
// a usage error (exit 2) instead of printing its help and exiting 0, so a
// typo in a script fails loudly.
func strictGroups(c *cobra.Command) {
	for _, sub := range c.Commands() {
		strictGroups(sub)
	}
	if c.HasParent() && c.HasSubCommands() && c.RunE == nil && c.Run == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		}
	}
}

func fixedCompletion(vals ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return vals, cobra.ShellCompDirectiveNoFileComp
	}
}

// Host opens the store lazily: commands that need none (version, help,
// config) never touch it.
func (f *Factory) Host(ctx context.Context) (*hostcore.Host, error) {
	if f.host != nil {
		return f.host, nil
	}
	cfg, err := f.settings()
	if err != nil {
		return nil, err
	}
	h, err := hostcore.Open(ctx, cfg.core)
	if err != nil {
		return nil, err
	}
	h.Notices = f.IO.ErrOut
	f.host = h
	return h, nil
}

// SessionID is --session, else PI_SESSION.
func (f *Factory) SessionID() string {
	if f.Flags.Session != "" {
		return f.Flags.Session
	}
	return f.Getenv("PI_SESSION")
}

func (f *Factory) sessionArg(args []string) string {
	if len(args) > 0 && args[0] != "" {
		return args[0]
	}
	return f.SessionID()
}

var errPrinted = errors.New("printed")
