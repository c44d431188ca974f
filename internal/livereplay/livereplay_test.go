package livereplay

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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
	// Fair share recomputed at every pass, in both engines: the daemon's
	// CalcPeriod is whole minutes (a trace period of 10 minutes at the
	// replay's scale), longer than these traces, and its recalculations
	// count from its start, not from trace second 0.
	setup.CalcPeriod = 0
	return sim.Options{
		Lab:         sim.Lab{Nodes: 1, GPUsPerNode: 4, GPUMem: 80 << 30},
		Setup:       setup,
		Speedup:     sim.LinearSpeedup(4),
		Assumptions: sim.Assumptions{Checkpoint: 10 * time.Second, FillerLimit: 30 * time.Second},
		// The daemon also passes every GPUSampleInterval (1 s, 10 trace
		// seconds at scale 0.1): so does the simulator.
		Tick: 10 * time.Second,
		// The replay's jobs end on whole wall seconds: a shrunk job's run
		// too (sim.Options.Grid).
		Grid: 10,
	}
}

// A live replay measures what the daemon did in the trace's own seconds:
// a trace whose jobs never wait for each other (at most 4 GPUs asked at
// any time of 4) starts every job at its submission and ends it after its
// duration, on the daemon as in the simulator, under P2 and P4 alike (the
// one trace job that holds 2 GPUs is never shrunk: nobody waits).
func TestLiveReplayOfAnUncontendedTrace(t *testing.T) {
	liveGate(t)
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
		opt.Grid = 5 // a wall second at scale 0.2
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
		compareOnTime(t, name, func(timing *Timing) []string {
			var log bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			// P4's replay keeps its directory, as simulate --live --keep
			// does; under t.TempDir its socket path is too long for a
			// Unix socket, and goes elsewhere.
			keep := ""
			if name == "P4" {
				keep = filepath.Join(t.TempDir(), "a-directory-name-long-enough-to-push-the-socket-path-past-what-a-unix-socket-takes", name)
			}
			live, err := Run(ctx, tr, pols[0], opt, Options{Scale: 0.2, Exe: exe, Log: &log, Timing: timing, Keep: keep})
			cancel()
			if err != nil {
				t.Fatalf("%s: live replay: %v\n%s", name, err, log.String())
			}
			if keep != "" {
				checkKept(t, keep, tr)
			}
			var problems []string
			for i, j := range tr.Jobs {
				so, lo := simRun.Outcomes[i], live.Outcomes[i]
				// Live, to the trace second: the replay counts the
				// daemon's whole seconds, and the milliseconds of a real
				// start and end fall inside them.
				if lo.FirstStart != so.FirstStart || lo.End != so.End || lo.Stops != 0 {
					problems = append(problems, fmt.Sprintf("%s: the daemon ran %s %d-%d with %d stops; the simulator %d-%d", name, j.Name, lo.FirstStart, lo.End, lo.Stops, so.FirstStart, so.End))
				}
			}
			if sm, lm := sim.Summarize(simRun), sim.Summarize(live); lm.Jobs != len(tr.Jobs) || lm.AvgJCT != sm.AvgJCT {
				problems = append(problems, fmt.Sprintf("%s: %d jobs finished live, average completion %.1f s; the simulator's %.1f s", name, lm.Jobs, lm.AvgJCT, sm.AvgJCT))
			}
			return problems
		})
	}
}

// checkKept: a kept replay's directory explains what the daemon did: its
// configuration, its log, the replay's log of submissions, which daemon
// job each trace job was, and the state a restarted daemon reads.
func checkKept(t *testing.T, dir string, tr *sim.Trace) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("kept replay: %v", err)
		}
		return string(b)
	}
	if c := read("slurm-lite.toml"); !strings.Contains(c, "[Yield]") || !strings.Contains(c, `StateSaveLocation = "`+dir+`/state"`) {
		t.Errorf("kept slurm-lite.toml is not the P4 replay's:\n%s", c)
	}
	// The fillers' array is submitted first: the trace jobs' ids follow
	// it, as jobs.csv says.
	rows := strings.Split(strings.TrimSuffix(read("jobs.csv"), "\n"), "\n")
	if len(rows) != len(tr.Jobs)+1 || rows[0] != "trace_job,line,submit_s,account,gpus,duration_s,time_limit_s,job_id" {
		t.Fatalf("kept jobs.csv:\n%s", strings.Join(rows, "\n"))
	}
	daemonLog, replayLog := read("daemon.log"), read("replay.log")
	for i, j := range tr.Jobs {
		row := fmt.Sprintf("%s,%d,%d,%s,%d,%d,%d,", j.Name, j.Line, j.Submit, j.Account, j.GPUs, j.Duration, j.TimeLimit)
		id, ok := strings.CutPrefix(rows[i+1], row)
		if !ok {
			t.Errorf("kept jobs.csv row %d is %q, want %q and the job id", i+1, rows[i+1], row)
			continue
		}
		if !strings.Contains(daemonLog, fmt.Sprintf(`msg="job submitted" job=%s user=`, id)) {
			t.Errorf("kept daemon.log does not log the submission of job %s (trace job %s)", id, j.Name)
		}
		if !strings.Contains(replayLog, fmt.Sprintf("submitted %s as job %s (%d GPUs, %ds)", j.Name, id, j.GPUs, j.Duration)) {
			t.Errorf("kept replay.log does not say it submitted %s as job %s:\n%s", j.Name, id, replayLog)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "state.db")); err != nil {
		t.Errorf("kept state: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.sock")); err == nil {
		t.Errorf("the socket is under the kept directory, whose path is too long for one")
	}
}

// liveGate skips a live replay outside make test-live. A live replay
// compares the daemon with the simulator second for second on the wall
// clock, so it says something only where the machine keeps up with wall
// time: make test-live runs it alone (SLITE_LIVE=1), not beside the other
// packages of make test, nor under make test-stress's busy loops.
func liveGate(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("replays a trace on a real daemon")
	}
	if os.Getenv("SLITE_LIVE") == "" {
		t.Skip("a live replay keeps step with the wall clock second by second: it runs in make test-live, alone on the machine (SLITE_LIVE=1), not beside the rest of make test")
	}
	if os.Getenv("SLITE_STRESS") != "" {
		t.Skip("a live replay needs a core to spare: not under make test-stress")
	}
	if idle, ok := idleCores(time.Second); ok && idle < 1 {
		t.Skipf("the machine is busy (%.2f of %d cores idle over a second): a live replay needs one to spare to keep up with the wall clock", idle, runtime.NumCPU())
	}
}

// idleCores is how many of the machine's cores were idle, on average,
// over the next span (from /proc/stat's cpu line); false when unknown.
func idleCores(span time.Duration) (float64, bool) {
	read := func() (idle, total float64, ok bool) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0, false
		}
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "cpu" {
			return 0, 0, false
		}
		for i, v := range f[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return idle, total, true
	}
	i0, t0, ok0 := read()
	time.Sleep(span)
	i1, t1, ok1 := read()
	if !ok0 || !ok1 || t1 <= t0 {
		return 0, false
	}
	return (i1 - i0) / (t1 - t0) * float64(runtime.NumCPU()), true
}

// compareOnTime runs replay (which replays and compares, returning what
// differs) until a replay agrees, or one that was on time differs (a
// difference of the engines: the test fails). A replay the machine fell
// behind (Timing) proves nothing either way: it is replayed, up to three
// times, and if every one was late the test skips, saying so.
func compareOnTime(t *testing.T, name string, replay func(*Timing) []string) {
	t.Helper()
	var lateOnes []string
	for attempt := 1; attempt <= 3; attempt++ {
		var timing Timing
		problems := replay(&timing)
		if len(problems) == 0 {
			if len(lateOnes) > 0 {
				t.Logf("%s: earlier replays differed while the machine lagged:\n%s", name, strings.Join(lateOnes, "\n"))
			}
			return
		}
		if timing.OnTime() {
			for _, p := range problems {
				t.Error(p)
			}
			t.Logf("%s: the replay kept up with every instant (%d, at most %s late), so the difference is the engines'", name, timing.Instants, timing.MaxLag.Round(time.Millisecond))
			return
		}
		lateOnes = append(lateOnes, fmt.Sprintf("replay %d: %d of %d instants late (at most %s): %s", attempt, timing.Late, timing.Instants,
			timing.MaxLag.Round(time.Millisecond), strings.Join(problems, "; ")))
		t.Logf("%s: the replay differed while the machine lagged; replaying again:\n%s", name, lateOnes[len(lateOnes)-1])
	}
	t.Skipf("%s: the machine did not keep up with the replay's instants in 3 tries, so no decision could be compared second for second:\n%s", name, strings.Join(lateOnes, "\n"))
}

// The daemon and the simulator are one engine: the same trace, replayed on
// the real daemon (real jobs submitted at the trace's times, on simulated
// GPUs) and by the simulator, starts its jobs in the same order wherever
// the simulator's starts are not tied, stops the trace's jobs as often,
// and the average completion time agrees within 10 %. P2 is multifactor
// with backfill; P4 adds fillers, payback yields, shrinks and the short
// route, so every decision the core makes is carried out by the daemon.
//
// The first trace has no ties in fair share (see options) and every time
// on the grid of the daemon's whole seconds; the replay steps the daemon
// one instant at a time (see the package comment). When this was written
// both policies matched exactly: the same start and end of every job.
// The second trace is P4 on a workload taken as its generator made it
// (untunedTrace): equal shares, 3-GPU jobs, longer jobs.
func TestLiveReplayMatchesTheSimulator(t *testing.T) {
	liveGate(t)
	t.Parallel()
	for _, tc := range []struct {
		name, policy string
		trace        func(*testing.T) *sim.Trace
		equalShares  bool
	}{
		{"P2", "P2", smallTrace, false},
		{"P4", "P4", smallTrace, false},
		{"untuned/P4", "P4", untunedTrace, true},
	} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			// Parallel, so that go test -parallel says how many replays
			// share the machine. make test-live runs them one at a time:
			// four side by side on 2 cores let the untuned P4 replay
			// take other decisions (fewer stops) in 3 of 7 runs without
			// its timing seeing a late instant, and none of 3 alone.
			// One that falls behind is replayed (compareOnTime).
			t.Parallel()
			pols, err := sim.LookupPolicies(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			tr, opt := tc.trace(t), options()
			if tc.equalShares {
				opt.Setup.Shares = nil
			}
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
			// tick. The replay measures whether it kept up (Timing); only
			// a replay that did is compared (compareOnTime).
			compareOnTime(t, name, func(timing *Timing) []string {
				problems, table, log := replayOnce(t, name, tr, simRun, pols[0], opt, exe, timing)
				if len(problems) > 0 {
					t.Logf("side by side:\n%s", table)
					if os.Getenv("SLITE_DIFFERENTIAL_LOG") != "" {
						t.Logf("daemon log:\n%s", log)
					}
				}
				return problems
			})
		})
	}
}

// replayOnce replays tr on a live daemon and compares it with the
// simulator's run: what differs (none when they agree), the jobs side by
// side, and the daemon's log.
func replayOnce(t *testing.T, name string, tr *sim.Trace, simRun *sim.Run, pol sim.Policy, opt sim.Options, exe string, timing *Timing) (problems []string, table, daemonLog string) {
	t.Helper()
	var log, progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	live, err := Run(ctx, tr, pol, opt, Options{Scale: 0.1, Exe: exe, Log: &log, Progress: &progress, Timing: timing})
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

// untunedTrace is a second workload for the differential test, taken as
// it came from its generator (issue 24 item 11): 34 jobs of three
// accounts with equal shares (ties in fair share are the engines' to
// break alike), one to four GPUs (a 3-GPU job shrinks others to
// fractions of their speed), durations up to 90 s; times on the grid of
// the replay's scale, which Run requires (CheckScale).
func untunedTrace(t *testing.T) *sim.Trace {
	rng := rand.New(rand.NewPCG(24, 11))
	var b strings.Builder
	b.WriteString("job_id,submit_s,account,num_gpus,duration_s,time_limit_s\n")
	submit := 0
	for i := range 34 {
		gpus := []int{1, 1, 2, 2, 3, 4}[rng.IntN(6)]
		dur := 10 * (1 + rng.IntN(9))
		limit := dur + 10*rng.IntN(4)
		fmt.Fprintf(&b, "u%02d,%d,%s,%d,%d,%d\n", i, submit, []string{"alpha", "beta", "gamma"}[rng.IntN(3)], gpus, dur, limit)
		submit += 10 * rng.IntN(3)
	}
	tr, err := sim.ReadTrace("untuned.csv", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
