package cmd

import "github.com/pi-cli/pi/pkg/hostcore"

// Exit codes (CLI.md). This table is the one place an error becomes an exit code.
const (
	ExitOK        = 0
	ExitFailed    = 1
	ExitUsage     = 2
	ExitRefused   = 3
	ExitConflict  = 4
	ExitStore     = 5
	ExitInterrupt = 130
)

var exitByCode = map[hostcore.Code]int{
	hostcore.ToolFailed:                   ExitFailed,
	hostcore.NotFound:                     ExitFailed,
	hostcore.ToolTimeout:                  ExitFailed,
	hostcore.ToolBinaryContent:            ExitFailed,
	hostcore.MutationRetryBudgetExhausted: ExitFailed,
	hostcore.ProcessResourceExhausted:     ExitFailed,
	hostcore.ShellNotFound:                ExitFailed,
	hostcore.PlanArtifactWriteFailed:      ExitFailed,

	hostcore.InvalidArgument:     ExitUsage,
	hostcore.ToolNotFound:        ExitUsage,
	hostcore.ToolNotActive:       ExitUsage,
	hostcore.WorkspaceRequired:   ExitUsage,
	hostcore.CommandShellInvalid: ExitUsage,
	hostcore.PluginInvalid:       ExitUsage,
	hostcore.PlanNotActive:       ExitUsage,
	hostcore.PlanKindMismatch:    ExitUsage,

	hostcore.ToolDenied:           ExitRefused,
	hostcore.PermissionTimeout:    ExitRefused,
	hostcore.PathOutsideWorkspace: ExitRefused,
	hostcore.ToolAborted:          ExitRefused,
	hostcore.WriteDisabledInPlan:  ExitRefused,
	hostcore.EditDisabledInPlan:   ExitRefused,
	hostcore.PluginDisabledInPlan: ExitRefused,
	hostcore.ToolDisabledInPlan:   ExitRefused,
	hostcore.PlanApprovalTimeout:  ExitRefused,

	hostcore.Conflict:                ExitConflict,
	hostcore.CommandShellChanged:     ExitConflict,
	hostcore.PlanApprovalPending:     ExitConflict,
	hostcore.PlanApprovalStale:       ExitConflict,
	hostcore.PlanApprovalInterrupted: ExitConflict,

	hostcore.StoreError: ExitStore,
	hostcore.Internal:   ExitStore,
}

// ExitCode maps an error code to the process exit code.
func ExitCode(c hostcore.Code) int {
	if c == "" {
		return ExitOK
	}
	if e, ok := exitByCode[c]; ok {
		return e
	}
	return ExitStore
}
