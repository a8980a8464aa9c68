package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/pi-cli/pi/pkg/hostcore"
)

func newConfigCmd(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Read and write settings",
		Long: `Settings come from flags, then PI_* environment variables, then the settings
file ($XDG_CONFIG_HOME/pi/config.yaml, or --config), then built-in defaults.
Each key reads the variable PI_ + its name in upper snake case
(defaultPermissionMode → PI_DEFAULT_PERMISSION_MODE). Durations use Go syntax (90s, 2m).

EXIT STATUS
  0 ok · 2 unknown key or invalid value`,
	}
	c.AddCommand(&cobra.Command{
		Use: "get KEY", Short: "Print one setting with its source", Args: cobra.ExactArgs(1),
		Long:              "Print one setting's effective value and where it comes from (env, file or default).\n\nEXIT STATUS\n  0 ok · 2 unknown key or invalid settings",
		Example:           "  pi config get permissionTimeout",
		ValidArgsFunction: fixedCompletion(settingKeys()...),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, ok := findSetting(args[0])
			if !ok {
				return f.emit(nil, nil, hostcore.Errf(hostcore.InvalidArgument, "unknown setting %q (known: %v)", args[0], settingKeys()))
			}
			s, err := f.settings()
			if err != nil {
				return f.emit(nil, nil, err)
			}
			v := f.settingValue(s, st)
			return f.emit(v, func(w io.Writer) { fmt.Fprintf(w, "%v\n", v.Value) }, nil)
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "list", Short: "Print every setting with its source", Args: cobra.NoArgs,
		Long: "Print every setting's effective value, its source and its environment variable.\n\nEXIT STATUS\n  0 ok · 2 invalid settings",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.settings()
			if err != nil {
				return f.emit(nil, nil, err)
			}
			var out []settingValue
			for _, st := range settingsTable() {
				out = append(out, f.settingValue(s, st))
			}
			return f.emit(map[string]any{"settings": out, "file": s.file}, func(w io.Writer) {
				for _, v := range out {
					fmt.Fprintf(w, "%-22s %-12v (%s)\n", v.Key, v.Value, v.Source)
				}
			}, nil)
		},
	})
	c.AddCommand(&cobra.Command{
		Use: "set KEY VALUE", Short: "Write a setting to the settings file", Args: cobra.ExactArgs(2),
		Long:              "Validate VALUE and write it to the settings file (created if needed). defaultCommandShell must name a shell available here (COMMAND_SHELL_INVALID otherwise).\n\nEXIT STATUS\n  0 ok · 1 the file could not be written · 2 unknown key, invalid value or unavailable shell",
		Example:           "  pi config set defaultPermissionMode accept-edits\n  pi config set permissionTimeout 90s",
		ValidArgsFunction: fixedCompletion(settingKeys()...),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, ok := findSetting(args[0])
			if !ok {
				return f.emit(nil, nil, hostcore.Errf(hostcore.InvalidArgument, "unknown setting %q (known: %v)", args[0], settingKeys()))
			}
			val, err := st.Check(args[1])
			if err != nil {
				var he *hostcore.Error
				if !errors.As(err, &he) {
					err = hostcore.Errf(hostcore.InvalidArgument, "%s: %v", st.Key, err)
				}
				return f.emit(nil, nil, err)
			}
			file := f.configFile()
			v := viper.New()
			v.SetConfigFile(file)
			if _, err := os.Stat(file); err == nil {
				if err := v.ReadInConfig(); err != nil {
					return f.emit(nil, nil, hostcore.Wrap(hostcore.InvalidArgument, err, "read settings %s", file))
				}
			}
			v.Set(st.Key, val)
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				return f.emit(nil, nil, hostcore.Wrap(hostcore.ToolFailed, err, "settings dir"))
			}
			if err := v.WriteConfigAs(file); err != nil {
				return f.emit(nil, nil, hostcore.Wrap(hostcore.ToolFailed, err, "write settings %s", file))
			}
			out := settingValue{Key: st.Key, Value: val, Source: "file", Env: envName(st.Key)}
			return f.emit(out, func(w io.Writer) { fmt.Fprintf(w, "%s = %v (written to %s)\n", st.Key, val, file) }, nil)
		},
	})
	return c
}

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "Print pi's version", Args: cobra.NoArgs,
		Long: "Print pi's version and the store schema it writes.\n\nEXIT STATUS\n  0 ok",
		RunE: func(cmd *cobra.Command, args []string) error {
			v := map[string]any{"version": Version, "schema": storeSchemaVersion()}
			return f.emit(v, func(w io.Writer) { fmt.Fprintf(w, "pi %s (store schema %d)\n", Version, storeSchemaVersion()) }, nil)
		},
	}
}

func newCompletionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "completion bash|zsh|fish|powershell", Short: "Print a shell completion script",
		Long:    "Print a completion script for the shell (the same files are committed in completions/).\n\nEXIT STATUS\n  0 ok · 2 unknown shell",
		Example: "  source <(pi completion bash)",
		Args:    cobra.ExactArgs(1), ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.printed = true
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(f.IO.Out, true)
			case "zsh":
				return root.GenZshCompletion(f.IO.Out)
			case "fish":
				return root.GenFishCompletion(f.IO.Out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(f.IO.Out)
			}
			f.printed = false
			return fmt.Errorf("unknown shell %q (bash, zsh, fish or powershell)", args[0])
		},
	}
}
