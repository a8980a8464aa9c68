package hostcore

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"

	"github.com/pi-cli/pi/pkg/fsx"
	"github.com/pi-cli/pi/pkg/hostcore/store"
)

// SessionView is the Session of CLI.md's result shapes.
type SessionView struct {
	ID                      string   `json:"id"`
	WorkspaceRoot           string   `json:"workspaceRoot"`
	Temporary               bool     `json:"temporary"`
	Mode                    string   `json:"mode"`
	PermissionMode          string   `json:"permissionMode"`
	EffectivePermissionMode string   `json:"effectivePermissionMode"`
	Turn                    int      `json:"turn"`
	ShellID                 string   `json:"shellId"`
	ActiveTools             []string `json:"activeTools"`
	PendingRequests         int      `json:"pendingRequests"`
	CreatedAt               string   `json:"createdAt"`
	ContextReset            *bool    `json:"contextReset,omitempty"`
}

func idFrom(dev, ino uint64, gen int64) fsx.ID { return fsx.ID{Dev: dev, Ino: ino, Gen: gen} }

// EffectivePermissionMode applies R-PERM-4: the session's mode unless
// inherit → the global default → ask.
func (h *Host) EffectivePermissionMode(s *store.Session) string {
	if s.PermissionMode != "" && s.PermissionMode != PermInherit {
		return s.PermissionMode
	}
	switch h.Cfg.DefaultPermissionMode {
	case PermAsk, PermAcceptEdits, PermAuto:
		return h.Cfg.DefaultPermissionMode
	}
	return PermAsk
}

func (h *Host) view(ctx context.Context, s *store.Session) *SessionView {
	v := &SessionView{ID: s.ID, WorkspaceRoot: s.WorkspaceRoot, Temporary: s.Temporary, Mode: s.Mode,
		PermissionMode: s.PermissionMode, EffectivePermissionMode: h.EffectivePermissionMode(s), Turn: s.Turn,
		ShellID: s.ShellID, ActiveTools: h.activeTools(s), CreatedAt: store.Time(s.CreatedAt)}
	if reqs, err := h.DB.Requests(ctx, s.ID, true); err == nil {
		v.PendingRequests = len(reqs)
	}
	return v
}

// ValidMode / ValidPermissionMode check enum values.
func ValidMode(m string) bool { return m == ModeAgent || m == ModePlan || m == ModeGoal }

// ValidPermissionMode checks a session permission mode (inherit allowed).
func ValidPermissionMode(m string) bool {
	return m == PermInherit || m == PermAsk || m == PermAcceptEdits || m == PermAuto
}

// CreateOptions are the inputs of `pi session create`.
type CreateOptions struct {
	Workspace      string
	Mode           string
	PermissionMode string
	Temporary      bool
}

// CreateSession binds a new session to the canonical workspace root and
// records the root's identity, so a later swap of the directory is noticed.
func (h *Host) CreateSession(ctx context.Context, o CreateOptions) (*SessionView, error) {
	if o.Mode == "" {
		o.Mode = ModeAgent
	}
	if o.PermissionMode == "" {
		o.PermissionMode = PermInherit
	}
	if !ValidMode(o.Mode) {
		return nil, Errf(InvalidArgument, "invalid mode %q (agent, plan or goal)", o.Mode)
	}
	if !ValidPermissionMode(o.PermissionMode) {
		return nil, Errf(InvalidArgument, "invalid permission mode %q (inherit, ask, accept-edits or auto)", o.PermissionMode)
	}
	s := &store.Session{ID: NewID("ses_"), Mode: o.Mode, PermissionMode: o.PermissionMode, Turn: 1, Temporary: o.Temporary}
	switch {
	case o.Temporary && o.Workspace != "":
		return nil, Errf(InvalidArgument, "a temporary session takes no --workspace")
	case !o.Temporary && o.Workspace == "":
		return nil, Errf(InvalidArgument, "--workspace DIR is required (or --temporary for a session without one)")
	case !o.Temporary:
		root, id, err := h.canonicalWorkspace(o.Workspace)
		if err != nil {
			return nil, err
		}
		s.WorkspaceRoot, s.RootDev, s.RootIno, s.RootGen = root, id.Dev, id.Ino, id.Gen
	}
	h.pinShell(ctx, s)
	if err := h.DB.CreateSession(ctx, s); err != nil {
		return nil, storeErr(err, "create session")
	}
	return h.view(ctx, s), nil
}

func (h *Host) canonicalWorkspace(dir string) (string, fsx.ID, error) {
	if err := CheckPathString(dir); err != nil {
		return "", fsx.ID{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fsx.ID{}, Wrap(InvalidArgument, err, "workspace")
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fsx.ID{}, Wrap(InvalidArgument, err, "workspace %s", dir)
	}
	fi, err := os.Stat(canon)
	if err != nil {
		return "", fsx.ID{}, Wrap(InvalidArgument, err, "workspace %s", dir)
	}
	if !fi.IsDir() {
		return "", fsx.ID{}, Errf(InvalidArgument, "workspace %s is not a directory", dir)
	}
	if filepath.Dir(canon) == canon {
		return "", fsx.ID{}, Errf(InvalidArgument, "the filesystem root cannot be a workspace")
	}
	if within(canon, h.dataDir) || (h.configDir != "" && within(canon, h.configDir)) {
		return "", fsx.ID{}, Errf(InvalidArgument, "workspace %s is inside pi's own data or settings", dir)
	}
	if pat, hit := h.sensitive.Match(canon); hit {
		return "", fsx.ID{}, Errf(InvalidArgument, "workspace %s is on the sensitive-path deny list (%s)", dir, pat)
	}
	id, err := fsx.StatID(canon)
	if err != nil {
		return "", fsx.ID{}, Wrap(InvalidArgument, err, "workspace %s", dir)
	}
	return canon, id, nil
}

// Session loads a live session. Missing or deleted → NOT_FOUND; a store
// failure → STORE_ERROR. Nothing ever falls back to another workspace.
func (h *Host) Session(ctx context.Context, id string) (*store.Session, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	s, err := h.DB.Session(ctx, id)
	if err != nil {
		return nil, storeErr(err, "session "+id)
	}
	return s, nil
}

// ShowSession returns the view of a session.
func (h *Host) ShowSession(ctx context.Context, id string) (*SessionView, error) {
	s, err := h.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	return h.view(ctx, s), nil
}

// ListSessions returns every live session.
func (h *Host) ListSessions(ctx context.Context) ([]*SessionView, error) {
	ss, err := h.DB.Sessions(ctx)
	if err != nil {
		return nil, storeErr(err, "list sessions")
	}
	out := make([]*SessionView, 0, len(ss))
	for _, s := range ss {
		out = append(out, h.view(ctx, s))
	}
	return out, nil
}

// ConfigureOptions change a session's mode or permission mode ("" = keep).
type ConfigureOptions struct {
	Mode           string
	PermissionMode string
}

// ConfigureSession applies a user's change of mode or permission mode. It is
// refused while a Plan/Goal proposal is pending (R-PLAN-5).
func (h *Host) ConfigureSession(ctx context.Context, id string, o ConfigureOptions) (*SessionView, error) {
	if o.Mode != "" && !ValidMode(o.Mode) {
		return nil, Errf(InvalidArgument, "invalid mode %q (agent, plan or goal)", o.Mode)
	}
	if o.PermissionMode != "" && !ValidPermissionMode(o.PermissionMode) {
		return nil, Errf(InvalidArgument, "invalid permission mode %q (inherit, ask, accept-edits or auto)", o.PermissionMode)
	}
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	s, err := h.DB.UpdateSession(ctx, id, func(tx *sql.Tx, s *store.Session) error {
		if err := pendingProposalGuard(ctx, tx, s.ID); err != nil {
			return err
		}
		if o.Mode != "" {
			s.Mode = o.Mode
			s.ActiveTools = nil
		}
		if o.PermissionMode != "" {
			s.PermissionMode = o.PermissionMode
		}
		return nil
	})
	if err != nil {
		return nil, storeErr(err, "session "+id)
	}
	return h.view(ctx, s), nil
}

// NewTurn starts a new turn (SPEC §1): increments the counter, re-pins the
// command shell, resets the on-demand tool set and reports (then clears) a
// pending new_context request.
func (h *Host) NewTurn(ctx context.Context, id string) (*SessionView, error) {
	if err := validSessionID(id); err != nil {
		return nil, err
	}
	var reset bool
	s, err := h.DB.UpdateSession(ctx, id, func(tx *sql.Tx, s *store.Session) error {
		if err := pendingProposalGuard(ctx, tx, s.ID); err != nil {
			return err
		}
		s.Turn++
		s.ActiveTools = nil
		reset, s.ContextReset = s.ContextReset, false
		h.pinShell(ctx, s)
		return nil
	})
	if err != nil {
		return nil, storeErr(err, "session "+id)
	}
	v := h.view(ctx, s)
	v.ContextReset = &reset
	return v, nil
}

// pendingProposalGuard refuses prompt/mode/permission changes while a Plan or
// Goal proposal awaits approval (R-PLAN-5).
func pendingProposalGuard(ctx context.Context, tx *sql.Tx, sessionID string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM proposals WHERE session_id = ? AND state = 'pending'`, sessionID).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return Errf(PlanApprovalPending, "a proposal of this session is pending approval; approve or reject it first")
	}
	return nil
}

// DeleteSession removes a session, its grants, its pending requests, its
// scratch dir and its review snapshots (R-PATH-9, R-REV-4).
func (h *Host) DeleteSession(ctx context.Context, id string) error {
	if err := validSessionID(id); err != nil {
		return err
	}
	if err := h.DB.DeleteSession(ctx, id); err != nil {
		return storeErr(err, "session "+id)
	}
	h.wake(id)
	var errs []error
	for _, dir := range []string{h.ScratchDir(id), filepath.Join(h.SnapshotDir(), id)} {
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Wrap(ToolFailed, err, "session deleted, but its files were not all removed")
	}
	return nil
}
