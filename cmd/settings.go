package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// setting describes one key of `pi config` (CLI.md): its env variable, its
// default and how a value is checked.
type setting struct {
	Key     string
	Default any
	Help    string
	Check   func(string) (any, error)
}

func settingsTable() []setting {
	d := hostcore.DefaultConfig()
	mode := func(v string) (any, error) {
		switch v {
		case hostcore.PermAsk, hostcore.PermAcceptEdits, hostcore.PermAuto:
			return v, nil
		}
		return nil, fmt.Errorf("must be ask, accept-edits or auto")
	}
	dur := func(v string) (any, error) {
		t, err := time.ParseDuration(v)
		if err != nil || t <= 0 {
			return nil, fmt.Errorf("must be a positive duration like 90s or 2m")
		}
		return v, nil
	}
	posInt := func(v string) (any, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("must be a positive integer")
		}
		return n, nil
	}
	return []setting{
		{"defaultPermissionMode", d.DefaultPermissionMode, "permission mode of sessions that inherit", mode},
		{"defaultCommandShell", "", "shell catalog id used by Bash (see pi shell list)", checkShellID},
		{"permissionTimeout", d.PermissionTimeout.String(), "how long a card waits before it is denied", dur},
		{"planApprovalTimeout", d.PlanApprovalTimeout.String(), "how long a plan/goal proposal waits", dur},
		{"sensitivePaths", []string{}, "extra deny-list patterns (doublestar, ~ expanded), comma separated", func(v string) (any, error) {
			var out []string
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
			return out, nil
		}},
		{"outputBytes", d.OutputBytes, "Read/Glob/Grep result budget in bytes", posInt},
		{"outputLines", d.OutputLines, "Read/Glob/Grep result budget in lines", posInt},
		{"bashKeepBytes", d.BashKeepBytes, "Bash bytes kept per stream", posInt},
		{"bashKeepLines", d.BashKeepLines, "Bash lines kept per stream", posInt},
	}
}

// envName is PI_ + the key in upper snake case.
func envName(key string) string {
	var b strings.Builder
	b.WriteString("PI_")
	for i, r := range key {
		if r >= 'A' && r <= 'Z' && i > 0 {
			b.WriteByte('_')
		}
		b.WriteString(strings.ToUpper(string(r)))
	}
	return b.String()
}

type settings struct {
	v        *viper.Viper
	file     string
	core     hostcore.Config
	fileRead bool
}

func (f *Factory) home() string {
	if h := f.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

func (f *Factory) configDir() string {
	if x := f.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "pi")
	}
	return filepath.Join(f.home(), ".config", "pi")
}

// DataDir applies --data-dir > PI_DATA_DIR > $XDG_DATA_HOME/pi > ~/.local/share/pi.
func (f *Factory) DataDir() string {
	switch {
	case f.Flags.DataDir != "":
		return f.Flags.DataDir
	case f.Getenv("PI_DATA_DIR") != "":
		return f.Getenv("PI_DATA_DIR")
	case f.Getenv("XDG_DATA_HOME") != "":
		return filepath.Join(f.Getenv("XDG_DATA_HOME"), "pi")
	}
	return filepath.Join(f.home(), ".local", "share", "pi")
}

// configFile is --config > PI_CONFIG > the first config.* in the config dir
// (config.yaml when none exists yet).
func (f *Factory) configFile() string {
	if f.Flags.Config != "" {
		return f.Flags.Config
	}
	if c := f.Getenv("PI_CONFIG"); c != "" {
		return c
	}
	dir := f.configDir()
	for _, ext := range []string{"yaml", "yml", "json", "toml"} {
		p := filepath.Join(dir, "config."+ext)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(dir, "config.yaml")
}

// settings reads flags > env > file > defaults into a plain struct, once.
func (f *Factory) settings() (*settings, error) {
	if f.cfg != nil {
		return f.cfg, nil
	}
	v := viper.New()
	s := &settings{v: v, file: f.configFile()}
	for _, st := range settingsTable() {
		v.SetDefault(st.Key, st.Default)
		_ = v.BindEnv(st.Key, envName(st.Key))
	}
	v.SetConfigFile(s.file)
	if _, err := os.Stat(s.file); err == nil {
		if err := v.ReadInConfig(); err != nil {
			return nil, hostcore.Wrap(hostcore.InvalidArgument, err, "read settings %s", s.file)
		}
		s.fileRead = true
	} else if f.Flags.Config != "" || f.Getenv("PI_CONFIG") != "" {
		return nil, hostcore.Errf(hostcore.InvalidArgument, "settings file %s does not exist", s.file)
	}
	// Values from env and file are validated like `pi config set` would.
	for _, st := range settingsTable() {
		if st.Key == "sensitivePaths" || !v.IsSet(st.Key) {
			continue
		}
		if _, err := st.Check(v.GetString(st.Key)); err != nil && v.GetString(st.Key) != "" {
			return nil, hostcore.Errf(hostcore.InvalidArgument, "setting %s=%q (from %s): %v", st.Key, v.GetString(st.Key), f.source(s, st.Key), err)
		}
	}
	c := hostcore.DefaultConfig()
	c.DataDir = f.DataDir()
	c.ConfigDir = f.configDir()
	c.HomeDir = f.home()
	c.DefaultPermissionMode = v.GetString("defaultPermissionMode")
	c.DefaultCommandShell = v.GetString("defaultCommandShell")
	c.PermissionTimeout = v.GetDuration("permissionTimeout")
	c.PlanApprovalTimeout = v.GetDuration("planApprovalTimeout")
	c.SensitivePaths = v.GetStringSlice("sensitivePaths")
	c.OutputBytes = v.GetInt("outputBytes")
	c.OutputLines = v.GetInt("outputLines")
	c.BashKeepBytes = v.GetInt("bashKeepBytes")
	c.BashKeepLines = v.GetInt("bashKeepLines")
	s.core = c
	f.cfg = s
	return s, nil
}

// source says where a setting's value comes from.
func (f *Factory) source(s *settings, key string) string {
	if f.Getenv(envName(key)) != "" {
		return "env"
	}
	if s.fileRead && s.v.InConfig(strings.ToLower(key)) {
		return "file"
	}
	return "default"
}

type settingValue struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
	Env    string `json:"env"`
}

func (f *Factory) settingValue(s *settings, st setting) settingValue {
	return settingValue{Key: st.Key, Value: s.v.Get(st.Key), Source: f.source(s, st.Key), Env: envName(st.Key)}
}

func findSetting(key string) (setting, bool) {
	for _, st := range settingsTable() {
		if strings.EqualFold(st.Key, key) {
			return st, true
		}
	}
	return setting{}, false
}

func settingKeys() []string {
	var ks []string
	for _, st := range settingsTable() {
		ks = append(ks, st.Key)
	}
	sort.Strings(ks)
	return ks
}

// checkShellID validates defaultCommandShell without opening the store.
func checkShellID(v string) (any, error) {
	if v == "" {
		return v, nil
	}
	if _, err := (&hostcore.Host{}).CheckShellID(v); err != nil {
		return nil, err
	}
	return v, nil
}
