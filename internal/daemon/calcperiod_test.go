package daemon

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// calcConf is the recording's cluster (scripts/record-calc-period): four
// GPUs, fair share and age weighted (AGE is the seconds waited when the
// priority was computed), usage billed in GPUs. The recording's alice and
// bob, one user in each of two accounts, are here the test's own user in
// both accounts (phys for alice's jobs, chem for bob's): the same three
// user associations with root/root, so the same Fair Tree.
func calcConf(me, recalc string) string {
	return fmt.Sprintf(`GPUSampleInterval = 1

[Node]
NodeName   = "gpu01"
CPUs       = 16
RealMemory = "64000"
GPUs       = "simulated"

[[Node.SimulatedGPU]]
Type   = "a100"
Memory = "80G"
Count  = 4

[Priority]
WeightFairshare = 10000
WeightAge       = 3600
WeightPartition = 0
MaxAge          = "1:00:00"
DecayHalfLife   = "7-0"
CalcPeriod      = "1"
Recalc          = %q

[[Account]]
Name  = "phys"
Users = [%q]

[[Account]]
Name  = "chem"
Users = [%q]
`, recalc, me, me)
}

// calcRun is a daemon on a fake clock running the recording's jobs: each
// waits for a file that never comes, so it runs (or waits) until
// cancelled.
type calcRun struct {
	t     *testing.T
	c     *sockclient.Client
	clock *fakeClock
	t0    time.Time
	me    string
	dir   string
}

func newCalcRun(t *testing.T, recalc string) *calcRun {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, time.March, 4, 10, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	c, _, _ := clockDaemon(t, calcConf(u.Username, recalc), clock, nil)
	r := &calcRun{t: t, c: c, clock: clock, t0: t0, me: u.Username, dir: t.TempDir()}
	t.Cleanup(func() {
		_ = c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{User: u.Username}, nil)
	})
	return r
}

// at moves the fake clock to t0+s.
func (r *calcRun) at(s int) {
	r.t.Helper()
	d := r.t0.Add(time.Duration(s) * time.Second).Sub(r.clock.Now())
	if d < 0 {
		r.t.Fatalf("the clock is past t0+%ds already", s)
	}
	r.clock.advance(d)
}

// submit submits `sbatch -A account --gpus=N -c 1 --mem=100 -t 30` (no
// -A for "", no --gpus for 0) of a job that waits forever, and returns
// its id.
func (r *calcRun) submit(name, account string, gpus int) string {
	r.t.Helper()
	args := []string{"-J", name, "-c", "1", "--mem=100", "-t", "30", "-o", "/dev/null"}
	if account != "" {
		args = append(args, "-A", account)
	}
	if gpus > 0 {
		args = append(args, fmt.Sprintf("--gpus=%d", gpus))
	}
	cl, err := jobscript.ParseCommandLine(append(args, "job.sh"))
	if err != nil {
		r.t.Fatal(err)
	}
	script := "#!/bin/sh\nwhile [ ! -e " + filepath.Join(r.dir, "never") + " ]; do sleep 0.2; done\n"
	req, err := jobscript.Parse(jobscript.Input{Script: []byte(script), Command: cl, Now: r.clock.Now()})
	if err != nil {
		r.t.Fatal(err)
	}
	var sub api.Submitted
	if err := r.c.Do(context.Background(), "POST", api.PathJobs,
		api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: r.dir}, &sub); err != nil {
		r.t.Fatalf("submitting %s: %v", name, err)
	}
	return fmt.Sprint(sub.JobID)
}

func (r *calcRun) job(id string) api.Job {
	r.t.Helper()
	var jobs []api.Job
	if err := r.c.Do(context.Background(), "GET", api.PathJobs+"?id="+id, nil, &jobs); err != nil || len(jobs) != 1 {
		r.t.Fatalf("job %s: %v (%d rows)", id, err, len(jobs))
	}
	return jobs[0]
}

// until looks at cond after each pass (what it waits for is a pass's
// doing, and a pass comes every GPUSampleInterval of real time at the
// latest) and fails with what it waited for after 20 s.
func (r *calcRun) until(what string, cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); r.clock.passes.wait(r.t, 0, what) {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *calcRun) sprio() map[string]api.PriorityRow {
	r.t.Helper()
	var rows []api.PriorityRow
	if err := r.c.Do(context.Background(), "GET", api.PathPriorities, nil, &rows); err != nil {
		r.t.Fatalf("sprio: %v", err)
	}
	out := map[string]api.PriorityRow{}
	for _, row := range rows {
		out[row.JobID] = row
	}
	return out
}

// sprioLines are sprio -l's columns that the recording fixes (job,
// priority, age, fair share), one line per job, as sprio prints them.
func (r *calcRun) sprioLines(ids map[string]string) []string {
	r.t.Helper()
	rows := r.sprio()
	var out []string
	for _, name := range []string{"ap", "bp", "bp2"} {
		id, ok := ids[name]
		if !ok {
			continue
		}
		row, ok := rows[id]
		if !ok {
			r.t.Fatalf("sprio has no row for %s (job %s)", name, id)
		}
		out = append(out, fmt.Sprintf("%s %d %.0f %.0f", name, row.Priority, row.Age, row.FairShare))
	}
	return out
}

// shareLines are sshare -a -l's usage columns of the user associations,
// as sshare prints them (RawUsage truncated, the others %.6f).
func (r *calcRun) shareLines() []string {
	r.t.Helper()
	var rows []api.ShareRow
	if err := r.c.Do(context.Background(), "GET", api.PathShares, nil, &rows); err != nil {
		r.t.Fatalf("sshare: %v", err)
	}
	var out []string
	for _, row := range rows {
		if row.User == "" || (row.Account != "phys" && row.Account != "chem") {
			continue
		}
		lfs := fmt.Sprintf("%.6f", row.LevelFS)
		if row.LevelFSInf {
			lfs = "inf"
		}
		out = append(out, fmt.Sprintf("%s %d %.6f %.6f %s", row.Account, uint64(math.Max(0, row.RawUsage)),
			row.EffectvUsage, row.FairShare, lfs))
	}
	return out
}

// goldenCalc reads the recording's moment n (testdata/golden/calc_N_*):
// the same columns as sprioLines and shareLines.
func goldenCalc(t *testing.T, n int, names map[string]string) (sprio, shares []string) {
	t.Helper()
	read := func(name string) [][]string {
		f, err := os.Open(filepath.Join("..", "..", "testdata", "golden", fmt.Sprintf("calc_%d_%s.txt", n, name)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var rows [][]string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if sc.Text() == "--- stderr ---" {
				break
			}
			rows = append(rows, strings.Fields(sc.Text()))
		}
		return rows
	}
	for _, f := range read("sprio_l") {
		// JOBID PARTITION USER PRIORITY SITE AGE ASSOC FAIRSHARE ...
		if name, ok := names[f[0]]; ok && len(f) >= 8 {
			sprio = append(sprio, fmt.Sprintf("%s %s %s %s", name, f[3], f[5], f[7]))
		}
	}
	for _, f := range read("sshare_al") {
		// Account User RawShares NormShares RawUsage NormUsage EffectvUsage FairShare LevelFS
		if len(f) >= 9 && (f[1] == "alice" || f[1] == "bob") {
			shares = append(shares, strings.Join([]string{f[0], f[4], f[6], f[7], f[8]}, " "))
		}
	}
	return sprio, shares
}

// Fair share and pending jobs' priorities are recalculated every
// PriorityCalcPeriod, as real Slurm 22.05's decay thread does, and the
// daemon shows at each moment what the recording of real Slurm showed
// (testdata/golden/calc_*, scripts/record-calc-period): the same workload
// on the daemon's fake clock, the same moments after the same
// recalculations (at the daemon's start, then every minute). Between
// two, a pending job keeps the priority it had (its age does not grow),
// alice's account does not drop the moment her jobs start, and sshare's
// RawUsage counts a run that ended (charged at its end) beside the last
// recalculation's FairShare; after each, everything moves as Slurm's did.
func TestFairShareRecalculatedEveryCalcPeriod(t *testing.T) {
	t.Parallel()
	r := newCalcRun(t, "period")
	// T0: the daemon's first pass recalculated. Alice's two 2-GPU jobs
	// start; ap (alice) and bp (bob) wait for four GPUs.
	run1 := r.submit("run1", "phys", 2)
	run2 := r.submit("run2", "phys", 2)
	r.until("run1 and run2 to start", func() bool {
		return r.job(run1).State == slurm.Running && r.job(run2).State == slurm.Running
	})
	ids := map[string]string{"ap": r.submit("ap", "phys", 4), "bp": r.submit("bp", "chem", 4)}
	// The recording's job ids are 3, 4 and 5 for ap, bp and bp2.
	names := map[string]string{"3": "ap", "4": "bp", "5": "bp2"}
	check := func(n int) {
		t.Helper()
		wantPrio, wantShares := goldenCalc(t, n, names)
		if got := r.sprioLines(ids); strings.Join(got, "\n") != strings.Join(wantPrio, "\n") {
			t.Errorf("moment %d (t0+%ds): sprio (job priority age fairshare):\n%s\nreal Slurm:\n%s", n,
				int(r.clock.Now().Sub(r.t0).Seconds()), strings.Join(got, "\n"), strings.Join(wantPrio, "\n"))
		}
		if got := r.shareLines(); strings.Join(got, "\n") != strings.Join(wantShares, "\n") {
			t.Errorf("moment %d (t0+%ds): sshare (account rawusage effectvusage fairshare levelfs):\n%s\nreal Slurm:\n%s", n,
				int(r.clock.Now().Sub(r.t0).Seconds()), strings.Join(got, "\n"), strings.Join(wantShares, "\n"))
		}
	}
	r.at(8)
	check(1)
	r.at(30)
	check(2)

	// The recalculation at 60: the first pass at or after it.
	r.at(60)
	r.until("the recalculation at t0+60 (ap's priority to change)", func() bool {
		return r.sprio()[ids["ap"]].Priority != 10000
	})
	r.at(63)
	check(3)

	// At 68 bob submits bp2 (its pass charges the running jobs up to
	// 68: the daemon's supervisors end jobs on the machine's clock, not
	// the fake one), then run2 is cancelled: its last 8 s are charged.
	r.at(68)
	ids["bp2"] = r.submit("bp2", "chem", 4)
	r.until("a pass at t0+68 (bp2's reason)", func() bool {
		j := r.job(ids["bp2"])
		return j.Reason != "" && j.Reason != slurm.ReasonNone
	})
	if err := r.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{run2}}, nil); err != nil {
		t.Fatal(err)
	}
	r.until("run2 to end", func() bool {
		var jobs []api.Job // squeue's view: a finished job leaves it
		err := r.c.Do(context.Background(), "GET", api.PathJobs+"?id="+run2, nil, &jobs)
		return err == nil && (len(jobs) == 0 || jobs[0].State.Finished())
	})
	r.at(75)
	check(4)

	r.at(120)
	r.until("the recalculation at t0+120 (bp's age to reach 120)", func() bool {
		return r.sprio()[ids["bp"]].Age == 120
	})
	r.at(123)
	check(5)
}

// With Priority.Recalc "pass" (slurm-lite's own mode) fair share and
// priorities are recomputed at every pass, so the same workload moves at
// once: alice's account drops the moment her jobs run, sshare charges
// the running jobs as they run, and a pending job's age grows every
// pass rather than every CalcPeriod.
func TestRecalcPassRecomputesAtEveryPass(t *testing.T) {
	t.Parallel()
	r := newCalcRun(t, "pass")
	run1 := r.submit("run1", "phys", 2)
	run2 := r.submit("run2", "phys", 2)
	r.until("run1 and run2 to start", func() bool {
		return r.job(run1).State == slurm.Running && r.job(run2).State == slurm.Running
	})
	ids := map[string]string{"ap": r.submit("ap", "phys", 4), "bp": r.submit("bp", "chem", 4)}
	r.at(8)
	// Alice has run 4 GPUs × 8 s; she ranks last of three at once.
	want := []string{"ap 3341 8 3333", "bp 10008 8 10000"}
	if got := r.sprioLines(ids); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("t0+8: sprio (job priority age fairshare):\n%s\nwant (every pass):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantShares := []string{"chem 0 0.000000 1.000000 inf", "phys 31 1.000000 0.333333 1.000000"}
	if got := r.shareLines(); strings.Join(got, "\n") != strings.Join(wantShares, "\n") {
		t.Errorf("t0+8: sshare:\n%s\nwant (every pass):\n%s", strings.Join(got, "\n"), strings.Join(wantShares, "\n"))
	}
}

// A restart recalculates at once, as slurmctld's decay thread does when it
// starts (priority_multifactor.c: its first run charges the time since the
// last and recomputes every pending priority), and the next recalculation
// is a CalcPeriod after the restart: nothing of a recalculation is stored,
// so none is stale after a restart. A job waits in a DOWN partition; AGE
// is its wait in seconds when its priority was computed.
func TestARestartRecalculates(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, time.March, 4, 10, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	conf := `GPUSampleInterval = 1

[Node]
NodeName = "gpu01"
CPUs     = 4
GPUs     = "none"

[Priority]
WeightAge       = 3600
WeightFairshare = 0
WeightPartition = 0
MaxAge          = "1:00:00"
CalcPeriod      = "1"

[[Partition]]
PartitionName = "debug"
Default       = true
State         = "DOWN"
`
	dir := t.TempDir()
	c, stop, _ := clockDaemonIn(t, dir, conf, clock, nil)
	r := &calcRun{t: t, c: c, clock: clock, t0: t0, dir: t.TempDir()}
	id := r.submit("waits", "", 0)
	age := func() float64 { return r.sprio()[id].Age }
	r.at(30)
	if got := age(); got != 0 {
		t.Errorf("t0+30, before any recalculation since the submission: AGE %v, want 0", got)
	}
	stop()
	c, _, _ = clockDaemonIn(t, dir, conf, clock, nil)
	r.c = c
	t.Cleanup(func() { _ = c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{id}}, nil) })
	r.until("the restart's recalculation (AGE 30)", func() bool { return age() == 30 })
	r.at(89)
	r.clock.passes.wait(t, 2, "passes at t0+89") // none recalculates
	if got := age(); got != 30 {
		t.Errorf("t0+89, before the next recalculation (a minute after the restart): AGE %v, want 30", got)
	}
	r.at(90)
	r.until("the recalculation a minute after the restart (AGE 90)", func() bool { return age() == 90 })
}
