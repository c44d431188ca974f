package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

// The simulator recomputes fair share and priorities as the daemon does:
// every Setup.CalcPeriod by default (Priority.Recalc "period"), at every
// pass with CalcPeriod 0 (Recalc "pass"). One GPU; alpha's a0 runs from 0
// to 100; alpha's a1 (at 10) and beta's b1 (at 11) wait for it. At 100 the
// last recalculation (at 0) saw no usage: both have the fair share and the
// age (0) they were given at submission, and the earlier submission, a1,
// starts first. Recomputed every pass, alpha has 100 GPU-seconds by then:
// b1 starts first.
func TestRecalcPeriodHoldsPriorities(t *testing.T) {
	tr := trace(t, "a0,0,alpha,1,100,0\na1,10,alpha,1,50,0\nb1,11,beta,1,50,0\n")
	for _, tc := range []struct {
		name      string
		period    time.Duration
		wantFirst string
	}{
		{"period", 5 * time.Minute, "a1"},
		{"pass", 0, "b1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := options(1, 1)
			opt.Setup.CalcPeriod = tc.period
			run, err := Simulate(tr, policy(t, "P2"), opt)
			if err != nil {
				t.Fatal(err)
			}
			a1, b1 := run.Outcomes[1], run.Outcomes[2]
			first := "a1"
			if b1.FirstStart < a1.FirstStart {
				first = "b1"
			}
			if first != tc.wantFirst || min(a1.FirstStart, b1.FirstStart) != 100 {
				t.Errorf("a1 started at %d, b1 at %d: want %s first, at 100", a1.FirstStart, b1.FirstStart, tc.wantFirst)
			}
		})
	}
	// After a recalculation that saw alpha's usage (at 300, a1 and b1
	// submitted later), beta's job goes first in both modes.
	tr = trace(t, "a0,0,alpha,1,100,0\nx0,200,alpha,1,200,0\na1,310,alpha,1,50,0\nb1,311,beta,1,50,0\n")
	run, err := Simulate(tr, policy(t, "P2"), options(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if a1, b1 := run.Outcomes[2], run.Outcomes[3]; b1.FirstStart != 400 || a1.FirstStart != 450 {
		t.Errorf("after the recalculation at 300: a1 started at %d, b1 at %d; want b1 at 400, a1 at 450", a1.FirstStart, b1.FirstStart)
	}
}

// --recalc chooses the rule; a word other than period or pass is refused,
// saying which.
func TestRecalcFlag(t *testing.T) {
	file := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(file, []byte(header+"a0,0,alpha,1,100,0\na1,10,alpha,1,50,0\nb1,11,beta,1,50,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	f := Flags{Trace: file, Nodes: 1, GPUsPerNode: 1, GPUMem: "80G", Policy: "P2", Profiles: "none", Recalc: "always"}
	if rc := Command(f, &out, &errb, nil); rc != 1 || !strings.Contains(errb.String(), `--recalc "always": give period or pass`) {
		t.Errorf("--recalc always: exit %d, stderr %q", rc, errb.String())
	}
	runs := map[string]string{}
	for _, r := range []string{"period", "pass"} {
		out.Reset()
		errb.Reset()
		f.Recalc = r
		f.NoWall = true
		if rc := Command(f, &out, &errb, nil); rc != 0 {
			t.Fatalf("--recalc %s: exit %d: %s", r, rc, errb.String())
		}
		runs[r] = out.String()
	}
	// The trace of TestRecalcPeriodHoldsPriorities: a1 or b1 first, so
	// the accounts' lines differ.
	if runs["period"] == runs["pass"] {
		t.Errorf("--recalc period and pass printed the same:\n%s", runs["pass"])
	}
}

// A --config's [Priority] Recalc and CalcPeriod set the simulator's rule.
func TestRecalcFromConfig(t *testing.T) {
	c := config.Default()
	c.Priority.CalcPeriod = 2 * time.Minute
	if s, err := SetupFromConfig(c); err != nil || s.CalcPeriod != 2*time.Minute {
		t.Errorf("CalcPeriod 2 minutes: %v, %v", s.CalcPeriod, err)
	}
	c.Priority.Recalc = config.RecalcPass
	if s, err := SetupFromConfig(c); err != nil || s.CalcPeriod != 0 {
		t.Errorf("Recalc pass: CalcPeriod %v (want 0: every pass), %v", s.CalcPeriod, err)
	}
	if DefaultSetup().CalcPeriod != 5*time.Minute {
		t.Errorf("the default: CalcPeriod %v, want Slurm's 5 minutes", DefaultSetup().CalcPeriod)
	}
}
