package web

import (
	"context"
	"time"
)

// Source is what the listener reads: the daemon's last published state,
// taken without the scheduling loop's locks (the daemon implements it
// from its published view, the store's cache and the last GPU sample).
// A scrape or a page load costs the loop nothing.
type Source interface {
	State(ctx context.Context) (*State, error)
	// Usage is the month (its first day; zero: this month, by the
	// source's clock) by account and user.
	Usage(ctx context.Context, month time.Time) (*Usage, error)
}

// State is the box at one moment as the anonymous viewer may see it:
// what /metrics and /api/dashboard serve. Times are Unix seconds (0:
// none), sizes bytes. It carries no job's script, environment, --wrap
// command or output paths; under PrivateData "jobs" (Private) no job at
// all, only counts (States, CPUsAlloc, MemAlloc, the GPUs' InUse and
// MemReserved), as sinfo shows them to everyone.
type State struct {
	Time    int64  `json:"time"`
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	// NodeState is sinfo's: IDLE, MIXED, ALLOCATED, DRAINED, ...
	NodeState string `json:"node_state"`
	CPUs      int    `json:"cpus"`
	CPUsAlloc int    `json:"cpus_alloc"`
	Mem       int64  `json:"mem"`
	MemAlloc  int64  `json:"mem_alloc"`
	// Private is PrivateData "jobs": this viewer sees no one's jobs.
	// Jobs, the GPUs' Jobs and Events leave them out; the counts count
	// them.
	Private bool `json:"private"`

	GPUs []GPU `json:"gpus"`
	// Jobs are the jobs not finished that the viewer sees: running ones
	// in id order, then the queue in priority order (the order the next
	// pass considers them).
	Jobs []Job `json:"jobs"`
	// QueueHidden is how many pending jobs /api/dashboard left out past
	// the first PageQueue (the metrics count them all).
	QueueHidden int `json:"queue_hidden"`
	// States counts the jobs of the last MinJobAge by state, finished
	// ones included (as squeue lists them): PENDING, RUNNING, ...; seen
	// or not.
	States map[string]int `json:"states"`
	Shares []Share        `json:"shares"`
	// Events are the newest audit events the viewer sees, newest last.
	Events []Event `json:"events"`
	Sched  Sched   `json:"sched"`
	// Yields and Preemptions count those since the daemon started.
	Yields      uint64 `json:"yields"`
	Preemptions uint64 `json:"preemptions"`
	// GPUSeconds are the GPU-seconds each account's jobs have held, every
	// run ever recorded, running ones up to now.
	GPUSeconds map[string]float64 `json:"gpu_seconds"`
	// Reservations are the advance reservations, by start: what they
	// hold and when, not for whom (user names may be private).
	Reservations []Reservation `json:"reservations"`
	// Budgets are the accounts with a GrpTRESMins on gres/gpu: the
	// GPU-minutes used (as the limit counts them) and the limit.
	Budgets []Budget `json:"budgets,omitempty"`
}

// Reservation is one advance reservation as the dashboard shows it.
type Reservation struct {
	Name string `json:"name"`
	// Start and End are the window in force or next (Unix seconds).
	Start  int64 `json:"start"`
	End    int64 `json:"end"`
	Active bool  `json:"active"`
	// GPUs it holds; the whole node's for a node reservation.
	GPUs  int    `json:"gpus"`
	Flags string `json:"flags"`
}

// Budget is an account's GPU-minute budget (GrpTRESMins=gres/gpu=N).
type Budget struct {
	Account string  `json:"account"`
	Used    float64 `json:"gpu_minutes_used"`
	Limit   int64   `json:"gpu_minutes_limit"`
	// Resets is when usage is next cleared (Unix seconds), 0 for never.
	Resets int64 `json:"resets,omitempty"`
}

// GPU is one GPU as last sampled.
type GPU struct {
	// Index is the GPU's CUDA index (PCI bus order), NVMLIndex NVML's and
	// DCGM's.
	Index     int    `json:"index"`
	NVMLIndex int    `json:"nvml_index"`
	UUID      string `json:"uuid"`
	Type      string `json:"type"`
	Model     string `json:"model"`
	// State is UP, DRAINED or LOST; Reason says why it is not UP.
	State    string `json:"state"`
	Reason   string `json:"reason,omitempty"`
	MemTotal uint64 `json:"mem_total"`
	MemUsed  uint64 `json:"mem_used"`
	// MemReserved is what the jobs on it were given: the whole GPU for a
	// whole-GPU job, the job's --gpu-mem on a shared one.
	MemReserved uint64 `json:"mem_reserved"`
	// Util is the percentage of time a kernel ran; -1 when unknown.
	Util int `json:"util"`
	// InUse is whether a job holds it, seen or not.
	InUse bool `json:"in_use"`
	// Jobs are the jobs on it that the viewer sees.
	Jobs []GPUJob `json:"jobs"`
}

// GPUJob is a job on a GPU.
type GPUJob struct {
	ID      string `json:"id"`
	User    string `json:"user,omitempty"`
	Account string `json:"account"`
	Name    string `json:"name,omitempty"`
	Start   int64  `json:"start"`
	// End is when its time limit ends it; 0 for none.
	End int64 `json:"end"`
	// Mem is what it reserved on a shared GPU; 0 for the whole GPU.
	Mem uint64 `json:"mem"`
}

// Job is a job not finished.
type Job struct {
	ID        string `json:"id"`
	User      string `json:"user,omitempty"`
	Account   string `json:"account"`
	Partition string `json:"partition"`
	Name      string `json:"name,omitempty"`
	// State is Slurm's: PENDING, RUNNING, SUSPENDED, COMPLETING.
	State string `json:"state"`
	// Reason is squeue's word; Why says it for people, with the numbers
	// where the scheduler gave them.
	Reason   string `json:"reason"`
	Why      string `json:"why"`
	Priority uint32 `json:"priority"`
	CPUs     int    `json:"cpus"`
	GPUs     int    `json:"gpus"`
	// GPUMem is --gpu-mem (bytes per GPU), 0 for whole GPUs.
	GPUMem uint64 `json:"gpu_mem"`
	Submit int64  `json:"submit"`
	Start  int64  `json:"start"`
	// ExpectedStart is the backfill plan's start for a pending job; 0
	// when the plan has none.
	ExpectedStart int64 `json:"expected_start"`
	// Limit is the time limit in seconds; 0 for none.
	Limit int64 `json:"limit"`
}

// Share is one row of the fair-share tree (sshare's).
type Share struct {
	Account string `json:"account"`
	// User is "" for the account's own row.
	User       string  `json:"user,omitempty"`
	Depth      int     `json:"depth"`
	RawShares  int     `json:"raw_shares"`
	NormShares float64 `json:"norm_shares"`
	RawUsage   float64 `json:"raw_usage"`
	EffUsage   float64 `json:"eff_usage"`
	// LevelFS is sshare -l's: NormShares / EffectvUsage, how the row
	// stands among its siblings (above 1: under its share); null where
	// sshare prints inf (no usage yet) or nothing (root). Fair Tree ranks
	// accounts by it: an account has no FairShare of its own.
	LevelFS *float64 `json:"level_fs"`
	// FairShare is a user's factor (0 on an account's row, which has
	// none: sshare leaves it blank).
	FairShare float64 `json:"fairshare"`
}

// Event is one line of the audit trail: the node's and the GPUs' are
// everyone's, a job's only its viewers'.
type Event struct {
	Time int64 `json:"time"`
	// Who is the user who acted (slurmd-lite for the daemon itself).
	Who    string `json:"who"`
	Action string `json:"action"`
	// JobID is the job's own id (what it runs under); ID names it as
	// squeue does: 16_2 for an array task, 16_* for an array's pending
	// tasks together.
	JobID uint32 `json:"job,omitempty"`
	ID    string `json:"id,omitempty"`
	// GPU is the GPU's index, or its UUID when it is no longer present.
	GPU    string `json:"gpu,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Sched is the scheduling loop's cost, as sdiag reports Slurm's.
type Sched struct {
	// Cycles are the passes since the daemon started.
	Cycles uint64 `json:"cycles"`
	// LastCycle and MeanCycle are microseconds of planning.
	LastCycle float64 `json:"last_cycle_us"`
	MeanCycle float64 `json:"mean_cycle_us"`
	// CyclesPerMinute is Cycles over the minutes since the start.
	CyclesPerMinute float64 `json:"cycles_per_minute"`
	// Backfill is true under sched/backfill, where each pass plans the
	// backfill too.
	Backfill bool `json:"backfill"`
	// Depth is the mean number of pending jobs a pass considered.
	Depth float64 `json:"depth"`
}
