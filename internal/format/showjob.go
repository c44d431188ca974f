package format

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// ShowJob prints a job as scontrol show job does (slurm_sprint_job_info in
// src/api/job_info.c): its fields on indented lines, or on one line with
// oneLiner (-o). details counts -d: one adds the derived exit code and the
// allocation's CPUs, memory and GPU indices, as Slurm does; two (-dd) add
// what only slurm-lite knows, each on a line of its own so that every line
// Slurm prints stays as Slurm prints it: ReasonDetail= (why a pending job
// waits, with numbers) and GPU_UUIDs= (the GPUs a job holds, by identity).
// task, when not jobrec.NoTask, shows a pending record as that one task
// (scontrol show job A_T).
func ShowJob(j *api.Job, task int, details int, oneLiner bool, env *Env) string {
	detail, detail2 := details > 0, details > 1
	end := "\n   "
	if oneLiner {
		end = " "
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	nl := func() { b.WriteString(end) }

	w("JobId=%d ", j.ID)
	if j.ArrayJobID != 0 {
		switch {
		case task != jobrec.NoTask:
			w("ArrayJobId=%d ArrayTaskId=%d ", j.ArrayJobID, task)
		case j.ArrayRecord():
			w("ArrayJobId=%d ArrayTaskId=%s ", j.ArrayJobID, FullRow(j, env).Tasks)
		default:
			w("ArrayJobId=%d ArrayTaskId=%d ", j.ArrayJobID, j.ArrayTaskID)
		}
		if l := throttle(j); l > 0 {
			w("ArrayTaskThrottle=%d ", l)
		}
	}
	w("JobName=%s", printable(orNull(j.Name)))
	nl()

	user := j.User
	if user == "" {
		user = "nobody"
	}
	group := "nobody"
	if env.GroupName != nil {
		if g := env.GroupName(j.GID); g != "" {
			group = g
		}
	}
	w("UserId=%s(%d) GroupId=%s(%d) MCS_label=N/A", user, j.UID, group, j.GID)
	nl()
	w("Priority=%d Nice=%d Account=%s QOS=%s", j.Priority, nice(j), printable(orNull(j.Account)), printable(orNull(j.QOS)))
	nl()
	w("JobState=%s Reason=%s Dependency=%s", sq(j).ShownState(), strings.Join(strings.Fields(reason(sq(j))), "_"), printable(dependency(j)))
	nl()
	if detail2 && j.State == slurm.Pending && j.ReasonDetail != "" {
		w("ReasonDetail=%s", printable(j.ReasonDetail))
		nl()
	}
	w("Requeue=%s Restarts=%d BatchFlag=1 Reboot=%s ExitCode=%s", boolDigit(j.Requeue), j.Restarts, flagDigit(j, "reboot"), exitCode(j.ExitCode))
	nl()
	if detail {
		w("DerivedExitCode=0:0")
		nl()
	}

	w("RunTime=%s TimeLimit=%s TimeMin=", slurmsyntax.FormatClock(timeUsed(sq(j), env.Now)), slurmsyntax.FormatClock(limit(sq(j))))
	if m := timeMin(j); m > 0 {
		w("%s", slurmsyntax.FormatClock(m))
	} else {
		w("N/A")
	}
	nl()
	w("SubmitTime=%s EligibleTime=%s", Time(j.Submit), Time(eligibleTime(j, env.Now)))
	nl()
	w("AccrueTime=%s", Time(showAccrueTime(j, env.Now)))
	nl()
	endT := endTime(sq(j))
	endS := Time(endT)
	if limit(sq(j)) == slurmsyntax.Infinite && endT.After(env.Now) {
		endS = "Unknown"
	}
	w("StartTime=%s EndTime=%s Deadline=", Time(showStartTime(j, env.Now)), endS)
	if d := j.Request.Deadline; !d.IsZero() {
		w("%s", Time(d))
	} else {
		w("N/A")
	}
	nl()
	// A scrontab job's line (slurm_sprint_job_info): CronJob=Yes while it
	// recurs, and its schedule as slurmctld rebuilt it.
	if c := j.Request.Cron; c != nil {
		if !c.Off {
			w("CronJob=Yes ")
		}
		w("CrontabSpec=\"%s\"", c.Spec)
		nl()
	}
	// Slurm prints this line for a job that started, when preemption is
	// configured (the recorded cluster had it, as slurm-lite always does).
	if started(sq(j)) {
		w("PreemptEligibleTime=%s PreemptTime=None", Time(j.Start))
		nl()
	}
	w("SuspendTime=None SecsPreSuspend=0 LastSchedEval=%s Scheduler=Main", Time(lastSchedEval(j)))
	nl()
	w("Partition=%s AllocNode:Sid=%s:0", printable(orNull(j.Partition)), allocNode(env))
	nl()
	w("ReqNodeList=%s ExcNodeList=%s", printable(orNull(j.Request.NodeList)), printable(orNull(j.Request.Exclude)))
	nl()
	w("NodeList=%s", nodes(sq(j)))
	nl()
	if started(sq(j)) && j.Alloc.Node != "" {
		w("BatchHost=%s", j.Alloc.Node)
		nl()
	}
	w("NumNodes=%s NumCPUs=%d NumTasks=%d CPUs/Task=%d ReqB:S:C:T=0:0:%s:%s", numNodes(j, env.Node),
		cpus(j), tasks(j), cpusPerTask(j), otherOr(j, "cores-per-socket", "*"), otherOr(j, "threads-per-core", "*"))
	nl()
	w("TRES=%s", showTRES(j, env))
	nl()
	w("Socks/Node=%s NtasksPerN:B:S:C=%d:0:%s:%s CoreSpec=*", otherOr(j, "sockets-per-node", "*"), j.Request.NTasksPerNode,
		otherOr(j, "ntasks-per-socket", "*"), otherOr(j, "ntasks-per-core", "*"))
	nl()
	if detail && started(sq(j)) && j.Alloc.Node != "" {
		w("JOB_GRES=%s", printable(orNull(jobGres(j, env))))
		nl()
		w("  Nodes=%s CPU_IDs=%s Mem=%d GRES=%s", j.Alloc.Node, BitFmt(j.Alloc.CPUs), j.Alloc.Mem>>20, gresDetail(j, env))
		nl()
		if detail2 && len(j.Alloc.GPUs) > 0 {
			w("  GPU_UUIDs=%s", gpuUUIDs(j))
			nl()
		}
	}
	mib, perCPU := minMemory(j)
	per := "Node"
	if perCPU {
		per = "CPU"
	}
	w("MinCPUsNode=%d MinMemory%s=%s MinTmpDiskNode=%s", showMinCPUsNode(j), per, mebi(mib, false), mebi(j.Request.TmpMiB(), false))
	nl()
	w("Features=%s DelayBoot=%s", printable(orNull(j.Request.Constraint)), slurmsyntax.FormatClock(j.Request.DelayBoot()))
	nl()
	if r := j.Request.Reservation; r != "" {
		w("Reservation=%s", r)
		nl()
	}
	w("OverSubscribe=%s Contiguous=%s Licenses=%s Network=%s", showOverSubscribe(j), flagDigit(j, "contiguous"),
		printable(orNull(j.Request.Licenses)), printable(orNull(otherOr(j, "network", ""))))
	nl()
	w("Command=%s", printable(orNull(j.Command)))
	nl()
	w("WorkDir=%s", printable(orNull(j.WorkDir)))
	if c := j.Request.Comment; c != "" {
		nl()
		w("Comment=%s ", c)
	}
	for _, f := range []struct{ k, v string }{{"StdErr", j.StdErr}, {"StdIn", j.StdIn}, {"StdOut", j.StdOut}} {
		nl()
		w("%s=%s", f.k, f.v)
	}
	if f := cpuFreq(j); f != "" {
		nl()
		w("%s", f)
	}
	nl()
	w("Power=")
	if f := jobFlags(j); f != "" {
		nl()
		w("%s", f)
	}
	for _, f := range []struct{ k, v string }{
		{"CpusPerTres", cpusPerTres(j)}, {"MemPerTres", memPerTres(j)},
		{"TresBind", tresOption(j, "gpu-bind")}, {"TresFreq", tresOption(j, "gpu-freq")},
		{"TresPerJob", tresPerJob(j)}, {"TresPerNode", tresPerNode(j)}, {"TresPerSocket", tresPerSocket(j)},
		{"TresPerTask", tresPerTask(j)},
	} {
		if f.v != "" {
			nl()
			w("%s=%s", f.k, f.v)
		}
	}
	if len(j.Request.MailType) > 0 {
		// slurmctld gives a job with mail but no --mail-user its owner's
		// name (MailDomain is never set here).
		mailUser := j.Request.MailUser
		if mailUser == "" {
			mailUser = j.User
		}
		nl()
		w("MailUser=%s MailType=%s", printable(mailUser), strings.Join(j.Request.MailType, ","))
	}
	nl()
	if oneLiner {
		b.WriteString("\n")
	} else {
		b.WriteString("\n\n")
	}
	return b.String()
}

// throttle is the array's %N, on its record and on each task.
func throttle(j *api.Job) int {
	if j.ArrayLimit > 0 {
		return j.ArrayLimit
	}
	if a := j.Request.Array; a != nil {
		return a.Limit
	}
	return 0
}

// lastSchedEval stands for the controller's last scheduling look at the
// job, which slurm-lite does not keep: the start, else the submission.
func lastSchedEval(j *api.Job) time.Time {
	if !j.Start.IsZero() {
		return j.Start
	}
	return j.Submit
}

// allocNode is the submitting host of AllocNode:Sid, which slurm-lite does
// not keep: the machine itself, as every job is submitted on it.
func allocNode(env *Env) string {
	if env.Node != nil && env.Node.NodeName != "" {
		return env.Node.NodeName
	}
	return "localhost"
}

// jobGres is JOB_GRES: the job's GPUs as "gpu:TYPE:N".
func jobGres(j *api.Job, env *Env) string {
	n := gpus(j)
	if n == 0 {
		return ""
	}
	if t := gpuType(j, env.View); t != "" {
		return "gpu:" + t + ":" + strconv.Itoa(n)
	}
	return "gpu:" + strconv.Itoa(n)
}

// gresDetail is the allocation line's GRES=: "gpu:a100:2(IDX:0-1)".
func gresDetail(j *api.Job, env *Env) string {
	g := jobGres(j, env)
	if g == "" {
		return ""
	}
	var idx []int
	for _, a := range j.Alloc.GPUs {
		idx = append(idx, a.Index)
	}
	return g + "(IDX:" + BitFmt(idx) + ")"
}

// gpuUUIDs is -dd's GPU_UUIDs=: "0:GPU-5d4f…,1:GPU-9a21…", index then
// UUID, in the order of the allocation's indices (IDX: above).
func gpuUUIDs(j *api.Job) string {
	parts := make([]string, len(j.Alloc.GPUs))
	for i, g := range j.Alloc.GPUs {
		parts[i] = strconv.Itoa(g.Index) + ":" + g.UUID
	}
	return strings.Join(parts, ",")
}

func cpusPerTres(j *api.Job) string {
	if n := j.Request.CPUsPerGPU; n > 0 {
		return "gres:gpu:" + strconv.Itoa(n)
	}
	return ""
}

func memPerTres(j *api.Job) string {
	if m := j.Request.MemPerGPU; m != nil {
		return "gres:gpu:" + strconv.FormatUint(*m, 10)
	}
	return ""
}
