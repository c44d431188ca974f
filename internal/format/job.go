package format

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Env is what the commands' output needs besides the jobs: the clock,
// the configuration (for billing weights and GPU types; nil for the
// defaults) and the user database of the machine the command runs on.
type Env struct {
	Now time.Time
	// View is what the listings use of the configuration the daemon
	// runs with (config.View), nil for none.
	View *config.View
	// Node is the configured node, for scontrol show job's node figures;
	// nil for none.
	Node *config.Node
	// GroupName is getgrgid's name for gid, "" when there is none.
	GroupName func(gid uint32) string
	// NoConvert is --noconvert: sizes keep their unit (MiB).
	NoConvert bool
}

func (e *Env) group(gid uint32) string {
	if e.GroupName != nil {
		if name := e.GroupName(gid); name != "" {
			return name
		}
	}
	return strconv.FormatUint(uint64(gid), 10)
}

// isPending and the other state tests follow Slurm's IS_JOB_* macros.
func isPending(j *api.Job) bool { return j.State == slurm.Pending }

func isRunning(j *api.Job) bool {
	return j.State == slurm.Running || j.State == slurm.Completing
}

// The helpers below read only what api.SqueueJob carries, so that
// squeue's compact list and the full records print through them alike;
// callers holding an api.Job pass its Squeue().

// started reports whether the job holds or held an allocation.
func started(j *api.SqueueJob) bool { return !j.Start.IsZero() && j.State != slurm.Pending }

// timeUsed is squeue's job_time_used and scontrol's RunTime: nothing while
// pending, the time so far while running, start to end after; a job
// COMPLETING after a cancel or its time limit has its end already, and
// its time stops there, as in Slurm (whose IS_JOB_RUNNING is false then).
func timeUsed(j *api.SqueueJob, now time.Time) time.Duration {
	if j.Start.IsZero() || j.State == slurm.Pending {
		return 0
	}
	if j.State == slurm.Running || j.End.IsZero() {
		return sinceStart(j.Start, now)
	}
	return wholeSeconds(j.Start, j.End)
}

// sinceStart is a running job's time so far: now's clock is not
// Slurm's time_t, so the duration itself is cut to seconds.
func sinceStart(start, now time.Time) time.Duration {
	return max(0, now.Sub(start).Truncate(time.Second))
}

// wholeSeconds is end minus start as Slurm counts it, both being time_t:
// a job started at :41.9 and ended at :42.1 ran one second, as the Start
// and End printed beside it say.
func wholeSeconds(start, end time.Time) time.Duration {
	return max(0, time.Duration(end.Unix()-start.Unix())*time.Second)
}

// limit is the time limit in force; UNLIMITED when the daemon gives none.
func limit(j *api.SqueueJob) time.Duration {
	switch {
	case j.Limit > 0:
		return j.Limit
	case j.TimeLimit > 0:
		return j.TimeLimit
	}
	return slurmsyntax.Infinite
}

// startTime is Slurm's start_time: the expected start of a pending job
// (zero when the scheduler has none), the real one of the others, and for a
// job that ended without starting (cancelled while pending) its end, as
// slurmctld sets it.
func startTime(j *api.SqueueJob) time.Time {
	switch {
	case j.State == slurm.Pending:
		return j.ExpectedStart
	case j.Start.IsZero() && j.State.Finished():
		return j.End
	}
	return j.Start
}

// endTime is Slurm's end_time as the controller reports it: the expected
// end of a running job with a limit.
func endTime(j *api.SqueueJob) time.Time {
	switch {
	case j.State == slurm.Pending:
		return time.Time{}
	case (j.State == slurm.Running || j.State == slurm.Completing) && !j.Start.IsZero():
		// The controller's expected end: the limit, or a year for none.
		if l := limit(j); l != slurmsyntax.Infinite {
			return j.Start.Add(l)
		}
		return j.Start.Add(365 * 24 * time.Hour)
	}
	return j.End
}

// nodes is the job's node list: "" until it starts.
func nodes(j *api.SqueueJob) string {
	if j.State == slurm.Pending {
		return ""
	}
	return j.Node
}

// cpus is the job's CPU count: allocated, else requested.
func cpus(j *api.Job) int {
	if j.NumCPUs > 0 {
		return j.NumCPUs
	}
	if n := len(j.Alloc.CPUs); n > 0 && !isPending(j) {
		return n
	}
	return max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks)
}

func cpusPerTask(j *api.Job) int { return max(1, j.Request.CPUsPerTask) }

// tasks is the job's task count.
func tasks(j *api.Job) int {
	if j.NumTasks > 0 {
		return j.NumTasks
	}
	return max(1, j.Request.NTasks)
}

// minCPUsNode is Slurm's pn_min_cpus.
func minCPUsNode(j *api.Job) int {
	return cpusPerTask(j) * max(1, j.Request.NTasksPerNode)
}

// memory is the job's memory request in MiB and whether it counts per CPU
// (Slurm's pn_min_memory with MEM_PER_CPU).
func memory(j *api.Job) (mib uint64, perCPU bool) {
	r := &j.Request
	switch {
	case r.MemPerCPU != nil:
		return *r.MemPerCPU, true
	case r.MemPerNode != nil:
		return *r.MemPerNode, false
	case r.MemPerGPU != nil:
		return *r.MemPerGPU * uint64(gpus(j)), false
	}
	return 0, false
}

// memTotal is the memory the job holds (or asks for) in MiB.
func memTotal(j *api.Job) uint64 {
	if j.Alloc.Mem > 0 && !isPending(j) {
		return uint64(j.Alloc.Mem) >> 20
	}
	mib, perCPU := memory(j)
	if perCPU {
		return mib * uint64(cpus(j))
	}
	return mib
}

// gpus counts the job's GPUs: allocated whole GPUs once started, else the
// GPUs asked for in any of the ways sbatch takes them.
func gpus(j *api.Job) int {
	if !isPending(j) && len(j.Alloc.GPUs) > 0 {
		n := 0
		for _, g := range j.Alloc.GPUs {
			if g.Mem == 0 {
				n++
			}
		}
		return n
	}
	return gresCount(j, "gpu")
}

// gresCount is what the request asks of one generic resource, "gpu" or
// "shard", on the node: every way sbatch takes GPUs added up as the
// scheduler adds them (jobscript's NodeGPUs).
func gresCount(j *api.Job, name string) int {
	need := j.Request.NodeGPUs()
	switch name {
	case "gpu":
		return need.GPUs
	case "shard":
		return need.Shards
	}
	return 0
}

// billing is the job's billing TRES under its partition's weights (empty
// weights: the CPU count, Slurm's default).
func billing(j *api.Job, cfg *config.View) uint64 {
	var w config.TRESWeights
	if cfg != nil {
		if p := cfg.Partition(j.Partition); p != nil {
			w = p.TRESBillingWeights
		} else {
			w = cfg.TRESBillingWeights
		}
	}
	return billingUnder(j, w)
}

// billingUnder is the job's billing TRES under weights w.
func billingUnder(j *api.Job, w config.TRESWeights) uint64 {
	if len(w) == 0 {
		return uint64(cpus(j))
	}
	sum := w["cpu"]*float64(cpus(j)) + w["mem"]*float64(memTotal(j)) +
		w["node"] + w["gres/gpu"]*float64(gpus(j)) +
		w["gres/shard"]*float64(gresCount(j, "shard"))
	return uint64(math.Round(sum))
}

// tres is scontrol's TRES= and squeue's tres-alloc: what the job holds,
// or asks for, in Slurm's TRES order (cpu, mem, node, billing, gres).
func tres(j *api.Job, cfg *config.View) string {
	parts := []string{"cpu=" + strconv.Itoa(cpus(j))}
	if m := memTotal(j); m > 0 {
		parts = append(parts, "mem="+mebi(m, false))
	}
	parts = append(parts, "node=1")
	// Slurm's TRES strings leave out counts of 0: billing under GPU-only
	// weights for a job without GPUs.
	if b := billing(j, cfg); b > 0 {
		parts = append(parts, "billing="+strconv.FormatUint(b, 10))
	}
	if n := gpus(j); n > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(n))
	}
	if n := gresCount(j, "shard"); n > 0 {
		parts = append(parts, "gres/shard="+strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

// tresPer prints a list of GRES requests as Slurm's tres_per_* fields
// ("gres:gpu:2,gres:shard:4"); "" for none.
func tresPer(list ...[]jobscript.Gres) string {
	var parts []string
	for _, l := range list {
		for _, g := range l {
			s := "gres:" + g.Name
			if g.Type != "" {
				s += ":" + g.Type
			}
			parts = append(parts, s+":"+strconv.FormatUint(g.Count, 10))
		}
	}
	return strings.Join(parts, ",")
}

func tresPerJob(j *api.Job) string  { return tresPer(j.Request.GPUs) }
func tresPerNode(j *api.Job) string { return tresPer(j.Request.Gres, j.Request.GPUsPerNode) }
func tresPerTask(j *api.Job) string { return tresPer(j.Request.GPUsPerTask) }

func tresPerSocket(j *api.Job) string { return tresPer(j.Request.GPUsPerSocket()) }

// dependency is the job's dependency as the controller shows it: the
// clauses still waited on, unfulfilled, or failed when they can never be
// met, whatever the job's reason; Null once none is left. The scheduler's
// view of the dependencies (DepReason) decides, else the reason. A held
// job is the exception: slurmctld tests no dependency of a held job
// (job_independent returns at once for JobHeldUser and JobHeldAdmin), so
// its clauses stay as they were last tested, and a job held before it ever
// became eligible (EligibleTime Unknown: held at submission, or while its
// dependencies were unmet) shows every clause unfulfilled, even one whose
// job has since ended as asked or a singleton with no rival left
// (golden/squeue_h_n_o_t_r_E_held_singleton.txt).
func dependency(j *api.Job) string {
	d := j.Request.Dependency
	if d == nil || !isPending(j) {
		return Null
	}
	state := slurmsyntax.DepUnfulfilled
	if j.Hold != jobrec.HoldNone {
		if !j.Eligible.IsZero() {
			return Null // met before the hold: slurmctld cleared them
		}
		return orNull(d.Parsed.Show(nil))
	}
	r := j.DepReason
	if r == "" {
		r = j.Reason
	}
	switch r {
	case slurm.ReasonDependency:
	case slurm.ReasonDependencyNeverSatisfied:
		state = slurmsyntax.DepFailed
	default:
		return Null
	}
	s := d.Parsed.Show(func(slurmsyntax.DepType, slurmsyntax.JobRef) slurmsyntax.DepState { return state })
	return orNull(s)
}

// reason is the reason word, or the daemon's sentence where Slurm prints
// one (state_desc).
func reason(j *api.SqueueJob) string {
	if j.StateDesc != "" {
		return j.StateDesc
	}
	if j.Reason == "" {
		return string(slurm.ReasonNone)
	}
	return string(j.Reason)
}

// overSubscribe is job_share_string for the job's --exclusive or
// --oversubscribe.
func overSubscribe(j *api.Job) string {
	switch j.Request.Sharing {
	case jobscript.Exclusive:
		return "NO"
	case "":
		return "OK"
	}
	s := strings.ToUpper(string(j.Request.Sharing))
	if s == "OVERSUBSCRIBE" {
		return "YES"
	}
	return s
}

// nice is the job's nice value.
func nice(j *api.Job) int {
	if j.Nice != 0 {
		return j.Nice
	}
	if j.Request.Nice != nil {
		return *j.Request.Nice
	}
	return 0
}

// exitCode prints Slurm's "status:signal".
func exitCode(e jobrec.ExitCode) string {
	return strconv.Itoa(e.Status) + ":" + strconv.Itoa(e.Signal)
}

// gpuType is the GPU type Slurm would name in JOB_GRES: the type asked
// for, else the configured simulated GPUs' when they are of one type.
func gpuType(j *api.Job, cfg *config.View) string {
	for _, list := range [][]jobscript.Gres{j.Request.GPUs, j.Request.GPUsPerNode, j.Request.Gres} {
		for _, g := range list {
			if g.Name == "gpu" && g.Type != "" {
				return g.Type
			}
		}
	}
	if cfg == nil {
		return ""
	}
	if len(cfg.SimulatedGPUTypes) == 1 {
		return cfg.SimulatedGPUTypes[0]
	}
	return ""
}

// BitFmt prints ids as Slurm's bit_fmt does: ascending, ranges joined by
// commas ("0-3,8").
func BitFmt(ids []int) string { return slurmsyntax.FormatRanges(ids) }

// sq is j's api.SqueueJob, for the helpers above.
func sq(j *api.Job) *api.SqueueJob {
	s := j.Squeue()
	return &s
}
