package stepd

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Debian's login.defs ENV_SUPATH and ENV_PATH: PATH in a login
// environment for root and for everyone else.
const (
	loginPathRoot = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	loginPathUser = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"
)

// ownedVars are the variables that describe a job. JobEnv sets those that
// apply to this job and removes the others, so that a job submitted from
// inside another job does not inherit the outer job's values (Slurm lets
// them through; see doc.go). SLURM_UMASK and SLURM_RLIMIT_* are sbatch's
// messages to slurmstepd, which removes them too.
var ownedVars = []string{
	"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
	"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
	"SLURM_RESTART_COUNT", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_CPUS_PER_TASK",
	"SLURM_NTASKS_PER_NODE", "SLURM_CPUS_PER_GPU", "SLURM_GPUS", "SLURM_GPUS_PER_NODE",
	"SLURM_GPUS_PER_TASK", "SLURM_GPUS_PER_SOCKET", "SLURM_GPU_BIND", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_GPU",
	"SLURM_OPEN_MODE", "SLURM_JOB_DEPENDENCY", "SLURM_EXPORT_ENV", "SLURM_JOB_RESERVATION",
	"SLURM_SHARDS_ON_NODE", "SLURM_TASK_PID", "SLURM_UMASK", "SLURM_GET_USER_ENV",
	"SLURM_WORKING_CLUSTER", "SLURM_STEP_ID", "SLURM_STEPID", "SLITE_BATCH_SIZE",
	// The GPU variables: a job without GPUs must not see someone else's.
	"SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
	"ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "SLURM_STEP_GPUS", "SLURMD_TRES_BIND",
	// A job's ports are its own: never an outer job's.
	"SLURM_STEP_RESV_PORTS",
}

// JobEnv is the batch script's environment, as Slurm 22.05 builds it
// (sbatch's --export handling, then env_array_for_batch_job, the GRES
// plugins and slurmstepd), minus SLURM_TASK_PID, which only the process
// itself knows (the launcher adds it). It is a pure function of the spec
// and sbatch's environment submitEnv, sorted by name.
//
// The base comes from --export:
//   - ALL (the default): submitEnv.
//   - NONE: the job user's login environment (HOME, LOGNAME, PATH, SHELL,
//     USER) and submitEnv's SLURM_* variables; SLURM_EXPORT_ENV=NONE.
//   - a list ("PATH,FOO=bar"): the login environment, then the listed
//     variables from submitEnv or with the values given, all of submitEnv
//     if the list has ALL, and submitEnv's SLURM_* variables;
//     SLURM_EXPORT_ENV is the list as given.
//
// Over the base go the job's variables, spelled and formatted as in the
// recorded jobs (golden/job_env_*.txt): SLURM_JOB_ID, SLURM_JOB_NAME,
// the node and CPU counts, the array variables, the GPU variables (only
// with GPUs), SLURM_RESTART_COUNT (only after a requeue), SLURM_NTASKS
// (only with -n), and slurm-lite's own SLURM_LITE_CONF,
// SLITE_CHECKPOINT_DIR, SLITE_BATCH_SIZE and CUDA_DEVICE_ORDER.
//
// A job that loads its user's login environment (--get-user-env, or an
// --export other than ALL: loginenv.go) has it under all of this, as
// slurmd lays the job's environment over it; JobEnv puts the login
// defaults of loginEnv in its place (what the launcher falls back to).
func JobEnv(s *Spec, submitEnv []string) []string {
	return jobEnvWithLogin(s, submitEnv, nil)
}

// jobEnvWithLogin is JobEnv over login, the user's login environment as
// their shell made it (nil: the login defaults).
func jobEnvWithLogin(s *Spec, submitEnv []string, login map[string]string) []string {
	e := envMap{}
	base(e, s, submitEnv, login)
	for _, k := range ownedVars {
		e.unset(k)
	}
	for k := range e {
		if strings.HasPrefix(k, "SLURM_RLIMIT_") {
			e.unset(k)
		}
	}
	jobVars(e, s)
	return e.list()
}

// base is the environment --export asks for (sbatch's _fill_job_desc_from_opts
// and env_merge_filter, then slurmd's _get_user_env, which lays the job's
// variables over the user's login environment, login, or nil for the
// login defaults).
func base(e envMap, s *Spec, submitEnv []string, login map[string]string) {
	if login == nil {
		login = loginEnv(s)
	}
	x := s.Options.Export
	if exportAll(x) {
		if s.Options.GetUserEnv {
			maps.Copy(e, login) // sbatch's environment wins
		}
		e.merge(submitEnv)
		return
	}
	maps.Copy(e, login)
	if !x.None {
		// Tokens in order, each overwriting what came before.
		if x.All {
			e.merge(submitEnv)
		}
		for _, v := range x.Vars {
			if v.HasValue {
				e[v.Name] = v.Value
			} else if val, ok := lookup(submitEnv, v.Name); ok {
				e[v.Name] = val
			}
		}
	}
	for _, kv := range submitEnv {
		if strings.HasPrefix(kv, "SLURM_") {
			e.merge([]string{kv})
		}
	}
}

// exportAll reports whether --export passes sbatch's whole environment
// and nothing else: ALL, as given or by default.
func exportAll(x *jobscript.Export) bool {
	return x == nil || (!x.None && x.All && len(x.Vars) == 0 && strings.EqualFold(x.Spec, "ALL"))
}

// loginEnv are the login defaults: what su - sets for the job's user
// before their shell reads its profile. The launcher reads the profile's
// environment (loginenv.go); these stand in where it cannot be read.
func loginEnv(s *Spec) map[string]string {
	m := map[string]string{}
	for _, kv := range loginShellEnv(s.User, loginPath(s)) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// loginPath is PATH as su - sets it (login.defs' ENV_SUPATH for root,
// ENV_PATH for the others), or the spec's LoginPath.
func loginPath(s *Spec) string {
	if s.LoginPath != "" {
		return s.LoginPath
	}
	if s.User.UID == 0 {
		return loginPathRoot
	}
	return loginPathUser
}

// jobVars sets the variables that describe the job.
func jobVars(e envMap, s *Spec) {
	node := s.NodeName
	u := func(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
	cpus := strconv.Itoa(s.cpusOnNode())
	r := &s.Options

	// env_array_for_batch_job.
	e["SLURM_CLUSTER_NAME"] = s.ClusterName
	e["SLURM_JOB_ID"] = u(s.JobID)
	e["SLURM_JOBID"] = u(s.JobID)
	e["SLURM_JOB_NUM_NODES"] = "1"
	e["SLURM_NNODES"] = "1"
	e["SLURM_JOB_NODELIST"] = node
	e["SLURM_NODELIST"] = node
	e["SLURM_JOB_PARTITION"] = s.Partition
	e["SLURM_NODE_ALIASES"] = "(null)"
	e["SLURM_JOB_CPUS_PER_NODE"] = cpus
	e["ENVIRONMENT"] = "BATCH"
	e["HOSTNAME"] = node
	tasks := r.NTasks
	if !r.NTasksSet || tasks <= 0 {
		// Without -n, as many tasks as the CPUs hold.
		tasks = max(s.cpusOnNode()/max(r.CPUsPerTask, 1), 1)
	} else {
		e["SLURM_NTASKS"] = strconv.Itoa(tasks)
		e["SLURM_NPROCS"] = strconv.Itoa(tasks)
	}
	e["SLURM_TASKS_PER_NODE"] = strconv.Itoa(tasks)
	switch {
	case r.MemPerCPU > 0:
		e["SLURM_MEM_PER_CPU"] = strconv.FormatUint(r.MemPerCPU, 10)
	case r.MemPerNode > 0:
		e["SLURM_MEM_PER_NODE"] = strconv.FormatUint(r.MemPerNode, 10)
	}
	if s.Account != "" {
		e["SLURM_JOB_ACCOUNT"] = s.Account
	}
	if s.QOS != "" {
		e["SLURM_JOB_QOS"] = s.QOS
	}
	if s.isArray() {
		e["SLURM_ARRAY_JOB_ID"] = u(s.ArrayJobID)
		e["SLURM_ARRAY_TASK_ID"] = strconv.Itoa(s.ArrayTaskID)
		// slurmctld's _create_job_array.
		e["SLURM_ARRAY_TASK_COUNT"] = strconv.Itoa(s.ArrayTaskCount)
		e["SLURM_ARRAY_TASK_MIN"] = strconv.Itoa(s.ArrayTaskMin)
		e["SLURM_ARRAY_TASK_MAX"] = strconv.Itoa(s.ArrayTaskMax)
		e["SLURM_ARRAY_TASK_STEP"] = strconv.Itoa(max(s.ArrayTaskStep, 1))
	}

	// sbatch's own (_opt_verify, set_envs, set_env_from_opts), which reach
	// the job through the SLURM_* variables of its environment.
	e["SLURM_JOB_NAME"] = s.Name
	e["SLURM_SUBMIT_DIR"] = s.SubmitDir
	e["SLURM_SUBMIT_HOST"] = s.SubmitHost
	e["SLURM_PRIO_PROCESS"] = strconv.Itoa(r.Nice)
	setInt(e, "SLURM_CPUS_PER_TASK", r.CPUsPerTask)
	setInt(e, "SLURM_NTASKS_PER_NODE", r.NTasksPerNode)
	setInt(e, "SLURM_CPUS_PER_GPU", r.CPUsPerGPU)
	setStr(e, "SLURM_GPUS", r.GPUs)
	setStr(e, "SLURM_GPUS_PER_NODE", r.GPUsPerNode)
	setStr(e, "SLURM_GPUS_PER_TASK", r.GPUsPerTask)
	setStr(e, "SLURM_GPUS_PER_SOCKET", r.GPUsPerSocket)
	setStr(e, "SLURM_GPU_BIND", r.GPUBind)
	if r.MemPerGPU > 0 {
		e["SLURM_MEM_PER_GPU"] = strconv.FormatUint(r.MemPerGPU, 10)
	}
	switch r.OpenMode {
	case "append":
		e["SLURM_OPEN_MODE"] = "a"
	case "truncate":
		e["SLURM_OPEN_MODE"] = "t"
	}
	setStr(e, "SLURM_JOB_DEPENDENCY", r.Dependency)
	if x := r.Export; x != nil && !strings.EqualFold(x.Spec, "ALL") {
		e["SLURM_EXPORT_ENV"] = x.Spec
	}
	if s.loadsLogin() {
		e["SLURM_GET_USER_ENV"] = "1"
	}

	// setup_env and slurmstepd: the task's place and the user.
	e["SLURM_CPUS_ON_NODE"] = cpus
	e["SLURM_GTIDS"] = "0"
	e["SLURM_LOCALID"] = "0"
	e["SLURM_NODEID"] = "0"
	e["SLURM_PROCID"] = "0"
	e["SLURM_TOPOLOGY_ADDR"] = node
	e["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node"
	e["SLURMD_NODENAME"] = node
	e["SLURM_JOB_UID"] = u(s.User.UID)
	e["SLURM_JOB_GID"] = u(s.User.GID)
	e["SLURM_JOB_USER"] = s.User.Name
	if s.RestartCount > 0 {
		e["SLURM_RESTART_COUNT"] = strconv.Itoa(s.RestartCount)
	}
	if !s.Start.IsZero() {
		start := s.Start.Unix()
		e["SLURM_JOB_START_TIME"] = strconv.FormatInt(start, 10)
		if s.limited() {
			e["SLURM_JOB_END_TIME"] = strconv.FormatInt(start+int64(s.TimeLimit/time.Second), 10)
		}
	}
	if e["TMPDIR"] == "" {
		e["TMPDIR"] = "/tmp"
	}

	// The GRES plugins: physical indices, as Slurm gives them without
	// cgroup device limits.
	if len(s.GPUs) > 0 {
		ids := make([]string, len(s.GPUs))
		for i, g := range s.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		list := strings.Join(ids, ",")
		for _, k := range []string{"SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
			"ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"} {
			e[k] = list
		}
		e["SLURM_GPUS_ON_NODE"] = strconv.Itoa(len(s.GPUs))
	}
	setInt(e, "SLURM_SHARDS_ON_NODE", s.Shards)
	// The job's ports (MpiParams): Slurm 22.05 gives them to srun's steps
	// only; slurm-lite gives the batch script its job's too, so that a
	// listener there (torchrun --master_port) has a port no other job
	// holds. Slurm's format: "12000-12003", or a list of runs.
	setStr(e, "SLURM_STEP_RESV_PORTS", slurm.FormatPorts(s.ResvPorts))

	// slurm-lite's own.
	e["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
	setStr(e, "SLURM_LITE_CONF", s.ConfPath)
	setStr(e, "SLITE_CHECKPOINT_DIR", s.CheckpointDir)
	setInt(e, "SLITE_BATCH_SIZE", s.BatchSize)
}

func setInt(e envMap, k string, v int) {
	if v > 0 {
		e[k] = strconv.Itoa(v)
	}
}

func setStr(e envMap, k, v string) {
	if v != "" {
		e[k] = v
	}
}

// envMap is an environment under construction: later settings win, as
// Slurm's env_array_overwrite.
type envMap map[string]string

// merge copies "NAME=value" entries; entries without '=' are skipped.
func (e envMap) merge(kvs []string) {
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			e[k] = v
		}
	}
}

func (e envMap) unset(k string) { delete(e, k) }

// list is the environment sorted by name.
func (e envMap) list() []string {
	keys := slices.Sorted(maps.Keys(e))
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + e[k]
	}
	return out
}

// lookup finds name in env as Slurm does: the first "name=" entry.
func lookup(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
