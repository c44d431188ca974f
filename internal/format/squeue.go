package format

import (
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Row is one line of squeue: a job, or one task of an array's pending
// record (squeue -r, or -j A_T).
type Row struct {
	// Job is what squeue's compact list carries of the job, all that the
	// fields of Format.Lean and the sorts of LeanSort read.
	Job *api.SqueueJob
	// Full is the job's whole record, nil for a row of the compact list:
	// the other fields read it.
	Full *api.Job
	// Tasks is Slurm's array_task_str: the pending record's tasks as
	// squeue prints them inside A_[...]; "" for every other row.
	Tasks string
	// Task is the array task the row stands for, jobrec.NoTask for none.
	Task int
	Env  *Env
}

// NewRow is the row of a job of squeue's compact list.
func NewRow(j *api.SqueueJob, env *Env) Row {
	r := Row{Job: j, Task: j.ArrayTaskID, Env: env}
	if j.ArrayRecord() {
		r.Task = jobrec.NoTask
		r.Tasks = j.ArrayTasks
		if r.Tasks == "" {
			r.Tasks = slurmsyntax.FormatTasks(j.ArrayPending, j.ArrayLimit)
		}
	}
	return r
}

// FullRow is the row of a whole job record.
func FullRow(j *api.Job, env *Env) Row {
	s := j.Squeue()
	r := NewRow(&s, env)
	r.Full = j
	return r
}

// Rows are the rows of whole job records, in their order.
func Rows(jobs []api.Job, env *Env) []Row {
	small := make([]api.SqueueJob, len(jobs))
	rows := make([]Row, len(jobs))
	for i := range jobs {
		small[i] = jobs[i].Squeue()
		rows[i] = NewRow(&small[i], env)
		rows[i].Full = &jobs[i]
	}
	return rows
}

// cpus is the job's CPU count (cpus): a compact row has no request to
// fall back on, and the daemon sets NumCPUs.
func (r *Row) cpus() int {
	if r.Full != nil {
		return cpus(r.Full)
	}
	return max(1, r.Job.NumCPUs)
}

// array reports whether the row is an array job's (Slurm's array_task_str
// or array_task_id set).
func (r *Row) array() bool { return r.Tasks != "" || r.Task != jobrec.NoTask }

// jobID is the job's squeue %i: 12, 7_3, 7_[0-3%2].
func (r *Row) jobID() string {
	var buf [32]byte
	return string(r.appendJobID(buf[:0]))
}

// appendJobID appends jobID to b.
func (r *Row) appendJobID(b []byte) []byte {
	j := r.Job
	start := len(b)
	switch {
	case r.Tasks != "":
		b = strconv.AppendUint(b, uint64(j.ArrayJobID), 10)
		b = append(append(append(b, "_["...), r.Tasks...), ']')
	case r.Task != jobrec.NoTask:
		b = strconv.AppendUint(b, uint64(j.ArrayJobID), 10)
		b = strconv.AppendInt(append(b, '_'), int64(r.Task), 10)
	default:
		b = strconv.AppendUint(b, uint64(j.ID), 10)
	}
	if len(b)-start > 31 { // squeue prints it into 32 bytes
		b = b[:start+31]
	}
	return b
}

func na(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}

func str(s string) func(*Row) string { return func(*Row) string { return s } }

// jobFields is squeue's field table (src/squeue/opts.c, print.c), in the
// order of Slurm's -o letters, then the -O-only names.
var jobFields = []*jobField{
	{letter: 'a', names: []string{"account"}, header: "ACCOUNT", value: func(r *Row) string { return orNull(r.Job.Account) }},
	{letter: 'A', names: []string{"jobid"}, header: "JOBID", value: func(r *Row) string { return uitoa(r.Job.ID) }},
	{letter: 'b', names: []string{"gres", "tres-per-node"}, header: "TRES_PER_NODE", value: func(r *Row) string { return na(tresPerNode(r.Full)) }},
	{letter: 'B', names: []string{"batchhost"}, header: "EXEC_HOST", value: func(r *Row) string {
		if started(r.Job) && r.Job.Node != "" {
			return r.Job.Node
		}
		return "n/a"
	}},
	{letter: 'c', names: []string{"mincpus"}, header: "MIN_CPUS", value: func(r *Row) string { return strconv.Itoa(minCPUsNode(r.Full)) }},
	{letter: 'C', names: []string{"numcpus"}, header: "CPUS", value: func(r *Row) string { return strconv.Itoa(r.cpus()) }},
	{letter: 'd', names: []string{"mintmpdisk"}, header: "MIN_TMP_DISK", value: str("0")},
	{letter: 'D', names: []string{"numnodes"}, header: "NODES", value: str("1")},
	{letter: 'e', names: []string{"endtime"}, header: "END_TIME", value: func(r *Row) string {
		end := endTime(r.Job)
		if limit(r.Job) == slurmsyntax.Infinite && end.After(r.Env.Now) {
			return "NONE"
		}
		return timeOrNA(end)
	}},
	{letter: 'E', names: []string{"dependency"}, header: "DEPENDENCY", value: func(r *Row) string { return dependency(r.Full) }},
	{letter: 'f', names: []string{"feature"}, header: "FEATURES", value: func(r *Row) string { return orNull(r.Full.Request.Constraint) }},
	{letter: 'F', names: []string{"arrayjobid"}, header: "ARRAY_JOB_ID", value: func(r *Row) string {
		if r.array() {
			return uitoa(r.Job.ArrayJobID)
		}
		return uitoa(r.Job.ID)
	}},
	{letter: 'g', names: []string{"groupname"}, header: "GROUP", value: func(r *Row) string { return r.Env.group(r.Job.GID) }},
	{letter: 'G', names: []string{"groupid"}, header: "GROUP", value: func(r *Row) string { return uitoa(r.Job.GID) }},
	{letter: 'h', names: []string{"oversubscribe", "shared"}, header: "OVER_SUBSCRIBE", value: func(r *Row) string { return overSubscribe(r.Full) }},
	{letter: 'H', names: []string{"sockets"}, header: "SOCKETS_PER_NODE", value: str("*")},
	{letter: 'i', names: []string{"jobarrayid"}, header: "JOBID", task: true, value: (*Row).jobID, appendValue: (*Row).appendJobID},
	{letter: 'I', names: []string{"cores"}, header: "CORES_PER_SOCKET", value: str("*")},
	{letter: 'j', names: []string{"name"}, header: "NAME", value: func(r *Row) string { return orNull(r.Job.Name) }},
	{letter: 'J', names: []string{"threads"}, header: "THREADS_PER_CORE", value: str("*")},
	{letter: 'k', names: []string{"comment"}, header: "COMMENT", value: func(r *Row) string { return orNull(r.Full.Request.Comment) }},
	{letter: 'K', names: []string{"arraytaskid"}, header: "ARRAY_TASK_ID", task: true, value: func(r *Row) string {
		switch {
		case r.Tasks != "":
			return r.Tasks
		case r.Task != jobrec.NoTask:
			return strconv.Itoa(r.Task)
		}
		return "N/A"
	}},
	{letter: 'l', names: []string{"timelimit"}, header: "TIME_LIMIT", whole: true, value: func(r *Row) string { return secs(limit(r.Job)) }},
	{letter: 'L', names: []string{"timeleft"}, header: "TIME_LEFT", whole: true, value: func(r *Row) string {
		l := limit(r.Job)
		if l == slurmsyntax.Infinite {
			return "UNLIMITED"
		}
		return secs(l - timeUsed(r.Job, r.Env.Now))
	}},
	{letter: 'm', names: []string{"minmemory"}, header: "MIN_MEMORY", value: func(r *Row) string {
		mib, _ := memory(r.Full)
		return mebi(mib, r.Env.NoConvert)
	}},
	{letter: 'M', names: []string{"timeused"}, header: "TIME", whole: true, value: func(r *Row) string { return secs(timeUsed(r.Job, r.Env.Now)) }},
	{letter: 'n', names: []string{"reqnodes"}, header: "REQ_NODES", value: func(r *Row) string { return r.Full.Request.NodeList }},
	{letter: 'N', names: []string{"nodelist"}, header: "NODELIST", headWhole: true, whole: true, value: func(r *Row) string { return nodes(r.Job) }},
	{letter: 'o', names: []string{"command"}, header: "COMMAND", value: func(r *Row) string { return orNull(r.Full.Command) }},
	{letter: 'O', names: []string{"contiguous"}, header: "CONTIGUOUS", value: str("0")},
	{letter: 'p', names: []string{"priority"}, header: "PRIORITY", value: func(r *Row) string {
		return strconv.FormatFloat(float64(r.Job.Priority)/float64(^uint32(0)), 'f', 14, 64)
	}},
	{letter: 'P', names: []string{"partition"}, header: "PARTITION", value: func(r *Row) string { return orNull(r.Job.Partition) }},
	{letter: 'q', names: []string{"qos"}, header: "QOS", value: func(r *Row) string { return orNull(r.Job.QOS) }},
	{letter: 'Q', names: []string{"prioritylong"}, header: "PRIORITY", value: func(r *Row) string { return uitoa(r.Job.Priority) }},
	{letter: 'r', names: []string{"reason"}, header: "REASON", value: func(r *Row) string { return reason(r.Job) }},
	{letter: 'R', names: []string{"reasonlist"}, header: "NODELIST(REASON)", headWhole: true, value: reasonList},
	{letter: 's', names: []string{"selectjobinfo"}, header: "", value: str("")},
	{letter: 'S', names: []string{"starttime"}, header: "START_TIME", value: func(r *Row) string { return timeOrNA(startTime(r.Job)) }},
	{letter: 't', names: []string{"statecompact"}, header: "ST", value: func(r *Row) string { return r.Job.ShownState().Short() }},
	{letter: 'T', names: []string{"state"}, header: "STATE", value: func(r *Row) string { return string(r.Job.ShownState()) }},
	{letter: 'U', names: []string{"userid"}, header: "UID", value: func(r *Row) string { return uitoa(r.Job.UID) }},
	{letter: 'u', names: []string{"username"}, header: "USER", value: func(r *Row) string { return orNull(r.Job.User) }},
	{letter: 'v', names: []string{"reservation"}, header: "RESERVATION", value: func(r *Row) string { return orNull(r.Full.Request.Reservation) }},
	{letter: 'V', names: []string{"submittime"}, header: "SUBMIT_TIME", value: func(r *Row) string { return timeOrNA(r.Job.Submit) }},
	{letter: 'w', names: []string{"wckey"}, header: "WCKEY", value: func(r *Row) string { return orNull(r.Full.Request.WCKey) }},
	{letter: 'W', names: []string{"licenses"}, header: "LICENSES", value: func(r *Row) string { return orNull(r.Full.Request.Licenses) }},
	// %x has no -O name in 22.05 (ExcNodes is refused, as OOD found).
	{letter: 'x', header: "EXC_NODES", value: func(r *Row) string { return r.Full.Request.Exclude }},
	{letter: 'X', names: []string{"corespec"}, header: "CORE_SPEC", value: str("N/A")},
	{letter: 'y', names: []string{"nice"}, header: "NICE", value: func(r *Row) string { return strconv.Itoa(nice(r.Full)) }},
	{letter: 'Y', names: []string{"schednodes"}, header: "SCHEDNODES", headWhole: true, whole: true, value: str(Null)},
	{letter: 'z', names: []string{"sct"}, header: "S:C:T", value: str("*:*:*")},
	{letter: 'Z', names: []string{"workdir"}, header: "WORK_DIR", value: func(r *Row) string { return orNull(r.Full.WorkDir) }},

	{names: []string{"numtask"}, prefix: true, header: "TASKS", value: func(r *Row) string { return strconv.Itoa(tasks(r.Full)) }},
	{names: []string{"burstbuffer"}, header: "BURST_BUFFER", value: str(Null)},
	{names: []string{"burstbufferstate"}, header: "BURST_BUFFER_STATE", value: str(Null)},
	{names: []string{"cluster"}, header: "CLUSTER", value: func(r *Row) string {
		if r.Env.View != nil {
			return orNull(r.Env.View.ClusterName)
		}
		return Null
	}},
	{names: []string{"container"}, header: "CONTAINER", value: str(Null)},
	{names: []string{"delayboot"}, header: "DELAY_BOOT", value: str("0:00")},
	{names: []string{"clusterfeature"}, header: "CLUSTER_FEATURES", value: str(Null)},
	{names: []string{"prefer"}, header: "PREFER", value: str(Null)},
	{names: []string{"admin_comment"}, header: "ADMIN_COMMENT", value: str(Null)},
	{names: []string{"system_comment"}, header: "SYSTEM_COMMENT", value: str(Null)},
	{names: []string{"lastschedeval"}, header: "LAST_SCHED_EVAL", value: func(r *Row) string { return timeOrNA(r.Job.Submit) }},
	{names: []string{"pendingtime"}, header: "PENDING_TIME", value: func(r *Row) string {
		j := r.Job
		if !j.Start.IsZero() && j.Start.Before(r.Env.Now) {
			return strconv.FormatInt(int64(j.Start.Sub(j.Submit)/time.Second), 10)
		}
		return strconv.FormatInt(int64(r.Env.Now.Sub(j.Submit)/time.Second), 10)
	}},
	{names: []string{"accruetime"}, header: "ACCRUE_TIME", value: func(r *Row) string { return timeOrNA(accrueTime(r.Job)) }},
	{names: []string{"allocnodes"}, header: "ALLOC_NODES", value: str(Null)},
	{names: []string{"allocsid"}, header: "ALLOC_SID", value: str("0")},
	{names: []string{"associd"}, header: "ASSOC_ID", value: str("0")},
	{names: []string{"batchflag"}, header: "BATCH_FLAG", value: str("1")},
	{names: []string{"boardspernode"}, header: "BOARDS_PER_NODE", value: str("N/A")},
	{names: []string{"cpuspertask", "cpus-per-task"}, header: "CPUS_PER_TASK", value: func(r *Row) string { return strconv.Itoa(cpusPerTask(r.Full)) }},
	{names: []string{"derivedec"}, header: "DERIVED_EC", value: str("0")},
	{names: []string{"eligibletime"}, header: "ELIGIBLE_TIME", value: func(r *Row) string { return timeOrNA(r.Job.Eligible) }},
	{names: []string{"exit_code"}, header: "EXIT_CODE", value: func(r *Row) string {
		e := r.Full.ExitCode
		if e.Signal != 0 {
			return strconv.Itoa(e.Signal)
		}
		return strconv.Itoa(e.Status << 8)
	}},
	{names: []string{"origin"}, header: "ORIGIN", value: str("NA")},
	{names: []string{"originraw"}, header: "ORIGIN_RAW", value: str("NA")},
	{names: []string{"siblingsactive"}, header: "ACTIVE_SIBLINGS", value: str("NA")},
	{names: []string{"siblingsactiveraw"}, header: "ACTIVE_SIBLINGS_RAW", value: str("NA")},
	{names: []string{"siblingsviable"}, header: "VIABLE_SIBLINGS", value: str("NA")},
	{names: []string{"siblingsviableraw"}, header: "VIALBLE_SIBLINGS_RAW", value: str("NA")},
	{names: []string{"maxcpus"}, header: "MAX_CPUS", value: func(r *Row) string { return strconv.Itoa(r.cpus()) }},
	{names: []string{"maxnodes"}, header: "MAX_NODES", value: str("1")},
	{names: []string{"network"}, header: "NETWORK", value: str(Null)},
	{names: []string{"ntpercore"}, header: "NTASKS_PER_CORE", value: str("N/A")},
	{names: []string{"ntpernode"}, header: "NTASKS_PER_NODE", value: func(r *Row) string {
		if n := r.Full.Request.NTasksPerNode; n > 0 {
			return strconv.Itoa(n)
		}
		return "N/A"
	}},
	{names: []string{"ntpersocket"}, header: "NTASKS_PER_SOCKET", value: str("N/A")},
	{names: []string{"ntperboard"}, header: "NTASKS_PER_BOARD", value: str("N/A")},
	{names: []string{"preempttime"}, header: "PREEMPT_TIME", value: str("N/A")},
	{names: []string{"profile"}, header: "PROFILE", value: str("NotSet")},
	{names: []string{"reboot"}, header: "REBOOT", value: str("0")},
	{names: []string{"reqswitch"}, header: "REQ_SWITCH", value: str("0")},
	{names: []string{"requeue"}, header: "REQUEUE", value: func(r *Row) string { return boolDigit(r.Full.Requeue) }},
	{names: []string{"resizetime"}, header: "RESIZE_TIME", whole: true, value: str("N/A")},
	{names: []string{"restartcnt"}, header: "RESTART_COUNT", value: func(r *Row) string { return strconv.Itoa(r.Full.Restarts) }},
	{names: []string{"sperboard"}, header: "SOCKETS_PER_BOARD", value: str("0")},
	{names: []string{"stderr"}, header: "STDERR", value: func(r *Row) string { return orNull(r.Full.StdErr) }},
	{names: []string{"stdin"}, header: "STDIN", value: func(r *Row) string { return orNull(r.Full.StdIn) }},
	{names: []string{"stdout"}, header: "STDOUT", value: func(r *Row) string { return orNull(r.Full.StdOut) }},
	{names: []string{"mintime"}, header: "TIME_MIN", value: func(r *Row) string { return secs(r.Full.Request.TimeMin.Duration()) }},
	{names: []string{"wait4switch"}, header: "WAIT4SWITCH", value: str("0:00")},
	{names: []string{"cpus-per-tres"}, header: "CPUS_PER_TRES", value: func(r *Row) string {
		if n := r.Full.Request.CPUsPerGPU; n > 0 {
			return "gres:gpu:" + strconv.Itoa(n)
		}
		return "N/A"
	}},
	{names: []string{"mem-per-tres"}, header: "MEM_PER_TRES", value: func(r *Row) string {
		if m := r.Full.Request.MemPerGPU; m != nil {
			return "gres:gpu:" + strconv.FormatUint(*m, 10)
		}
		return "N/A"
	}},
	{names: []string{"tres", "tres-alloc"}, header: "TRES_ALLOC", value: func(r *Row) string { return tres(r.Full, r.Env.View) }},
	{names: []string{"tres-bind"}, header: "TRES_BIND", value: func(r *Row) string { return na(tresOption(r.Full, "gpu-bind")) }},
	{names: []string{"tres-freq"}, header: "TRES_FREQ", value: str("N/A")},
	{names: []string{"tres-per-job"}, header: "TRES_PER_JOB", value: func(r *Row) string { return na(tresPerJob(r.Full)) }},
	{names: []string{"tres-per-socket"}, header: "TRES_PER_SOCKET", value: func(r *Row) string { return na(tresPerSocket(r.Full)) }},
	{names: []string{"tres-per-task"}, header: "TRES_PER_TASK", value: func(r *Row) string { return na(tresPerTask(r.Full)) }},
	{names: []string{"mcslabel"}, header: "MCSLABEL", value: str(Null)},
	{names: []string{"deadline"}, header: "DEADLINE", value: func(r *Row) string { return timeOrNA(r.Full.Request.Deadline) }},
	{names: []string{"packjobid", "hetjobid"}, header: "HET_JOB_ID", value: str("N/A")},
	{names: []string{"packjoboffset", "hetjoboffset"}, header: "HET_JOB_OFFSET", value: str("N/A")},
	{names: []string{"packjobidset", "hetjobidset"}, header: "HET_JOB_ID_SET", value: str("N/A")},
}

// reasonList is %R: the reason in parentheses for a job that waits or
// failed, its nodes otherwise.
func reasonList(r *Row) string {
	switch r.Job.State {
	case "PENDING", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "FAILED":
		return "(" + reason(r.Job) + ")"
	}
	return nodes(r.Job)
}

// accrueTime is when the job began to accrue age priority: its eligible
// time, except for a held job or one the scheduler has not looked at yet.
func accrueTime(j *api.SqueueJob) time.Time {
	if j.State == slurm.Pending && (j.Hold != jobrec.HoldNone || j.Reason == "" || j.Reason == "None") {
		return time.Time{}
	}
	return j.Eligible
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
