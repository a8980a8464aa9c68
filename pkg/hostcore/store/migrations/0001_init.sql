CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  workspace_root   TEXT NOT NULL DEFAULT '',
  root_dev         INTEGER NOT NULL DEFAULT 0,
  root_ino         INTEGER NOT NULL DEFAULT 0,
  temporary        INTEGER NOT NULL DEFAULT 0,
  mode             TEXT NOT NULL DEFAULT 'agent',
  permission_mode  TEXT NOT NULL DEFAULT 'inherit',
  turn             INTEGER NOT NULL DEFAULT 1,
  shell_id         TEXT NOT NULL DEFAULT '',
  shell_dialect    TEXT NOT NULL DEFAULT '',
  shell_path       TEXT NOT NULL DEFAULT '',
  active_tools     TEXT NOT NULL DEFAULT '[]',
  context_reset    INTEGER NOT NULL DEFAULT 0,
  abort_epoch      INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL,
  deleted_at       INTEGER
);

CREATE TABLE requests (
  request_id       TEXT PRIMARY KEY,
  seq              INTEGER NOT NULL,
  session_id       TEXT NOT NULL REFERENCES sessions(id),
  tool_call_id     TEXT NOT NULL,
  tool_name        TEXT NOT NULL,
  risk             TEXT NOT NULL,
  rationale        TEXT NOT NULL,
  args_preview     TEXT NOT NULL,
  workspace        TEXT NOT NULL,
  delegate         TEXT NOT NULL DEFAULT '',
  state            TEXT NOT NULL DEFAULT 'pending',
  decided_by       TEXT NOT NULL DEFAULT '',
  created_at       INTEGER NOT NULL,
  deadline         INTEGER NOT NULL,
  decided_at       INTEGER,
  waiter_pid       INTEGER NOT NULL DEFAULT 0,
  waiter_boot      TEXT NOT NULL DEFAULT '',
  waiter_start     TEXT NOT NULL DEFAULT '',
  target           TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX requests_pending ON requests(session_id, state, seq);
CREATE INDEX requests_call ON requests(tool_call_id);

CREATE TABLE grants (
  session_id   TEXT NOT NULL REFERENCES sessions(id),
  tool_name    TEXT NOT NULL,
  granted_at   INTEGER NOT NULL,
  PRIMARY KEY (session_id, tool_name)
);

CREATE TABLE audit (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id          TEXT NOT NULL,
  turn                INTEGER NOT NULL,
  tool_call_id        TEXT NOT NULL,
  trace_id            TEXT NOT NULL,
  tool_name           TEXT NOT NULL,
  delegate            TEXT NOT NULL DEFAULT '',
  args_hash           TEXT NOT NULL,
  args_preview        TEXT NOT NULL,
  path_class          TEXT NOT NULL DEFAULT '',
  external_path       TEXT NOT NULL DEFAULT '',
  decision            TEXT NOT NULL,
  ok                  INTEGER NOT NULL,
  error_code          TEXT NOT NULL DEFAULT '',
  request_id          TEXT NOT NULL DEFAULT '',
  prompted            INTEGER NOT NULL DEFAULT 0,
  permission_wait_ms  INTEGER NOT NULL DEFAULT 0,
  duration_ms         INTEGER NOT NULL DEFAULT 0,
  overhead_ms         INTEGER NOT NULL DEFAULT 0,
  total_ms            INTEGER NOT NULL DEFAULT 0,
  state               TEXT NOT NULL DEFAULT 'done',
  pid                 INTEGER NOT NULL DEFAULT 0,
  boot_id             TEXT NOT NULL DEFAULT '',
  created_at          INTEGER NOT NULL
);
CREATE INDEX audit_session ON audit(session_id, id);
CREATE INDEX audit_created ON audit(created_at);

CREATE TABLE review_changes (
  snapshot_id   TEXT PRIMARY KEY,
  session_id    TEXT NOT NULL,
  tool_call_id  TEXT NOT NULL,
  message_id    TEXT NOT NULL,
  path          TEXT NOT NULL,
  state         TEXT NOT NULL DEFAULT 'active',
  record        TEXT NOT NULL,
  created_at    INTEGER NOT NULL
);
CREATE INDEX review_session ON review_changes(session_id, created_at);
CREATE INDEX review_message ON review_changes(message_id);

CREATE TABLE mutation_failures (
  session_id   TEXT NOT NULL,
  turn         INTEGER NOT NULL,
  path         TEXT NOT NULL,
  attempts     INTEGER NOT NULL,
  last_code    TEXT NOT NULL,
  kind         TEXT NOT NULL,
  PRIMARY KEY (session_id, turn, path)
);

CREATE TABLE running (
  tool_call_id  TEXT PRIMARY KEY,
  session_id    TEXT NOT NULL,
  tool_name     TEXT NOT NULL,
  pid           INTEGER NOT NULL,
  child_pgid    INTEGER NOT NULL DEFAULT 0,
  boot_id       TEXT NOT NULL,
  started_at    INTEGER NOT NULL
);

CREATE TABLE device_state (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);

CREATE TABLE ask_requests (
  request_id   TEXT PRIMARY KEY,
  session_id   TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  questions    TEXT NOT NULL,
  answers      TEXT NOT NULL DEFAULT '',
  state        TEXT NOT NULL DEFAULT 'pending',
  created_at   INTEGER NOT NULL,
  decided_at   INTEGER,
  waiter_pid   INTEGER NOT NULL DEFAULT 0,
  waiter_boot  TEXT NOT NULL DEFAULT ''
);

CREATE TABLE proposals (
  id            TEXT PRIMARY KEY,
  kind          TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  turn          INTEGER NOT NULL,
  tool_call_id  TEXT NOT NULL,
  version       INTEGER NOT NULL,
  state         TEXT NOT NULL,
  title         TEXT NOT NULL,
  artifact_path TEXT NOT NULL,
  sha256        TEXT NOT NULL,
  boot_id       TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  deadline      INTEGER NOT NULL,
  decided_at    INTEGER,
  permission_mode TEXT NOT NULL DEFAULT ''
);
CREATE INDEX proposals_session ON proposals(session_id, state);
