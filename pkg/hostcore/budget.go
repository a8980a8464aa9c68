package hostcore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// patchKey is the budget key shared by failed shell patch commands.
const patchKey = "(shell patch command)"

// mutationBudget applies R-MUT-3: the second failed Edit of the same path in a
// turn (or the second failed apply_patch / git apply / patch command) becomes a
// terminal result, so the agent reports the mismatch and stops. A successful
// mutation of the path resets its count. Only TOOL_FAILED counts (CLI.md).
func (h *Host) mutationBudget(ctx context.Context, s *store.Session, def *ToolDef, args any, rp *Resolved, out *Outcome, err error) (*Outcome, error) {
	var key, kind string
	switch def.Kind {
	case KindEdit, KindWrite:
		if rp == nil || rp.Class == ClassScratch {
			return out, err
		}
		key, kind = rp.Canonical, "edit"
	case KindExec:
		b, ok := args.(*BashArgs)
		if !ok || !patchCommand.MatchString(b.Command) {
			return out, err
		}
		key, kind = patchKey, "patch"
	default:
		return out, err
	}
	dbctx := context.WithoutCancel(ctx)
	if err == nil {
		_ = h.DB.Tx(dbctx, func(tx *sql.Tx) error {
			_, e := tx.ExecContext(dbctx, `DELETE FROM mutation_failures WHERE session_id = ? AND path = ?`, s.ID, key)
			return e
		})
		return out, nil
	}
	if CodeOf(err) != ToolFailed || def.Kind == KindWrite {
		return out, err
	}
	var he *Error
	errors.As(err, &he)
	if kind == "edit" {
		kind = editFailureKind(he.Message)
	}
	var attempts int
	txErr := h.DB.Tx(dbctx, func(tx *sql.Tx) error {
		if _, e := tx.ExecContext(dbctx, `INSERT INTO mutation_failures(session_id, turn, path, attempts, last_code, kind)
			VALUES(?,?,?,1,?,?) ON CONFLICT(session_id, turn, path) DO UPDATE SET attempts = attempts + 1,
			last_code = excluded.last_code, kind = excluded.kind`, s.ID, s.Turn, key, string(he.Code), kind); e != nil {
			return e
		}
		return tx.QueryRowContext(dbctx, `SELECT attempts FROM mutation_failures WHERE session_id = ? AND turn = ? AND path = ?`,
			s.ID, s.Turn, key).Scan(&attempts)
	})
	if txErr != nil {
		return out, err
	}
	details := map[string]any{"mutationFailureKind": kind, "mutationFailureAttempt": attempts, "lastErrorCode": string(he.Code)}
	if out == nil {
		out = &Outcome{}
	}
	out.Content = mergeContent(out.Content, details)
	if attempts < 2 {
		he.Details = mergeDetails(he.Details, details)
		return out, he
	}
	out.Terminate = true
	what := "Edit of " + key
	if kind == "patch" {
		what = "shell patch command"
	}
	return out, &Error{Code: MutationRetryBudgetExhausted, Details: mergeDetails(he.Details, details),
		Message: "second failed " + what + " in this turn: stop and report the exact mismatch instead of retrying (" + he.Message + ")"}
}

func editFailureKind(msg string) string {
	switch {
	case strings.Contains(msg, "not found"), strings.Contains(msg, "no match"):
		return "no_match"
	case strings.Contains(msg, "matches"):
		return "ambiguous_match"
	}
	return "edit_failed"
}

func mergeDetails(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// mergeContent adds fields to a result's content, whatever its type: a map is
// extended, a struct (Bash's content) is turned into its JSON object first,
// nil becomes the fields themselves.
func mergeContent(content any, fields map[string]any) any {
	if len(fields) == 0 {
		return content
	}
	m, ok := content.(map[string]any)
	if !ok && content != nil {
		b, err := json.Marshal(content)
		if err != nil || json.Unmarshal(b, &m) != nil || m == nil {
			return content // not an object: keep it as it is
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	for k, v := range fields {
		m[k] = v
	}
	return m
}
