package hostcore

// Risk levels (R-PERM-1).
type Risk string

// The levels.
const (
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// Kind groups tools by what the mode matrix and the policy care about.
type Kind string

// The kinds.
const (
	KindRead        Kind = "read"        // Read, Glob, Grep
	KindPreview     Kind = "preview"     // BrowserPreview
	KindWrite       Kind = "write"       // Write
	KindEdit        Kind = "edit"        // Edit
	KindExec        Kind = "exec"        // Bash
	KindPlugin      Kind = "plugin"      // plugin_* tools
	KindControl     Kind = "control"     // new_context, ToolSearch
	KindInteractive Kind = "interactive" // asktool
	KindEnterMode   Kind = "enter-mode"  // EnterPlanMode, EnterGoalMode
	KindSubmit      Kind = "submit"      // SubmitPlan, SubmitGoal
	KindTask        Kind = "task"        // Task (delegates)
	KindUnknown     Kind = "unknown"     // not registered
)

// Action is what the policy decided.
type Action int

// The actions (R-PERM-6).
const (
	Allow Action = iota
	Ask
	Deny
)

// PolicyInput is everything Evaluate may look at. It deliberately has no
// field a caller can set from a tool call (R-PERM-11): the mode comes from the
// store, the class from the resolver, the grant from the store.
type PolicyInput struct {
	Mode           string // agent | plan | goal
	PermissionMode string // effective: ask | accept-edits | auto
	Tool           string
	Kind           Kind
	Risk           Risk
	ModeOf         string // for enter-mode / submit tools: the mode they belong to
	PathClass      PathClass
	HasPath        bool
	Granted        bool // an allow-session grant for this tool exists
	HasDelegates   bool // Task needs at least one delegate definition
}

// Decision is Evaluate's answer. AuditDecision is the decision recorded when
// no card is shown (auto_allowed, granted, policy_denied).
type Decision struct {
	Action        Action
	Code          Code
	Reason        string
	AuditDecision string
}

func allow(reason string) Decision {
	return Decision{Action: Allow, Reason: reason, AuditDecision: "auto_allowed"}
}

func deny(code Code, reason string) Decision {
	return Decision{Action: Deny, Code: code, Reason: reason, AuditDecision: "policy_denied"}
}

func ask(reason string) Decision { return Decision{Action: Ask, Reason: reason} }

// Evaluate is the pure policy of SPEC §8 and §10: the operating-mode matrix
// first (R-MODE-1, R-PERM-5), then scratch, external paths, risk and the
// permission mode (R-PERM-3), with allow-session grants (R-PERM-2).
func Evaluate(in PolicyInput) Decision {
	contract := in.Mode == ModePlan || in.Mode == ModeGoal
	// 1. The mode matrix: hard denials that no permission mode re-enables.
	switch in.Kind {
	case KindUnknown:
		if contract {
			return deny(ToolDisabledInPlan, in.Tool+" is not available in "+in.Mode+" mode")
		}
		return deny(ToolNotFound, "unknown tool "+in.Tool)
	case KindWrite:
		if contract {
			return deny(WriteDisabledInPlan, "Write is disabled in "+in.Mode+" mode")
		}
	case KindEdit:
		if contract {
			return deny(EditDisabledInPlan, "Edit is disabled in "+in.Mode+" mode")
		}
	case KindPlugin:
		if contract {
			return deny(PluginDisabledInPlan, "plugin tools are disabled in "+in.Mode+" mode")
		}
	case KindEnterMode:
		if contract {
			return deny(ToolDisabledInPlan, in.Tool+" is only available in agent mode")
		}
		return allow("mode change requested")
	case KindSubmit:
		if in.Mode == ModeAgent {
			return deny(PlanNotActive, in.Tool+" needs "+in.ModeOf+" mode; the session is in agent mode")
		}
		if in.Mode != in.ModeOf {
			return deny(ToolDisabledInPlan, in.Tool+" is the "+in.ModeOf+" mode's tool; this session is in "+in.Mode+" mode")
		}
		return allow("submit in its own mode")
	case KindTask:
		if contract {
			return deny(ToolDisabledInPlan, "Task is only available in agent mode")
		}
		if !in.HasDelegates {
			return deny(ToolNotFound, "Task needs at least one delegate definition")
		}
	case KindControl, KindInteractive:
		return allow("no confirmation needed")
	}

	// 2. Scratch writes need no card in any mode that exposes Write/Edit (R-PATH-7).
	if in.PathClass == ClassScratch && (in.Kind == KindWrite || in.Kind == KindEdit) {
		return allow("scratch dir write")
	}

	// 3. Explicit external paths, before the low-risk auto-allow (R-PATH-5).
	if in.PathClass == ClassExternal {
		switch {
		case in.PermissionMode == PermAuto:
			return allow("external path allowed by auto mode")
		case in.Granted:
			return Decision{Action: Allow, Reason: "allow-session grant for " + in.Tool, AuditDecision: "granted"}
		}
		return ask("explicit path outside the workspace")
	}

	// 4. Risk and permission mode.
	switch in.Kind {
	case KindRead, KindPreview:
		return allow("low risk inside the session roots")
	case KindWrite, KindEdit:
		if in.PermissionMode == PermAcceptEdits || in.PermissionMode == PermAuto {
			return allow("edits allowed by " + in.PermissionMode + " mode")
		}
		if in.Granted {
			return Decision{Action: Allow, Reason: "allow-session grant for " + in.Tool, AuditDecision: "granted"}
		}
		return ask(in.Tool + " changes a workspace file")
	}
	if in.Risk == RiskLow {
		return allow("low risk")
	}
	// Bash, plugins and other medium/high-risk tools: confirm unless auto.
	if in.PermissionMode == PermAuto {
		return allow("allowed by auto mode")
	}
	if in.Granted {
		return Decision{Action: Allow, Reason: "allow-session grant for " + in.Tool, AuditDecision: "granted"}
	}
	return ask(in.Tool + " is " + string(in.Risk) + " risk")
}
