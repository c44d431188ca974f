package importrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsNameEveryPackage checks that README's Layout and
// docs/architecture.md name every package of the module: a new package
// gets its line in both, so the one-page map stays whole. README names a
// package by its path (internal/sched, cmd/sbatch); the architecture page
// by its path in backquotes, or below internal/ by its name there
// (`sched`, `gpu/gputest`).
func TestDocsNameEveryPackage(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	arch, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range goList(t, "./internal/...", "./cmd/...") {
		rel := strings.TrimPrefix(pkg, module+"/")
		if !containsWord(layout, rel) {
			t.Errorf("README.md's Layout does not name %s: add a line for it (what it does, in a few words)", rel)
		}
		short, internal := strings.CutPrefix(rel, "internal/")
		if !strings.Contains(string(arch), "`"+rel+"`") && !(internal && strings.Contains(string(arch), "`"+short+"`")) {
			t.Errorf("docs/architecture.md does not name %s: add `%s` where its kind of package is described", rel, short)
		}
	}
}

// containsWord reports whether s has w not followed by more of a path
// (internal/gpu does not count as naming internal/gpu/gputest, nor the
// reverse).
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		end := i + j + len(w)
		if end == len(s) || !strings.ContainsRune("/-_abcdefghijklmnopqrstuvwxyz0123456789", rune(s[end])) {
			return true
		}
		i = end
	}
}
