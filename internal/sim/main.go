package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// defaultProfiles is where the step-time profiles are looked for when
// --profiles is not given: the shared traces beside the repository.
const defaultProfiles = "../shared/traces/pollux_sia/profiles_rtx"

// description is the long help of `slurmd-lite simulate --help`.
const description = `Replays a workload through slurm-lite's scheduling core on a simulated clock
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
simulator do the same, and the two tables then agree.`

// LiveRunner replays a trace under one policy on a real daemon
// (livereplay.Run).
type LiveRunner func(ctx context.Context, tr *Trace, pol Policy, opt Options, live LiveOptions) (*Run, error)

// LiveOptions are --live's own settings.
type LiveOptions struct {
	// Scale is wall seconds per trace second.
	Scale float64
	// Keep, when not "", is the directory that keeps the daemon's
	// configuration, state and log and the replay's own log, for this
	// policy; "" removes them.
	Keep string
	// Progress hears what the replay does.
	Progress io.Writer
}

// Flags are `slurmd-lite simulate`'s options. internal/slurmdcmd reads
// them from the command line with kong (the tags are kong's; this package
// does not link it).
type Flags struct {
	Trace       string        `help:"Workload file (Philly CSV or sacct --parsable2)." placeholder:"FILE"`
	Nodes       int           `help:"Simulated nodes." default:"1" placeholder:"N"`
	GPUsPerNode int           `name:"gpus-per-node" help:"GPUs per node." default:"8" placeholder:"G"`
	GPUMem      string        `name:"gpu-mem" help:"Memory of each GPU." default:"80G" placeholder:"SIZE"`
	Policy      string        `help:"P0, P1, P2, P2-classic, P3, P4, a comma-separated list, or all." default:"P2"`
	Config      string        `help:"slurm-lite config file for priority weights, decay, backfill parameters, account shares and account budgets (GrpTRESMins, UsageResetPeriod)." placeholder:"FILE"`
	Profiles    string        `help:"Directory of Pollux/Sia step-time profiles for shrunk jobs' speed; \"none\" for linear (default ${profiles} when present)." placeholder:"DIR"`
	Window      string        `help:"Utilisation window from the trace's first submission (e.g. 14d or 336h); default: up to the last submission." placeholder:"DURATION"`
	JSON        bool          `help:"Print a JSON array, one object per policy."`
	NoWall      bool          `name:"no-wall" help:"Leave out the simulator's own run time, so that output is identical run to run."`
	Outcomes    string        `help:"Also write every trace job's outcome under every policy to FILE (CSV)." placeholder:"FILE"`
	Checkpoint  time.Duration `help:"Checkpoint interval: work since the last one is lost on a stop." default:"10m"`
	StopTime    time.Duration `name:"stop-time" help:"Time a stopped job holds its GPUs." default:"1m"`
	RestartTime time.Duration `name:"restart-time" help:"Time a resumed job runs before making progress." default:"1m"`
	FillerLimit time.Duration `name:"filler-limit" help:"Time limit (and length) of each filler job." default:"30m"`
	Live        bool          `help:"Replay on a real daemon (simulated GPUs, real jobs) instead of the simulator."`
	Scale       float64       `help:"With --live: wall seconds per trace second (e.g. 0.1); every time of the replay must come to whole seconds." default:"1"`
	Keep        string        `help:"With --live: keep each policy's daemon directory (configuration, state, daemon.log, replay.log, jobs.csv) in DIR/POLICY, to explain a divergence." placeholder:"DIR"`
	Reservation string        `help:"Hold a reservation throughout the replay, in scontrol create reservation's words, times from the trace's first submission (e.g. \"StartTime=18:00 Duration=14:00:00 Users=nobody TRES=gres/gpu=8 Flags=DAILY\": a nightly reservation of the first node's eight GPUs that no trace job uses)." placeholder:"WORDS"`
	Tick        time.Duration `help:"Also pass every DURATION of trace time, as the daemon passes every GPUSampleInterval (slower; to compare with a --live replay at --scale S, give 1s/S)." default:"0s" placeholder:"DURATION"`
	Recalc      string        `help:"When fair share and priorities are recomputed: period (every Priority.CalcPeriod, as Slurm and the daemon by default) or pass (at every pass, Priority.Recalc = \"pass\"); default: the --config's, else period." default:"" placeholder:"WHEN"`
}

// Help is the long description kong prints above the options.
func (Flags) Help() string { return description }

// ProfilesDefault is where --profiles looks when not given, for the help.
const ProfilesDefault = defaultProfiles

// Command is `slurmd-lite simulate` with its options read; live runs
// --live (nil: refused).
func Command(f Flags, stdout, stderr io.Writer, live LiveRunner) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "slurmd-lite simulate: %v\n", err)
		return 1
	}
	if f.Trace == "" {
		return fail(errors.New("no trace: give one with --trace FILE"))
	}
	if f.Live && live == nil {
		return fail(errors.New("--live needs the daemon: run it as slurmd-lite simulate --live"))
	}
	if f.Keep != "" && !f.Live {
		return fail(errors.New("--keep keeps a live replay's daemon directory: give it with --live"))
	}
	if f.Nodes < 1 || f.GPUsPerNode < 1 {
		return fail(fmt.Errorf("--nodes and --gpus-per-node must be at least 1 (got %d and %d)", f.Nodes, f.GPUsPerNode))
	}
	mem, err := slurmsyntax.ParseSize(f.GPUMem, slurmsyntax.MiB)
	if err != nil || mem <= 0 {
		return fail(fmt.Errorf("--gpu-mem %q is not a size such as 80G", f.GPUMem))
	}
	pols, err := LookupPolicies(f.Policy)
	if err != nil {
		return fail(err)
	}
	setup := DefaultSetup()
	if f.Config != "" {
		c, err := config.Load(f.Config)
		if err != nil {
			return fail(err)
		}
		if setup, err = SetupFromConfig(c); err != nil {
			return fail(fmt.Errorf("%s: %w", f.Config, err))
		}
	}
	switch f.Recalc {
	case "":
	case config.RecalcPass:
		setup.CalcPeriod = 0
	case config.RecalcPeriod:
		if setup.CalcPeriod == 0 {
			setup.CalcPeriod = DefaultSetup().CalcPeriod
		}
	default:
		return fail(fmt.Errorf("--recalc %q: give period or pass", f.Recalc))
	}
	sp, err := speedup(f.Profiles, f.GPUsPerNode)
	if err != nil {
		return fail(err)
	}
	tr, err := ReadTraceFile(f.Trace)
	if err != nil {
		return fail(err)
	}
	opt := Options{
		Lab:     Lab{Nodes: f.Nodes, GPUsPerNode: f.GPUsPerNode, GPUMem: int64(mem)},
		Setup:   setup,
		Speedup: sp,
		Assumptions: Assumptions{Checkpoint: f.Checkpoint, Stop: f.StopTime, Restart: f.RestartTime,
			FillerLimit: f.FillerLimit},
		Tick: f.Tick,
	}
	if f.Reservation != "" {
		if f.Live {
			return fail(errors.New("--reservation is the simulator's: a --live replay's daemon holds none; create one with scontrol there"))
		}
		r, err := simReservation(f.Reservation, tr)
		if err != nil {
			return fail(err)
		}
		opt.Reservations = []sched.Reservation{r}
	}
	if f.Tick < 0 || (f.Tick > 0 && f.Tick < time.Second) {
		return fail(fmt.Errorf("--tick %v: give 0 (passes at events only) or a whole number of seconds, at least 1s", f.Tick))
	}
	if f.Window != "" {
		d, err := parseWindow(f.Window)
		if err != nil {
			return fail(err)
		}
		opt.WindowEnd = tr.Jobs[0].Submit + int64(d/time.Second)
	}
	var ms []Metrics
	var out *os.File
	if f.Outcomes != "" {
		if out, err = os.Create(f.Outcomes); err != nil {
			return fail(err)
		}
		defer out.Close()
		fmt.Fprintln(out, "policy,job,account,gpus,submit_s,start_s,end_s,runtime_s,wait_s,jct_s,stops,shrinks,timed_out")
	}
	for _, p := range pols {
		began := time.Now()
		var r *Run
		if f.Live {
			lo := LiveOptions{Scale: f.Scale, Progress: stderr}
			if f.Keep != "" {
				lo.Keep = filepath.Join(f.Keep, p.Name)
			}
			r, err = live(context.Background(), tr, p, opt, lo)
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
		if !f.NoWall {
			m.WallS = time.Since(began).Seconds()
		}
		ms = append(ms, m)
	}
	if f.JSON {
		WriteSkips(stderr, tr) // stdout is the JSON alone
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ms); err != nil {
			return fail(err)
		}
		return 0
	}
	WriteTable(stdout, tr, opt, pols, ms, !f.NoWall)
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
	if d, err := slurmsyntax.ParseTimeLimit(s); err == nil && d > 0 && d < sched.Unlimited {
		return d, nil
	}
	return 0, fmt.Errorf("--window %q is not a duration such as 14d, 336h or 14-00:00:00", s)
}

// simReservation reads --reservation: scontrol's words, read against the
// replay's clock at the trace's first submission.
func simReservation(words string, tr *Trace) (sched.Reservation, error) {
	var first int64
	if len(tr.Jobs) > 0 {
		first = tr.Jobs[0].Submit
	}
	var r api.Reservation
	if err := api.ApplyResvWords(&r, strings.Fields(words), time.Unix(Base+first, 0), true); err != nil {
		return sched.Reservation{}, fmt.Errorf("--reservation %q: %w", words, err)
	}
	if r.Node != "" {
		return sched.Reservation{}, fmt.Errorf("--reservation %q: give TRES=gres/gpu=N or NodeCnt=1 (the first node), not Nodes=", words)
	}
	sr := sched.Reservation{Name: cmpOr(r.Name, "resv"), Start: r.Start, End: r.End, Users: r.Users, ExcludeUsers: r.ExcludeUsers,
		Accounts: r.Accounts, Partition: r.Partition, GPUs: r.GPUs, GPUType: r.GPUType}
	for _, f := range r.Flags {
		switch f {
		case "MAINT":
			sr.Flags.Maint = true
		case "FLEX":
			sr.Flags.Flex = true
		case "MAGNETIC":
			sr.Flags.Magnetic = true
		case "DAILY":
			sr.Flags.Daily = true
		case "WEEKDAY":
			sr.Flags.Weekday = true
		case "WEEKEND":
			sr.Flags.Weekend = true
		case "WEEKLY":
			sr.Flags.Weekly = true
		case "IGNORE_JOBS":
		default:
			return sched.Reservation{}, fmt.Errorf("--reservation %q: Flags=%s means nothing in a replay", words, f)
		}
	}
	return sr, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
