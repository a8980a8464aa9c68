package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pi-cli/pi/pkg/hostcore"
)

// TestMain lets testscript run the real pi binary's entry point as "pi".
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"pi": func() { os.Exit(Main(os.Args[1:])) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/script: real
// processes, a real store on disk, real files and symlinks.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("PI_UPDATE_SCRIPTS") != "",
		Setup: func(e *testscript.Env) error {
			e.Setenv("PI_DATA_DIR", filepath.Join(e.WorkDir, "data"))
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(e.WorkDir, "config"))
			e.Setenv("XDG_DATA_HOME", filepath.Join(e.WorkDir, "xdgdata"))
			e.Setenv("PI_OUTPUT", "")
			return os.MkdirAll(filepath.Join(e.WorkDir, "home"), 0o755)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"jsonget": cmdJSONGet,
			"waitreq": cmdWaitReq,
			"sleep":   cmdSleep,
			"mkfile":  cmdMkfile,
			"waitrun": cmdWaitRun,
			"symlink2": func(ts *testscript.TestScript, neg bool, args []string) {
				ts.Check(os.Symlink(args[0], ts.MkAbs(args[1])))
			},
		},
	})
}

// jsonget VAR PATH: set VAR to the value at PATH (a.b.0.c) of the JSON in
// the last command's stdout. "jsonget -n PATH" asserts the path is absent.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonget VAR PATH")
	}
	v, ok := jsonPath(ts.ReadFile("stdout"), args[1])
	if neg {
		if ok {
			ts.Fatalf("%s is present: %v", args[1], v)
		}
		return
	}
	if !ok {
		ts.Fatalf("no %s in stdout:\n%s", args[1], ts.ReadFile("stdout"))
	}
	switch x := v.(type) {
	case string:
		ts.Setenv(args[0], x)
	default:
		b, _ := json.Marshal(x)
		ts.Setenv(args[0], string(b))
	}
}

func jsonPath(doc, path string) (any, bool) {
	var v any
	line := strings.TrimSpace(doc)
	if i := strings.LastIndex(line, "\n{"); i >= 0 { // --stream: the envelope is the last line
		line = line[i+1:]
	}
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		return nil, false
	}
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// waitreq N [SESSION]: wait (up to 20s) until at least N requests are pending,
// then set REQ to the oldest id and REQ1..REQn to each, oldest first.
func cmdWaitReq(ts *testscript.TestScript, neg bool, args []string) {
	n := 1
	if len(args) > 0 {
		n, _ = strconv.Atoi(args[0])
	}
	sid := ""
	if len(args) > 1 {
		sid = args[1]
	}
	cfg := hostcore.DefaultConfig()
	cfg.DataDir = ts.Getenv("PI_DATA_DIR")
	ctx := context.Background()
	h, err := hostcore.Open(ctx, cfg)
	ts.Check(err)
	defer h.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		reqs, err := h.ListRequests(ctx, sid, true)
		ts.Check(err)
		if len(reqs) >= n {
			ts.Setenv("REQ", reqs[0].RequestID)
			for i, r := range reqs {
				ts.Setenv(fmt.Sprintf("REQ%d", i+1), r.RequestID)
			}
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("only %d pending request(s) after 20s, want %d", len(reqs), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	time.Sleep(d)
}

// mkfile NAME QUOTED: write a file whose bytes are a Go-quoted string (for
// CRLF, NUL and invalid UTF-8, which txtar cannot hold).
func cmdMkfile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mkfile NAME QUOTED")
	}
	b, err := strconv.Unquote(`"` + args[1] + `"`)
	ts.Check(err)
	p := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
	ts.Check(os.WriteFile(p, []byte(b), 0o644))
}

// waitrun: wait (up to 20s) until a tool call of any session is registered
// as running (a Bash call has started), so an abort cannot race its start.
func cmdWaitRun(ts *testscript.TestScript, neg bool, args []string) {
	cfg := hostcore.DefaultConfig()
	cfg.DataDir = ts.Getenv("PI_DATA_DIR")
	h, err := hostcore.Open(context.Background(), cfg)
	ts.Check(err)
	defer h.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		ts.Check(h.DB.SQL().QueryRow(`SELECT count(*) FROM running WHERE child_pgid > 0`).Scan(&n))
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no running tool call after 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
