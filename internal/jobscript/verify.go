package jobscript

import (
	"fmt"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// verify applies sbatch's _opt_verify (src/sbatch/opt.c) and the checks of
// validate_options_salloc_sbatch_srun (src/common/slurm_opt.c) that matter
// on one machine, in their order. Some of them only mark the request
// invalid and let later checks print too; those lines are gathered in
// pending and reported together.
func (s *state) verify() *Error {
	r := s.r
	if err := s.verifyNTasksPerGPU(); err != nil {
		return err
	}
	if err := s.verifySpecCores(); err != nil {
		return err
	}
	if err := s.verifyMemory(); err != nil {
		return err
	}

	var pending []string
	failNow := func(msg string) *Error {
		return &Error{Kind: KindInvalid, Exit: s.exitErr, Msg: strings.Join(append(pending, msg), "\n")}
	}
	if r.Quiet && r.Verbose > 0 {
		pending = append(pending, "don't specify both --verbose (-v) and --quiet (-Q)")
	}
	if s.burstBuffer && s.burstBufferFile {
		return failNow("Cannot specify both --burst-buffer and --bbf")
	}

	if r.NTasksPerNode > 0 && !r.NTasksSet && (r.Nodes.Max == 0 || r.Nodes.Min == r.Nodes.Max) {
		r.NTasks, r.NTasksSet = r.Nodes.Min*r.NTasksPerNode, true
	}

	if !s.jobNameSet {
		switch {
		case r.HasWrap:
			r.JobName = "wrap"
		case r.ScriptPath != "":
			r.JobName = baseName(r.ScriptPath)
		default:
			// _fill_job_desc_from_opts names a job read from stdin.
			r.JobName = "sbatch"
		}
	}

	if r.NTasks < 0 {
		pending = append(pending, fmt.Sprintf("invalid number of tasks (-n %d)", r.NTasks))
	}
	if s.cpusSet && r.CPUsPerTask <= 0 {
		pending = append(pending, fmt.Sprintf("invalid number of cpus per task (-c %d)", r.CPUsPerTask))
	}
	if r.Nodes.Min < 0 || r.Nodes.Max < 0 || (r.Nodes.Max != 0 && r.Nodes.Min > r.Nodes.Max) {
		pending = append(pending, fmt.Sprintf("invalid number of nodes (-N %d-%d)", r.Nodes.Min, r.Nodes.Max))
	}

	// "Massage the numbers": one task per node unless told otherwise,
	// and never more nodes than tasks.
	if (r.NodesSet || s.extraSet) && (r.Nodes.Min == r.Nodes.Max || r.Nodes.Max == 0) && !r.NTasksSet {
		r.NTasks = max(r.Nodes.Min, 1)
		for _, n := range []int{s.sockets, s.cores, s.threads} {
			if n != 0 {
				r.NTasks *= n
				r.NTasksSet = true
			}
		}
	} else if r.NodesSet && r.NTasksSet {
		if r.NTasks < r.Nodes.Max {
			r.Nodes.Max = r.NTasks
		}
		if r.NTasks < r.Nodes.Min {
			s.warn(fmt.Sprintf("Warning: can't run %d processes on %d nodes, setting nnodes to %d",
				r.NTasks, r.Nodes.Min, r.NTasks))
			r.Nodes.Min, r.Nodes.Max = r.NTasks, r.NTasks
		}
	}

	if !r.Deadline.IsZero() && !r.Begin.IsZero() && r.Deadline.Before(r.Begin) {
		return failNow("Incompatible begin and deadline time specification")
	}
	if len(pending) > 0 {
		return &Error{Kind: KindInvalid, Exit: s.exitErr, Msg: strings.Join(pending, "\n")}
	}

	// slurm_opt_create_job_desc.
	arbitrary := strings.EqualFold(s.distribution, "arbitrary") || strings.EqualFold(s.distribution, "hostfile")
	if _, nodefile := r.OtherValue("nodefile"); arbitrary && r.NodeList == "" && !nodefile {
		return &Error{Kind: KindInvalid, Exit: s.exitErr,
			Msg: "With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option"}
	}
	return nil
}

// verifyMemory is _validate_memory_options: --mem, --mem-per-cpu and
// --mem-per-gpu exclude each other when given in the script or on the
// command line; one given there silences the others from the environment.
func (s *state) verifyMemory() *Error {
	keys := []string{"mem", "mem-per-cpu", "mem-per-gpu"}
	fields := []**uint64{&s.r.MemPerNode, &s.r.MemPerCPU, &s.r.MemPerGPU}
	cli, env := 0, 0
	for _, k := range keys {
		if s.setByCLI(k) {
			cli++
		}
		if s.setByEnv(k) {
			env++
		}
	}
	switch {
	case cli > 1:
		return fatal("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
	case cli == 1:
		for i, k := range keys {
			if !s.setByCLI(k) {
				*fields[i] = nil
				delete(s.src, k)
			}
		}
	case env > 1:
		return fatal("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.")
	}
	return nil
}

// verifyNTasksPerGPU is _validate_ntasks_per_gpu.
func (s *state) verifyNTasksPerGPU() *Error {
	gpu, tres := s.setByCLI("ntasks-per-gpu"), s.setByCLI("ntasks-per-tres")
	gpuEnv, tresEnv := s.setByEnv("ntasks-per-gpu"), s.setByEnv("ntasks-per-tres")
	if !gpu && !tres && !gpuEnv && !tresEnv {
		return nil
	}
	switch {
	case gpu && tres:
		if s.ntasksPerGPU != s.ntasksPerTres {
			return fatal("Inconsistent values set to --ntasks-per-gpu=%d and --ntasks-per-tres=%d ",
				s.ntasksPerGPU, s.ntasksPerTres)
		}
	case gpu && tresEnv:
		s.ntasksPerTres = 0
		s.dropOther("ntasks-per-tres")
	case tres && gpuEnv:
		s.ntasksPerGPU = 0
		s.dropOther("ntasks-per-gpu")
	case gpuEnv && tresEnv:
		if s.ntasksPerGPU != s.ntasksPerTres {
			return fatal("Inconsistent values set by environment variables SLURM_NTASKS_PER_GPU=%d and SLURM_NTASKS_PER_TRES=%d ",
				s.ntasksPerGPU, s.ntasksPerTres)
		}
	}
	for _, c := range []struct{ key, flag, env string }{
		{"gpus-per-task", "--gpus-per-task", "SLURM_GPUS_PER_TASK"},
		{"gpus-per-socket", "--gpus-per-socket", "SLURM_GPUS_PER_SOCKET"},
		{"ntasks-per-node", "--ntasks-per-node", "SLURM_NTASKS_PER_NODE"},
	} {
		if s.setByCLI(c.key) {
			return fatal("%s is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU", c.flag)
		}
		if s.setByEnv(c.key) {
			return fatal("%s is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU", c.env)
		}
	}
	return nil
}

// verifySpecCores is _validate_spec_cores_options, with the configuration's
// AllowSpecResourcesUsage=No, Slurm's default: the option is then ignored
// with an error-level line.
func (s *state) verifySpecCores() *Error {
	if !s.coreSpec && !s.threadSpec {
		return nil
	}
	b := func(ok bool) int {
		if ok {
			return 1
		}
		return 0
	}
	cli := b(s.setByCLI("core-spec")) + b(s.setByCLI("thread-spec"))
	env := b(s.setByEnv("core-spec")) + b(s.setByEnv("thread-spec"))
	switch {
	case cli > 1:
		// Slurm's own spelling.
		return fatal("-S/--core-spec and --thred-spec options are mutually exclusive")
	case env > 1 && cli == 0:
		return fatal("Both --core-spec and --thread-spec set using environment variables. Those options are mutually exclusive.")
	}
	which := "-S"
	if s.lastSpecThread {
		which = "--thread-spec"
	}
	s.warn(fmt.Sprintf("error: Ignoring %s since it's not allowed by configuration (AllowSpecResourcesUsage = No)", which))
	return nil
}

// controller refuses what slurmctld would refuse of a request sbatch
// accepted, in slurmctld's order (validate_job_create_req, then
// _job_create): a malformed --array, more nodes than the one machine, a
// malformed --dependency. A dependency on a job that does not exist is
// accepted, as Slurm does.
func (s *state) controller(maxArraySize int) *Error {
	r := s.r
	if s.arraySet && s.arraySpec != "" {
		a, err := slurmsyntax.ParseArray(s.arraySpec, maxArraySize)
		if err != nil {
			e := rejected(MsgInvalidArray)
			e.Exit, e.Option, e.Hint = s.exitErr, "--array", err.Error()
			return e
		}
		r.Array = &Array{Spec: s.arraySpec, Tasks: a.Tasks, Limit: a.Limit}
	}
	if r.Nodes.Min > 1 {
		e := rejected(MsgNodeCount)
		e.Exit, e.Option = s.exitErr, "--nodes"
		e.Hint = fmt.Sprintf("slurm-lite schedules one machine, and this job asks for %d nodes", r.Nodes.Min)
		return e
	}
	if s.depSet && s.depSpec != "" {
		d, err := slurmsyntax.ParseDependency(s.depSpec)
		if err != nil {
			e := rejected(MsgDependency)
			e.Exit, e.Option, e.Hint = s.exitErr, "--dependency", err.Error()
			return e
		}
		r.Dependency = &Dependency{Spec: s.depSpec, Parsed: d}
	}
	return nil
}
