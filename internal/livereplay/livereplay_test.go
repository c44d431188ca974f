package livereplay

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sim"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

// TestMain lets the test binary be the job supervisor: the daemon starts
// supervisors as `<its binary> stepd ...`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "stepd" {
		os.Exit(stepd.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// smallTrace is 42 jobs of three accounts on 4 GPUs, in trace seconds that
// are multiples of 10 (a tenth of a wall second each at scale 0.1): every
// event of the simulator falls on such a multiple, so two starts are tied
// or a whole wall second apart.
func smallTrace(t *testing.T) *sim.Trace {
	rng := rand.New(rand.NewPCG(13, 5))
	var b strings.Builder
	b.WriteString("job_id,submit_s,account,num_gpus,duration_s,time_limit_s\n")
	submit := 0
	for i := range 42 {
		gpus := []int{1, 1, 1, 2, 2, 4}[rng.IntN(6)]
		dur := 10 * (1 + rng.IntN(3))
		limit := dur + 10*rng.IntN(3)
		fmt.Fprintf(&b, "j%02d,%d,%s,%d,%d,%d\n", i, submit, []string{"alpha", "beta", "gamma"}[rng.IntN(3)], gpus, dur, limit)
		submit += 10 * rng.IntN(2)
	}
	tr, err := sim.ReadTrace("small.csv", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// options are the replay's lab and assumptions: 4 GPUs; a stop loses the
// work since the last checkpoint (10 s), and stopping and restarting take
// no time (a live job's sleep ends at once).
func options() sim.Options {
	setup := sim.DefaultSetup()
	// Backfill plans in steps of 10 trace seconds, one wall second live.
	setup.Config.Backfill.Resolution = 10 * time.Second
	// No ties in fair share: two accounts tie when their usage per share
	// is equal, and usage here is whole GPU-seconds (at most 4 × 520), so
	// shares that are primes above that (about 1:2:3) never tie. (With
	// 1:3:7, alpha's 60 GPU-seconds and beta's 180 tied at trace second
	// 170, and the tie went either way.)
	setup.Shares = map[string]int{"alpha": 2083, "beta": 4111, "gamma": 6151}
	return sim.Options{
		Lab:         sim.Lab{Nodes: 1, GPUsPerNode: 4, GPUMem: 80 << 30},
		Setup:       setup,
		Speedup:     sim.LinearSpeedup(4),
		Assumptions: sim.Assumptions{Checkpoint: 10 * time.Second, FillerLimit: 30 * time.Second},
		// The daemon also passes every GPUSampleInterval (1 s, 10 trace
		// seconds at scale 0.1): so does the simulator.
		Tick: 10 * time.Second,
	}
}

// A live replay measures what the daemon did in the trace's own seconds:
// a trace whose jobs never wait for each other (at most 4 GPUs asked at
// any time of 4) starts every job at its submission and ends it after its
// duration, on the daemon as in the simulator, under P2 and P4 alike (the
// one trace job that holds 2 GPUs is never shrunk: nobody waits).
func TestLiveReplayOfAnUncontendedTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a trace on a real daemon")
	}
	t.Parallel()
	tr, err := sim.ReadTrace("quiet.csv", strings.NewReader(`job_id,submit_s,account,num_gpus,duration_s,time_limit_s
q0,0,alpha,1,20,40
q1,0,beta,2,30,40
q2,10,gamma,1,10,40
q3,30,alpha,1,20,40
q4,40,beta,1,10,40
q5,40,gamma,2,20,40
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"P2", "P4"} {
		pols, _ := sim.LookupPolicies(name)
		opt := options()
		simRun, err := sim.Simulate(tr, pols[0], opt)
		if err != nil {
			t.Fatal(err)
		}
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		for i, j := range tr.Jobs {
			if so := simRun.Outcomes[i]; so.FirstStart != j.Submit || so.End != j.Submit+j.Duration {
				t.Fatalf("%s: the simulator ran %s %d-%d, want %d-%d", name, j.Name, so.FirstStart, so.End, j.Submit, j.Submit+j.Duration)
			}
		}
		// As in TestLiveReplayMatchesTheSimulator: a replay the machine
		// fell behind differs once; a difference of the engine's repeats.
		var live *sim.Run
		var problems []string
		for attempt := 1; attempt <= 2; attempt++ {
			var log bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			live, err = Run(ctx, tr, pols[0], opt, Options{Scale: 0.2, Exe: exe, Log: &log})
			cancel()
			if err != nil {
				t.Fatalf("%s: live replay: %v\n%s", name, err, log.String())
			}
			problems = nil
			for i, j := range tr.Jobs {
				so, lo := simRun.Outcomes[i], live.Outcomes[i]
				// Live, to the trace second: the replay counts the
				// daemon's whole seconds, and the milliseconds of a real
				// start and end fall inside them.
				if lo.FirstStart != so.FirstStart || lo.End != so.End || lo.Stops != 0 {
					problems = append(problems, fmt.Sprintf("%s: the daemon ran %s %d-%d with %d stops; the simulator %d-%d", name, j.Name, lo.FirstStart, lo.End, lo.Stops, so.FirstStart, so.End))
				}
			}
			if len(problems) == 0 {
				break
			}
			if attempt == 1 {
				t.Logf("%s: the first replay differed; replaying again:\n%s", name, strings.Join(problems, "\n"))
			}
		}
		for _, p := range problems {
			t.Error(p)
		}
		if sm, lm := sim.Summarize(simRun), sim.Summarize(live); lm.Jobs != len(tr.Jobs) || lm.AvgJCT != sm.AvgJCT {
			t.Errorf("%s: %d jobs finished live, average completion %.1f s; the simulator's %.1f s", name, lm.Jobs, lm.AvgJCT, sm.AvgJCT)
		}
	}
}

// The daemon and the simulator are one engine: the same trace, replayed on
// the real daemon (real jobs submitted at the trace's times, on simulated
// GPUs) and by the simulator, starts its jobs in the same order wherever
// the simulator's starts are not tied, stops the trace's jobs as often,
// and the average completion time agrees within 10 %. P2 is multifactor
// with backfill; P4 adds fillers, payback yields, shrinks and the short
// route, so every decision the core makes is carried out by the daemon.
//
// The trace has no ties in fair share (see options) and every time on the
// grid of the daemon's whole seconds; the replay steps the daemon one
// instant at a time (see the package comment). When this was written both
// policies matched exactly: the same start and end of every job.
func TestLiveReplayMatchesTheSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a trace on a real daemon, about a minute per policy")
	}
	if os.Getenv("SLITE_STRESS") != "" {
		// Under make test-stress (a busy loop on every core beside the
		// whole suite) a run can start a second late and P4 then takes
		// other decisions: the match holds on a machine that is busy,
		// not on one whose every core is taken (see the closing note of
		// issue 13).
		t.Skip("the second-exact match needs a core to spare: not under make test-stress")
	}
	t.Parallel()
	for _, name := range []string{"P2", "P4"} {
		t.Run(name, func(t *testing.T) {
			pols, err := sim.LookupPolicies(name)
			if err != nil {
				t.Fatal(err)
			}
			tr, opt := smallTrace(t), options()
			simRun, err := sim.Simulate(tr, pols[0], opt)
			if err != nil {
				t.Fatal(err)
			}
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			// The replay is second-exact only while the machine keeps up
			// with it: a start or a stop a second late (seen in CI while
			// other suites took every core) moves every later start by a
			// tick. A difference in the core's decisions repeats; such a
			// delay does not. So a replay that differs runs once more, and
			// the check fails only if the second differs too.
			var first []string
			for attempt := 1; ; attempt++ {
				problems, table, log := replayOnce(t, name, tr, simRun, pols[0], opt, exe)
				if len(problems) == 0 {
					if attempt > 1 {
						t.Logf("%s: the first replay differed (the second matched):\n%s", name, strings.Join(first, "\n"))
					}
					return
				}
				if attempt == 1 {
					first = problems
					t.Logf("%s: the first replay differed; replaying again:\n%s\n%s", name, strings.Join(problems, "\n"), table)
					continue
				}
				for _, p := range problems {
					t.Error(p)
				}
				t.Logf("side by side:\n%s", table)
				if os.Getenv("SLITE_DIFFERENTIAL_LOG") != "" {
					t.Logf("daemon log:\n%s", log)
				}
				return
			}
		})
	}
}

// replayOnce replays tr on a live daemon and compares it with the
// simulator's run: what differs (none when they agree), the jobs side by
// side, and the daemon's log.
func replayOnce(t *testing.T, name string, tr *sim.Trace, simRun *sim.Run, pol sim.Policy, opt sim.Options, exe string) (problems []string, table, daemonLog string) {
	t.Helper()
	var log, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	live, err := Run(ctx, tr, pol, opt, Options{Scale: 0.1, Exe: exe, Log: &log, Progress: &progress})
	if err != nil {
		t.Fatalf("live replay: %v\n%s", err, log.String())
	}
	sm, lm := sim.Summarize(simRun), sim.Summarize(live)
	t.Logf("%s: simulator avg JCT %.1f s, %d stops, %d shrinks; daemon %.1f s, %d stops, %d shrinks",
		name, sm.AvgJCT, sm.Preemptions, sm.Shrinks, lm.AvgJCT, lm.Preemptions, lm.Shrinks)
	if lm.Jobs != len(tr.Jobs) || sm.Jobs != len(tr.Jobs) {
		t.Fatalf("finished: simulator %d, daemon %d, of %d", sm.Jobs, lm.Jobs, len(tr.Jobs))
	}
	stops := func(r *sim.Run) (n int) {
		for _, o := range r.Outcomes {
			n += o.Stops
		}
		return n
	}
	if ss, ls := stops(simRun), stops(live); ss != ls {
		problems = append(problems, fmt.Sprintf("the trace's jobs were stopped %d times by the simulator, %d by the daemon", ss, ls))
	}
	if d := math.Abs(lm.AvgJCT-sm.AvgJCT) / sm.AvgJCT; d > 0.10 {
		problems = append(problems, fmt.Sprintf("average completion: simulator %.1f s, daemon %.1f s: %.0f%% apart, more than 10%%", sm.AvgJCT, lm.AvgJCT, 100*d))
	}
	// Start order: every pair the simulator starts at different times
	// starts in that order on the daemon.
	var bad []string
	for i := range tr.Jobs {
		for k := range tr.Jobs {
			si, sk := simRun.Outcomes[i].FirstStart, simRun.Outcomes[k].FirstStart
			li, lk := live.Outcomes[i].FirstStart, live.Outcomes[k].FirstStart
			if si < sk && li > lk {
				bad = append(bad, fmt.Sprintf("%s (simulator %d, daemon %d) before %s (simulator %d, daemon %d)",
					tr.Jobs[i].Name, si, li, tr.Jobs[k].Name, sk, lk))
			}
		}
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		problems = append(problems, fmt.Sprintf("%d pairs start in another order on the daemon:\n%s", len(bad), strings.Join(bad, "\n")))
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "job  submit acct  gpus dur limit | simulator start-end stops | daemon start-end stops\n")
	for i, j := range tr.Jobs {
		so, lo := simRun.Outcomes[i], live.Outcomes[i]
		fmt.Fprintf(&tab, "%-4s %6d %-5s %4d %3d %5d | %9d-%-4d %5d | %6d-%-4d %5d\n", j.Name, j.Submit, j.Account, j.GPUs, j.Duration, j.TimeLimit,
			so.FirstStart, so.End, so.Stops, lo.FirstStart, lo.End, lo.Stops)
	}
	return problems, tab.String(), log.String()
}
