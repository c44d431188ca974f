package stepd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// Spec is a launch spec: everything the supervisor needs to run one job,
// written by the daemon as JSON (spec.json, mode 0600) into the job's
// private state directory. The supervisor never asks the daemon anything:
// the spec and the state directory are its whole world.
type Spec struct {
	JobID uint32 `json:"job_id"`
	// ArrayJobID and ArrayTaskID place an array task: a job is one when
	// ArrayTaskCount, the whole array's task count, is not 0. The other
	// Array fields are its lowest and highest task id and --array's
	// ":step" (1 when none), which the task's environment shows.
	ArrayJobID     uint32 `json:"array_job_id,omitempty"`
	ArrayTaskID    int    `json:"array_task_id,omitempty"`
	ArrayTaskCount int    `json:"array_task_count,omitempty"`
	ArrayTaskMin   int    `json:"array_task_min,omitempty"`
	ArrayTaskMax   int    `json:"array_task_max,omitempty"`
	ArrayTaskStep  int    `json:"array_task_step,omitempty"`

	Name      string `json:"name"`
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	QOS       string `json:"qos,omitempty"`
	// RestartCount is how many times the job was requeued: 0 on the first
	// run, when SLURM_RESTART_COUNT is unset.
	RestartCount int `json:"restart_count,omitempty"`

	User Credential `json:"user"`

	// WorkDir is the job's working directory (--chdir, else the
	// submission directory); SubmitDir and SubmitHost are where sbatch ran.
	WorkDir    string `json:"work_dir"`
	SubmitDir  string `json:"submit_dir"`
	SubmitHost string `json:"submit_host,omitempty"`

	// Script is the daemon's stored copy of the batch script, or
	// ScriptText the script itself (one file less to make per job). The
	// supervisor copies it into a spool directory the job's user can
	// reach (the state directory is private) and runs the copy.
	Script     string `json:"script,omitempty"`
	ScriptText string `json:"script_text,omitempty"`
	// Adopt marks an interactive job (srun or salloc outside a job): no
	// script runs; the job is its caller's processes, which the supervisor
	// adopts (Caller at its start, OpAdopt after), and it ends when the
	// caller says so (OpFinish) or dies. See adopt.go.
	Adopt bool `json:"adopt,omitempty"`
	// Caller is the interactive job's caller, when the daemon knows it at
	// launch (0: OpAdopt will name it).
	Caller int      `json:"caller,omitempty"`
	Args   []string `json:"args,omitempty"`
	// SpoolDir is where the per-job spool directory is made; "" is the
	// system's temporary directory. The user must be able to search it.
	SpoolDir string `json:"spool_dir,omitempty"`

	// SubmitEnv is sbatch's environment ("NAME=value"), Options what the
	// job's environment echoes of its options (see JobEnv).
	SubmitEnv []string `json:"submit_env,omitempty"`
	Options   Options  `json:"options"`

	NodeName    string `json:"node_name"`
	ClusterName string `json:"cluster_name"`
	// CPUs are the CPU ids the job is pinned to; CPUsOnNode is how many
	// CPUs it was allocated (len(CPUs) when 0, and at least 1).
	CPUs       []int `json:"cpus,omitempty"`
	CPUsOnNode int   `json:"cpus_on_node,omitempty"`
	// GPUs are the allocated GPUs' indices (NVML order, which is PCI bus
	// order with CUDA_DEVICE_ORDER=PCI_BUS_ID); Shards the number of GPU
	// shards (--gres=shard:N) on them.
	GPUs   []int `json:"gpus,omitempty"`
	Shards int   `json:"shards,omitempty"`
	// ResvPorts are the ports of MpiParams' range the job holds
	// (SLURM_STEP_RESV_PORTS), ascending; none without a range.
	ResvPorts []int `json:"resv_ports,omitempty"`

	// TimeLimit is the job's limit: 0 or slurmtime.Infinite is none. It is
	// a time.Duration, so tests can give seconds.
	TimeLimit time.Duration `json:"time_limit,omitempty"`
	// Start is the job's start as the daemon recorded it (zero: unknown).
	// The job sees it, and its limit's end, in whole seconds as Slurm
	// 23.02 gives them (SLURM_JOB_START_TIME, SLURM_JOB_END_TIME): the
	// times the scheduler plans with, so that a job can checkpoint before
	// its end without measuring its own start.
	Start time.Time `json:"start,omitzero"`
	// Signal is --signal: sent Signal.Seconds before the time limit.
	Signal *slurmtime.SignalSpec `json:"signal,omitempty"`
	// KillWait is slurm.conf's KillWait: between SIGTERM and SIGKILL.
	// 0 is Slurm's default of 30 seconds.
	KillWait time.Duration `json:"kill_wait,omitempty"`

	// Output, Error and Input are the --output, --error and --input
	// patterns as given; "" takes Slurm's defaults (slurm-%j.out, or
	// slurm-%A_%a.out for an array task; standard error with standard
	// output; /dev/null).
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	Input  string `json:"input,omitempty"`

	// Umask is the submitter's umask (sbatch's SLURM_UMASK); nil keeps
	// the supervisor's. Rlimits are the submitter's soft limits by Slurm's
	// names (CPU, FSIZE, DATA, STACK, CORE, RSS, NPROC, NOFILE, MEMLOCK,
	// AS); RlimInfinity is unlimited.
	Umask   *uint32           `json:"umask,omitempty"`
	Rlimits map[string]uint64 `json:"rlimits,omitempty"`

	// MemLimit is the memory limit in bytes enforced through the job's
	// cgroup (0: none).
	MemLimit int64  `json:"mem_limit,omitempty"`
	Cgroup   Cgroup `json:"cgroup,omitzero"`

	// slurm-lite's own: the configuration file commands inside the job
	// use (SLURM_LITE_CONF), the checkpoint directory that stays the same
	// across requeues (SLITE_CHECKPOINT_DIR), and the batch size a yield
	// set (SLITE_BATCH_SIZE; 0: unset).
	ConfPath      string `json:"conf_path,omitempty"`
	CheckpointDir string `json:"checkpoint_dir,omitempty"`
	BatchSize     int    `json:"batch_size,omitempty"`
	// LoginPath is PATH in a login environment (--export=NONE or a
	// list); "" takes Debian's login.defs defaults.
	LoginPath string `json:"login_path,omitempty"`
	// LoginEnvTimeout bounds the reading of the user's login environment
	// (loginenv.go); 0 is slurmd's 120 seconds.
	LoginEnvTimeout time.Duration `json:"login_env_timeout,omitempty"`

	// Record is the daemon's own record of the job as this run started
	// (its store row, as JSON). The supervisor never reads it: it is how
	// a daemon whose database came back without this run puts the job
	// back as it was (the daemon's adopt.go).
	Record json.RawMessage `json:"record,omitempty"`
}

// Credential is who the job runs as.
type Credential struct {
	Name   string   `json:"name"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	Home   string   `json:"home,omitempty"`
	Shell  string   `json:"shell,omitempty"`
}

// Options is what a job's environment repeats of its submission options,
// as sbatch sets it: only what was given.
type Options struct {
	CPUsPerTask   int    `json:"cpus_per_task,omitempty"`
	NTasks        int    `json:"ntasks,omitempty"`
	NTasksSet     bool   `json:"ntasks_set,omitempty"`
	NTasksPerNode int    `json:"ntasks_per_node,omitempty"`
	CPUsPerGPU    int    `json:"cpus_per_gpu,omitempty"`
	GPUs          string `json:"gpus,omitempty"`            // --gpus as given: SLURM_GPUS
	GPUsPerNode   string `json:"gpus_per_node,omitempty"`   // SLURM_GPUS_PER_NODE
	GPUsPerTask   string `json:"gpus_per_task,omitempty"`   // SLURM_GPUS_PER_TASK
	GPUsPerSocket string `json:"gpus_per_socket,omitempty"` // SLURM_GPUS_PER_SOCKET
	GPUBind       string `json:"gpu_bind,omitempty"`        // --gpu-bind as given: SLURM_GPU_BIND
	// Memory in MiB as Slurm's job record holds it: per CPU or per node
	// (one of them), and --mem-per-gpu.
	MemPerCPU  uint64 `json:"mem_per_cpu,omitempty"`
	MemPerNode uint64 `json:"mem_per_node,omitempty"`
	MemPerGPU  uint64 `json:"mem_per_gpu,omitempty"`
	// OpenMode is --open-mode: "append", "truncate" or "".
	OpenMode   string            `json:"open_mode,omitempty"`
	Dependency string            `json:"dependency,omitempty"`
	Export     *jobscript.Export `json:"export,omitempty"`
	// GetUserEnv is --get-user-env (in any form): the job starts from
	// its user's login environment (loginenv.go).
	GetUserEnv bool `json:"get_user_env,omitempty"`
	// Nice is sbatch's scheduling priority (SLURM_PRIO_PROCESS).
	Nice int `json:"nice,omitempty"`
}

// Cgroup says where the job's cgroup v2 goes. With Parent "" the
// supervisor tries a child of its own cgroup; Disable forces process
// tracking without cgroups.
type Cgroup struct {
	Disable bool   `json:"disable,omitempty"`
	Parent  string `json:"parent,omitempty"`
	// SwapMax is memory.swap.max in bytes when the limit applies (nil:
	// left as it is).
	SwapMax *int64 `json:"swap_max,omitempty"`
}

// RlimInfinity is an unlimited resource limit.
const RlimInfinity = ^uint64(0)

// DefaultKillWait is slurm.conf's KillWait default.
const DefaultKillWait = 30 * time.Second

// Files in a job's state directory.
const (
	SpecFile     = "spec.json"
	IdentityFile = "stepd.json"
	StatusFile   = "status.json"
	SocketFile   = "stepd.sock"
	// LockFile is what supervisors of earlier versions flock'ed; they
	// now lock the state directory itself (Supervised asks both).
	LockFile = "stepd.lock"
	LogFile  = "stepd.log"
)

// killWait is the spec's KillWait with Slurm's default.
func (s *Spec) killWait() time.Duration {
	if s.KillWait <= 0 {
		return DefaultKillWait
	}
	return s.KillWait
}

// limited reports whether the job has a time limit.
func (s *Spec) limited() bool {
	return s.TimeLimit > 0 && s.TimeLimit != slurmtime.Infinite
}

func (s *Spec) isArray() bool { return s.ArrayTaskCount > 0 }

func (s *Spec) cpusOnNode() int {
	return max(s.CPUsOnNode, len(s.CPUs), 1)
}

// patternVars are the values %j, %A, %a, %x, %u and %N expand to.
func (s *Spec) patternVars() slurmtime.PatternVars {
	task := -1
	if s.isArray() {
		task = s.ArrayTaskID
	}
	return slurmtime.PatternVars{
		JobID:       s.JobID,
		ArrayJobID:  s.ArrayJobID,
		ArrayTaskID: task,
		JobName:     s.Name,
		User:        s.User.Name,
		Node:        s.NodeName,
		StepID:      -1,
	}
}

// Paths are a job's standard files after expanding the patterns, absolute.
type Paths struct {
	Output, Error, Input string
}

// StdPaths expands the spec's --output, --error and --input patterns as
// slurmstepd does for the batch step: Slurm's defaults when not given,
// relative names under the working directory.
func StdPaths(s *Spec) Paths {
	out := s.Output
	if out == "" {
		out = "slurm-%j.out"
		if s.isArray() {
			out = "slurm-%A_%a.out"
		}
	}
	errp := s.Error
	if errp == "" {
		errp = out
	}
	in := s.Input
	if in == "" {
		in = "/dev/null"
	}
	v := s.patternVars()
	abs := func(p string) string {
		p = slurmtime.ExpandPattern(p, v)
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.WorkDir, p)
		}
		return p
	}
	return Paths{Output: abs(out), Error: abs(errp), Input: abs(in)}
}

// appendOutput reports whether the job's files are appended to: with
// --open-mode=append, and on every run after a requeue (so the first
// run's output and the requeue line stay), unless --open-mode=truncate.
func (s *Spec) appendOutput() bool {
	switch s.Options.OpenMode {
	case "append":
		return true
	case "truncate":
		return false
	}
	return s.RestartCount > 0
}

// check refuses a spec the supervisor cannot run, naming the field.
func (s *Spec) check() error {
	var errs []error
	if s.JobID == 0 {
		errs = append(errs, errors.New("job_id is 0"))
	}
	if s.User.Name == "" {
		// The zero Credential is root: never run a job as root by omission.
		errs = append(errs, errors.New("user name is empty"))
	}
	if s.Script == "" && s.ScriptText == "" && !s.Adopt {
		errs = append(errs, errors.New("script and script_text are empty"))
	}
	if !filepath.IsAbs(s.WorkDir) {
		errs = append(errs, fmt.Errorf("work_dir %q is not absolute", s.WorkDir))
	}
	if s.NodeName == "" {
		errs = append(errs, errors.New("node_name is empty"))
	}
	if s.Signal != nil && (s.Signal.Signal <= 0 || s.Signal.Seconds < 0) {
		errs = append(errs, fmt.Errorf("signal %v is not a signal", s.Signal))
	}
	for name := range s.Rlimits {
		if _, ok := rlimitResources[name]; !ok {
			errs = append(errs, fmt.Errorf("rlimit %q is not one Slurm propagates", name))
		}
	}
	return errors.Join(errs...)
}

// ReadSpec reads and checks a launch spec.
func ReadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading launch spec: %w", err)
	}
	s := &Spec{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("reading launch spec %s: %w", path, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("launch spec %s: %w", path, err)
	}
	return s, nil
}

// WriteSpec writes s into the job's state directory dir, which it creates
// (mode 0700) if needed: spec.json, mode 0600, atomically but not
// durably (writeFileVolatile): a supervisor started on this boot reads it.
func WriteSpec(dir string, s *Spec) error {
	if err := s.check(); err != nil {
		return fmt.Errorf("launch spec for job %d: %w", s.JobID, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("launch spec: %w", err)
	}
	b, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return fmt.Errorf("launch spec for job %d: %w", s.JobID, err)
	}
	return writeFileVolatile(filepath.Join(dir, SpecFile), append(b, '\n'))
}
