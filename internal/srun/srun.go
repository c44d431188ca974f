package srun

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// srun runs a command as the tasks of a job step.
//
// Inside a job (SLURM_JOB_ID set, or --jobid) it asks the daemon for a step
// of that job (POST /v1/steps), which numbers it and shares the job's CPUs
// and GPUs between the steps running at once, then runs the tasks itself,
// as its own children, with Slurm's step variables; it says how they ended
// (POST /v1/steps/end) and exits with the worst task's status, as srun does.
// The tasks are in the job because srun is: its cgroup, its GPUs.
//
// Outside a job it first asks for an interactive allocation (srun_alloc.go)
// and runs the step in it.
//
// Files: srun_table.go (the option table), srun_step.go (the step's life),
// srun_tasks.go (the tasks: start, IO, signals, exit), srun_env.go (their
// environment and file names), srun_alloc.go (allocations, salloc).

// srunTaskMarker, in a process's environment, makes srun the launcher of
// one task (srunTask): the task's process must know its own pid for
// SLURM_TASK_PID before it executes the command, as slurmstepd's does.
const srunTaskMarker = "SLURM_LITE_SRUN_TASK"

// srunOpts is srun's command line, over its input environment variables.
type srunOpts struct {
	action string // "help", "usage" or "version"

	ntasks      int // 0: not given
	cpusPerTask int
	// exactImplied: -c or --mem* asked explicitly, which implies --exact.
	exactImplied  bool
	ntasksPerNode int
	exact         bool
	overlap       bool
	overcommit    bool
	// gpu holds srun's GPU options (the SLURM_GPUS* variables, then
	// --gpus and friends) by option name, read; nil when none was given.
	// gresNone is --gres=none. gpusPerTask is --gpus-per-task as given and
	// gpuBind --gpu-bind, which make the tasks' binding
	// (jobscript.TresBind).
	gpu         map[string][]jobscript.Gres
	gresNone    bool
	gpusPerTask string
	gpuBind     string
	memMB       uint64

	label, unbuffered, pty    bool
	disableStatus, quitOnIntr bool
	killBadExit               bool
	quiet                     bool
	verbose                   int
	output, errOut, input     string
	openMode                  string // "append", "truncate" or ""
	jobName                   string // -J on the command line
	envJobName                string // SLURM_JOB_NAME
	jobID                     uint32
	jobIDSet                  bool
	chdir                     string
	export                    string
	cpuBind                   string
	cpuBindSet                bool
	immediate                 bool
	multiProg                 bool
	timeLimit                 string
	allocSettings             []jobscript.Setting
	// resvPorts is --resv-ports[=N] (SLURM_RESV_PORTS); nil when not given.
	resvPorts *int
	command   []string
}

// Main is the srun command.
func Main(args []string, sio cli.IO) int {
	if _, ok := sio.Getenv(srunTaskMarker); ok {
		return srunTask(args, sio)
	}
	o, code, done := parseSrun(args, sio)
	if done {
		return code
	}
	if o.cpuBindSet {
		// slurm_verify_cpu_bind on a node without task affinity.
		fmt.Fprintln(sio.Stderr, "srun: cluster configuration lacks support for cpu binding")
		if !validCPUBind(o.cpuBind) {
			fmt.Fprintf(sio.Stderr, "srun: error: unrecognized --cpu-bind argument \"%s\"\n", o.cpuBind)
			fmt.Fprintln(sio.Stderr, "srun: fatal: Failed to parse --cpu-bind= values.")
			return 1
		}
	}
	if o.multiProg {
		fmt.Fprintln(sio.Stderr, "srun: error: --multi-prog is not supported by slurm-lite")
		return 1
	}
	if len(o.command) == 0 {
		fmt.Fprintln(sio.Stderr, "srun: fatal: No command given to execute.")
		return 1
	}
	if o.jobIDSet {
		return runStep(o, sio, stepJoin(o, sio))
	}
	return runAllocation(o, sio)
}

// stepJoin says whether srun runs from outside the job it names (--jobid
// of another job than its own): then the daemon gives it the job's
// environment and moves it into the job.
func stepJoin(o *srunOpts, sio cli.IO) bool {
	own, ok := sio.Getenv("SLURM_JOB_ID")
	return !ok || strings.TrimSpace(own) != strconv.FormatUint(uint64(o.jobID), 10)
}

// srunEnvVars is srun's env_vars table (src/srun/libsrun/opt.c), in its
// order, restricted to what slurm-lite reads: variable, option key. Like
// the command line, they are applied by key; the command line wins.
var srunEnvVars = []struct{ name, key string }{
	{"SLURM_ACCOUNT", "account"},
	{"SRUN_CPUS_PER_TASK", "cpus-per-task"},
	{"SLURM_CPU_BIND", "cpu-bind"},
	{"SLURM_DEPENDENCY", "dependency"},
	{"SLURM_DISABLE_STATUS", "disable-status"},
	{"SLURM_EXACT", "exact"},
	{"SLURM_EXPORT_ENV", "export"},
	{"SRUN_EXPORT_ENV", "export"},
	{"SLURM_GPUS", "gpus"},
	{"SLURM_GPU_BIND", "gpu-bind"},
	{"SLURM_GPUS_PER_NODE", "gpus-per-node"},
	{"SLURM_GPUS_PER_SOCKET", "gpus-per-socket"},
	{"SLURM_GPUS_PER_TASK", "gpus-per-task"},
	{"SLURM_GRES", "gres"},
	{"SLURM_JOB_ID", "jobid"},
	{"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
	{"SLURM_LABELIO", "label"},
	{"SLURM_NPROCS", "ntasks"},
	{"SLURM_NTASKS", "ntasks"},
	{"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
	{"SLURM_OPEN_MODE", "open-mode"},
	{"SLURM_OVERCOMMIT", "overcommit"},
	{"SLURM_OVERLAP", "overlap"},
	{"SLURM_PARTITION", "partition"},
	{"SLURM_QOS", "qos"},
	{"SLURM_RESV_PORTS", "resv-ports"},
	{"SLURM_STDERRMODE", "error"},
	{"SLURM_STDINMODE", "input"},
	{"SLURM_STDOUTMODE", "output"},
	{"SLURM_TIMELIMIT", "time"},
	{"SLURM_UNBUFFEREDIO", "unbuffered"},
	{"SLURM_WCKEY", "wckey"},
}

// srunOnly are srun's options that are not a job's: they never go into an
// allocation's request. With them go the IO options, whose meaning for
// srun is its tasks', and -W, which is srun's own wait.
var srunOnly = map[string]bool{
	"accel-bind": true, "bcast": true, "bcast-exclude": true, "compress": true, "cpu-bind": true,
	"debugger-test": true, "disable-status": true, "epilog": true, "exact": true, "het-group": true,
	"immediate": true, "interactive": true, "jobid": true, "kill-on-bad-exit": true, "label": true,
	"threads": true, "mpi": true, "msg-timeout": true, "multi-prog": true, "no-allocate": true,
	"overlap": true, "preserve-env": true, "prolog": true, "pty": true, "quit-on-interrupt": true,
	"relative": true, "resv-ports": true, "send-libs": true, "slurmd-debug": true, "task-epilog": true,
	"task-prolog": true, "unbuffered": true, "whole": true, "x11": true,
	"output": true, "error": true, "input": true, "open-mode": true, "export": true, "wait": true,
	"quiet": true, "verbose": true, "help": true, "usage": true, "version": true,
}

// parseSrun reads srun's environment, then its command line (srun's
// _opt_env, then _opt_args). done means srun has finished with code
// (help, version, or an error printed).
func parseSrun(args []string, sio cli.IO) (o *srunOpts, code int, done bool) {
	o = &srunOpts{}
	if v, ok := sio.Getenv("SLURM_JOB_NAME"); ok {
		o.envJobName = v
	}
	for _, ev := range srunEnvVars {
		v, ok := sio.Getenv(ev.name)
		if !ok {
			continue
		}
		if err := o.apply(ev.key, v, true, false); err != "" {
			for _, line := range strings.Split(err, "\n") {
				fmt.Fprintf(sio.Stderr, "srun: error: %s\n", line)
			}
			code := 1
			if strings.Contains(err, "Invalid --gpu-bind") {
				code = 255
			}
			return o, code, true
		}
	}
	p := getopt.NewParser(srunTable, getopt.RequireOrder, args)
	for {
		r, ok, err := p.Next()
		if err != nil {
			fmt.Fprintf(sio.Stderr, "srun: %v\nTry \"srun --help\" for more information\n", err)
			return o, 255, true
		}
		if !ok {
			break
		}
		key := r.Option.Key()
		switch key {
		case "help":
			fmt.Fprint(sio.Stdout, srunHelp)
			return o, 0, true
		case "usage":
			fmt.Fprint(sio.Stdout, srunUsage)
			return o, 0, true
		case "version":
			fmt.Fprintln(sio.Stdout, cli.SlurmVersion)
			return o, 0, true
		}
		if msg := o.apply(key, r.Value, r.HasValue, true); msg != "" {
			for _, line := range strings.Split(msg, "\n") {
				fmt.Fprintf(sio.Stderr, "srun: error: %s\n", line)
			}
			return o, exitFor(msg), true
		}
		if !srunOnly[key] {
			o.allocSettings = append(o.allocSettings, jobscript.Setting{Name: key, Value: r.Value, HasValue: r.HasValue})
		}
	}
	o.command = p.Operands()
	return o, 0, false
}

// exitFor is srun's exit code for a bad value: a time or --gpu-bind that
// does not parse exits 255 (Slurm's exit(-1)), the others error_exit (1).
func exitFor(msg string) int {
	if strings.HasPrefix(msg, "Invalid --time") || strings.Contains(msg, "Invalid --gpu-bind") {
		return 255
	}
	return 1
}

// apply sets one option. cli is true for the command line (an explicit -c
// or --mem implies --exact only there). It returns Slurm's message for a
// bad value, "" when it is fine.
func (o *srunOpts) apply(key, v string, has, cli bool) string {
	num := func(flag string, positive bool) (int, string) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || positive && n == 0 {
			return 0, fmt.Sprintf("Invalid numeric value \"%s\" for %s.", v, flag)
		}
		return n, ""
	}
	var msg string
	switch key {
	case "ntasks":
		o.ntasks, msg = num("--ntasks", true)
	case "cpus-per-task":
		o.cpusPerTask, msg = num("--cpus-per-task", true)
		o.exactImplied = o.exactImplied || cli
	case "ntasks-per-node":
		o.ntasksPerNode, msg = num("--ntasks-per-node", true)
	case "jobid":
		var n int
		n, msg = num("--jobid", true)
		o.jobID, o.jobIDSet = uint32(n), msg == ""
	case "label":
		o.label = true
	case "unbuffered":
		o.unbuffered = true
	case "pty":
		o.pty = true
	case "overlap":
		o.overlap = true
	case "resv-ports":
		// Slurm 22.05 reads a bare --resv-ports as a count of 0: no
		// ports (golden/resv_ports_steps.txt).
		n := 0
		if has {
			n, msg = num("--resv-ports", false)
		}
		o.resvPorts = &n
	case "exact":
		o.exact = true
	case "exclusive":
		// For a step, --exclusive is --exact.
		o.exact = o.exact || cli
	case "whole":
		o.exact = false
	case "overcommit":
		o.overcommit = true
	case "disable-status":
		o.disableStatus = true
	case "quit-on-interrupt":
		o.quitOnIntr = true
	case "kill-on-bad-exit":
		o.killBadExit = !has || v != "0"
	case "quiet":
		o.quiet = true
	case "verbose":
		o.verbose++
	case "output":
		o.output = v
	case "error":
		o.errOut = v
	case "input":
		o.input = v
	case "open-mode":
		// An unknown mode is ignored, as srun does after a warning.
		switch strings.ToLower(v) {
		case "a", "append":
			o.openMode = "append"
		case "t", "truncate":
			o.openMode = "truncate"
		}
	case "job-name":
		o.jobName = v
	case "chdir":
		o.chdir = v
	case "export":
		o.export = v
	case "cpu-bind":
		o.cpuBind, o.cpuBindSet = v, true
	case "immediate":
		o.immediate = true
	case "multi-prog":
		o.multiProg = true
	case "time":
		if _, err := slurmtime.ParseTimeLimit(v); err != nil {
			msg = "Invalid --time specification"
		}
		o.timeLimit = v
	case "mem", "mem-per-cpu", "mem-per-gpu":
		if n, ok := megabytes(v); ok && key == "mem" {
			o.memMB = n
		}
		o.exactImplied = o.exactImplied || cli
	case "gpus", "gres", "gpus-per-node", "gpus-per-socket", "gpus-per-task":
		msg = o.setGPUs(key, v)
	case "gpu-bind":
		if bad := jobscript.GPUBindError(v); bad != "" {
			return bad
		}
		o.gpuBind = v
	}
	return msg
}

// megabytes reads --mem's value (a number with an optional K, M, G or T
// suffix; MiB by default).
func megabytes(v string) (uint64, bool) {
	b, err := slurmtime.ParseSize(v, slurmtime.MiB)
	if err != nil {
		return 0, false
	}
	return uint64(b / slurmtime.MiB), true
}

// setGPUs sets one GPU option (a later value replacing an earlier one,
// as srun's options do); it returns Slurm's words for a value that does
// not parse.
func (o *srunOpts) setGPUs(key, v string) string {
	if o.gpu == nil {
		o.gpu = map[string][]jobscript.Gres{}
	}
	if key == "gres" {
		o.gresNone = strings.EqualFold(v, "none")
		if o.gresNone {
			o.gpu[key] = nil
			return ""
		}
	}
	gs, ok := jobscript.ParseGPUOption(key, v)
	if !ok {
		return jobscript.MsgInvalidGres
	}
	o.gpu[key] = gs
	if key == "gpus-per-task" {
		o.gpusPerTask = v
	}
	return ""
}

// gpuSpec is what srun asks of GPUs for its step, as launch.c puts its
// options into the step request: --gpus per step, --gpus-per-node and
// --gres per node, per socket, per task; nil when no GPU option was
// given. --gres=none asks for none at all (_copy_job_tres_to_step).
func (o *srunOpts) gpuSpec() *jobscript.GPUSpec {
	if o.gpu == nil {
		return nil
	}
	if o.gresNone {
		return &jobscript.GPUSpec{}
	}
	return &jobscript.GPUSpec{
		PerJob:    o.gpu["gpus"],
		PerNode:   append(slices.Clip(o.gpu["gpus-per-node"]), o.gpu["gres"]...),
		PerSocket: o.gpu["gpus-per-socket"],
		PerTask:   o.gpu["gpus-per-task"],
	}
}

// validCPUBind checks --cpu-bind's words as slurm_verify_cpu_bind does.
func validCPUBind(v string) bool {
	for _, tok := range strings.Split(v, ",") {
		name, _, _ := strings.Cut(tok, ":")
		switch strings.ToLower(name) {
		case "q", "quiet", "v", "verbose", "no", "none", "rank", "rank_ldom", "sockets", "cores", "threads",
			"ldoms", "boards", "map_cpu", "mask_cpu", "map_ldom", "mask_ldom", "help":
		default:
			return false
		}
	}
	return true
}

// stepName is the step's name in accounting: -J, else the command's base
// name.
func (o *srunOpts) stepName() string {
	if o.jobName != "" {
		return o.jobName
	}
	return filepath.Base(o.command[0])
}

// srunTask is the launcher of one task: it puts its own pid in
// SLURM_TASK_PID and executes the command in its place. A command that
// cannot be executed fails as slurmstepd's task does: "execve(): CMD:
// REASON" and the errno as exit status.
func srunTask(args []string, sio cli.IO) int {
	env := os.Environ()
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, srunTaskMarker+"=") && !strings.HasPrefix(kv, "SLURM_TASK_PID=") {
			out = append(out, kv)
		}
	}
	env = append(out, "SLURM_TASK_PID="+strconv.Itoa(os.Getpid()))
	if len(args) == 0 {
		return 1
	}
	err := execvp(args[0], args, env)
	node, _ := sio.Getenv("SLURMD_NODENAME")
	if node == "" {
		node, _ = sio.Getenv("SLURM_STEP_NODELIST")
	}
	fmt.Fprintf(sio.Stderr, "slurmstepd-%s: error: execve(): %s: %s\n", node, args[0], strerror2(err))
	return errnoOf(err)
}
