package hostcore

import (
	"os"
	"testing"
)

// TestMain gives the tests a HOME of their own: they start and kill real
// login shells (bash -lc), and a kill that lands while the machine's own
// profile runs (pyenv's rehash, say) would leave its lock behind in the
// real HOME and hang every later login shell.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "pi-test-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
