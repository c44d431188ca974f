package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// make demo shows each command it runs ("$ ..."): a variable set in front
// of its run helper (VAR=x run cmd) is hidden from that line, and the
// output then seems to come from nowhere (issue 24: a parse result whose
// time came from an unseen SBATCH_TIMELIMIT). Such a variable goes
// through env, which the line shows.
func TestDemoShowsWhatItRuns(t *testing.T) {
	b, err := os.ReadFile("../../scripts/demo")
	if err != nil {
		t.Fatal(err)
	}
	hidden := regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*=\S*\s+)+run\s`)
	for i, l := range strings.Split(string(b), "\n") {
		if hidden.MatchString(l) {
			t.Errorf("scripts/demo:%d sets a variable the shown command line hides: %s (write: run env VAR=... cmd)", i+1, strings.TrimSpace(l))
		}
	}
	if !strings.Contains(string(b), "run env SBATCH_TIMELIMIT=45 slurmd-lite parse") {
		t.Errorf("scripts/demo no longer shows SBATCH_TIMELIMIT's part in its parse example")
	}
}
