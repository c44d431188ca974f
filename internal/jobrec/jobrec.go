// Package jobrec holds the job records that slurm-lite's daemon stores and
// its commands receive: the job row (Job), its runs and steps for
// accounting (Record, Step), and the other rows of the state (Usage, Drain,
// Event). They are plain values; internal/store keeps them in SQLite and
// names them as its own (store.Job is jobrec.Job). They live apart from the
// store so that a command can read them without linking SQLite: sbatch and
// squeue start in a millisecond, not three.
package jobrec

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// NoTask is Job.ArrayTaskID for a row that is not one array task: a plain
// job, or an array's pending record.
const NoTask = -1

// Job is one row of the job table: a plain job, one task of an array job, or
// an array's pending record (the tasks not started yet). It is the job as the
// controller sees it now; its latest run is also its accounting record (see
// Record).
type Job struct {
	ID uint32
	// ArrayJobID is the array's id for a task and for the pending record, 0
	// for a plain job. ArrayTaskID is the task, or NoTask.
	ArrayJobID  uint32
	ArrayTaskID int
	// ArrayPending are the tasks of an array not started yet, ascending;
	// only the pending record has any. ArrayLimit is the %N throttle.
	ArrayPending []int
	ArrayLimit   int

	User    string
	UID     uint32
	GID     uint32
	Account string
	// Partition and QOS are as resolved at submission: "" only when the
	// configuration has none.
	Partition string
	QOS       string
	Name      string

	State  slurm.JobState
	Reason slurm.Reason

	Submit   time.Time
	Eligible time.Time
	Start    time.Time
	End      time.Time
	// TimeLimit is 0 when none was asked (the partition's default applies)
	// and slurmtime.Infinite for UNLIMITED.
	TimeLimit time.Duration
	ExitCode  ExitCode

	// Restarts is SLURM_RESTART_COUNT: how often the job was requeued. It
	// numbers the job's runs in accounting (0 is the first run).
	Restarts int
	// Requeue is whether the job may be requeued (--requeue or JobRequeue).
	Requeue bool
	Hold    Hold
	// Priority, when not 0, replaces the computed priority (scontrol update
	// Priority=, or kept across a yield).
	Priority uint32
	Nice     int

	// Request is the submission as sbatch parsed it, without its Script:
	// the script is kept apart (see Script) so that listing jobs never
	// carries it. Request.Export may still hold values given on the command
	// line (--export=TOKEN=...), and Request.Wrap is a script: the daemon
	// serves them to the job's owner, root and operators only (its viewer).
	Request   jobscript.Request
	SubmitDir string
	Alloc     Alloc
	// BatchSize is SLITE_BATCH_SIZE, set by a yield; 0 for none.
	BatchSize int
	// CheckpointDir is SLITE_CHECKPOINT_DIR, stable across requeues.
	CheckpointDir string

	// Who made the last change of each kind, when someone did: sacct's
	// "CANCELLED by UID", and the yield and requeue reports.
	CancelledBy *uint32
	RequeuedBy  *uint32
	YieldedBy   *uint32
	// YieldedFor is the job a yield stopped this one for (0: none): the
	// yielded job may not take its GPUs back before that job has started.
	YieldedFor uint32
	// FullGPUs, on a job that a shrink left with fewer GPUs, is how many it
	// had before (0: not shrunk), for the regrow.
	FullGPUs int

	// PeakGPUMem is the most GPU memory the job's processes held at once,
	// summed over its GPUs, in bytes; MeanGPUUtil its mean utilization over
	// its GPUs and run time, in percent, or -1 when no sample knew it
	// (simulated GPUs, or NVML could not say: what sinfo -G shows as N/A).
	// Both as last sampled.
	PeakGPUMem  int64
	MeanGPUUtil float64

	// Notes are what the daemon learned about the job's run that users
	// should see (sacct, scontrol show job): "CUDA out of memory (stderr)",
	// "peak GPU memory 3G of 20G asked per GPU", "used GPU 2, which it was
	// not given". Kept with each run (an archived run keeps its notes).
	// nil when there are none. Stored as JSON, so bytes that are not UTF-8
	// come back as U+FFFD.
	Notes []string
}

// ArrayRecord reports whether the row is an array's pending record, the row
// that squeue shows as A_[1-3].
func (j Job) ArrayRecord() bool { return j.ArrayJobID != 0 && j.ArrayTaskID == NoTask }

// Hold is a job's hold.
type Hold int

// Holds: an owner's hold (sbatch --hold, scontrol hold by the owner) shows
// JobHeldUser, an operator's JobHeldAdmin.
//
// The daemon's own holds, each shown as Slurm shows it: a job requeued by
// an exit code in RequeueExitHold (JobState SPECIAL_EXIT, JobHeldUser); a
// job whose supervisor could not be started ("launch failed requeued
// held"); a job requeued automatically more than max_batch_requeue times
// (JobHoldMaxRequeue). The job's owner may release each of them.
const (
	HoldNone Hold = iota
	HoldUser
	HoldAdmin
	HoldSpecialExit
	HoldLaunchFailed
	HoldMaxRequeue
)

// ByAdmin reports whether only root or an operator may release the hold.
func (h Hold) ByAdmin() bool { return h == HoldAdmin }

// ExitCode is Slurm's exit code pair "status:signal": the exit status of the
// batch script, and the signal that ended it (0 for none).
type ExitCode struct {
	Status int
	Signal int
}

func (e ExitCode) String() string { return fmt.Sprintf("%d:%d", e.Status, e.Signal) }

// AccountedExitCode is the job's exit code as accounting keeps it: sacct's
// job line and the end mail. When the controller ended the job (TIMEOUT,
// CANCELLED, PREEMPTED, REQUEUED, NODE_FAIL, DEADLINE), slurmctld records
// the end before the batch script's status comes in, so accounting has
// 0:0, while the job itself (ExitCode: scontrol, squeue, sbatch --wait)
// takes the script's status when it arrives (_job_complete). Recorded:
// a script that traps SIGTERM and exits 143 at its time limit shows
// TIMEOUT 0:0 in sacct and ExitCode=143:0 in scontrol
// (golden/sacct_n_P_timeout_th143.txt, scontrol_show_job_timeout_exit_th143.txt).
//
// A run requeued because its script exited with a RequeueExit code ended
// by itself: its status is accounted (REQUEUED 42:0, recorded in
// golden/requeue_exit_sacct_D.txt). The daemon marks such a run with a note
// that starts with RequeueExitNote.
func (j *Job) AccountedExitCode() ExitCode {
	switch j.State {
	case slurm.Requeued:
		if slices.ContainsFunc(j.Notes, func(n string) bool { return strings.HasPrefix(n, RequeueExitNote) }) {
			return j.ExitCode
		}
		return ExitCode{}
	case slurm.Timeout, slurm.Cancelled, slurm.Preempted, slurm.NodeFail, slurm.Deadline:
		return ExitCode{}
	}
	return j.ExitCode
}

// RequeueExitNote starts the note of a run requeued by an exit code in
// RequeueExit or RequeueExitHold.
const RequeueExitNote = "requeued: exit code"

// Alloc is what a started job holds.
type Alloc struct {
	Node string     `json:"node,omitempty"`
	GPUs []GPUAlloc `json:"gpus,omitempty"`
	CPUs []int      `json:"cpus,omitempty"`
	// Mem is host memory in bytes.
	Mem int64 `json:"mem,omitempty"`
	// Ports are the ports of MpiParams' range the job holds while it runs
	// (sched.Alloc.Ports), ascending.
	Ports []int `json:"ports,omitempty"`
	// Priority is the job's priority when it started. slurmctld computes
	// priorities of pending jobs only (priority/multifactor skips the
	// others), so a job keeps the one it started with while it runs and
	// after it ends: squeue %Q, scontrol show job and sacct show it
	// (golden/squeue_h_n_o_t_Q_running.txt). Kept with the allocation,
	// which a requeue clears, as it makes the job pending again.
	Priority uint32 `json:"priority,omitempty"`
}

// GPUAlloc is one GPU of an allocation.
type GPUAlloc struct {
	UUID  string `json:"uuid"`
	Index int    `json:"index"`
	// Mem is the GPU memory reserved on a shared GPU; 0 for a whole GPU.
	Mem int64 `json:"mem,omitempty"`
}

// NewJob is one submission: the job and what is kept apart from it.
type NewJob struct {
	// Job is the job to create. Submit assigns ID, ArrayJobID and
	// ArrayTaskID; State defaults to PENDING, Submit to the commit's
	// time, and an array submission (Request.Array set) gets its tasks as
	// ArrayPending and its throttle as ArrayLimit when those are unset.
	Job Job
	// Script is the batch script; Env the submission environment as
	// "NAME=value" entries. Both are kept byte for byte.
	Script string
	Env    []string
}

// Script is what a job runs with, kept apart from the job because it often
// holds secrets: serve it to the job's owner and root only.
type Script struct {
	Text string
	Env  []string
	// UID is the owner's uid, for that check.
	UID uint32
}

// Record is one run of a job as accounting keeps it. The latest run of a job
// is its job row; each requeue archives the run before it (state REQUEUED,
// or what the caller gave), so sacct -D shows every run.
type Record struct {
	// Job is the job as that run ended, Job.Restarts numbering the run.
	Job Job
	// Latest is true for the job's current run.
	Latest bool
	Steps  []Step
}

// Step is one step of one run of a job: "batch", "extern", or a number.
type Step struct {
	JobID uint32
	// Run is the job's Restarts during that run.
	Run   int
	ID    string
	Name  string
	State slurm.JobState
	Start time.Time
	End   time.Time

	ExitCode ExitCode
	NTasks   int
	// UserCPU and SystemCPU are the CPU time of the step's processes.
	UserCPU   time.Duration
	SystemCPU time.Duration
	// MaxRSS is the largest resident set of the step's processes, in bytes.
	MaxRSS int64
	// PeakGPUMem (bytes) and MeanGPUUtil (percent) as for Job.
	PeakGPUMem  int64
	MeanGPUUtil float64
}

// Usage is the decayed usage of one (user, account) association, for fair
// share: Raw in TRES-billing seconds as of AsOf, when it was last decayed.
// User is "" for usage charged to the account itself.
type Usage struct {
	User    string
	Account string
	Raw     float64
	AsOf    time.Time
}

// Drain is a drained GPU: nothing new is placed on it until it is resumed.
// Drains are keyed by UUID, which survives a reboot that renumbers GPUs.
type Drain struct {
	UUID   string
	Index  int
	Reason string
	Since  time.Time
	// By is the uid that drained it; the daemon's own uid for a drain the
	// health checks decided.
	By uint32
}

// Event is one line of the audit trail: a change made by someone other than
// the job's owner (an operator's cancel or hold, a yield, a drain), or any
// other change worth keeping with who made it.
type Event struct {
	// Seq orders events; Tx.AppendEvent assigns it.
	Seq  int64
	Time time.Time
	// Actor is the uid that made the change, ActorName its user name.
	Actor     uint32
	ActorName string
	// JobID is the job changed, 0 for none; GPU the UUID of a GPU changed.
	JobID uint32
	GPU   string
	// Action is a word: cancel, hold, release, requeue, yield, update,
	// drain, resume, ...
	Action string
	// Detail says what changed and how it ended, for people.
	Detail string
}
