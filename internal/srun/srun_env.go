package srun

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// stepInfo is what a task's environment and file names say about its step.
type stepInfo struct {
	jobID  uint32
	stepID int
	ntasks int
	node   string
	cpus   int // the step's CPUs (SLURM_CPUS_ON_NODE)
	// cpusPerTask is -c when given (SLURM_CPUS_PER_TASK).
	cpusPerTask int
	// gpus are the step's GPU indices; jobHasGPUs tells a step without
	// GPUs in a GPU job (which must see none) from a job without any.
	gpus       []int
	jobHasGPUs bool
	// nodeGPUs is the number of GPUs on the node; tresBind the step's
	// binding of its tasks to its GPUs ("gpu:per_task:1"), "" for none
	// (jobscript.BindGPUs).
	nodeGPUs int
	tresBind string
	umask    int
	// jobName is what SLURM_JOB_NAME is when the environment has none.
	jobName string
	user    string
	// ports are the step's reserved ports (SLURM_STEP_RESV_PORTS).
	ports []int
}

// gpuVars are the variables the GRES plugins set to the GPUs a task may
// use, as physical indices (SLURM_STEP_GPUS too: slurmstepd sets it per
// task, to the task's GPUs under --gpu-bind).
var gpuVars = []string{"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "SLURM_STEP_GPUS"}

// taskEnv is task's environment: base (srun's own environment, or the
// job's for srun from outside it), filtered by --export, with the step's
// variables over it, as slurmstepd sets them for a task (recorded in
// golden/job_srun_n2_l.txt and by comparing a task's environment with its
// batch script's under real Slurm 22.05). SLURM_TASK_PID is added by the
// task's launcher, which alone knows its pid. The result is sorted.
func taskEnv(base []string, export string, s stepInfo, task int) []string {
	e := envMap{}
	e.merge(exportFilter(base, export))
	delete(e, "SLURM_TASK_PID")
	delete(e, srunTaskMarker)
	n := strconv.Itoa(s.ntasks)
	step := strconv.Itoa(s.stepID)
	set := map[string]string{
		"SLURM_STEP_ID": step, "SLURM_STEPID": step,
		"SLURM_STEP_NODELIST": s.node, "SLURM_STEP_NUM_NODES": "1",
		"SLURM_STEP_NUM_TASKS": n, "SLURM_STEP_TASKS_PER_NODE": n,
		"SLURM_NTASKS": n, "SLURM_NPROCS": n, "SLURM_TASKS_PER_NODE": n,
		"SLURM_PROCID": strconv.Itoa(task), "SLURM_LOCALID": strconv.Itoa(task), "SLURM_NODEID": "0",
		"SLURM_GTIDS":        taskList(s.ntasks),
		"SLURM_CPUS_ON_NODE": strconv.Itoa(s.cpus),
		"SLURM_UMASK":        fmt.Sprintf("%04o", s.umask),
		"SLURM_DISTRIBUTION": "cyclic",
	}
	if s.ntasks > 1 {
		set["SLURM_DISTRIBUTION"] = "block"
	}
	if s.cpusPerTask > 0 {
		set["SLURM_CPUS_PER_TASK"] = strconv.Itoa(s.cpusPerTask)
	}
	if _, ok := e["SLURM_JOB_NAME"]; !ok && s.jobName != "" {
		set["SLURM_JOB_NAME"] = s.jobName
	}
	for _, k := range []string{"SLURMD_NODENAME", "SLURM_NODELIST", "SLURM_JOB_NODELIST"} {
		if _, ok := e[k]; !ok {
			set[k] = s.node
		}
	}
	maps.Copy(e, set)
	// The step's own ports, never its batch script's (the job's).
	delete(e, "SLURM_STEP_RESV_PORTS")
	if len(s.ports) > 0 {
		e["SLURM_STEP_RESV_PORTS"] = slurm.FormatPorts(s.ports)
	}
	delete(e, "SLURMD_TRES_BIND")
	if s.tresBind != "" {
		e["SLURMD_TRES_BIND"] = s.tresBind
	}
	switch {
	case len(s.gpus) > 0:
		// The task's own GPUs under the step's binding (never outside the
		// step's); SLURM_GPUS_ON_NODE counts the step's.
		mine, _ := jobscript.BindGPUs(s.tresBind, s.gpus, s.nodeGPUs, task)
		ids := make([]string, len(mine))
		for i, g := range mine {
			ids[i] = strconv.Itoa(g)
		}
		for _, k := range gpuVars {
			e[k] = strings.Join(ids, ",")
		}
		e["SLURM_GPUS_ON_NODE"] = strconv.Itoa(len(s.gpus))
	case s.jobHasGPUs:
		// A step without GPUs in a job with some: CUDA must see none,
		// which an empty list says and an unset variable does not.
		for _, k := range gpuVars {
			e[k] = ""
		}
		e["SLURM_GPUS_ON_NODE"] = "0"
	}
	return e.list()
}

// taskList is "0,1,...,n-1" (SLURM_GTIDS).
func taskList(n int) string {
	ids := make([]string, n)
	for i := range n {
		ids[i] = strconv.Itoa(i)
	}
	return strings.Join(ids, ",")
}

// exportFilter is srun's --export over env: ALL (or nothing) keeps it all;
// NONE keeps only the SLURM_* variables; a list keeps the SLURM_*
// variables and the names listed (NAME=value sets one), all of env with
// ALL in the list.
func exportFilter(env []string, export string) []string {
	if export == "" || strings.EqualFold(export, "ALL") {
		return env
	}
	var out []string
	all := false
	names := map[string]bool{}
	var sets []string
	if !strings.EqualFold(export, "NONE") {
		for _, tok := range strings.Split(export, ",") {
			switch {
			case strings.EqualFold(tok, "ALL"):
				all = true
			case strings.Contains(tok, "="):
				sets = append(sets, tok)
			case tok != "" && !strings.EqualFold(tok, "NONE"):
				names[tok] = true
			}
		}
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if all || names[k] || strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "SLURMD_") {
			out = append(out, kv)
		}
	}
	return append(out, sets...)
}

// envMap is an environment under construction; later settings win.
type envMap map[string]string

func (e envMap) merge(kvs []string) {
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			e[k] = v
		}
	}
}

func (e envMap) list() []string {
	out := make([]string, 0, len(e))
	for _, k := range slices.Sorted(maps.Keys(e)) {
		out = append(out, k+"="+e[k])
	}
	return out
}

// ioKind is what an -o, -e or -i value means (src/srun/libsrun/fname.c).
type ioKind int

const (
	ioAll  ioKind = iota // every task to and from srun (the default)
	ioNone               // /dev/null
	ioOne                // one task (a task number) to and from srun, the others /dev/null
	ioFile               // a file name pattern, expanded per task
)

// ioSpec is one of -o, -e, -i read.
type ioSpec struct {
	kind    ioKind
	task    int
	pattern string
}

// parseIO reads an -o, -e or -i value as srun's fname_create does.
func parseIO(v string, ntasks int) ioSpec {
	switch {
	case v == "" || len(v) >= 3 && strings.EqualFold(v[:3], "all") || strings.HasPrefix(v, "-"):
		return ioSpec{kind: ioAll}
	case strings.EqualFold(v, "none"):
		return ioSpec{kind: ioNone}
	}
	if n, err := strconv.ParseUint(v, 10, 31); err == nil && int(n) < ntasks {
		return ioSpec{kind: ioOne, task: int(n)}
	}
	return ioSpec{kind: ioFile, pattern: v}
}

// fileFields are what a file name pattern's % fields stand for.
type fileFields struct {
	step       stepInfo
	arrayJob   string // SLURM_ARRAY_JOB_ID, "" outside an array
	arrayTask  string // SLURM_ARRAY_TASK_ID
	envJobName string // SLURM_JOB_NAME
}

// expand is a file name pattern for one task: %% %A %a %J %j %s %t %n %N
// %u %x, with an optional zero-padding width for the numbers; a pattern
// with a backslash is taken literally, without its backslashes.
func (f fileFields) expand(pattern string, task int) string {
	if strings.Contains(pattern, `\`) {
		return strings.ReplaceAll(pattern, `\`, "")
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' || i+1 >= len(pattern) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' {
			j++
		}
		width, _ := strconv.Atoi(pattern[i+1 : j])
		width = min(width, 10)
		if j >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		pad := func(n uint64) string { return fmt.Sprintf("%0*d", width, n) }
		switch pattern[j] {
		case '%':
			if j != i+1 {
				b.WriteString(pattern[i : j+1])
			} else {
				b.WriteByte('%')
			}
		case 'j':
			b.WriteString(pad(uint64(f.step.jobID)))
		case 'J':
			b.WriteString(pad(uint64(f.step.jobID)) + "." + strconv.Itoa(f.step.stepID))
		case 's':
			b.WriteString(pad(uint64(f.step.stepID)))
		case 't':
			b.WriteString(pad(uint64(task)))
		case 'n':
			b.WriteString(pad(0))
		case 'N':
			b.WriteString(f.step.node)
		case 'u':
			b.WriteString(f.step.user)
		case 'x':
			b.WriteString(f.envJobName)
		case 'A':
			id, err := strconv.ParseUint(f.arrayJob, 10, 32)
			if err != nil {
				id = uint64(f.step.jobID)
			}
			b.WriteString(pad(id))
		case 'a':
			id, err := strconv.ParseUint(f.arrayTask, 10, 32)
			if err != nil {
				id = 0xfffffffe // NO_VAL, as srun prints it
			}
			b.WriteString(pad(id))
		default:
			b.WriteString(pattern[i : j+1])
		}
		i = j
	}
	return b.String()
}

// strsignal is glibc's description of a signal, as srun prints a task's
// death ("Killed", "Terminated").
func strsignal(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "Hangup", syscall.SIGINT: "Interrupt", syscall.SIGQUIT: "Quit",
		syscall.SIGILL: "Illegal instruction", syscall.SIGTRAP: "Trace/breakpoint trap",
		syscall.SIGABRT: "Aborted", syscall.SIGBUS: "Bus error", syscall.SIGFPE: "Floating point exception",
		syscall.SIGKILL: "Killed", syscall.SIGUSR1: "User defined signal 1",
		syscall.SIGSEGV: "Segmentation fault", syscall.SIGUSR2: "User defined signal 2",
		syscall.SIGPIPE: "Broken pipe", syscall.SIGALRM: "Alarm clock", syscall.SIGTERM: "Terminated",
		syscall.SIGSTKFLT: "Stack fault", syscall.SIGCHLD: "Child exited", syscall.SIGCONT: "Continued",
		syscall.SIGSTOP: "Stopped (signal)", syscall.SIGTSTP: "Stopped", syscall.SIGTTIN: "Stopped (tty input)",
		syscall.SIGTTOU: "Stopped (tty output)", syscall.SIGURG: "Urgent I/O condition",
		syscall.SIGXCPU: "CPU time limit exceeded", syscall.SIGXFSZ: "File size limit exceeded",
		syscall.SIGVTALRM: "Virtual timer expired", syscall.SIGPROF: "Profiling timer expired",
		syscall.SIGWINCH: "Window changed", syscall.SIGIO: "I/O possible", syscall.SIGPWR: "Power failure",
		syscall.SIGSYS: "Bad system call",
	}
	if s, ok := names[sig]; ok {
		return s
	}
	if sig >= 34 && sig <= 64 {
		return fmt.Sprintf("Real-time signal %d", sig-34)
	}
	return fmt.Sprintf("Unknown signal %d", int(sig))
}

// strerror2 is the C library's words for an errno (Go's, capitalized).
func strerror2(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// errnoOf is err's errno, which a task that could not execute exits with.
func errnoOf(err error) int {
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return 1
}

// execvp executes file in place of this process, looking a bare name up
// in env's PATH; it returns only on failure, with the errno that tells the
// most (EACCES over ENOENT, as execvp(3)).
func execvp(file string, argv, env []string) error {
	if strings.Contains(file, "/") {
		return syscall.Exec(file, argv, env)
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	var last error = syscall.ENOENT
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		err := syscall.Exec(dir+"/"+file, argv, env)
		switch {
		case errors.Is(err, syscall.EACCES):
			last = err
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ESTALE):
		default:
			return err
		}
	}
	return last
}
