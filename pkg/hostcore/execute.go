package hostcore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-cli/pi/pkg/hostcore/redact"
	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// Call is one tool call as any front end (CLI verb, `pi tool call`, a
// delegate, a plugin) hands it to Execute.
type Call struct {
	SessionID  string
	Tool       string
	Args       json.RawMessage
	ToolCallID string
	Delegate   string
	MessageID  string
	Stdout     io.Writer // live output for bash --stream
	Stderr     io.Writer
}

// Result is the envelope of CLI.md.
type Result struct {
	OK         bool         `json:"ok"`
	IsError    bool         `json:"isError"`
	ErrorCode  Code         `json:"errorCode,omitempty"`
	Message    string       `json:"message,omitempty"`
	Tool       string       `json:"tool,omitempty"`
	ToolCallID string       `json:"toolCallId,omitempty"`
	TraceID    string       `json:"traceId,omitempty"`
	SessionID  string       `json:"sessionId,omitempty"`
	Root       PathClass    `json:"root,omitempty"`
	Content    any          `json:"content,omitempty"`
	Review     any          `json:"review,omitempty"`
	Terminate  bool         `json:"terminate,omitempty"`
	RequestID  string       `json:"requestId,omitempty"`
	Timing     store.Timing `json:"timing"`
}

var toolCallIDRe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// Execute is the one road every tool call takes (STYLE.md): resolve session →
// tool and args → mode matrix and activation → paths → policy → permission
// queue → mutation lock → re-open roots → run → review → audit → result. A
// second road that skips a step is a security bug; nothing else calls tool
// bodies.
func (h *Host) Execute(ctx context.Context, call *Call) *Result {
	t0 := h.Now()
	traceID := NewID("tr_")
	if call.ToolCallID == "" {
		call.ToolCallID = NewID("tc_")
	}
	res := &Result{Tool: call.Tool, ToolCallID: call.ToolCallID, TraceID: traceID, SessionID: call.SessionID}
	row := &store.AuditRow{SessionID: call.SessionID, ToolCallID: call.ToolCallID, TraceID: traceID,
		ToolName: call.Tool, Delegate: call.Delegate, Decision: "policy_denied"}
	var bodyStart, bodyEnd time.Time
	var waitMs int64
	provisional := false

	finish := func(out *Outcome, err error) *Result {
		if out != nil {
			res.Content, res.Review, res.Terminate = out.Content, out.Review, out.Terminate
			if out.Root != "" {
				res.Root = out.Root
			}
			if out.Message != "" {
				res.Message = out.Message
			}
		}
		if err != nil {
			var he *Error
			if !errors.As(err, &he) {
				he = Wrap(Internal, err, "internal error")
			}
			res.OK, res.IsError, res.ErrorCode = false, true, he.Code
			res.Message = redact.String(he.Message)
			res.Content = mergeContent(res.Content, he.Details)
		} else {
			res.OK = true
		}
		now := h.Now()
		res.Timing.PermissionWaitMs = waitMs
		if !bodyStart.IsZero() {
			if bodyEnd.IsZero() {
				bodyEnd = now
			}
			res.Timing.DurationMs = bodyEnd.Sub(bodyStart).Milliseconds()
		}
		res.Timing.TotalMs = now.Sub(t0).Milliseconds()
		res.Timing.OverheadMs = max(0, res.Timing.TotalMs-res.Timing.DurationMs-res.Timing.PermissionWaitMs)
		row.OK, row.ErrorCode, row.Timing = res.OK, string(res.ErrorCode), res.Timing
		if row.ArgsPreview == "" { // refused before the args were decoded
			row.ArgsPreview = previewRaw(call.Args)
		}
		if row.ArgsHash == "" {
			row.ArgsHash = hashBytes(call.Args)
		}
		if row.Decision == "" {
			row.Decision = "auto_allowed"
		}
		// The audit row survives a cancelled caller: write it on a fresh context.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var aerr error
		if provisional {
			aerr = h.DB.FinishAudit(actx, nil, row)
		} else {
			aerr = h.DB.InsertAudit(actx, row)
		}
		if aerr != nil && res.OK {
			res.OK, res.IsError, res.ErrorCode = false, true, StoreError
			res.Message = "the tool ran but its audit row could not be written: " + aerr.Error()
		}
		return res
	}

	if !toolCallIDRe.MatchString(call.ToolCallID) {
		return finish(nil, Errf(InvalidArgument, "invalid tool call id %q", call.ToolCallID))
	}
	if !utf8.Valid(call.Args) {
		return finish(nil, Errf(InvalidArgument, "args are not valid UTF-8"))
	}

	// 1. Session. A lookup failure fails the call; it never falls back.
	s, err := h.Session(ctx, call.SessionID)
	if err != nil {
		return finish(nil, err)
	}
	row.Turn = s.Turn
	roots := h.roots(s)

	// 2. Tool and args.
	def, known := h.tools().Lookup(call.Tool)
	kind := KindUnknown
	if known {
		kind = def.Kind
		res.Tool, row.ToolName = def.Name, def.Name
	}
	if !known {
		d := Evaluate(PolicyInput{Mode: s.Mode, Tool: call.Tool, Kind: KindUnknown})
		return finish(nil, Errf(d.Code, "%s", d.Reason))
	}
	args, canon, err := DecodeArgs(def, call.Args)
	if err != nil {
		return finish(nil, err)
	}
	row.ArgsHash = hashBytes(canon)
	row.ArgsPreview = previewArgs(def, args, canon)

	// 3. Delegate rights (R-SUB-3): a delegate may only call its own tools.
	if call.Delegate != "" {
		if err := h.checkDelegate(ctx, s, call.Delegate, def); err != nil {
			return finish(nil, err)
		}
	}

	// 4. Mode matrix before anything else (R-MODE-1), then activation (R-TOOL-4).
	pin := PolicyInput{Mode: s.Mode, PermissionMode: h.EffectivePermissionMode(s), Tool: def.Name, Kind: kind,
		Risk: def.Risk, ModeOf: def.ModeOf}
	if kind == KindTask { // reading definitions costs dir reads: only Task needs them
		pin.HasDelegates = h.hasDelegates(s)
	}
	if d := Evaluate(pin); d.Action == Deny {
		return finish(nil, Errf(d.Code, "%s", d.Reason))
	}
	if def.NeedsRoot && s.WorkspaceRoot == "" {
		return finish(nil, Errf(WorkspaceRequired, "%s needs a session with a workspace; this session is temporary", def.Name))
	}
	if err := h.checkActive(s, def); err != nil {
		return finish(nil, err)
	}

	// 5. Paths (R-PATH-3..6, R-PATH-10).
	var rp *Resolved
	if def.Path != nil {
		p, use := def.Path(args)
		if p == "" && use != PathNone {
			if s.WorkspaceRoot == "" {
				return finish(nil, Errf(WorkspaceRequired, "%s needs a path or a session with a workspace", def.Name))
			}
			p = s.WorkspaceRoot
		}
		if use != PathNone {
			rp, err = roots.Resolve(p, ResolveOptions{FollowFinal: use != PathEntry})
			if err != nil {
				return finish(nil, err)
			}
			if def.WorkspaceOnly && rp.Class != ClassWorkspace {
				return finish(nil, Errf(PathOutsideWorkspace, "%s only takes paths inside the workspace", def.Name))
			}
			pin.PathClass, pin.HasPath = rp.Class, true
			row.PathClass = string(rp.Class)
			if rp.Class == ClassExternal {
				row.ExternalPath = rp.Canonical
				res.Root = ClassExternal
			}
		}
	}

	// 6. Policy (R-PERM-6). Grants only matter where a card would be shown,
	// so the store is asked only then (the fast path stays one write).
	d := Evaluate(pin)
	if d.Action == Ask {
		granted, gerr := h.DB.HasGrant(ctx, s.ID, def.Name)
		if gerr != nil {
			return finish(nil, storeErr(gerr, "read grants"))
		}
		pin.Granted = granted
		d = Evaluate(pin)
	}
	row.Decision = d.AuditDecision
	switch d.Action {
	case Deny:
		return finish(nil, Errf(d.Code, "%s", d.Reason))
	case Ask:
		if err := h.DB.BeginAudit(ctx, row, h.PID, h.Boot); err != nil {
			return finish(nil, storeErr(err, "audit"))
		}
		provisional = true
		res.Timing.Prompted, row.Timing.Prompted = true, true
		w0 := h.Now()
		outcome, reqID, werr := h.askPermission(ctx, s, def, call, rp, row.ArgsPreview, d.Reason)
		waitMs = h.Now().Sub(w0).Milliseconds()
		res.RequestID, row.RequestID, row.Decision = reqID, reqID, outcome
		if werr != nil {
			return finish(nil, werr)
		}
	}
	if !provisional && (def.Mutates || def.Kind == KindExec) {
		// Long or state-changing bodies leave a trace even if killed.
		if err := h.DB.BeginAudit(ctx, row, h.PID, h.Boot); err != nil {
			return finish(nil, storeErr(err, "audit"))
		}
		provisional = true
	}

	// 7. Exclusive tools and mutation order (R-MODE-3, R-MUT-1).
	env := &Env{Host: h, Session: s, Roots: roots, Call: call, Path: rp, TraceID: traceID, Stdout: call.Stdout, Stderr: call.Stderr}
	var release func()
	if def.Mutates {
		release, err = h.acquireMutation(ctx, s.ID)
		if err != nil {
			return finish(nil, err)
		}
		defer release()
	}
	if def.Exclusive || def.Kind == KindExec || def.Mutates {
		done, err := h.registerRunning(ctx, s, def, call, def.Exclusive)
		if err != nil {
			return finish(nil, err)
		}
		defer done()
	}

	// 8. Run the body under its timeout; paths are re-opened inside it.
	bctx := ctx
	var cancel context.CancelFunc
	if def.Timeout > 0 {
		bctx, cancel = context.WithTimeoutCause(ctx, def.Timeout, errToolTimeout)
		defer cancel()
	}
	bodyStart = h.Now()
	out, err := def.Run(bctx, env, args)
	bodyEnd = h.Now()
	if err != nil && errors.Is(context.Cause(bctx), errToolTimeout) && CodeOf(err) != ToolTimeout {
		err = Errf(ToolTimeout, "%s did not finish within %s", def.Name, def.Timeout)
	}
	if out != nil && out.Root == "" && rp != nil {
		out.Root = rp.Class
	}
	if def.Kind == KindEdit || def.Kind == KindExec || def.Kind == KindWrite {
		out, err = h.mutationBudget(ctx, s, def, args, rp, out, err)
	}
	return finish(out, err)
}

var errToolTimeout = errors.New("tool timeout")

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// previewClip is the per-string clip of card previews (CLI.md).
const previewClip = 2000

// previewArgs renders the redacted args preview of cards and audit rows:
// each string value clipped at 2000 characters, secrets masked.
func previewArgs(def *ToolDef, args any, canon []byte) string {
	if def.Redact != nil {
		return def.Redact(args) // already redacted and clipped per value
	}
	return previewRaw(canon)
}

func previewRaw(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		s := string(raw)
		if !utf8.ValidString(s) {
			return "(invalid UTF-8)"
		}
		return redact.String(clipString(s))
	}
	v = clipValue(v)
	b, _ := json.Marshal(v)
	return redact.String(string(b))
}

func clipValue(v any) any {
	switch x := v.(type) {
	case string:
		return redactClip(x)
	case map[string]any:
		for k, e := range x {
			x[k] = clipValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = clipValue(e)
		}
	}
	return v
}

func clipString(s string) string {
	if len(s) <= previewClip { // bytes ≥ runes: short strings need no count
		return s
	}
	cut, n := 0, 0
	for i := range s {
		if n == previewClip {
			cut = i
			break
		}
		n++
	}
	if cut == 0 {
		return s
	}
	return s[:cut] + fmt.Sprintf("… (+%d chars)", utf8.RuneCountInString(s[cut:]))
}

// redactClip masks secrets and clips to the preview length without redacting
// megabytes that are then thrown away: the margin keeps any token that
// straddles the cut whole while it is redacted.
func redactClip(s string) string {
	const margin = 1024
	if len(s) <= previewClip+margin {
		return clipString(redact.String(s))
	}
	head := s[:previewClip*4+margin] // ≥ previewClip runes + margin bytes
	for !utf8.ValidString(head) && len(head) > 0 {
		head = head[:len(head)-1]
	}
	r := clipString(redact.String(head))
	if i := strings.LastIndex(r, "… (+"); i >= 0 {
		r = r[:i]
	}
	return r + fmt.Sprintf("… (+%d chars)", utf8.RuneCountInString(s)-previewClip)
}
