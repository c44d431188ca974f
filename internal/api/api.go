// Package api is the vocabulary slurmd-lite and its commands share over the
// local socket (internal/localapi): the paths of the handler table and the
// JSON bodies that travel on them. Both sides are built from one tree, so
// the types change together; a change that an older command could not read
// gets a /v2/ path beside the /v1/ one.
package api

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The handler table's paths.
const (
	PathJobs       = "/v1/jobs"         // POST: submit; GET: list (squeue, scontrol)
	PathCancel     = "/v1/jobs/cancel"  // POST: scancel
	PathControl    = "/v1/jobs/control" // POST: hold, release, requeue
	PathAccounting = "/v1/accounting"   // GET: sacct
	PathNode       = "/v1/node"         // GET: the node and its GPUs
	PathPing       = "/v1/ping"         // GET: is the daemon there
	PathConfig     = "/v1/config"       // GET: the configuration in force (scontrol show config/partition, sacctmgr)
	PathShares     = "/v1/shares"       // GET: the fair-share tree (sshare)
	PathPriorities = "/v1/priorities"   // GET: pending jobs' priority factors (sprio)
	PathToken      = "/v1/token"        // POST: scontrol token (auth/jwt)
)

// TokenRequest is scontrol token's: lifespan=SECONDS (0: the default) and
// username=NAME (root's only, for another user).
type TokenRequest struct {
	Lifespan int64  `json:"lifespan,omitempty"`
	Username string `json:"username,omitempty"`
}

// Token answers a TokenRequest: the JWT that scontrol prints as SLURM_JWT=.
type Token struct {
	Token string `json:"token"`
}

// Submit is a batch job as sbatch sends it: the parsed request (script
// included), and what sbatch knows of its caller's session that the job
// inherits.
type Submit struct {
	Request jobscript.Request `json:"request"`
	// Env is sbatch's environment, "NAME=value".
	Env []string `json:"env"`
	// Cwd is sbatch's working directory: SLURM_SUBMIT_DIR, and the job's
	// working directory unless --chdir says otherwise.
	Cwd string `json:"cwd"`
	// Umask and Rlimits are the submitter's, which the job runs with.
	Umask   *uint32           `json:"umask,omitempty"`
	Rlimits map[string]uint64 `json:"rlimits,omitempty"`
	// TestOnly asks when the job would start, creating nothing.
	TestOnly bool `json:"test_only,omitempty"`
}

// Submitted answers a Submit: the job id, or for --test-only the estimate
// sbatch prints.
type Submitted struct {
	JobID uint32 `json:"job_id"`
	// Notes are lines sbatch prints on stderr as errors before success or
	// failure (Slurm's controller messages).
	Notes []string `json:"notes,omitempty"`

	Start     time.Time `json:"start,omitzero"`
	Node      string    `json:"node,omitempty"`
	CPUs      int       `json:"cpus,omitempty"`
	Partition string    `json:"partition,omitempty"`
	// Hint, for --test-only with no start time, says why: the reason the
	// job would pend with, and its numbers (sbatch prints it as a
	// "slurm-lite:" line after Slurm's).
	Hint string `json:"hint,omitempty"`
}

// Job is a job as squeue and scontrol show it: the stored record plus what
// only the live daemon knows (priority, the scheduler's reason and expected
// start, the limit in force, the files it writes to).
type Job struct {
	jobrec.Job
	// Priority is the job's priority as sprio computes it (0 when held).
	Priority uint32 `json:"priority"`
	// ReasonDetail explains the reason with numbers, for scontrol show job.
	ReasonDetail string `json:"reason_detail,omitempty"`
	// StateDesc replaces the reason word where Slurm prints a sentence.
	StateDesc string `json:"state_desc,omitempty"`
	// DepReason is what the job's dependencies alone make of it, whatever
	// its reason (a held job's too): slurm.ReasonDependency while one is
	// waited on, slurm.ReasonDependencyNeverSatisfied when they can no
	// longer be met, "" when it has none, they are met, or the scheduler
	// has not looked at the job yet.
	DepReason slurm.Reason `json:"dep_reason,omitempty"`
	// MemAll is the request's --mem=0 (all of the node's memory), which
	// gob loses on the way: a pointer to zero travels as nil.
	MemAll bool `json:"mem_all,omitempty"`
	// ExpectedStart is squeue --start's START_TIME; zero is N/A.
	ExpectedStart time.Time `json:"expected_start,omitzero"`
	// Limit is the time limit in force (the partition's DefaultTime applied).
	Limit time.Duration `json:"limit"`
	// ArrayTasks is the pending record's tasks as squeue prints them
	// inside A_[...] ("0-3%2"); "" for other rows.
	ArrayTasks string `json:"array_tasks,omitempty"`
	// NumCPUs and NumTasks as scontrol prints them.
	NumCPUs  int `json:"num_cpus"`
	NumTasks int `json:"num_tasks"`
	// Command, WorkDir and the standard files, expanded as scontrol shows
	// them.
	Command string `json:"command"`
	WorkDir string `json:"work_dir"`
	StdOut  string `json:"std_out"`
	StdErr  string `json:"std_err"`
	StdIn   string `json:"std_in"`
}

// Cancel is scancel's request. Jobs name jobs or array tasks ("12",
// "12_3", "12_[1-3]"); the filters narrow them, or select jobs on their own
// when Jobs is empty.
type Cancel struct {
	Jobs      []string         `json:"jobs,omitempty"`
	User      string           `json:"user,omitempty"`
	Partition string           `json:"partition,omitempty"`
	Name      string           `json:"name,omitempty"`
	States    []slurm.JobState `json:"states,omitempty"`
	// Signal, when not 0, is sent instead of cancelling; Batch sends it
	// to the batch shell alone (scancel -b), Full to every process.
	Signal int  `json:"signal,omitempty"`
	Batch  bool `json:"batch,omitempty"`
	Full   bool `json:"full,omitempty"`
}

// Result is what happened to one job of a Cancel or Control request.
type Result struct {
	Job string `json:"job"`
	// Code is Slurm's errno (0 for success), Error its words.
	Code  slurm.Errno `json:"code,omitempty"`
	Error string      `json:"error,omitempty"`
	// Hint is slurm-lite's line after Slurm's, when it has one: what
	// happened in the user's terms and what to do.
	Hint string `json:"hint,omitempty"`
}

// Results answers a Cancel or Control request, job by job.
type Results struct {
	Results []Result `json:"results"`
}

// Control actions of scontrol.
const (
	ActionHold    = "hold"
	ActionRelease = "release"
	ActionRequeue = "requeue"
)

// Control is scontrol hold, release or requeue of jobs.
type Control struct {
	Action string   `json:"action"`
	Jobs   []string `json:"jobs"`
}

// Node is the machine as scontrol show node and sinfo show it.
type Node struct {
	Name     string    `json:"name"`
	CPUs     int       `json:"cpus"`
	AllocCPU int       `json:"alloc_cpus"`
	MemoryMB int64     `json:"memory_mb"`
	AllocMem int64     `json:"alloc_mem_mb"`
	Gres     string    `json:"gres"`
	GresUsed string    `json:"gres_used"`
	State    string    `json:"state"`
	Reason   string    `json:"reason,omitempty"`
	Comment  string    `json:"comment,omitempty"`
	Boot     time.Time `json:"boot"`
	GPUs     []GPU     `json:"gpus"`
}

// GPU is one GPU of the node as the inventory last saw it.
type GPU struct {
	Index       int       `json:"index"`
	UUID        string    `json:"uuid"`
	Type        string    `json:"type"`
	Model       string    `json:"model"`
	MemoryTotal uint64    `json:"memory_total"`
	MemoryUsed  uint64    `json:"memory_used"`
	Foreign     uint64    `json:"foreign"`
	Utilization int       `json:"utilization"`
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
	Jobs        []uint32  `json:"jobs,omitempty"`
	Processes   []Process `json:"processes,omitempty"`
	// JobNames are Jobs as squeue names them ("4_2" for an array task),
	// in the same order; sinfo -G prints these.
	JobNames []string `json:"job_names,omitempty"`
}

// Process is a process on a GPU. JobID is the job it belongs to as squeue
// names it ("4_2" for an array task), "" for none.
type Process struct {
	PID    int    `json:"pid"`
	User   string `json:"user,omitempty"`
	Memory uint64 `json:"memory"`
	JobID  string `json:"job_id,omitempty"`
}

// Config is the configuration in force, with what only the running daemon
// knows.
type Config struct {
	Config *config.Config `json:"config"`
	// Path is the file it was read from; "" for built-in defaults.
	Path string `json:"path"`
	// Boot is when the daemon started.
	Boot time.Time `json:"boot"`
	// GPUs says where the GPUs come from and what they are (the node's
	// Comment): "GPUs: simulated (4 x a100 80G)".
	GPUs string `json:"gpus"`
	// ImplicitUsers hold the implicit account's association (no accounts
	// configured, or AllowUnlistedUsers): root with no accounts, the users
	// the daemon has seen, and the caller. sacctmgr lists them.
	ImplicitUsers []string `json:"implicit_users,omitempty"`
	// Cgroups is where the daemon puts job cgroups and whether they can
	// enforce --mem; nil from a daemon that does not say.
	Cgroups *Cgroups `json:"cgroups,omitempty"`
}

// Cgroups is what the daemon found of cgroups at its start: the cgroup
// job cgroups go under ("" for none), the controllers they get, and
// whether memory is one (--mem, --mem-per-cpu and --mem-per-gpu
// enforced); when not, Problem says why and Fix what to do.
type Cgroups struct {
	Base        string   `json:"base,omitempty"`
	Controllers []string `json:"controllers,omitempty"`
	Memory      bool     `json:"memory"`
	Problem     string   `json:"problem,omitempty"`
	Fix         string   `json:"fix,omitempty"`
}

// ShareRow is one line of sshare -l: an account, or a user's association
// with an account (User set).
type ShareRow struct {
	Account      string  `json:"account"`
	User         string  `json:"user,omitempty"`
	Depth        int     `json:"depth"`
	RawShares    int     `json:"raw_shares"`
	NormShares   float64 `json:"norm_shares"`
	RawUsage     float64 `json:"raw_usage"`
	NormUsage    float64 `json:"norm_usage"`
	EffectvUsage float64 `json:"effectv_usage"`
	FairShare    float64 `json:"fair_share"`
	// LevelFS is Fair Tree's level fair share; JSON has no infinity, so
	// LevelFSInf says "infinite" (no usage yet) and LevelFSNone "none"
	// (the root, or classic fair share).
	LevelFS     float64 `json:"level_fs"`
	LevelFSInf  bool    `json:"level_fs_inf,omitempty"`
	LevelFSNone bool    `json:"level_fs_none,omitempty"`
}

// PriorityRow is one line of sprio -l: a pending job (or array task) and
// each weighted factor of its priority.
type PriorityRow struct {
	// JobID is as sprio prints it: "12", or "12_3" for an array task.
	JobID         string  `json:"job_id"`
	Partition     string  `json:"partition"`
	User          string  `json:"user"`
	Account       string  `json:"account"`
	Priority      uint32  `json:"priority"`
	Site          float64 `json:"site"`
	Age           float64 `json:"age"`
	Assoc         float64 `json:"assoc"`
	FairShare     float64 `json:"fair_share"`
	JobSize       float64 `json:"job_size"`
	PartitionPrio float64 `json:"partition_prio"`
	QOSPrio       float64 `json:"qos_prio"`
	QOS           string  `json:"qos"`
	Nice          int     `json:"nice"`
	// TRES are the weighted TRES factors that are not 0, in
	// PriorityWeightTRES's order.
	TRES []PriorityTRES `json:"tres,omitempty"`
}

// PriorityTRES is one TRES's part of a job's priority.
type PriorityTRES struct {
	Name string `json:"name"`
	// Weight is its PriorityWeightTRES weight; Value is the weight times
	// the factor (sprio -n prints Value/Weight).
	Weight float64 `json:"weight"`
	Value  float64 `json:"value"`
}
