package pkg_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering asserts STYLE.md's import rules with go list -deps: pkg/
// never imports cobra, viper or terminal code, and pkg/review and pkg/shell
// import nothing from hostcore.
func TestLayering(t *testing.T) {
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Skipf("go list unavailable: %v", err)
		}
		return strings.Fields(string(out))
	}
	forbidden := []string{"github.com/spf13/cobra", "github.com/spf13/viper", "github.com/mattn/go-isatty", "golang.org/x/term"}
	for _, d := range deps("github.com/pi-cli/pi/pkg/...") {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, f+"/") {
				t.Errorf("pkg/ depends on %s", d)
			}
		}
	}
	for _, p := range []string{"github.com/pi-cli/pi/pkg/review", "github.com/pi-cli/pi/pkg/shell", "github.com/pi-cli/pi/pkg/fsx"} {
		for _, d := range deps(p) {
			if strings.HasPrefix(d, "github.com/pi-cli/pi/pkg/hostcore") || strings.HasPrefix(d, "github.com/pi-cli/pi/cmd") {
				t.Errorf("%s imports %s", p, d)
			}
		}
	}
}
