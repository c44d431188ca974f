package api

import (
	"fmt"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The paths of job steps (srun inside a job) and interactive allocations
// (srun and salloc outside one).
const (
	// PathSteps: POST StepRequest, answer Step: create a step of a
	// running job. GET ?job=N answers JobEnding.
	PathSteps = "/v1/steps"
	// PathStepsEnd: POST StepEnd: a step's tasks are all gone.
	PathStepsEnd = "/v1/steps/end"
	// PathAlloc: POST AllocRequest, answer Allocation (the job id, pending):
	// submit an interactive job. GET ?job=N[&wait=SECONDS] answers
	// Allocation once the job runs (or ended, or the wait is over); the
	// first such answer to the job's owner adopts the caller into the job.
	PathAlloc = "/v1/alloc"
	// PathAllocEnd: POST AllocEnd: the interactive command ended.
	PathAllocEnd = "/v1/alloc/end"
)

// StepRequest asks for a step of a running job: srun's -n, -c, --exact,
// --overlap, --mem and --gpus.
type StepRequest struct {
	JobID uint32 `json:"job_id"`
	// NTasks is -n; 0 lets the daemon derive it from the job's CPUs and
	// CPUsPerTask (-c without -n: as many tasks as fit).
	NTasks      int `json:"ntasks,omitempty"`
	CPUsPerTask int `json:"cpus_per_task,omitempty"`
	// Overcommit (-O) allows more than one task per CPU.
	Overcommit bool `json:"overcommit,omitempty"`
	// Exact steps hold only the CPUs they ask for; other steps hold every
	// CPU of the job. Overlap steps hold nothing and share everything.
	Exact   bool `json:"exact,omitempty"`
	Overlap bool `json:"overlap,omitempty"`
	// MemMB is --mem (MiB on the node); 0 when not given.
	MemMB uint64 `json:"mem_mb,omitempty"`
	// GPUSpec is srun's GPU options (its SLURM_GPUS* input variables, then
	// its command line); nil when none was given, and the step asks what
	// its job asked for. An empty one asks for no GPU (--gpus=0).
	GPUSpec *jobscript.GPUSpec `json:"gpu_spec,omitempty"`
	// GPUs is what an srun of an earlier version sends for --gpus: -1
	// when not given; read only without GPUSpec.
	GPUs int `json:"gpus"`
	// Name is the step's name in accounting: -J, or the command's name.
	Name string `json:"name"`
	// Wait holds the request until the step fits, the job ends, or
	// WaitSeconds pass (then the answer is the busy refusal again).
	Wait        bool `json:"wait,omitempty"`
	WaitSeconds int  `json:"wait_seconds,omitempty"`
	// Join is srun --jobid from outside the job: the daemon moves the
	// caller into the job's cgroup (where it has one) and answers with the
	// job's environment built over Env.
	Join bool     `json:"join,omitempty"`
	Env  []string `json:"env,omitempty"`
	// ResvPorts is --resv-ports=N (SLURM_RESV_PORTS); nil when not given.
	ResvPorts *int `json:"resv_ports,omitempty"`
}

// Validate refuses what no srun sends.
func (r StepRequest) Validate() error {
	switch {
	case r.JobID == 0:
		return fmt.Errorf("no job id")
	case r.NTasks < 0 || r.CPUsPerTask < 0:
		return fmt.Errorf("negative task or CPU count")
	case r.GPUs < -1:
		return fmt.Errorf("negative GPU count")
	}
	return nil
}

// Step is a created step: its id and what it holds.
type Step struct {
	JobID  uint32 `json:"job_id"`
	StepID int    `json:"step_id"`
	// Run is the job's run (its Restarts) the step belongs to.
	Run    int `json:"run"`
	NTasks int `json:"ntasks"`
	// CPUs are the CPU ids the step holds (all the job's for a step that
	// is not exact); GPUs the GPU indices it may use.
	CPUs []int `json:"cpus"`
	GPUs []int `json:"gpus,omitempty"`
	// JobGPUs are the job's GPUs; Node the node's name and NodeGPUs the
	// number of GPUs it has (--gpu-bind's masks and maps are checked
	// against it).
	JobGPUs  []int  `json:"job_gpus,omitempty"`
	Node     string `json:"node"`
	NodeGPUs int    `json:"node_gpus,omitempty"`
	// KillWait is slurm.conf's KillWait, which srun names when a step is
	// aborted.
	KillWait time.Duration `json:"kill_wait"`
	// Env is the job's environment, for a Join.
	Env []string `json:"env,omitempty"`
	// Ports are the step's ports of its job's (SLURM_STEP_RESV_PORTS);
	// none without MpiParams.
	Ports []int `json:"ports,omitempty"`
}

// StepEnd says how a step ended.
type StepEnd struct {
	JobID    uint32          `json:"job_id"`
	StepID   int             `json:"step_id"`
	Run      int             `json:"run"`
	State    slurm.JobState  `json:"state"`
	ExitCode jobrec.ExitCode `json:"exit_code"`
	// UserCPU and SystemCPU are the CPU time the step's tasks used (and
	// their children that they waited for): sacct's UserCPU, SystemCPU
	// and TotalCPU.
	UserCPU   time.Duration `json:"user_cpu,omitempty"`
	SystemCPU time.Duration `json:"system_cpu,omitempty"`
}

// JobEnding answers GET PathSteps?job=N: whether the job is being ended
// (cancel, time limit, requeue, preemption), so that an srun that got
// SIGTERM knows whether the signal came from the job's end, which gives
// its tasks KillWait, or from someone who wants the step gone now.
type JobEnding struct {
	Ending bool `json:"ending"`
	// Why is Slurm's "DUE TO" words ("TIME LIMIT"), "" for a cancel.
	Why string    `json:"why,omitempty"`
	At  time.Time `json:"at,omitzero"`
	// KillWait is the time the job's processes have after the signal.
	KillWait time.Duration `json:"kill_wait"`
}

// AllocRequest submits an interactive job (srun or salloc outside a job):
// a batch job's Submit without a script. Command is what the caller will
// run (salloc's shell, srun's command), for scontrol's Command=.
type AllocRequest struct {
	Submit  Submit   `json:"submit"`
	Command []string `json:"command,omitempty"`
	// Salloc: the job is salloc's, named "interactive" by default and
	// without a step of its own.
	Salloc bool `json:"salloc,omitempty"`
}

// Allocation is an interactive job as its caller waits for it.
type Allocation struct {
	JobID uint32         `json:"job_id"`
	State slurm.JobState `json:"state"`
	// Reason is why it waits, while pending.
	Reason slurm.Reason `json:"reason,omitempty"`
	// Alloc is what the job holds once running; Env the job's environment
	// built over the caller's (AllocRequest.Submit.Env).
	Alloc jobrec.Alloc `json:"alloc,omitzero"`
	Env   []string     `json:"env,omitempty"`
	// Adopted says how the caller's processes are tracked as the job's:
	// "cgroup" or "process group".
	Adopted string `json:"adopted,omitempty"`
	// Limit is the time limit in force; KillWait as in Step.
	Limit    time.Duration `json:"limit"`
	KillWait time.Duration `json:"kill_wait"`
}

// AllocEnd says that an interactive job's command ended with ExitCode.
type AllocEnd struct {
	JobID    uint32          `json:"job_id"`
	ExitCode jobrec.ExitCode `json:"exit_code"`
}
