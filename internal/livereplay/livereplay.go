// Package livereplay is `slurmd-lite simulate --live`: it replays a
// workload trace on a real daemon instead of the simulator's event clock,
// so that what the simulator predicts for a policy can be checked against
// what the daemon does.
//
// The pipeline, for one policy:
//
//	trace -> config (the policy as slurm-lite.toml: partitions, QOS,
//	         accounts, [Yield], [[Route]], one node of simulated GPUs)
//	      -> a daemon in a temporary directory (daemon.Run, in process)
//	      -> every trace job submitted through the API at its submit time
//	         × Scale, as a job that does its work in checkpointed steps
//	         (stopped, it loses the work since its last checkpoint; shrunk,
//	         it works slower in proportion to its GPUs: the simulator's
//	         linear speedup)
//	      -> once all have ended, their runs from accounting -> sim.Run
//	      -> sim.Summarize, the simulator's own metrics.
//
// The daemon runs on real time; the replay makes it see time as the
// simulator does (docs/simulate.md, "Live replay"):
//
//   - the scheduler counts whole seconds, so trace second 0 falls on a
//     whole second of the clock, and a job's work counts from its start as
//     the daemon recorded it (SLURM_JOB_START_TIME) and ends on a whole
//     second: the milliseconds of fork and exec do not pile up;
//   - the simulator passes once per instant, after all of its events; the
//     daemon passes after every event. So every whole second is an
//     instant: the node is drained just before it, the jobs due to end at
//     it end, its trace jobs are submitted, and the node is resumed; the
//     pass that follows sees them all (with sim.Options.Tick set to a
//     wall second, the simulator passes at the same seconds);
//   - time limits go to the second (sbatch's --time rounds up to minutes).
//
// Times in the result are trace seconds (whole wall seconds ÷ Scale), so
// the metrics compare with the simulator's directly. Only what the daemon
// records is measured: the fair-share gap, which needs the simulator's view
// of every instant, is left at 0.
package livereplay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/daemon"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sim"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Options are a live replay's own settings.
type Options struct {
	// Scale is wall seconds per trace second (1: real time; 1/60: a trace
	// minute a second).
	Scale float64
	// Exe is the binary the daemon starts job supervisors from (it must
	// answer `EXE stepd ...`); "" is this process's own.
	Exe string
	// Log receives the daemon's log; nil discards it.
	Log io.Writer
	// Progress, when set, hears a line per submission and end.
	Progress io.Writer
	// Timing, when set, is filled with how well the machine kept up with
	// the replay's instants (see Timing).
	Timing *Timing
	// Keep, when not "", is a directory (new, or empty) that keeps the
	// daemon's configuration (slurm-lite.toml), its state and job
	// directories, its log (daemon.log), the replay's own log of
	// submissions and lags (replay.log) and which daemon job each trace
	// job was (jobs.csv), so that a divergence from the simulator can be
	// explained afterwards; "" replays in a temporary directory, removed.
	Keep string
}

// Timing is how well the machine kept up with a replay's wall-clock
// instants. The replay is second-exact only while each instant's work
// (the ends due at it, its submissions, the node's resume) is done well
// inside its second: a machine that lags moves a start or an end to the
// next second, and every later decision with it. A comparison with the
// simulator means something only where the replay was on time.
type Timing struct {
	// Instants is how many instants the replay stepped through.
	Instants int
	// MaxLag is the longest an instant's work took past its tick.
	MaxLag time.Duration
	// Late counts the instants whose work ended after lateAfter, or
	// whose due jobs were still running endWait after the tick.
	Late int
}

// lateAfter is when an instant's work is late: the node must be resumed,
// and its pass have room to start jobs, before the next instant drains it.
const lateAfter = time.Second - drainAhead - 100*time.Millisecond

// OnTime reports whether every instant's work was done in time.
func (t Timing) OnTime() bool { return t.Late == 0 }

// Runner is Run as `slurmd-lite simulate --live` calls it: the daemon's
// supervisors are this binary's own (`slurmd-lite stepd`).
func Runner(ctx context.Context, tr *sim.Trace, pol sim.Policy, opt sim.Options, live sim.LiveOptions) (*sim.Run, error) {
	return Run(ctx, tr, pol, opt, Options{Scale: live.Scale, Progress: live.Progress, Keep: live.Keep})
}

// Run replays tr under pol on a real daemon and returns what happened, in
// the simulator's terms.
func Run(ctx context.Context, tr *sim.Trace, pol sim.Policy, opt sim.Options, lo Options) (*sim.Run, error) {
	if opt.Lab.Nodes != 1 {
		return nil, fmt.Errorf("a live replay runs one daemon, one node: use --nodes 1 (got %d)", opt.Lab.Nodes)
	}
	if lo.Scale <= 0 {
		return nil, fmt.Errorf("--scale must be above 0 (got %g)", lo.Scale)
	}
	if len(tr.Jobs) == 0 {
		return nil, errors.New("the trace has no jobs")
	}
	if err := CheckScale(tr, pol, opt, lo.Scale); err != nil {
		return nil, err
	}
	if err := checkCalcPeriod(opt, lo.Scale); err != nil {
		return nil, err
	}
	me, err := user.Current()
	if err != nil {
		return nil, fmt.Errorf("who runs the replay: %w", err)
	}
	dir, sock, cleanup, err := workDir(lo.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	conf := filepath.Join(dir, "slurm-lite.toml")
	if err := os.WriteFile(conf, []byte(Config(tr, pol, opt, lo.Scale, dir, sock, me.Username)), 0o644); err != nil {
		return nil, err
	}
	if lo.Log == nil {
		lo.Log = io.Discard
	}
	dlog, rlog := lo.Log, lo.Log
	if lo.Keep != "" {
		df, err := os.Create(filepath.Join(dir, "daemon.log"))
		if err != nil {
			return nil, err
		}
		defer df.Close()
		rf, err := os.Create(filepath.Join(dir, "replay.log"))
		if err != nil {
			return nil, err
		}
		defer rf.Close()
		dlog, rlog = io.MultiWriter(lo.Log, df), io.MultiWriter(lo.Log, rf)
		if lo.Progress != nil {
			lo.Progress = io.MultiWriter(lo.Progress, rf)
		} else {
			lo.Progress = rf
		}
	}
	dctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Run(dctx, daemon.Options{ConfigPath: conf, Exe: lo.Exe, Log: dlog}) }()
	c, err := connect(ctx, sock, done)
	if err != nil {
		stop()
		return nil, err
	}
	r := &replay{tr: tr, pol: pol, opt: opt, lo: lo, log: rlog, c: c, dir: dir}
	run, err := r.run(ctx)
	r.cancelAll()
	stop()
	if derr := <-done; err == nil && derr != nil {
		err = fmt.Errorf("the daemon: %w", derr)
	}
	if lo.Keep != "" {
		if werr := r.writeJobs(filepath.Join(dir, "jobs.csv")); err == nil {
			err = werr
		}
	}
	return run, err
}

// workDir is where a replay's daemon keeps everything, and its socket:
// a temporary directory that cleanup removes, or keep (created, or
// empty), which stays. Unix socket paths are short: a socket whose path
// under keep would be too long goes to a temporary directory of its own.
func workDir(keep string) (dir, sock string, cleanup func(), err error) {
	temp := func() (string, error) {
		d, err := os.MkdirTemp("/tmp", "slite-live-") // not under a long TMPDIR
		if err == nil {
			err = os.Chmod(d, 0o755) // a root daemon's socket must be reachable
		}
		return d, err
	}
	if keep == "" {
		dir, err = temp()
		if err != nil {
			return "", "", nil, err
		}
		return dir, filepath.Join(dir, "d.sock"), func() { os.RemoveAll(dir) }, nil
	}
	if dir, err = filepath.Abs(keep); err != nil {
		return "", "", nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", nil, fmt.Errorf("--keep: %w", err)
	}
	if ents, err := os.ReadDir(dir); err != nil {
		return "", "", nil, fmt.Errorf("--keep: %w", err)
	} else if len(ents) > 0 {
		return "", "", nil, fmt.Errorf("--keep: %s is not empty: give a new directory, so that one replay's state and log are not mixed with another's", dir)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", "", nil, err
	}
	if sock = filepath.Join(dir, "d.sock"); len(sock) <= 100 {
		return dir, sock, func() {}, nil
	}
	sdir, err := temp()
	if err != nil {
		return "", "", nil, err
	}
	return dir, filepath.Join(sdir, "d.sock"), func() { os.RemoveAll(sdir) }, nil
}

// writeJobs writes which daemon job each trace job was, with what the
// trace says of it.
func (r *replay) writeJobs(path string) error {
	var b strings.Builder
	b.WriteString("trace_job,line,submit_s,account,gpus,duration_s,time_limit_s,job_id\n")
	for i, j := range r.tr.Jobs {
		fmt.Fprintf(&b, "%s,%d,%d,%s,%d,%d,%d,%d\n", j.Name, j.Line, j.Submit, j.Account, j.GPUs, j.Duration, j.TimeLimit, r.ids[i])
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// connect waits for the daemon's socket.
func connect(ctx context.Context, sock string, done <-chan error) (*sockclient.Client, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := sockclient.New(sock)
		var cfg api.Config
		if err := c.Do(ctx, "GET", api.PathConfig, nil, &cfg); err == nil {
			return c, nil
		}
		select {
		case err := <-done:
			return nil, fmt.Errorf("the daemon did not start: %v", err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, errors.New("the daemon did not answer within 30 s")
		}
	}
}

// Partition, QOS and account names of the replay, as the simulator's.
const (
	nodeName        = "node01"
	mainPartition   = "gpu"
	shortPartition  = "short"
	fillerPartition = "filler"
	fillerQOS       = "filler"
	fillerAccount   = "filler"
	// checkpointStep is the finest step the jobs' work is split into.
	minStep = 100 * time.Millisecond
)

// Config is the policy as a daemon configuration: the simulator's world
// (sim.buildWorld) for one node, in slurm-lite.toml's words, with times
// scaled. user is who the replay's jobs run as: one association per trace
// account, as the simulator has one user (named after it) per account.
func Config(tr *sim.Trace, pol sim.Policy, opt sim.Options, scale float64, dir, sock, user string) string {
	c := opt.Setup.Config
	secs := func(d time.Duration) string { // a scaled time, in whole seconds at least 1, as D-HH:MM:SS
		return clock(max(time.Second, time.Duration(float64(d)*scale).Round(time.Second)))
	}
	gpn := opt.Lab.GPUsPerNode
	var b strings.Builder
	fmt.Fprintf(&b, "SocketPath = %q\nStateSaveLocation = %q\nCheckpointDir = %q\n", sock, dir+"/state", dir+"/ckpt/%j")
	// The replay makes every whole second an instant with a pass of its
	// own (replay.instant), the simulator's Tick: the daemon's own
	// periodic pass, at whatever phase of the second it falls, would
	// add decisions at other moments.
	fmt.Fprintf(&b, "KillWait = 1\nMinJobAge = 86400\nMaxJobCount = %d\nGPUSampleInterval = 3600\n", len(tr.Jobs)+1000)
	fmt.Fprintf(&b, "PriorityType = %q\nSchedulerType = %q\n", string(pol.Priority), string(pol.Scheduler))
	res := c.Backfill.Resolution
	if res <= 0 {
		res = time.Minute
	}
	// Whole wall seconds: a trace whose resolution scales below one
	// second plans more finely live than in the simulator.
	fmt.Fprintf(&b, "\n[SchedulerParameters]\nbf_resolution = %d\n", max(1, int(math.Round(res.Seconds()*scale))))
	fmt.Fprintf(&b, "bf_window = %d\n", max(1, int(math.Ceil(float64(c.Backfill.Window)*scale/float64(time.Minute)))))
	if c.Backfill.MaxJobTest > 0 {
		fmt.Fprintf(&b, "bf_max_job_test = %d\n", c.Backfill.MaxJobTest)
	}
	fmt.Fprintf(&b, "\n[Node]\nNodeName = %q\nCPUs = %d\nRealMemory = \"1T\"\nGPUs = \"simulated\"\n", nodeName, max(opt.Lab.CPUsPerNode, 4*gpn, 8))
	fmt.Fprintf(&b, "\n[[Node.SimulatedGPU]]\nType = \"gpu\"\nMemory = \"%dM\"\nCount = %d\n", max(opt.Lab.GPUMem>>20, 1024), gpn)
	w := c.Weights
	fmt.Fprintf(&b, "\n[Priority]\nWeightAge = %d\nWeightFairshare = %d\nWeightJobSize = %d\nWeightPartition = %d\nWeightQOS = %d\n",
		w.Age, w.FairShare, w.JobSize, w.Partition, w.QOS)
	fmt.Fprintf(&b, "MaxAge = %q\nDecayHalfLife = %q\n", secs(c.MaxAge), secs(c.DecayHalfLife))
	if pol.NoFairTree {
		b.WriteString("Flags = [\"NO_FAIR_TREE\"]\n")
	}
	if p := opt.Setup.CalcPeriod; p > 0 {
		fmt.Fprintf(&b, "Recalc = \"period\"\nCalcPeriod = \"%d\"\n", int64(math.Round(float64(p)*scale/float64(time.Minute))))
	} else {
		b.WriteString("Recalc = \"pass\"\n")
	}
	fmt.Fprintf(&b, "\n[[Partition]]\nPartitionName = %q\nDefault = true\nPriorityTier = 1\n", mainPartition)
	if pol.ShortRoute > 0 {
		fmt.Fprintf(&b, "\n[[Partition]]\nPartitionName = %q\nPriorityTier = 2\n", shortPartition)
	}
	if pol.Fillers {
		fmt.Fprintf(&b, "\n[[Partition]]\nPartitionName = %q\nPriorityTier = 0\nPreemptMode = \"REQUEUE\"\n", fillerPartition)
		fmt.Fprintf(&b, "\n[[QOS]]\nName = \"normal\"\n\n[[QOS]]\nName = %q\nUsageFactor = 0\n", fillerQOS)
	}
	if pol.ShortRoute > 0 {
		fmt.Fprintf(&b, "\n[[Route]]\nMaxTime = %q\nPartition = %q\n", secs(pol.ShortRoute), shortPartition)
	}
	if pol.Yield {
		as := opt.Assumptions
		fmt.Fprintf(&b, "\n[Yield]\nShrink = true\nShrinkTries = %d\nShrinkPayback = %t\nShrinkRegrow = %t\nPayback = %t\nOwn = %t\nCost = %q\nMinRun = %q\n",
			pol.ShrinkTries, pol.ShrinkPayback, pol.ShrinkRegrow, pol.YieldPayback, pol.YieldOwn,
			secs(as.Stop+as.Restart+as.Checkpoint), secs(sim.MinRun(as)))
	}
	accts := map[string]bool{}
	for _, j := range tr.Jobs {
		accts[j.Account] = true
	}
	if pol.Fillers {
		accts[fillerAccount] = true
	}
	for _, a := range slices.Sorted(func(yield func(string) bool) {
		for a := range accts {
			if !yield(a) {
				return
			}
		}
	}) {
		shares := 1
		if s, ok := opt.Setup.Shares[a]; ok {
			shares = s
		}
		fmt.Fprintf(&b, "\n[[Account]]\nName = %q\nShares = %d\nUsers = [%q]\n", a, shares, user)
	}
	return b.String()
}

// checkCalcPeriod refuses a replay whose recalculation period
// (sim.Setup.CalcPeriod) the daemon cannot take at this scale: the
// daemon's Priority.CalcPeriod is whole minutes, at least one, as
// Slurm's. Recalculations then fall every period of the daemon's clock
// from its start (a second or two before trace second 0), the
// simulator's from trace second 0.
func checkCalcPeriod(opt sim.Options, scale float64) error {
	p := opt.Setup.CalcPeriod
	if p <= 0 {
		return nil
	}
	wall := time.Duration(float64(p) * scale)
	if wall >= time.Minute && wall%time.Minute == 0 {
		return nil
	}
	return fmt.Errorf("--scale %g makes Priority.CalcPeriod %s %s of wall time, and the daemon's is whole minutes, at least one, as Slurm's: "+
		"give --recalc pass (fair share recomputed at every pass, in both), or a --config whose CalcPeriod comes to whole minutes at this scale",
		scale, fmtTrace(p), wall)
}

// clock is a duration as D-HH:MM:SS.
func clock(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%d-%02d:%02d:%02d", s/86400, s/3600%24, s/60%60, s%60)
}

// replay is one live replay in progress.
type replay struct {
	tr  *sim.Trace
	pol sim.Policy
	opt sim.Options
	lo  Options
	// log hears the replay's own lines (lags), beside the daemon's.
	log io.Writer
	c   *sockclient.Client
	dir string
	// t0 is the wall time of trace second 0; ids the job id of each trace
	// job, by index.
	t0  time.Time
	ids []uint32
}

func (r *replay) wall(traceS float64) time.Duration {
	return time.Duration(traceS * r.lo.Scale * float64(time.Second))
}

// traceS is a time of the daemon's in trace seconds since the replay's
// first instant: counted in the daemon's whole seconds, as its accounting
// and its scheduler count them.
func (r *replay) traceS(t time.Time) float64 {
	return t.Truncate(time.Second).Sub(r.t0).Seconds() / r.lo.Scale
}

func (r *replay) run(ctx context.Context) (*sim.Run, error) {
	// Trace second 0 falls on a whole second of the daemon's clock, at
	// least a second ahead (room for the fillers' submission).
	r.t0 = time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	if r.pol.Fillers {
		if err := r.submitFillers(ctx); err != nil {
			return nil, err
		}
	}
	r.ids = make([]uint32, len(r.tr.Jobs))
	next := 0 // the next trace job to submit
	for tick := r.t0; ; tick = tick.Add(time.Second) {
		// The trace jobs of this instant: submitted at the first whole
		// second at or after their scaled submit time.
		k := next
		for k < len(r.tr.Jobs) && !r.t0.Add(r.wall(float64(r.tr.Jobs[k].Submit-r.tr.Jobs[0].Submit))).After(tick) {
			k++
		}
		jobs, err := r.jobs(ctx)
		if err != nil {
			return nil, err
		}
		if next == len(r.tr.Jobs) && r.finished(jobs) {
			break
		}
		// Every whole second is an instant, events or not: its pass is
		// the daemon's periodic one (GPUSampleInterval, which Config sets
		// out of the way), at a known phase of the second.
		if err := r.instant(ctx, tick, next, k); err != nil {
			return nil, err
		}
		next = k
	}
	var recs []store.Record
	if err := r.c.Do(ctx, "GET", api.PathAccounting+"?dups=1", nil, &recs); err != nil {
		return nil, err
	}
	return r.result(recs), nil
}

// drainAhead is how long before an instant the node is drained, and
// endWait how long the replay waits for the jobs due to end at it.
const (
	drainAhead = 300 * time.Millisecond
	endWait    = 3 * time.Second
)

// instant is one trace instant at the whole second tick, as the simulator
// takes it: every job end and submission of the instant, then one
// scheduling pass that sees them all. The daemon passes after every event,
// so the replay drains the node (nothing starts) just before the instant,
// waits for the jobs due to end at it to end, submits its trace jobs
// trace[from:to], and resumes the node: the pass that follows decides on
// all of them, as the simulator's does. Jobs due to end at the instant end
// in its first milliseconds (their work ends on the daemon's whole second,
// see work), so every start of the pass falls in the same second of the
// daemon's clock as in the simulator.
func (r *replay) instant(ctx context.Context, tick time.Time, from, to int) (err error) {
	late := false
	defer func() {
		if err != nil || r.lo.Timing == nil {
			return
		}
		t := r.lo.Timing
		lag := time.Since(tick)
		t.Instants++
		t.MaxLag = max(t.MaxLag, lag)
		if late || lag > lateAfter {
			t.Late++
			fmt.Fprintf(r.log, "live replay: the instant at %s was late: its work ended %s after it\n", tick.Format(time.TimeOnly), lag.Round(time.Millisecond))
		}
	}()
	if err := sleepUntil(ctx, tick.Add(-drainAhead)); err != nil {
		return err
	}
	// A stop decided in the last second ends in it in the simulator (it
	// takes no time there): the job is requeued and the pass that
	// follows restarts what it freed, all before this instant. Live, the
	// stop takes what the job takes to save and exit, and a loaded
	// machine's can still be under way now: drained, its restart would
	// move to the next second. So the drain waits for it, and for the
	// pass after it; past the instant, the instant is late.
	if waited, err := r.waitStops(ctx, tick.Add(endWait)); err != nil {
		return err
	} else if waited && time.Now().After(tick.Add(-stopSettle)) {
		fmt.Fprintf(r.log, "live replay: a stop before %s ended too late for the pass after it\n", tick.Format(time.TimeOnly))
		late = true
	}
	if err := r.node(ctx, api.NodeDrain); err != nil {
		return err
	}
	if time.Now().After(tick) {
		// Drained after the instant: a job that ended at it may have
		// been followed by a pass of its own.
		late = true
	}
	if err := sleepUntil(ctx, tick); err != nil {
		return err
	}
	for deadline := tick.Add(endWait); ; {
		jobs, err := r.jobs(ctx)
		if err != nil {
			return err
		}
		due := r.endingBy(jobs, tick)
		if len(due) == 0 {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(r.log, "live replay: jobs %v, due to end at %s, still run %s later\n", due, tick.Format(time.TimeOnly), endWait)
			late = true
			break
		}
		if err := sleepUntil(ctx, time.Now().Add(5*time.Millisecond)); err != nil {
			return err
		}
	}
	for i := from; i < to; i++ {
		tj := r.tr.Jobs[i]
		id, err := r.submit(ctx, tj)
		if err != nil {
			return fmt.Errorf("submitting trace job %s (line %d): %w", tj.Name, tj.Line, err)
		}
		r.ids[i] = id
		if r.lo.Progress != nil {
			fmt.Fprintf(r.lo.Progress, "%7.1fs submitted %s as job %d (%d GPUs, %ds)\n", r.traceS(tick)+float64(r.tr.Jobs[0].Submit), tj.Name, id, tj.GPUs, tj.Duration)
		}
	}
	return r.node(ctx, api.NodeResume)
}

// node drains or resumes the replay's node.
func (r *replay) node(ctx context.Context, state string) error {
	u := api.NodeUpdate{Node: nodeName, State: state}
	if state == api.NodeDrain {
		u.Reason = "live replay: one trace instant at a time"
	}
	var out api.Drains
	if err := r.c.Do(ctx, "POST", api.PathNodeUpdate, u, &out); err != nil {
		return fmt.Errorf("scontrol update NodeName=%s State=%s: %w", nodeName, state, err)
	}
	return nil
}

func (r *replay) jobs(ctx context.Context) ([]api.Job, error) {
	var jobs []api.Job
	if err := r.c.Do(ctx, "GET", api.PathJobs, nil, &jobs); err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	return jobs, nil
}

// finished reports whether every trace job has ended for good.
func (r *replay) finished(jobs []api.Job) bool {
	want := map[uint32]bool{}
	for _, id := range r.ids {
		want[id] = true
	}
	for _, j := range jobs {
		if want[j.ID] && !j.State.Finished() {
			return false
		}
	}
	return true
}

// endingBy is the running jobs whose work ends by the whole second tick,
// or may: each run writes "START END" (whole seconds of the daemon's
// clock) to its checkpoint directory's file "end" as it starts.
func (r *replay) endingBy(jobs []api.Job, tick time.Time) []uint32 {
	var due []uint32
	for _, j := range jobs {
		// COMPLETING counts as running: until the daemon has recorded the
		// end, its pass still sees the job hold its GPUs.
		if j.State != slurm.Running && j.State != slurm.Completing {
			continue
		}
		// A run that has not written its own line yet (its script has
		// not got that far: a loaded machine can take a second to start
		// bash) may be due too: wait for it rather than let the pass
		// stop a job that is about to end by itself.
		b, err := os.ReadFile(filepath.Join(r.dir, "ckpt", strconv.Itoa(int(j.ID)), "end"))
		var start, end int64
		if err == nil {
			_, err = fmt.Sscan(string(b), &start, &end)
		}
		if err != nil || start != j.Start.Unix() || end <= tick.Unix() {
			due = append(due, j.ID)
		}
	}
	return due
}

// stopSettle is how long the replay gives the daemon's pass after a
// stop has ended before it drains the node.
const stopSettle = 50 * time.Millisecond

// waitStops waits until no job is being stopped (its run's trap wrote the
// file "stopping" in its checkpoint directory, naming its start, and the
// job still runs), then lets the pass after the last one run; it reports
// whether it waited. A stop still under way at deadline is left to it.
func (r *replay) waitStops(ctx context.Context, deadline time.Time) (bool, error) {
	waited := false
	for {
		jobs, err := r.jobs(ctx)
		if err != nil {
			return waited, err
		}
		busy := false
		for _, j := range jobs {
			if j.State != slurm.Running && j.State != slurm.Completing {
				continue
			}
			b, err := os.ReadFile(filepath.Join(r.dir, "ckpt", strconv.Itoa(int(j.ID)), "stopping"))
			var start int64
			if err == nil {
				_, err = fmt.Sscan(string(b), &start)
			}
			if err == nil && start == j.Start.Unix() {
				busy = true
				break
			}
		}
		if !busy {
			if waited {
				return true, sleepUntil(ctx, time.Now().Add(stopSettle))
			}
			return false, nil
		}
		waited = true
		if time.Now().After(deadline) {
			return true, nil
		}
		if err := sleepUntil(ctx, time.Now().Add(5*time.Millisecond)); err != nil {
			return waited, err
		}
	}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// work is how a trace job runs: its duration in checkpointed steps of
// the checkpoint interval of running time, each doing less work when the
// job holds fewer GPUs than it asked for (linear speedup), as the
// simulator counts it: progress in GPU-milliseconds, the job's whole work
// being its duration times the GPUs it asked for. A stop loses the step
// under way, as the simulator's loses the work since the last checkpoint.
// (Steps of work rather than of time made a shrunk job save less often
// than the simulator's, and lose more at its next stop.)
//
// A run's time counts from its start as the daemon recorded it, in whole
// seconds (SLURM_JOB_START_TIME), and its end falls on a whole second:
// the scheduler plans in whole seconds, and the milliseconds a real start
// takes (fork, exec, bash) would otherwise push every end past the second
// the simulator ends it in, and every successor's start with it.
func (r *replay) work(tj sim.TraceJob) string {
	step := max(minStep, r.wall(r.opt.Assumptions.Checkpoint.Seconds()))
	total := r.wall(float64(tj.Duration)).Milliseconds() * int64(tj.GPUs)
	return fmt.Sprintf(`#!/bin/bash
# %s: %d GPU-ms of work (%d GPUs), saved every %d ms of running.
# A stop signals every process of the job: its trap notes the stop for the
# replay, saves a step whose time is up (a stop at the very second a step
# ends finds the step done, as the simulator does, however late the loaded
# machine let the loop write it) and ends the job at once (a sleep forked
# just after the supervisor listed the processes would outlive it
# otherwise). Progress is written by the shell itself, with no command the
# signal could kill halfway.
trap 'printf "%%s\n" "$start" > "$d/stopping"; kill $! 2>/dev/null; now; [ "$pending" = 1 ] && [ "$nowms" -ge "$t" ] && printf "%%s\n" $(( done + s )) > "$d/done"; exit 143' TERM
pending=0
total=%d
step=%d
d=$SLITE_CHECKPOINT_DIR
done=0
[ -s "$d/done" ] && read -r done < "$d/done"
IFS=, read -ra ids <<< "$CUDA_VISIBLE_DEVICES"
g=${#ids[@]}
[ "$g" -ge 1 ] || g=1
now() { local t=${EPOCHREALTIME/./}; nowms=$(( t / 1000 )); }
now
start=${SLURM_JOB_START_TIME:-$(( nowms / 1000 ))}
end=$(( start + (total - done + g * 1000 - 1) / (g * 1000) ))
printf '%%s %%s\n' "$start" "$end" > "$d/end"
t=$(( start * 1000 ))
while [ "$done" -lt "$total" ]; do
	s=$(( total - done )); [ "$s" -gt $(( step * g )) ] && s=$(( step * g ))
	t=$(( t + step ))
	[ $(( done + s )) -ge "$total" ] && t=$(( end * 1000 ))
	now
	ms=$(( t - nowms ))
	printf -v frac '%%03d' $(( ms %% 1000 ))
	pending=1
	[ "$ms" -gt 0 ] && { sleep "$(( ms / 1000 )).$frac" & wait $!; }
	printf '%%s\n' $(( done + s )) > "$d/done"
	pending=0 # before done grows: a trap in between must not add s twice
	done=$(( done + s ))
done
`, tj.Name, total, tj.GPUs, step.Milliseconds(), total, step.Milliseconds())
}

// submit submits one trace job: its account, GPUs and time limit (scaled),
// yieldable when the policy yields multi-GPU jobs.
func (r *replay) submit(ctx context.Context, tj sim.TraceJob) (uint32, error) {
	args := []string{"--account=" + tj.Account, "--gpus=" + strconv.Itoa(tj.GPUs), "--job-name=" + tj.Name, "--output=/dev/null"}
	var limit time.Duration
	if tj.TimeLimit > 0 {
		limit = max(time.Second, r.wall(float64(tj.TimeLimit)).Round(time.Second))
	}
	if r.pol.Yield && tj.GPUs > 1 {
		args = append(args, "--yieldable")
	}
	return r.post(ctx, r.work(tj), args, limit)
}

// submitFillers keeps the filler partition full, as the simulator offers
// a filler on every idle GPU: an array of 1-GPU jobs of FillerLimit, more
// tasks than the replay can run.
func (r *replay) submitFillers(ctx context.Context) error {
	limit := max(time.Second, r.wall(r.opt.Assumptions.FillerLimit.Seconds()).Round(time.Second))
	span := r.wall(float64(r.tr.Jobs[len(r.tr.Jobs)-1].Submit-r.tr.Jobs[0].Submit)) + time.Minute
	n := int(span/limit+1) * r.opt.Lab.GPUsPerNode * 2
	args := []string{"--account=" + fillerAccount, "--partition=" + fillerPartition, "--qos=" + fillerQOS,
		"--gpus=1", "--array=0-" + strconv.Itoa(min(n, 1000)-1), "--output=/dev/null",
		"--job-name=filler"}
	// Each ends at its limit's end as the daemon counts it (see work).
	_, err := r.post(ctx, fmt.Sprintf(`#!/bin/bash
d=$SLITE_CHECKPOINT_DIR
t=${EPOCHREALTIME/./}
start=${SLURM_JOB_START_TIME:-$(( t / 1000000 ))}
trap 'printf "%%s\n" "$start" > "$d/stopping"; kill $! 2>/dev/null; exit 143' TERM
end=${SLURM_JOB_END_TIME:-$(( start + %d ))}
printf '%%s %%s\n' "$start" "$end" > "$d/end"
ms=$(( end * 1000 - t / 1000 ))
printf -v frac '%%03d' $(( ms %% 1000 ))
[ "$ms" -gt 0 ] && { sleep "$(( ms / 1000 )).$frac" & wait $!; }
exit 0
`, int(limit/time.Second)), args, limit)
	return err
}

// post submits script with sbatch's args. A limit above 0 is the job's
// time limit to the second: sbatch's --time rounds up to whole minutes, as
// Slurm's does, which a replay scaled to seconds cannot use.
func (r *replay) post(ctx context.Context, script string, args []string, limit time.Duration) (uint32, error) {
	cl, err := jobscript.ParseCommandLine(append(args, "job.sh"))
	if err != nil {
		return 0, err
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte(script), Command: cl, Now: time.Now()})
	if err != nil {
		return 0, err
	}
	if limit > 0 {
		req.TimeLimit = jobscript.Limit(limit)
	}
	var out api.Submitted
	err = r.c.Do(ctx, "POST", api.PathJobs, api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: r.dir}, &out)
	return out.JobID, err
}

// cancelAll ends what the replay left running (the fillers), so that the
// daemon stops with nothing of it alive.
func (r *replay) cancelAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var jobs []api.Job
	if r.c.Do(ctx, "GET", api.PathJobs, nil, &jobs) != nil {
		return
	}
	var ids []string
	for _, j := range jobs {
		if !j.State.Finished() {
			ids = append(ids, strconv.Itoa(int(j.ID)))
		}
	}
	if len(ids) == 0 {
		return
	}
	_ = r.c.Do(ctx, "POST", api.PathCancel, api.Cancel{Jobs: ids}, nil)
	for ctx.Err() == nil {
		left := false
		if r.c.Do(ctx, "GET", api.PathJobs, nil, &jobs) != nil {
			return
		}
		for _, j := range jobs {
			left = left || j.State == slurm.Running || j.State == slurm.Completing
		}
		if !left {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// result turns the daemon's records into the simulator's outcomes, in
// trace seconds.
func (r *replay) result(recs []store.Record) *sim.Run {
	first := r.tr.Jobs[0].Submit
	at := func(t time.Time) int64 { return first + int64(math.Round(r.traceS(t))) }
	byID := map[uint32][]store.Record{}
	for _, rec := range recs {
		byID[rec.Job.ID] = append(byID[rec.Job.ID], rec)
	}
	run := &sim.Run{Policy: r.pol, Capacity: r.opt.Lab.Nodes * r.opt.Lab.GPUsPerNode, Outcomes: make([]sim.Outcome, len(r.tr.Jobs))}
	last := r.tr.Jobs[len(r.tr.Jobs)-1].Submit
	run.WindowStart, run.WindowEnd = first, last
	if r.opt.WindowEnd > 0 {
		run.WindowEnd = r.opt.WindowEnd
	}
	filler := func(rec store.Record) bool { return rec.Job.Partition == fillerPartition }
	for _, rec := range recs {
		j := rec.Job
		if j.Start.IsZero() || j.End.IsZero() {
			continue
		}
		gpus := float64(len(j.Alloc.GPUs))
		s, e := r.traceS(j.Start)+float64(first), r.traceS(j.End)+float64(first)
		in := max(0, min(e, float64(run.WindowEnd))-max(s, float64(run.WindowStart)))
		run.BusyGPUSeconds += in * gpus
		if filler(rec) {
			run.FillerGPUSeconds += (e - s) * gpus
			if !rec.Latest || j.State == slurm.Preempted {
				run.FillerLostGPUSeconds += (e - s) * gpus
				run.Preemptions++
			}
		}
	}
	for i, tj := range r.tr.Jobs {
		o := sim.Outcome{Account: tj.Account, Submit: tj.Submit, FirstStart: -1, End: -1, GPUs: tj.GPUs,
			Runtime: tj.Duration}
		if tj.TimeLimit > 0 {
			o.Runtime = min(o.Runtime, tj.TimeLimit)
		}
		runs := byID[r.ids[i]]
		slices.SortFunc(runs, func(a, b store.Record) int { return a.Job.Restarts - b.Job.Restarts })
		for _, rec := range runs {
			j := rec.Job
			if j.Start.IsZero() {
				continue
			}
			if o.FirstStart < 0 {
				o.FirstStart = at(j.Start)
			}
			if j.End.IsZero() {
				continue
			}
			held := r.traceS(j.End) - r.traceS(j.Start)
			o.GPUSeconds += held * float64(len(j.Alloc.GPUs))
			if !rec.Latest {
				o.Stops++
				run.Preemptions++
				// A shrink is a yield by the daemon that says so in the
				// run's notes (finishYield).
				if slices.ContainsFunc(j.Notes, func(n string) bool { return strings.Contains(n, "slurmd-lite (shrink)") }) {
					o.Shrinks++
					run.Shrinks++
				}
				continue
			}
			o.End = at(j.End)
			o.TimedOut = j.State == slurm.Timeout
		}
		// What it held beyond its work: redone work and stops.
		o.LostGPUSeconds = max(0, o.GPUSeconds-float64(o.Runtime*int64(o.GPUs)))
		run.Outcomes[i] = o
	}
	return run
}
