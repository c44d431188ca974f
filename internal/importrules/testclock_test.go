package importrules

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The end-to-end tests move a live daemon's clock, and its supervisors'
// time limits and KillWait, with a file (SLITE_TEST_CLOCK_FILE): their
// slurmd-lite and `slurmd-lite stepd` are the test binary itself, which
// hands the clock in through daemon.Options.Clock and SupervisorEnv and
// stepd.MainClock (docs/architecture.md, "Tests of minutes"). Production
// must have no way to read such a clock: no file that is built into a
// binary names a test hook's variable (SLITE_TEST_...), and outside the
// packages that declare them only tests use MainClock and SupervisorEnv.
func TestTestClockOnlyInTests(t *testing.T) {
	root := moduleRoot(t)
	// The test hooks and the packages that declare them.
	hooks := map[string]string{"MainClock": "internal/stepd", "SupervisorEnv": "internal/daemon"}
	fset := token.NewFileSet()
	checked := eachBuiltFile(t, root, fset, func(rel string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && strings.Contains(s, "SLITE_TEST_") {
					t.Errorf("%s:%d names a test hook's variable (%q): only _test.go files may read a test clock",
						rel, fset.Position(n.Pos()).Line, s)
				}
			case *ast.SelectorExpr:
				if pkg, ok := hooks[n.Sel.Name]; ok && filepath.Dir(rel) != pkg {
					t.Errorf("%s:%d uses %s, the end-to-end tests' clock hook: production's supervisors and daemon keep the machine's clock",
						rel, fset.Position(n.Pos()).Line, n.Sel.Name)
				}
			}
			return true
		})
	})
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the tree", checked)
	}
}
