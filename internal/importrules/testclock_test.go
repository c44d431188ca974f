package importrules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
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
	checked := 0
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if name := e.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files: the walk missed the tree", checked)
	}
}
