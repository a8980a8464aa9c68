package hostcore

import (
	"fmt"
	"strings"
	"testing"
)

// TestEvaluateMatrix walks every cell of mode × permission mode × tool kind ×
// path class (SPEC §8, §10, R-PATH-5, R-PATH-7, R-PERM-3/5, R-MODE-1) and
// states the expected action and code for each, computed independently of
// Evaluate from the tables in the spec.
func TestEvaluateMatrix(t *testing.T) {
	type tool struct {
		name string
		kind Kind
		risk Risk
	}
	tools := []tool{
		{"Read", KindRead, RiskLow}, {"Glob", KindRead, RiskLow}, {"Grep", KindRead, RiskLow},
		{"BrowserPreview", KindPreview, RiskLow},
		{"Write", KindWrite, RiskHigh}, {"Edit", KindEdit, RiskHigh},
		{"Bash", KindExec, RiskHigh},
		{"plugin_x_hi", KindPlugin, RiskHigh}, {"plugin_x_low", KindPlugin, RiskLow},
	}
	modes := []string{ModeAgent, ModePlan, ModeGoal}
	perms := []string{PermAsk, PermAcceptEdits, PermAuto}
	classes := []PathClass{"", ClassWorkspace, ClassScratch, ClassExternal}
	for _, m := range modes {
		for _, p := range perms {
			for _, tl := range tools {
				for _, c := range classes {
					for _, granted := range []bool{false, true} {
						in := PolicyInput{Mode: m, PermissionMode: p, Tool: tl.name, Kind: tl.kind, Risk: tl.risk, PathClass: c, HasPath: c != "", Granted: granted}
						want, wantCode := expected(in)
						t.Run(fmt.Sprintf("%s/%s/%s/%s/granted=%v", m, p, tl.name, c, granted), func(t *testing.T) {
							d := Evaluate(in)
							if d.Action != want || d.Code != wantCode {
								t.Fatalf("Evaluate = %v %s (%s), want %v %s", d.Action, d.Code, d.Reason, want, wantCode)
							}
							if d.Action == Deny && d.AuditDecision != "policy_denied" {
								t.Fatalf("deny must be audited as policy_denied, got %q", d.AuditDecision)
							}
							if d.Action == Allow && granted && d.AuditDecision == "granted" && in.PermissionMode == PermAuto {
								t.Fatalf("auto mode allows without needing a grant")
							}
						})
					}
				}
			}
		}
	}
}

// expected restates the spec's tables cell by cell.
func expected(in PolicyInput) (Action, Code) {
	contract := in.Mode != ModeAgent
	if contract {
		switch in.Kind {
		case KindWrite:
			return Deny, WriteDisabledInPlan
		case KindEdit:
			return Deny, EditDisabledInPlan
		case KindPlugin:
			return Deny, PluginDisabledInPlan
		}
	}
	if in.PathClass == ClassScratch && (in.Kind == KindWrite || in.Kind == KindEdit) {
		return Allow, ""
	}
	if in.PathClass == ClassExternal {
		if in.PermissionMode == PermAuto || in.Granted {
			return Allow, ""
		}
		return Ask, ""
	}
	switch in.Kind {
	case KindRead, KindPreview:
		return Allow, ""
	case KindWrite, KindEdit:
		if in.PermissionMode != PermAsk || in.Granted {
			return Allow, ""
		}
		return Ask, ""
	case KindExec:
		if in.PermissionMode == PermAuto || in.Granted {
			return Allow, ""
		}
		return Ask, ""
	case KindPlugin:
		if in.Risk == RiskLow || in.PermissionMode == PermAuto || in.Granted {
			return Allow, ""
		}
		return Ask, ""
	}
	return Deny, Internal
}

func TestEvaluateModeTools(t *testing.T) {
	cases := []struct {
		mode   string
		tool   string
		kind   Kind
		modeOf string
		deleg  bool
		want   Action
		code   Code
	}{
		{ModeAgent, "EnterPlanMode", KindEnterMode, ModePlan, false, Allow, ""},
		{ModePlan, "EnterPlanMode", KindEnterMode, ModePlan, false, Deny, ToolDisabledInPlan},
		{ModeGoal, "EnterGoalMode", KindEnterMode, ModeGoal, false, Deny, ToolDisabledInPlan},
		{ModePlan, "SubmitPlan", KindSubmit, ModePlan, false, Allow, ""},
		{ModeGoal, "SubmitPlan", KindSubmit, ModePlan, false, Deny, ToolDisabledInPlan},
		{ModePlan, "SubmitGoal", KindSubmit, ModeGoal, false, Deny, ToolDisabledInPlan},
		{ModeAgent, "SubmitPlan", KindSubmit, ModePlan, false, Deny, PlanNotActive},
		{ModeAgent, "new_context", KindControl, "", false, Allow, ""},
		{ModePlan, "new_context", KindControl, "", false, Allow, ""},
		{ModeGoal, "ToolSearch", KindControl, "", false, Allow, ""},
		{ModeAgent, "Nope", KindUnknown, "", false, Deny, ToolNotFound},
		{ModePlan, "Nope", KindUnknown, "", false, Deny, ToolDisabledInPlan},
		{ModeGoal, "Nope", KindUnknown, "", false, Deny, ToolDisabledInPlan},
		{ModeAgent, "Task", KindTask, "", false, Deny, ToolNotFound},
		{ModePlan, "Task", KindTask, "", true, Deny, ToolDisabledInPlan},
	}
	for _, c := range cases {
		for _, p := range []string{PermAsk, PermAcceptEdits, PermAuto} {
			d := Evaluate(PolicyInput{Mode: c.mode, PermissionMode: p, Tool: c.tool, Kind: c.kind, ModeOf: c.modeOf, HasDelegates: c.deleg, Risk: RiskLow})
			if d.Action != c.want || d.Code != c.code {
				t.Errorf("%s in %s/%s: got %v %s, want %v %s", c.tool, c.mode, p, d.Action, d.Code, c.want, c.code)
			}
		}
	}
}

// TestPreviewClipAndRedact: previews clip each string at 2000 characters
// (CLI.md), count the rest, and never let a secret straddling the cut leak.
func TestPreviewClipAndRedact(t *testing.T) {
	long := strings.Repeat("é", 5000)
	got := redactClip(long)
	if want := strings.Repeat("é", previewClip) + "… (+3000 chars)"; got != want {
		t.Fatalf("clip: got %d bytes %q…", len(got), got[len(got)-20:])
	}
	tok := "ghp_0123456789abcdefghijklmnopqrstuvwxyz01"
	straddle := strings.Repeat("a ", (previewClip-10)/2) + tok + strings.Repeat(" b", 50000)
	if p := redactClip(straddle); strings.Contains(p, "ghp_0123") {
		t.Fatalf("a token across the cut leaked: …%s", p[len(p)-80:])
	}
	if p := previewRaw([]byte(`{"content":"` + tok + `"}`)); strings.Contains(p, tok) {
		t.Fatalf("preview leaked %s", p)
	}
	if p := redactClip("short"); p != "short" {
		t.Fatalf("short string changed: %q", p)
	}
}
