package format

import (
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The fields of scontrol show job that derive from the request the way
// slurmctld derives them (pack_job in src/slurmctld/job_mgr.c), checked
// against real Slurm 22.05 by scripts/record-show-job.

// depWaiting reports whether the job waits on a dependency that is not
// met yet or can never be: the scheduler's view of its dependencies, a held
// job's too, else its reason.
func depWaiting(j *api.Job) bool {
	r := j.DepReason
	if r == "" {
		r = j.Reason
	}
	return r == slurm.ReasonDependency || r == slurm.ReasonDependencyNeverSatisfied
}

// begin is the job's --begin as slurmctld keeps it: only a time that was
// in the future at submission (an earlier one is no begin time at all).
func begin(j *api.Job) time.Time {
	if b := j.Request.Begin; b.After(j.Submit) {
		return b
	}
	return time.Time{}
}

// eligibleTime is EligibleTime, the job's details->begin_time: the --begin
// time from submission on (held or not), dropped once passed while a
// dependency is waited on (job_independent); for a pending job without
// one, the moment it became eligible, which slurmctld records at once for
// a job that is not held, waits on no dependency and has a valid account
// and QOS (slurm-lite does not keep that moment for a pending job: the
// submission); Unknown otherwise. A job that started has its own.
func eligibleTime(j *api.Job, now time.Time) time.Time {
	if !j.Eligible.IsZero() || !isPending(j) {
		return j.Eligible
	}
	b := begin(j)
	switch {
	case depWaiting(j):
		if b.After(now) {
			return b
		}
		return time.Time{}
	case !b.IsZero():
		return b
	case j.Hold != jobrec.HoldNone, j.Reason == slurm.ReasonInvalidAccount, j.Reason == slurm.ReasonInvalidQOS:
		return time.Time{}
	}
	return j.Submit
}

// showAccrueTime is AccrueTime: a pending job accrues age from when it is
// eligible and the controller has looked at it; never while held, waiting
// on a dependency or before its begin time.
func showAccrueTime(j *api.Job, now time.Time) time.Time {
	if !isPending(j) {
		return accrueTime(sq(j))
	}
	if j.Hold != jobrec.HoldNone || j.Reason == "" || j.Reason == slurm.ReasonNone || depWaiting(j) ||
		begin(j).After(now) {
		return time.Time{}
	}
	return eligibleTime(j, now)
}

// showStartTime is StartTime: a pending job with no expected start starts
// at the earliest at its begin time.
func showStartTime(j *api.Job, now time.Time) time.Time {
	t := startTime(sq(j))
	if isPending(j) && t.IsZero() {
		if b := begin(j); b.After(now) {
			return b
		}
	}
	return t
}

// timeMin is TimeMin: --time-min, or one minute for a job with a
// --deadline and neither --time nor --time-min (job_submit's default).
func timeMin(j *api.Job) time.Duration {
	r := &j.Request
	switch {
	case r.TimeMin > 0:
		return r.TimeMin.Duration()
	case !r.Deadline.IsZero() && r.TimeLimit == 0:
		return time.Minute
	}
	return 0
}

// numNodes is NumNodes: 1 for a job that holds or held its node; while
// pending, the node count slurmctld estimates from the request (pack_job's
// min_nodes, from the task count over what one node holds, at least
// --nodes' minimum) and --nodes' maximum when one was given ("1-1" for an
// explicit -N1), the minimum cut to the maximum.
func numNodes(j *api.Job, node *config.Node) string {
	if !isPending(j) {
		return "1"
	}
	r := &j.Request
	lo, hi := 1, 0
	if r.NodesSet {
		lo, hi = max(r.Nodes.Min, 1), r.Nodes.Max
	}
	maxCPU := 1
	if node != nil && node.CPUs > 0 {
		maxCPU = node.CPUs
	}
	tasks := 0 // details->num_tasks: 0 unless -n was given or derived
	if r.NTasksSet {
		tasks = r.NTasks
	}
	perCore, _ := strconv.Atoi(otherOr(j, "ntasks-per-core", ""))
	var n int
	switch cpt := max(1, r.CPUsPerTask); {
	case r.NTasksPerNode > 0:
		n = max(tasks/r.NTasksPerNode, lo)
	case cpt > 1:
		perNode := max(maxCPU/cpt, 1)
		n = max(tasks/perNode, lo)
		if tasks%perNode != 0 {
			n++ // after the max, as slurmctld does: -n2 -c3 shows 2
		}
	case perCore > 0:
		cores := (tasks + perCore - 1) / perCore
		n = max((cores+maxCPU-1)/maxCPU, lo)
	default:
		n = max((tasks+maxCPU-1)/maxCPU, lo)
	}
	if hi > 0 && hi < n {
		n = hi
	}
	if hi > 0 {
		return strconv.Itoa(n) + "-" + strconv.Itoa(hi)
	}
	return strconv.Itoa(n)
}

// showTRES is TRES=: tres, where --mem=0 (all of the node's memory) counts
// the node's memory, as slurmctld's request does.
func showTRES(j *api.Job, env *Env) string {
	s := tres(j, env.View)
	m := j.Request.MemPerNode
	all := j.MemAll || (m != nil && *m == 0)
	if !all || env.Node == nil || env.Node.RealMemory <= 0 || memTotal(j) != 0 {
		return s
	}
	node := "node=1"
	mem := "mem=" + mebi(uint64(env.Node.RealMemory/slurmsyntax.MiB), false) + ","
	return strings.Replace(s, node, mem+node, 1)
}

// minMemory is MinMemoryCPU= or MinMemoryNode=: pn_min_memory, which
// --mem-per-gpu does not set (it is MemPerTres=).
func minMemory(j *api.Job) (mib uint64, perCPU bool) {
	if j.Request.MemPerGPU != nil && j.Request.MemPerCPU == nil && j.Request.MemPerNode == nil {
		return 0, false
	}
	return memory(j)
}

// showMinCPUsNode is MinCPUsNode=: what the tasks of a node need, or
// --mincpus when more.
func showMinCPUsNode(j *api.Job) int {
	n := minCPUsNode(j)
	if m, err := strconv.Atoi(otherOr(j, "mincpus", "")); err == nil && m > n {
		n = m
	}
	return n
}

// otherOr is the value of an option kept in Request.Other, or def.
func otherOr(j *api.Job, name, def string) string {
	if v, ok := j.Request.OtherValue(name); ok && v != "" {
		return v
	}
	return def
}

// flagDigit is "1" for a flag option that was given (--contiguous), else "0".
func flagDigit(j *api.Job, name string) string {
	if _, ok := j.Request.OtherValue(name); ok {
		return "1"
	}
	return "0"
}

// jobFlags is the optional line of the job's binding and dependency flags,
// written one after the other without a space, as Slurm writes them.
func jobFlags(j *api.Job) string {
	var b strings.Builder
	if v, ok := j.Request.OtherValue("gres-flags"); ok {
		if strings.EqualFold(v, "disable-binding") {
			b.WriteString("GresEnforceBind=No")
		} else {
			b.WriteString("GresEnforceBind=Yes")
		}
	}
	if v, ok := j.Request.OtherValue("kill-on-invalid-dep"); ok {
		if strings.EqualFold(v, "yes") {
			b.WriteString("KillOInInvalidDependent=Yes")
		} else {
			b.WriteString("KillOInInvalidDependent=No")
		}
	}
	if _, ok := j.Request.OtherValue("spread-job"); ok {
		b.WriteString("SpreadJob=Yes")
	}
	return b.String()
}

// tresOption is TresBind= and TresFreq=: --gpu-bind and --gpu-freq, which
// sbatch sends as "gpu:VALUE".
func tresOption(j *api.Job, name string) string {
	if v, ok := j.Request.OtherValue(name); ok && v != "" {
		return "gpu:" + v
	}
	return ""
}

// cpuFreq is the --cpu-freq line as cpu_freq_debug writes it
// ("CPU_min_freq=Low CPU_max_freq=High Governor=Performance", with
// Slurm's spacing); "" without --cpu-freq or for a value sbatch would not
// take.
func cpuFreq(j *api.Job) string {
	arg, ok := j.Request.OtherValue("cpu-freq")
	if !ok || arg == "" {
		return ""
	}
	var p1, p2, p3 string
	head := arg
	if i := strings.IndexByte(arg, ':'); i >= 0 {
		head, p3 = arg[:i], arg[i+1:]
	}
	p1 = head
	if i := strings.IndexByte(head, '-'); i >= 0 {
		p1, p2 = head[:i], head[i+1:]
	}
	var lo, hi, gov string
	if g := cpuGovernor(p1); g != "" {
		if p3 != "" {
			return ""
		}
		gov = g
	} else if hi = cpuFrequency(p1); hi == "" {
		return ""
	}
	if p2 != "" {
		f := cpuFrequency(p2)
		if f == "" {
			return ""
		}
		lo, hi = hi, f
	}
	if p3 != "" {
		if p2 == "" {
			return ""
		}
		if gov = cpuGovernor(p3); gov == "" {
			return ""
		}
	}
	// cpu_freq_debug: cur_freq (never set here), then min, max and the
	// governor, each separator dropped with the field before it.
	var b strings.Builder
	if lo != "" {
		b.WriteString("CPU_min_freq=" + lo + " ")
	}
	if hi != "" {
		b.WriteString("CPU_max_freq=" + hi + " ")
	}
	if gov != "" {
		b.WriteString("Governor=" + gov)
	}
	return b.String()
}

// cpuGovernor is _cpu_freq_check_gov's governor by its prefix, as
// cpu_freq_to_string names it; "" for none.
func cpuGovernor(s string) string {
	l := strings.ToLower(s)
	for _, g := range []struct{ prefix, name string }{
		{"co", "Conservative"}, {"perf", "Performance"}, {"pow", "PowerSave"},
		{"user", "UserSpace"}, {"onde", "OnDemand"}, {"sche", "SchedUtil"},
	} {
		if strings.HasPrefix(l, g.prefix) {
			return g.name
		}
	}
	return ""
}

// cpuFrequency is _cpu_freq_check_freq's frequency as cpu_freq_debug
// prints it: a keyword's name, or the number of kHz; "" for none.
func cpuFrequency(s string) string {
	l := strings.ToLower(s)
	switch {
	case strings.HasPrefix(l, "lo"):
		return "Low"
	case strings.HasPrefix(l, "him1"), strings.HasPrefix(l, "highm1"):
		return "Highm1"
	case strings.HasPrefix(l, "hi"):
		return "High"
	case strings.HasPrefix(l, "med"):
		return "Medium"
	}
	n := strings.TrimLeft(s, " \t\n")
	end := 0
	for end < len(n) && n[end] >= '0' && n[end] <= '9' {
		end++
	}
	v, err := strconv.ParseUint(n[:end], 10, 32)
	if err != nil || v == 0 {
		return ""
	}
	return strconv.FormatUint(v, 10) // kHz, as given
}

// showOverSubscribe is OverSubscribe=: a job that asks for its node's
// reboot has the node to itself whatever else it asked (_valid_job_desc
// sets shared = 0).
func showOverSubscribe(j *api.Job) string {
	if _, ok := j.Request.OtherValue("reboot"); ok {
		return "NO"
	}
	return overSubscribe(j)
}
