package sim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// defaultProfiles is where the step-time profiles are looked for when
// --profiles is not given: the shared traces beside the repository.
const defaultProfiles = "../shared/traces/pollux_sia/profiles_rtx"

const usage = `Usage: slurmd-lite simulate --trace FILE [options]

Replays a workload through slurm-lite's scheduling core on a simulated clock
and prints, per policy, job completion and wait times, utilisation, the
fair-share gap and the work lost to preemption.

The trace is either the Philly-derived CSV (job_id,submit_s,account,num_gpus,
duration_s,time_limit_s,...) or the output of sacct --parsable2 with JobID,
Submit, Start, End or Elapsed, Timelimit, Account, User and AllocTRES (or
ReqTRES, AllocGPUs); the header tells which.

Policies: P0 FIFO, P1 FIFO + backfill, P2 multifactor (Fair Tree) +
backfill, P2-classic (NO_FAIR_TREE), P3 = P2 + preemptible fillers, P4 =
P3 + yield (shrink, or stop, running multi-GPU jobs when it pays back) + a
short route (jobs with limits of at most 1h in a partition of higher
PriorityTier). --policy takes one, a comma-separated list, or all.

With --live, each policy is replayed on a real daemon instead: one started
in a temporary directory with --gpus-per-node simulated GPUs, every trace job
submitted at its time (× --scale wall seconds per trace second) as a job that
works in checkpointed steps; the same table comes from what the daemon did.
The simulator passes at events only; the daemon also passes once a (wall)
second in a replay: --tick with 1s/S (10s for --scale 0.1) makes the
simulator do the same, and the two tables then agree.

Options:
`

// LiveRunner replays a trace under one policy on a real daemon
// (livereplay.Run), with scale wall seconds per trace second, telling
// progress what it does.
type LiveRunner func(ctx context.Context, tr *Trace, pol Policy, opt Options, scale float64, progress io.Writer) (*Run, error)

// Main is `slurmd-lite simulate` without --live.
func Main(args []string, stdout, stderr io.Writer) int { return MainWith(args, stdout, stderr, nil) }

// MainWith is `slurmd-lite simulate`; live runs --live (nil: refused).
func MainWith(args []string, stdout, stderr io.Writer, live LiveRunner) int {
	fs := flag.NewFlagSet("slurmd-lite simulate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		trace       = fs.String("trace", "", "workload `FILE` (Philly CSV or sacct --parsable2)")
		nodes       = fs.Int("nodes", 1, "simulated `N`odes")
		gpn         = fs.Int("gpus-per-node", 8, "`G`PUs per node")
		gpuMem      = fs.String("gpu-mem", "80G", "memory of each GPU (`SIZE`)")
		policy      = fs.String("policy", "P2", "`POLICY`: P0, P1, P2, P2-classic, P3, P4, a comma-separated list, or all")
		cfgFile     = fs.String("config", "", "slurm-lite config `FILE` for priority weights, decay, backfill parameters and account shares")
		profiles    = fs.String("profiles", "", "`DIR` of Pollux/Sia step-time profiles for shrunk jobs' speed; \"none\" for linear (default "+defaultProfiles+" when present)")
		window      = fs.String("window", "", "utilisation window from the trace's first submission (`DURATION`, e.g. 14d or 336h); default: up to the last submission")
		asJSON      = fs.Bool("json", false, "print a JSON array, one object per policy")
		noWall      = fs.Bool("no-wall", false, "leave out the simulator's own run time, so that output is identical run to run")
		outcomes    = fs.String("outcomes", "", "also write every trace job's outcome under every policy to `FILE` (CSV)")
		checkpoint  = fs.Duration("checkpoint", 10*time.Minute, "checkpoint interval: work since the last one is lost on a stop")
		stopTime    = fs.Duration("stop-time", time.Minute, "time a stopped job holds its GPUs")
		restartTime = fs.Duration("restart-time", time.Minute, "time a resumed job runs before making progress")
		fillerLimit = fs.Duration("filler-limit", 30*time.Minute, "time limit (and length) of each filler job")
		liveRun     = fs.Bool("live", false, "replay on a real daemon (simulated GPUs, real jobs) instead of the simulator")
		scale       = fs.Float64("scale", 1, "with --live: wall seconds per trace second (e.g. 0.01)")
		tick        = fs.Duration("tick", 0, "also pass every `DURATION` of trace time, as the daemon passes every GPUSampleInterval (slower; to compare with a --live replay at --scale S, give 1s/S)")
	)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			// Asked for, the usage goes to stdout and is no error.
			fs.SetOutput(stdout)
			fmt.Fprint(stdout, usage)
			fs.PrintDefaults()
			return 0
		}
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "slurmd-lite simulate: %v\n", err)
		return 1
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q: options start with --", fs.Arg(0)))
	}
	if *trace == "" {
		return fail(errors.New("no trace: give one with --trace FILE"))
	}
	if *nodes < 1 || *gpn < 1 {
		return fail(fmt.Errorf("--nodes and --gpus-per-node must be at least 1 (got %d and %d)", *nodes, *gpn))
	}
	mem, err := slurmtime.ParseSize(*gpuMem, slurmtime.MiB)
	if err != nil || mem <= 0 {
		return fail(fmt.Errorf("--gpu-mem %q is not a size such as 80G", *gpuMem))
	}
	pols, err := LookupPolicies(*policy)
	if err != nil {
		return fail(err)
	}
	setup := DefaultSetup()
	if *cfgFile != "" {
		c, err := config.Load(*cfgFile)
		if err != nil {
			return fail(err)
		}
		if setup, err = SetupFromConfig(c); err != nil {
			return fail(fmt.Errorf("%s: %w", *cfgFile, err))
		}
	}
	sp, err := speedup(*profiles, *gpn)
	if err != nil {
		return fail(err)
	}
	tr, err := ReadTraceFile(*trace)
	if err != nil {
		return fail(err)
	}
	opt := Options{
		Lab:     Lab{Nodes: *nodes, GPUsPerNode: *gpn, GPUMem: int64(mem)},
		Setup:   setup,
		Speedup: sp,
		Assumptions: Assumptions{Checkpoint: *checkpoint, Stop: *stopTime, Restart: *restartTime,
			FillerLimit: *fillerLimit},
		Tick: *tick,
	}
	if *tick < 0 || (*tick > 0 && *tick < time.Second) {
		return fail(fmt.Errorf("--tick %v: give 0 (passes at events only) or a whole number of seconds, at least 1s", *tick))
	}
	if *window != "" {
		d, err := parseWindow(*window)
		if err != nil {
			return fail(err)
		}
		opt.WindowEnd = tr.Jobs[0].Submit + int64(d/time.Second)
	}
	var ms []Metrics
	var out *os.File
	if *outcomes != "" {
		if out, err = os.Create(*outcomes); err != nil {
			return fail(err)
		}
		defer out.Close()
		fmt.Fprintln(out, "policy,job,account,gpus,submit_s,start_s,end_s,runtime_s,wait_s,jct_s,stops,shrinks,timed_out")
	}
	if *liveRun && live == nil {
		return fail(errors.New("--live needs the daemon: run it as slurmd-lite simulate --live"))
	}
	for _, p := range pols {
		began := time.Now()
		var r *Run
		if *liveRun {
			r, err = live(context.Background(), tr, p, opt, *scale, stderr)
		} else {
			r, err = Simulate(tr, p, opt)
		}
		if err != nil {
			return fail(err)
		}
		m := Summarize(r)
		if out != nil {
			WriteOutcomes(out, tr, r)
		}
		if !*noWall {
			m.WallS = time.Since(began).Seconds()
		}
		ms = append(ms, m)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ms); err != nil {
			return fail(err)
		}
		return 0
	}
	WriteTable(stdout, tr, opt, pols, ms, !*noWall)
	return 0
}

// speedup loads the profiles named by --profiles, or the default ones when
// present, or falls back to the linear model.
func speedup(dir string, gpn int) (*Speedup, error) {
	switch dir {
	case "none":
		return LinearSpeedup(gpn), nil
	case "":
		if _, err := os.Stat(defaultProfiles); err != nil {
			return LinearSpeedup(gpn), nil
		}
		dir = defaultProfiles
	}
	return LoadProfiles(dir, gpn)
}

// parseWindow reads 14d, 336h, 90m or a Slurm time such as 14-00:00:00.
func parseWindow(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(d, "%d", &n); err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	if d, err := slurmtime.ParseTimeLimit(s); err == nil && d > 0 && d < sched.Unlimited {
		return d, nil
	}
	return 0, fmt.Errorf("--window %q is not a duration such as 14d, 336h or 14-00:00:00", s)
}
