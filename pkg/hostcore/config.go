package hostcore

import "time"

// Permission modes (R-PERM-3, R-PERM-4).
const (
	PermInherit     = "inherit"
	PermAsk         = "ask"
	PermAcceptEdits = "accept-edits"
	PermAuto        = "auto"
)

// Operating modes (SPEC §1).
const (
	ModeAgent = "agent"
	ModePlan  = "plan"
	ModeGoal  = "goal"
)

// Config is the plain settings struct the cmd layer fills from flags, env
// and the settings file (viper stays in cmd).
type Config struct {
	DataDir               string
	ConfigDir             string // $XDG_CONFIG_HOME/pi: delegates, settings; protected like the data dir
	DefaultPermissionMode string
	DefaultCommandShell   string
	PermissionTimeout     time.Duration
	PlanApprovalTimeout   time.Duration
	SensitivePaths        []string
	HomeDir               string
	ReadLimitDefault      int
	ReadLimitMax          int
	OutputBytes           int // Read/Glob/Grep budget
	OutputLines           int
	LineChars             int
	BashKeepBytes         int
	BashKeepLines         int
	BashCaptureBytes      int
	MutationSlots         int // global concurrent mutations
}

// DefaultConfig returns the built-in defaults (SPEC §3.1, CLI.md).
func DefaultConfig() Config {
	return Config{
		DefaultPermissionMode: PermAsk,
		PermissionTimeout:     120 * time.Second,
		PlanApprovalTimeout:   30 * time.Minute,
		ReadLimitDefault:      500,
		ReadLimitMax:          2000,
		OutputBytes:           48 * 1024,
		OutputLines:           2000,
		LineChars:             2000,
		BashKeepBytes:         96 * 1024,
		BashKeepLines:         4000,
		BashCaptureBytes:      512 * 1024,
		MutationSlots:         4,
	}
}
