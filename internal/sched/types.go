package sched

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Unlimited is a time limit without end, Slurm's UNLIMITED. It has the same
// value as slurmsyntax.Infinite, so parsed limits pass through unchanged.
const Unlimited time.Duration = 1<<63 - 1

// GiB is 2^30 bytes, the unit GPU and host memory are usually written in.
const GiB int64 = 1 << 30

// Snapshot is everything one scheduling pass looks at. The core never
// modifies it: slices are read, never written, and never kept.
// JobUser is a user and account that some job of a Snapshot runs under
// (Snapshot.JobUsers).
type JobUser struct{ User, Account string }

type Snapshot struct {
	// Now is the pass's clock. Nothing in the package reads another clock.
	Now    time.Time
	Config Config
	// Nodes are the machines jobs run on: the daemon has one, the simulator
	// may have several. A job of up to one node's GPUs runs on one node; a
	// larger one takes whole nodes (see Alloc.More).
	Nodes      []Node
	Partitions []Partition
	QOS        []QOS
	// Accounts is the fair-share tree from [[Account]]; empty means every
	// user shares Config.DefaultAccount equally.
	Accounts []Account
	// Usage is the decayed usage per association, in TRES-billing seconds.
	Usage []Usage
	// Calc is the last fair-share recalculation, as Slurm's decay thread
	// makes one every PriorityCalcPeriod: fair share (EffectvUsage,
	// LevelFS, FairShare) comes from the usage as of it, and a pending
	// job's priority is the one computed then, or at its submission if
	// that came later. Zero (Calc.At zero) recalculates at every pass:
	// fair share from Usage at Now, priorities at Now.
	Calc Calc
	// TRESUsage is each account's usage per TRES, what its GrpTRESMins is
	// checked against (AccountTRESUsage); nil when no account has one.
	// QOSUsage is each QOS's (QOSTRESUsage; Account is the QOS's name).
	TRESUsage []TRESUsage
	QOSUsage  []TRESUsage
	// Users are users known to hold Config.DefaultAccount's implicit
	// association where it is in use (no Accounts, or AllowUnlistedUsers),
	// besides those of Jobs and Usage: every user has it, and sshare and
	// sacctmgr list the ones the daemon has seen (and root, and whoever
	// asks), so the fair-share tree holds them too.
	Users []string
	// Reservations are the advance reservations (reservation.go).
	Reservations []Reservation
	// Jobs holds pending and running jobs, and the finished jobs that
	// dependencies and MaxJobCount still need to see.
	Jobs []Job
	// JobUsers, when not nil, are the users and accounts of the jobs in
	// Jobs that have not finished, each pair once (in any order): all the
	// share tree reads of Jobs to find users (discoverUsers). The daemon
	// keeps them for its submission checks, which otherwise scanned every
	// job for every submission. nil: found from Jobs.
	JobUsers []JobUser
	// Ports is MpiParams=ports=LO-HI: the ports every node lends its jobs
	// (ports.go); zero for none.
	Ports PortRange
}

// Node is one machine: its CPUs, host memory and GPUs.
type Node struct {
	Name string
	// CPUs are numbered 0..CPUs-1; jobs get specific ids so the daemon can
	// pin them.
	CPUs int
	// Mem is the host memory jobs may use, in bytes.
	Mem  int64
	GPUs []GPU
	// Drained nodes take no new work.
	Drained bool
}

// GPU is one card as the inventory last saw it.
type GPU struct {
	// UUID is the card's identity: indices shift when a card drops off the
	// bus, UUIDs do not. Allocations name GPUs by UUID.
	UUID  string
	Index int
	// Type is the configured or model-derived name, e.g. "a100" or
	// "nvidia_a100-sxm4-80gb". A requested type matches when it is a
	// substring of it, as Slurm matches gres types.
	Type     string
	TotalMem int64
	// FreeMem is what the driver says is free: every process counts,
	// including processes the scheduler did not start.
	FreeMem int64
	// ForeignMem is held by processes the scheduler did not start. A GPU
	// with more than Config.ForeignMemSlack of it is never given whole.
	ForeignMem int64
	// NVLinkPeers are the UUIDs of GPUs linked to this one by NVLink.
	NVLinkPeers []string
	// Drained GPUs take no new work.
	Drained bool
}

// PreemptMode is a partition's PreemptMode.
type PreemptMode string

// Preempt modes this project implements.
const (
	PreemptOff     PreemptMode = "OFF"
	PreemptRequeue PreemptMode = "REQUEUE"
)

// Partition is a Slurm partition.
type Partition struct {
	Name    string
	Default bool
	// Nodes the partition covers; empty means every node.
	Nodes []string
	// PriorityTier orders jobs before priority does (Slurm's default is 1).
	PriorityTier int
	// PriorityJobFactor feeds the partition factor (Slurm's default is 1).
	PriorityJobFactor int
	// MaxTime is the longest limit a job may ask for: 0 or Unlimited for none.
	MaxTime time.Duration
	// DefaultTime is the limit of a job that asked for none: 0 for none.
	DefaultTime time.Duration
	PreemptMode PreemptMode
	// Down: its jobs do not start (State DOWN or INACTIVE).
	Down bool
	// Closed: it takes no new jobs (State DRAIN or INACTIVE); CheckSubmit
	// refuses them, as slurmctld does.
	Closed bool
	// AllowAccounts are the accounts whose jobs CheckSubmit admits; empty
	// for all.
	AllowAccounts []string
	// QOS is the partition's QOS (slurm.conf's QOS=): its limits hold for
	// every job of the partition, before those of the job's own QOS; ""
	// for none.
	QOS string
	// Billing holds the TRESBillingWeights; nil means a GPU counts 1.
	Billing *TRESWeights
}

// TRESWeights are a partition's TRESBillingWeights.
type TRESWeights struct {
	CPU float64
	// MemGiB weighs host memory per GiB (Slurm's Mem=0.25G).
	MemGiB float64
	// GPU weighs one whole GPU; a job sharing a GPU counts the fraction of
	// the GPU's memory it reserved.
	GPU float64
}

// QOS is a quality of service with its per-user limits. Limits of 0 mean
// none.
type QOS struct {
	Name     string
	Priority int
	// UsageFactor multiplies the usage charged to fair share. Slurm's default
	// is 1; 0 makes the QOS's work free (filler work).
	UsageFactor float64
	// MaxGPUsPerUser is MaxTRESPerUser=gres/gpu=N: whole GPUs a user's
	// running jobs in this QOS may hold together.
	MaxGPUsPerUser int
	// PerUser are MaxTRESPerUser's other TRES: CPUs, memory (bytes),
	// nodes and billing a user's running jobs may hold together.
	PerUser TRESLimits
	// PerJob is MaxTRESPerJob: what one job may ask for (GPUs whole).
	PerJob TRESLimits
	// MaxWall is MaxWall: the longest time limit of a job; 0 for none. A
	// job that gives no limit gets at most this one.
	MaxWall time.Duration
	// MaxJobsPerUser caps a user's running jobs in this QOS.
	MaxJobsPerUser int
	// MaxSubmitJobsPerUser caps a user's pending and running jobs in this QOS;
	// submissions beyond it are refused.
	MaxSubmitJobsPerUser int
	// GrpTRESMins is a budget of TRES-minutes for all the QOS's jobs,
	// checked against Snapshot.QOSUsage; NoDecay keeps that usage from
	// decaying (quota.go).
	GrpTRESMins TRESMins
	NoDecay     bool
	// DenyOnLimit refuses at submission a job over a per-job limit (or a
	// per-user limit on its own), instead of leaving it pending with the
	// limit as its reason (the QOS flag DenyOnLimit).
	DenyOnLimit bool
}

// TRESLimits are a QOS's limits on TRES; 0 is no limit.
type TRESLimits struct {
	CPUs    int
	Mem     int64 // bytes
	Nodes   int
	Billing int
	GPUs    int // whole GPUs (per job only: per user is MaxGPUsPerUser)
}

// Account is a node of the fair-share tree.
type Account struct {
	Name string
	// Parent is the parent account; "" and "root" both mean the root. The
	// account named "root" is the root itself: its users hang from the top.
	Parent string
	// Shares are the account's RawShares among its siblings.
	Shares int
	// Priority is the association's Priority (sacctmgr's), for the
	// association factor; 0 inherits the parent's, as an association
	// without one does in Slurm.
	Priority int
	Users    []UserShare
	// GrpTRESMins is the account's budget of TRES-minutes (quota.go).
	GrpTRESMins TRESMins
	// GrpTRES caps what the running jobs of the account and those under
	// it hold together; GrpTRESRunMins their TRES × time left to their
	// limits; MaxTRESMinsPerJob one job's TRES × time limit (inherited by
	// the accounts under it); MaxJobs the running jobs of each user
	// association under it that sets none (assoclimits.go). Zero: none.
	GrpTRES           TRESMins
	GrpTRESRunMins    TRESMins
	MaxTRESMinsPerJob TRESMins
	MaxJobs           int
}

// UserShare is a user's association with an account.
type UserShare struct {
	Name   string
	Shares int
	// Priority is the association's Priority; 0 inherits the account's.
	Priority int
	// Default makes this the user's default account (Slurm's
	// DefaultAccount), charged by jobs that name none. Without one, the
	// first account listing the user is the default.
	Default bool
	// MaxJobs caps the association's running jobs; 0 takes the
	// account's (AssocMaxJobsLimit).
	MaxJobs int
}

// Usage is an association's decayed usage.
type Usage struct {
	Account string
	// User is "" for usage charged to the account itself, such as usage of
	// associations since removed.
	User string
	// Raw is in TRES-billing seconds as of AsOf; the pass decays it to Now.
	Raw  float64
	AsOf time.Time
}

// Calc is a fair-share recalculation: when it was made, and every
// association's usage as of then (one record each, AsOf At).
type Calc struct {
	At    time.Time
	Usage []Usage
}

// Hold is a job's hold.
type Hold int

// Holds: an owner's hold (scontrol hold by the owner, sbatch --hold) and an
// operator's.
const (
	HoldNone Hold = iota
	HoldUser
	HoldAdmin
)

// Job is one job, or one task of an array job.
type Job struct {
	ID uint32
	// ArrayJobID is the array's id for a task, 0 otherwise.
	ArrayJobID  uint32
	ArrayTaskID int
	// ArrayLimit is the %N throttle: at most N tasks of the array run at once.
	ArrayLimit int
	// ArrayTasks are the task ids a submission asks for (CheckSubmit only).
	ArrayTasks []int

	Name      string
	User      string
	Account   string // "" for the user's default account
	Partition string // "" for the default partition
	QOS       string // "" for none
	// Reservation is the reservation the job runs in (--reservation, or
	// one a MAGNETIC reservation drew it into); "" for none.
	Reservation string

	State    slurm.JobState
	ExitCode int

	Submit time.Time
	// Eligible is when the job became eligible (submitted, hold released,
	// dependency met, begin time reached): sacct's Eligible, and where age
	// counts from. Zero until then (Plan.Eligible reports it); a job
	// without one that waits on nothing counts age from max(Submit,
	// Begin). A job requeued by a yield keeps its old value.
	Eligible time.Time
	Begin    time.Time // --begin; zero for none
	Start    time.Time // running jobs

	// TimeLimit is the requested limit: 0 for none (the partition's
	// DefaultTime applies, else its MaxTime), or Unlimited.
	TimeLimit time.Duration
	Hold      Hold
	Nice      int
	Deps      Dependency
	Req       Request
	// Alloc is what a running job holds.
	Alloc Alloc

	// Yieldable jobs may be shrunk or stopped by the yield protocol.
	Yieldable bool
	// Resumed marks a job requeued by a yield, pending or running again:
	// pending, it is ordered ahead of ordinary work of equal tier;
	// running, the scheduler's own stops spare it until it has run its
	// minimum (Config.YieldMinRun, or CheckpointInterval when longer).
	Resumed bool
	// CheckpointInterval is how often the job said it saves a checkpoint,
	// counted from its start (#SLITE --checkpoint-interval); 0 when it
	// did not say.
	CheckpointInterval time.Duration
	// YieldedFor, on a pending job requeued by a yield, is the job it was
	// stopped for. While both are pending, that job is ordered ahead of
	// it, so that the yielded job does not take back what it gave up.
	YieldedFor uint32
	// FullGPUs, on a job a shrink left with fewer GPUs, is how many it
	// had before (for Config.ShrinkRegrow); 0 otherwise.
	FullGPUs int
	// FixedPriority, when not 0, replaces the computed priority: set by an
	// operator, or kept across a yield.
	FixedPriority uint32
}

// Request is what a job asks for on one node.
type Request struct {
	// GPUs is the number of whole GPUs, or with GPUMem the number of GPUs to
	// share (0 means 1).
	GPUs int
	// GPUType is a hard constraint ("a100"); "" for any.
	GPUType string
	// GPUMem is the peak GPU memory per GPU (--gpu-mem, or shard:N times
	// ShardSize). Non-zero makes the job share GPUs instead of owning them.
	GPUMem int64
	// CPUs is the total CPUs (ntasks × cpus-per-task); 0 means 1.
	CPUs int
	// Mem is the host memory in bytes; 0 for none.
	Mem int64
	// Tasks is the job's task count (-n), which sets how many of the
	// node's ports (Snapshot.Ports) it holds while it runs, unless
	// PortsAsked: then Ports is that count (srun --resv-ports=N).
	// JobPorts says how many.
	Tasks      int
	Ports      int
	PortsAsked bool
}

// Alloc is where a job runs and what it holds there.
type Alloc struct {
	Node string
	GPUs []GPUAlloc
	CPUs []int
	Mem  int64
	// Ports are the ports of Snapshot.Ports the job holds on Node,
	// ascending.
	Ports []int
	// More are the further nodes of a job larger than one node, each taken
	// whole; empty on the daemon's one machine.
	More []Alloc
}

// GPUAlloc is one GPU of an allocation.
type GPUAlloc struct {
	UUID  string
	Index int
	// Mem is the GPU memory reserved on a shared GPU; 0 for a whole GPU.
	Mem int64
	// Used is what the job's processes hold on it now, as last sampled.
	Used int64
}

// Dependency is a parsed --dependency.
type Dependency struct {
	Items []DepItem
	// Any is true for '?'-separated lists: one satisfied item suffices.
	Any bool
}

// DepType is a dependency kind.
type DepType string

// Dependency kinds.
const (
	DepAfter      DepType = "after"
	DepAfterAny   DepType = "afterany"
	DepAfterOK    DepType = "afterok"
	DepAfterNotOK DepType = "afternotok"
	DepSingleton  DepType = "singleton"
)

// DepItem is one dependency: a job, an array task, or a whole array.
type DepItem struct {
	Type  DepType
	JobID uint32
	// Task is the array task; -1 means the whole job or array.
	Task int
	// Delay is after:ID+MIN's time: the item holds Delay after the job
	// started (for a whole array, after its last task started).
	Delay time.Duration
}

// Plan is what one pass decided.
type Plan struct {
	// Starts are the jobs to start now, in the order they were decided.
	Starts []Start
	// Preempts are running jobs to stop (yield protocol, then requeue) so
	// that a job of a higher PriorityTier can start.
	Preempts []Preempt
	// Shrinks are running yieldable jobs to requeue with fewer GPUs.
	Shrinks []Shrink
	// Grows are running shrunk jobs to requeue at their full size
	// (Config.ShrinkRegrow); For is 0.
	Grows []Shrink
	// Pending has one decision for every pending job not started, in
	// scheduling order.
	Pending []Decision
	// Eligible are the pending jobs (started ones included) that have no
	// Eligible time and are eligible now: the caller records the time, as
	// slurmctld records a job's eligible time (its begin_time) the first
	// time it finds it independent.
	Eligible []Eligibility
}

// Eligibility is when a job became eligible.
type Eligibility struct {
	JobID uint32
	At    time.Time
}

// Start is a job to start now.
type Start struct {
	JobID uint32
	Alloc Alloc
	// TimeLimit is the effective limit, the partition's default applied.
	TimeLimit time.Duration
	Priority  uint32
	// Backfilled is true when a higher job was blocked at the time
	// (Slurm's Scheduler=Backfill as opposed to Main).
	Backfilled bool
	// Reservation is the MAGNETIC reservation a job that named none was
	// started in; "" otherwise.
	Reservation string
}

// Preempt is a running job to stop for another.
type Preempt struct {
	JobID uint32
	For   uint32
}

// Shrink is a running job to requeue with fewer GPUs.
type Shrink struct {
	JobID    uint32
	FromGPUs int
	ToGPUs   int
	For      uint32
	// TimeLimit is the job's limit when it runs again: a shrunk job's
	// stretched by FromGPUs/ToGPUs (it works that much slower), up to its
	// partition's MaxTime, so that the shrink alone does not make it time
	// out; a regrown job's brought back to its limit at full size. 0 for
	// a job without a limit (it keeps none).
	TimeLimit time.Duration
}

// Decision is why a pending job does not start, and when it is expected to.
type Decision struct {
	JobID uint32
	// Reason is Slurm's word, as squeue's %R prints it.
	Reason slurm.Reason
	// Detail explains with numbers, for scontrol show job.
	Detail string
	// StateDesc is the text Slurm itself prints instead of the reason word in
	// some cases ("Nodes required for job are DOWN, DRAINED or reserved for
	// jobs in higher priority partitions"); "" otherwise.
	StateDesc string
	Priority  uint32
	// ExpectedStart is when the plan expects the job to start; zero when
	// unknown (squeue --start prints N/A).
	ExpectedStart time.Time
	// SchedNode is the node the plan reserved for it (squeue's SCHEDNODES).
	SchedNode string
	// DepReason is what the job's dependencies alone make of it, whatever
	// Reason says (a held job's dependencies still show their state in
	// scontrol show job): ReasonDependency while one is waited on,
	// ReasonDependencyNeverSatisfied when they can no longer be met, ""
	// when the job has none or they are met.
	DepReason slurm.Reason
}

// JobUsersOf is Snapshot.JobUsers for jobs: the user and account of each
// job that has not finished, each pair once, in the order first found.
func JobUsersOf(jobs []Job) []JobUser {
	out := []JobUser{}
	seen := map[JobUser]bool{}
	for i := range jobs {
		j := &jobs[i]
		k := JobUser{j.User, j.Account}
		if j.State.Finished() || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}
