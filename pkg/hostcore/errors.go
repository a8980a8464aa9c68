// Package hostcore is pi's domain: sessions, the path resolver, the policy,
// the permission queue, audit and the tools, all reached through one
// Execute road.
package hostcore

import (
	"errors"
	"fmt"
)

// Code is one of the closed set of error codes of SPEC §3.2. Never rename one;
// add one only with a row in CLI.md.
type Code string

// The closed set.
const (
	InvalidArgument              Code = "INVALID_ARGUMENT"
	WorkspaceRequired            Code = "WORKSPACE_REQUIRED"
	PathOutsideWorkspace         Code = "PATH_OUTSIDE_WORKSPACE"
	NotFound                     Code = "NOT_FOUND"
	ToolNotFound                 Code = "TOOL_NOT_FOUND"
	ToolNotActive                Code = "TOOL_NOT_ACTIVE"
	ToolDenied                   Code = "TOOL_DENIED"
	PermissionTimeout            Code = "PERMISSION_TIMEOUT"
	ToolTimeout                  Code = "TOOL_TIMEOUT"
	ToolAborted                  Code = "TOOL_ABORTED"
	ToolFailed                   Code = "TOOL_FAILED"
	ToolBinaryContent            Code = "TOOL_BINARY_CONTENT"
	MutationRetryBudgetExhausted Code = "MUTATION_RETRY_BUDGET_EXHAUSTED"
	ProcessResourceExhausted     Code = "PROCESS_RESOURCE_EXHAUSTED"
	ShellNotFound                Code = "SHELL_NOT_FOUND"
	CommandShellChanged          Code = "COMMAND_SHELL_CHANGED"
	CommandShellInvalid          Code = "COMMAND_SHELL_INVALID"
	WriteDisabledInPlan          Code = "WRITE_DISABLED_IN_PLAN"
	EditDisabledInPlan           Code = "EDIT_DISABLED_IN_PLAN"
	PluginDisabledInPlan         Code = "PLUGIN_DISABLED_IN_PLAN"
	ToolDisabledInPlan           Code = "TOOL_DISABLED_IN_PLAN"
	PlanNotActive                Code = "PLAN_NOT_ACTIVE"
	PlanKindMismatch             Code = "PLAN_KIND_MISMATCH"
	PlanApprovalPending          Code = "PLAN_APPROVAL_PENDING"
	PlanApprovalTimeout          Code = "PLAN_APPROVAL_TIMEOUT"
	PlanApprovalStale            Code = "PLAN_APPROVAL_STALE"
	PlanApprovalInterrupted      Code = "PLAN_APPROVAL_INTERRUPTED"
	PlanArtifactWriteFailed      Code = "PLAN_ARTIFACT_WRITE_FAILED"
	PluginInvalid                Code = "PLUGIN_INVALID"
	Conflict                     Code = "CONFLICT"
	StoreError                   Code = "STORE_ERROR"
	Internal                     Code = "INTERNAL"
)

// Codes lists the closed set, in SPEC order.
var Codes = []Code{InvalidArgument, WorkspaceRequired, PathOutsideWorkspace, NotFound, ToolNotFound,
	ToolNotActive, ToolDenied, PermissionTimeout, ToolTimeout, ToolAborted, ToolFailed, ToolBinaryContent,
	MutationRetryBudgetExhausted, ProcessResourceExhausted, ShellNotFound, CommandShellChanged,
	CommandShellInvalid, WriteDisabledInPlan, EditDisabledInPlan, PluginDisabledInPlan, ToolDisabledInPlan,
	PlanNotActive, PlanKindMismatch, PlanApprovalPending, PlanApprovalTimeout, PlanApprovalStale,
	PlanApprovalInterrupted, PlanArtifactWriteFailed, PluginInvalid, Conflict, StoreError, Internal}

// Error is an expected outcome with a stable code. Details are merged into
// the result content (for example a structured suggestion).
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, &Error{Code: X}) match by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Message == ""
}

// Errf builds an *Error.
func Errf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap builds an *Error that keeps err for errors.Is/As.
func Wrap(code Code, err error, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Error{Code: code, Message: msg, Err: err}
}

// CodeOf extracts the code of err; untyped errors are INTERNAL.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}
