// Package testhome runs a test binary with a HOME of its own. pi's tests
// start and kill real login shells (bash -lc); a kill that lands while the
// machine's own profile runs (pyenv's rehash, say) would leave its lock in
// the real HOME and hang every later login shell.
package testhome

import (
	"os"
	"testing"
)

// Main is a TestMain body: a temp HOME, the tests, cleanup, exit.
func Main(m *testing.M) {
	home, err := os.MkdirTemp("", "pi-test-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
