//go:build unix

package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeShell writes an executable script that stands in for $SHELL.
func fakeShell(t *testing.T, body string) Env {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fakesh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := DefaultEnv()
	env.Getenv = func(k string) string {
		if k == "SHELL" {
			return p
		}
		return os.Getenv(k)
	}
	return env
}

func TestLoginPATH(t *testing.T) {
	// The script runs the probe it is given ($1 = -lic, $2 = the command)
	// after an rc-file-like banner, so both the argv and the banner
	// handling are exercised.
	env := fakeShell(t, `echo "Welcome, last login: today"; [ "$1" = -lic ] || exit 9; PATH=/fake/bin:/usr/bin; eval "$2"`)
	got, err := LoginPATH(context.Background(), env, 2*time.Second)
	if err != nil || got != "/fake/bin:/usr/bin" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestLoginPATHFailures(t *testing.T) {
	cases := map[string]string{
		"non-zero exit": `printf %s /a:/b; exit 4`,
		"empty":         `exit 0`,
		"newline last":  `echo /a:/b`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := LoginPATH(context.Background(), fakeShell(t, body), 2*time.Second)
			if err == nil || got != "" {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

func TestLoginPATHTimeout(t *testing.T) {
	start := time.Now()
	got, err := LoginPATH(context.Background(), fakeShell(t, `sleep 10 & sleep 10`), 300*time.Millisecond)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
	if err == nil || got != "" || !strings.Contains(err.Error(), "did not finish within 300ms") {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestLoginPATHFallbackAndWindows(t *testing.T) {
	env := DefaultEnv()
	env.Getenv = func(k string) string {
		if k == "SHELL" {
			return "/nonexistent/shell"
		}
		return os.Getenv(k)
	}
	// Falls back to /bin/zsh, /bin/bash or /bin/sh of the real machine.
	if got, err := LoginPATH(context.Background(), env, 5*time.Second); err != nil || !strings.Contains(got, "/") {
		t.Errorf("fallback: %q, %v", got, err)
	}
	env.GOOS = "windows"
	if got, err := LoginPATH(context.Background(), env, time.Second); got != "" || err != nil {
		t.Errorf("windows: %q, %v", got, err)
	}
}
