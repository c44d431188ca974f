package jobscript

import (
	"strconv"
	"strings"
	"sync"

	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Command is a set of the commands that install an option: the
// per-command column of Slurm's one common_options table, where each row has
// a set_func for all of them or a set_func_sbatch, set_func_srun or
// set_func_salloc for some.
type Command uint8

// The commands whose options are read with jobscript's table.
const (
	Sbatch Command = 1 << iota
	Srun
	Salloc

	all = Sbatch | Srun | Salloc
)

// optDef is one option: its getopt row, the commands that take it, and
// what setting it does in a job's request (sbatch's meaning, which srun and
// salloc reuse for the options that make their allocation).
type optDef struct {
	getopt.Option
	cmds Command
	// early options (sbatch_early_pass) are read from the command line
	// only, before the script; in a script they are silently ignored.
	early bool
	// ext marks slurm-lite's extensions: #SLITE lines and the command line.
	ext bool
	// set applies a value; has is false for a flag or a missing optional
	// value.
	set func(s *state, v string, has bool) *Error
	// reset undoes a flag; an SBATCH_* variable that is neither empty, "yes"
	// nor a non-zero number resets its flag.
	reset func(s *state)
}

const (
	none = getopt.NoArgument
	req  = getopt.RequiredArgument
	opt  = getopt.OptionalArgument
)

// options is the option table of sbatch, srun and salloc: Slurm 22.05's
// common_options (src/common/slurm_opt.c), each row marked with the
// commands that install it; then slurm-lite's extensions (sbatch's), which
// match their full names only. Each command's table is its rows in this
// order, which is the order getopt lists ambiguous candidates in (the
// relative order of two rows no command shares is immaterial). Rows without
// set are srun's or salloc's own, read by those commands; where Slurm gives
// a name two meanings (sbatch's --wait is a flag, srun's takes seconds) it
// has two rows, and so does this table.
var options = []optDef{
	{Option: row("accel-bind", 0, req), cmds: Srun},
	{Option: row("account", 'A', req), cmds: all, set: str(func(r *Request) *string { return &r.Account })},
	{Option: row("acctg-freq", 0, req), cmds: all, set: keep("acctg-freq")},
	{Option: row("array", 'a', req), cmds: Sbatch, set: setArray},
	{Option: row("batch", 0, req), cmds: Sbatch, set: keep("batch")},
	{Option: row("bcast", 0, opt), cmds: Srun},
	{Option: row("bcast-exclude", 0, req), cmds: Srun},
	{Option: row("begin", 'b', req), cmds: all, set: setBegin},
	{Option: row("bell", 0, none), cmds: Salloc},
	{Option: row("bb", 0, req), cmds: all, set: setBB},
	{Option: row("bbf", 0, req), cmds: all, set: setBBF},
	{Option: row("cluster-constraint", 0, req), cmds: all, set: keep("cluster-constraint")},
	{Option: row("chdir", 'D', req), cmds: all, set: str(func(r *Request) *string { return &r.Chdir })},
	{Option: row("cluster", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.Clusters })},
	{Option: row("clusters", 'M', req), cmds: all, set: str(func(r *Request) *string { return &r.Clusters })},
	{Option: row("comment", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.Comment })},
	{Option: row("compress", 0, opt), cmds: Srun},
	{Option: row("container", 0, req), cmds: all, set: keep("container")},
	{Option: row("context", 0, req), cmds: all, set: keep("context")},
	{Option: row("contiguous", 0, none), cmds: all, set: keep("contiguous"), reset: drop("contiguous")},
	{Option: row("constraint", 'C', req), cmds: all, set: str(func(r *Request) *string { return &r.Constraint })},
	{Option: row("core-spec", 'S', req), cmds: all, set: setCoreSpec},
	{Option: row("cores-per-socket", 0, req), cmds: all, set: positiveCount("cores-per-socket", func(s *state) *int { return &s.cores })},
	{Option: row("cpu-bind", 0, req), cmds: Srun},
	{Option: getopt.Option{Name: "cpu_bind", Arg: req, ID: "cpu-bind"}, cmds: Srun},
	{Option: row("cpu-freq", 0, req), cmds: all, set: keep("cpu-freq")},
	{Option: row("cpus-per-gpu", 0, req), cmds: all, set: num("--cpus-per-gpu", func(r *Request) *int { return &r.CPUsPerGPU })},
	{Option: row("cpus-per-task", 'c', req), cmds: all, set: setCPUsPerTask},
	{Option: row("deadline", 0, req), cmds: all, set: setDeadline},
	{Option: row("debugger-test", 0, none), cmds: Srun},
	{Option: row("delay-boot", 0, req), cmds: all, set: setDelayBoot},
	{Option: row("dependency", 'd', req), cmds: all, set: setDependency},
	{Option: row("disable-status", 'X', none), cmds: Srun},
	{Option: row("distribution", 'm', req), cmds: all, set: setDistribution},
	{Option: row("epilog", 0, req), cmds: Srun},
	{Option: row("error", 'e', req), cmds: Sbatch | Srun, set: file(func(r *Request) *string { return &r.Error })},
	{Option: row("exact", 0, none), cmds: Srun},
	{Option: row("exclude", 'x', req), cmds: all, set: str(func(r *Request) *string { return &r.Exclude })},
	{Option: row("exclusive", 0, opt), cmds: all, set: setExclusive},
	{Option: row("export", 0, req), cmds: Sbatch | Srun, set: setExport},
	{Option: row("export-file", 0, req), cmds: Sbatch, set: str(func(r *Request) *string { return &r.ExportFile })},
	{Option: row("extra-node-info", 'B', req), cmds: all, set: setExtraNodeInfo},
	{Option: row("get-user-env", 0, opt), cmds: Sbatch | Salloc, set: setGetUserEnv},
	{Option: row("gid", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.GID })},
	{Option: row("gpu-bind", 0, req), cmds: all, set: setGPUBind},
	{Option: row("gpu-freq", 0, req), cmds: all, set: keep("gpu-freq")},
	{Option: row("gpus", 'G', req), cmds: all, set: raw(func(s *state) *string { return &s.gpus })},
	{Option: row("gpus-per-node", 0, req), cmds: all, set: raw(func(s *state) *string { return &s.gpusPerNode })},
	{Option: row("gpus-per-socket", 0, req), cmds: all, set: setGPUsPerSocket},
	{Option: row("gpus-per-task", 0, req), cmds: all, set: raw(func(s *state) *string { return &s.gpusPerTask })},
	{Option: row("gres", 0, req), cmds: all, set: setGres},
	{Option: row("gres-flags", 0, req), cmds: all, set: setGresFlags},
	{Option: row("help", 'h', none), cmds: all, early: true},
	{Option: row("het-group", 0, req), cmds: Srun},
	{Option: row("hint", 0, req), cmds: all, set: keep("hint")},
	{Option: row("hold", 'H', none), cmds: all, set: func(s *state, _ string, _ bool) *Error { s.r.Hold = true; return nil },
		reset: func(s *state) { s.r.Hold = false }},
	{Option: row("ignore-pbs", 0, none), cmds: Sbatch, set: keep("ignore-pbs"), reset: drop("ignore-pbs")},
	{Option: row("immediate", 'I', opt), cmds: Srun | Salloc},
	{Option: row("input", 'i', req), cmds: Sbatch | Srun, set: file(func(r *Request) *string { return &r.Input })},
	{Option: row("interactive", 0, none), cmds: Srun},
	{Option: row("jobid", 0, req), cmds: Srun},
	{Option: row("job-name", 'J', req), cmds: all, set: func(s *state, v string, _ bool) *Error {
		s.r.JobName, s.jobNameSet = v, true
		return nil
	}},
	{Option: row("kill-on-invalid-dep", 0, req), cmds: Sbatch, set: setKillOnInvalidDep},
	{Option: row("kill-on-bad-exit", 'K', opt), cmds: Srun},
	{Option: row("label", 'l', none), cmds: Srun},
	{Option: row("kill-command", 'K', opt), cmds: Salloc},
	{Option: row("licenses", 'L', req), cmds: all, set: str(func(r *Request) *string { return &r.Licenses })},
	{Option: row("mail-type", 0, req), cmds: all, set: setMailType},
	{Option: row("mail-user", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.MailUser })},
	{Option: row("threads", 'T', req), cmds: Srun},
	{Option: row("mcs-label", 0, req), cmds: all, set: keep("mcs-label")},
	{Option: row("mem", 0, req), cmds: all, set: mbytes("--mem", func(r *Request) **uint64 { return &r.MemPerNode })},
	{Option: row("mem-bind", 0, req), cmds: all, set: keep("mem-bind")},
	{Option: row("mem-per-cpu", 0, req), cmds: all, set: mbytes("--mem-per-cpu", func(r *Request) **uint64 { return &r.MemPerCPU })},
	{Option: row("mem-per-gpu", 0, req), cmds: all, set: mbytes("--mem-per-gpu", func(r *Request) **uint64 { return &r.MemPerGPU })},
	{Option: row("mincpus", 0, req), cmds: all, set: keepInt("mincpus", "--mincpus", true)},
	{Option: row("mpi", 0, req), cmds: Srun},
	{Option: row("msg-timeout", 0, req), cmds: Srun},
	{Option: row("multi-prog", 0, none), cmds: Srun},
	{Option: row("network", 0, req), cmds: all, set: keep("network")},
	{Option: row("nice", 0, opt), cmds: all, set: setNice},
	{Option: row("no-allocate", 'Z', none), cmds: Srun},
	{Option: row("no-bell", 0, none), cmds: Salloc},
	{Option: row("no-kill", 'k', opt), cmds: all, set: setNoKill},
	{Option: row("no-requeue", 0, none), cmds: Sbatch, set: setRequeue(false), reset: resetRequeue},
	{Option: row("no-shell", 0, none), cmds: Salloc},
	{Option: row("nodefile", 'F', req), cmds: all, set: setNodefile},
	{Option: row("nodelist", 'w', req), cmds: all, set: setNodelist},
	{Option: row("nodes", 'N', req), cmds: all, set: setNodes},
	{Option: row("ntasks", 'n', req), cmds: all, set: setNTasks},
	{Option: row("ntasks-per-core", 0, req), cmds: all, set: keepInt("ntasks-per-core", "--ntasks-per-core", true)},
	{Option: row("ntasks-per-gpu", 0, req), cmds: all, set: positiveCount("ntasks-per-gpu", func(s *state) *int { return &s.ntasksPerGPU })},
	{Option: row("ntasks-per-node", 0, req), cmds: all, set: num("--ntasks-per-node", func(r *Request) *int { return &r.NTasksPerNode })},
	{Option: row("ntasks-per-socket", 0, req), cmds: all, set: keepInt("ntasks-per-socket", "--ntasks-per-socket", true)},
	{Option: row("ntasks-per-tres", 0, req), cmds: all, set: positiveCount("ntasks-per-tres", func(s *state) *int { return &s.ntasksPerTres })},
	{Option: row("open-mode", 0, req), cmds: Sbatch | Srun, set: setOpenMode},
	{Option: row("output", 'o', req), cmds: Sbatch | Srun, set: file(func(r *Request) *string { return &r.Output })},
	{Option: row("overcommit", 'O', none), cmds: all, set: keep("overcommit"), reset: drop("overcommit")},
	{Option: row("overlap", 0, opt), cmds: Srun},
	{Option: row("oversubscribe", 's', none), cmds: all, set: func(s *state, _ string, _ bool) *Error {
		s.r.Sharing = Oversubscribe
		return nil
	}},
	{Option: row("parsable", 0, none), cmds: Sbatch, set: func(s *state, _ string, _ bool) *Error { s.r.Parsable = true; return nil }},
	{Option: getopt.Option{Name: "pack-group", Arg: req, ID: "het-group"}, cmds: Srun},
	{Option: row("partition", 'p', req), cmds: all, set: str(func(r *Request) *string { return &r.Partition })},
	{Option: row("power", 0, req), cmds: all, set: keep("power")},
	{Option: row("prefer", 0, req), cmds: all, set: keep("prefer")},
	{Option: row("preserve-env", 'E', none), cmds: Srun},
	{Option: row("priority", 0, req), cmds: all, set: setPriority},
	{Option: row("profile", 0, req), cmds: all, set: setProfile},
	{Option: row("prolog", 0, req), cmds: Srun},
	{Option: row("propagate", 0, opt), cmds: Sbatch | Srun, set: setPropagate},
	{Option: row("pty", 0, none), cmds: Srun},
	{Option: row("qos", 'q', req), cmds: all, set: str(func(r *Request) *string { return &r.QOS })},
	{Option: row("quiet", 'Q', none), cmds: all, early: true},
	{Option: row("quit-on-interrupt", 0, none), cmds: Srun},
	{Option: row("reboot", 0, none), cmds: all, set: keep("reboot")},
	{Option: row("requeue", 0, none), cmds: Sbatch, set: setRequeue(true), reset: resetRequeue},
	{Option: row("relative", 'r', req), cmds: Srun},
	{Option: row("reservation", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.Reservation })},
	{Option: row("resv-ports", 0, opt), cmds: Srun},
	{Option: row("send-libs", 0, opt), cmds: Srun},
	{Option: row("signal", 0, req), cmds: all, set: setSignal},
	{Option: row("slurmd-debug", 0, req), cmds: Srun},
	{Option: row("sockets-per-node", 0, req), cmds: all, set: positiveCount("sockets-per-node", func(s *state) *int { return &s.sockets })},
	{Option: row("spread-job", 0, none), cmds: all, set: keep("spread-job"), reset: drop("spread-job")},
	{Option: row("switches", 0, req), cmds: all, set: setSwitches},
	{Option: row("task-epilog", 0, req), cmds: Srun},
	{Option: row("task-prolog", 0, req), cmds: Srun},
	{Option: getopt.Option{Name: "tasks-per-node", Arg: req, ID: "ntasks-per-node"}, cmds: all,
		set: num("--ntasks-per-node", func(r *Request) *int { return &r.NTasksPerNode })},
	{Option: row("test-only", 0, none), cmds: Sbatch | Srun, set: func(s *state, _ string, _ bool) *Error { s.r.TestOnly = true; return nil }},
	{Option: row("thread-spec", 0, req), cmds: all, set: setThreadSpec},
	{Option: row("threads-per-core", 0, req), cmds: all, set: positiveCount("threads-per-core", func(s *state) *int { return &s.threads })},
	{Option: row("time", 't', req), cmds: all, set: limit("--time", func(r *Request) *Limit { return &r.TimeLimit })},
	{Option: row("time-min", 0, req), cmds: all, set: limit("--time-min", func(r *Request) *Limit { return &r.TimeMin })},
	{Option: row("tmp", 0, req), cmds: all, set: setTmp},
	{Option: row("uid", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.UID })},
	{Option: row("unbuffered", 'u', none), cmds: Srun},
	{Option: row("use-min-nodes", 0, none), cmds: all, set: keep("use-min-nodes"), reset: drop("use-min-nodes")},
	{Option: row("verbose", 'v', none), cmds: all, early: true, set: setVerboseEnv,
		reset: func(s *state) { s.r.Verbose = 0 }},
	{Option: row("version", 'V', none), cmds: all, early: true},
	{Option: row("usage", 0, none), cmds: all, early: true},
	{Option: row("wait", 'W', none), cmds: Sbatch, set: func(s *state, _ string, _ bool) *Error { s.r.Wait = true; return nil },
		reset: func(s *state) { s.r.Wait = false }},
	// srun's --wait is a number of seconds (slurm_opt_wait_srun).
	{Option: row("wait", 'W', req), cmds: Srun},
	{Option: row("wait-all-nodes", 0, req), cmds: Sbatch | Salloc, set: setWaitAllNodes},
	{Option: row("wckey", 0, req), cmds: all, set: str(func(r *Request) *string { return &r.WCKey })},
	{Option: row("wrap", 0, req), cmds: Sbatch, early: true},
	{Option: row("whole", 0, none), cmds: Srun},
	{Option: row("x11", 0, opt), cmds: Srun | Salloc},

	// slurm-lite's extensions.
	{Option: extRow("gpu-mem", req), cmds: Sbatch, ext: true, set: setGPUMem},
	{Option: extRow("yieldable", none), cmds: Sbatch, ext: true, set: func(s *state, _ string, _ bool) *Error {
		s.r.Yieldable = true
		return nil
	}},
	{Option: extRow("batch-size", req), cmds: Sbatch, ext: true, set: setBatchSize},
	{Option: extRow("checkpoint-interval", req), cmds: Sbatch, ext: true, set: setCheckpointInterval},
}

// envOnly are options that only an environment variable sets (their rows in
// common_options have no name).
var envOnly = map[string]optDef{
	"switch-req":  {Option: getopt.Option{ID: "switch-req", Arg: req}, set: setSwitchReq},
	"switch-wait": {Option: getopt.Option{ID: "switch-wait", Arg: req}, set: setSwitchWait},
}

// envVars is sbatch's env_vars table (src/sbatch/opt.c) in its order, which
// is the order they apply in: variable name, then the option's key.
var envVars = []struct{ name, key string }{
	{"SBATCH_ACCOUNT", "account"},
	{"SBATCH_ARRAY_INX", "array"},
	{"SBATCH_ACCTG_FREQ", "acctg-freq"},
	{"SBATCH_BATCH", "batch"},
	{"SBATCH_BURST_BUFFER", "bb"},
	{"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"},
	{"SBATCH_CLUSTERS", "clusters"},
	{"SLURM_CLUSTERS", "clusters"},
	{"SBATCH_CONTAINER", "container"},
	{"SBATCH_CONSTRAINT", "constraint"},
	{"SBATCH_CORE_SPEC", "core-spec"},
	{"SBATCH_CPU_FREQ_REQ", "cpu-freq"},
	{"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
	{"SBATCH_DEBUG", "verbose"},
	{"SBATCH_DELAY_BOOT", "delay-boot"},
	{"SBATCH_DISTRIBUTION", "distribution"},
	{"SBATCH_EXCLUSIVE", "exclusive"},
	{"SBATCH_EXPORT", "export"},
	{"SBATCH_GET_USER_ENV", "get-user-env"},
	{"SBATCH_GRES", "gres"},
	{"SBATCH_GRES_FLAGS", "gres-flags"},
	{"SBATCH_GPUS", "gpus"},
	{"SBATCH_GPU_BIND", "gpu-bind"},
	{"SBATCH_GPU_FREQ", "gpu-freq"},
	{"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
	{"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"},
	{"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
	{"SLURM_HINT", "hint"},
	{"SBATCH_HINT", "hint"},
	{"SBATCH_JOB_NAME", "job-name"},
	{"SBATCH_MEM_BIND", "mem-bind"},
	{"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
	{"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
	{"SBATCH_MEM_PER_NODE", "mem"},
	{"SBATCH_NETWORK", "network"},
	{"SBATCH_NO_KILL", "no-kill"},
	{"SBATCH_NO_REQUEUE", "no-requeue"},
	{"SBATCH_OPEN_MODE", "open-mode"},
	{"SBATCH_OVERCOMMIT", "overcommit"},
	{"SBATCH_PARTITION", "partition"},
	{"SBATCH_POWER", "power"},
	{"SBATCH_PROFILE", "profile"},
	{"SBATCH_QOS", "qos"},
	{"SBATCH_REQ_SWITCH", "switch-req"},
	{"SBATCH_REQUEUE", "requeue"},
	{"SBATCH_RESERVATION", "reservation"},
	{"SBATCH_SIGNAL", "signal"},
	{"SBATCH_SPREAD_JOB", "spread-job"},
	{"SBATCH_THREAD_SPEC", "thread-spec"},
	{"SBATCH_THREADS_PER_CORE", "threads-per-core"},
	{"SBATCH_TIMELIMIT", "time"},
	{"SBATCH_USE_MIN_NODES", "use-min-nodes"},
	{"SBATCH_WAIT", "wait"},
	{"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
	{"SBATCH_WAIT4SWITCH", "switch-wait"},
	{"SBATCH_WCKEY", "wckey"},
	{"SBATCH_ERROR", "error"},
	{"SBATCH_INPUT", "input"},
	{"SBATCH_OUTPUT", "output"},
}

func row(name string, short byte, a getopt.ArgKind) getopt.Option {
	return getopt.Option{Name: name, Short: short, Arg: a}
}

func extRow(name string, a getopt.ArgKind) getopt.Option {
	return getopt.Option{Name: name, Arg: a, Exact: true}
}

// Table returns the getopt rows of command c's options (one command), in
// the table's order. The caller may not modify it.
func Table(c Command) []getopt.Option {
	switch c {
	case Sbatch:
		return sbatchTable()
	case Srun:
		return srunTable()
	case Salloc:
		return sallocTable()
	}
	return nil
}

// The tables and byKey are built when first asked for, not at package
// initialisation: a submission uses sbatch's table alone, and byKey only
// for an SBATCH_* variable, and sbatch's start is what a workflow tool
// pays thousands of times (docs/bench.md, "The fast paths").
var (
	sbatchTable = sync.OnceValue(func() []getopt.Option { return tableOf(Sbatch) })
	srunTable   = sync.OnceValue(func() []getopt.Option { return tableOf(Srun) })
	sallocTable = sync.OnceValue(func() []getopt.Option { return tableOf(Salloc) })
)

// tableOf builds command c's rows of options.
func tableOf(c Command) []getopt.Option {
	n := 0
	for i := range options {
		if options[i].cmds&c != 0 {
			n++
		}
	}
	t := make([]getopt.Option, 0, n)
	for i := range options {
		if options[i].cmds&c != 0 {
			t = append(t, options[i].Option)
		}
	}
	return t
}

// table is sbatch's.
func table() []getopt.Option { return sbatchTable() }

// byKey finds sbatch's option of a key.
var byKey = sync.OnceValue(func() map[string]*optDef {
	m := make(map[string]*optDef, len(options)+len(envOnly))
	for i := range options {
		if options[i].cmds&Sbatch == 0 {
			continue
		}
		if _, dup := m[options[i].Key()]; !dup {
			m[options[i].Key()] = &options[i]
		}
	}
	for k, d := range envOnly {
		m[k] = &d
	}
	return m
})

// Setters shared by many options.

func str(field func(*Request) *string) func(*state, string, bool) *Error {
	return func(s *state, v string, _ bool) *Error {
		*field(s.r) = v
		return nil
	}
}

// file sets an --output/--error/--input pattern: "none" is /dev/null.
func file(field func(*Request) *string) func(*state, string, bool) *Error {
	return func(s *state, v string, _ bool) *Error {
		if strings.EqualFold(v, "none") {
			v = "/dev/null"
		}
		*field(s.r) = v
		return nil
	}
}

func raw(field func(*state) *string) func(*state, string, bool) *Error {
	return func(s *state, v string, _ bool) *Error {
		*field(s) = v
		return nil
	}
}

// keep records an option that only matters on a cluster.
func keep(name string) func(*state, string, bool) *Error {
	return func(s *state, v string, has bool) *Error {
		s.other(name, v, has)
		return nil
	}
}

func drop(name string) func(*state) {
	return func(s *state) { s.dropOther(name) }
}

// keepInt records a number checked as Slurm's parse_int checks it.
func keepInt(name, flag string, positive bool) func(*state, string, bool) *Error {
	return func(s *state, v string, has bool) *Error {
		if _, err := parseInt(flag, v, positive); err != nil {
			return err
		}
		s.other(name, v, has)
		return nil
	}
}

func num(flag string, field func(*Request) *int) func(*state, string, bool) *Error {
	return func(s *state, v string, _ bool) *Error {
		n, err := parseInt(flag, v, true)
		if err != nil {
			return err
		}
		*field(s.r) = n
		return nil
	}
}

// positiveCount sets a whole count above 0 that is not a field of the
// request but shapes it: --sockets-per-node, --cores-per-socket and
// --threads-per-core, which sbatch multiplies into a default task count,
// and --ntasks-per-gpu and --ntasks-per-tres.
func positiveCount(name string, field func(*state) *int) func(*state, string, bool) *Error {
	return func(s *state, v string, has bool) *Error {
		n, err := parseInt("--"+name, v, true)
		if err != nil {
			return err
		}
		*field(s) = n
		s.other(name, v, has)
		return nil
	}
}

func mbytes(flag string, field func(*Request) **uint64) func(*state, string, bool) *Error {
	return func(s *state, v string, _ bool) *Error {
		mb, ok := strToMbytes(v)
		if !ok {
			return invalid(exitOption, "Invalid %s specification", flag)
		}
		*field(s.r) = &mb
		return nil
	}
}

func limit(flag string, field func(*Request) *Limit) func(*state, string, bool) *Error {
	return func(s *state, v string, _ bool) *Error {
		d, err := slurmsyntax.ParseTimeLimit(v)
		if err != nil {
			return invalid(exitOption, "Invalid %s specification", flag)
		}
		*field(s.r) = Limit(d)
		return nil
	}
}

func setRequeue(on bool) func(*state, string, bool) *Error {
	return func(s *state, _ string, _ bool) *Error {
		s.r.Requeue = &on
		return nil
	}
}

func resetRequeue(s *state) { s.r.Requeue = nil }

func setCPUsPerTask(s *state, v string, _ bool) *Error {
	n, err := parseInt("--cpus-per-task", v, true)
	if err != nil {
		return err
	}
	s.r.CPUsPerTask, s.cpusSet = n, true
	return nil
}

func setNTasks(s *state, v string, _ bool) *Error {
	n, err := parseInt("--ntasks", v, true)
	if err != nil {
		return err
	}
	s.r.NTasks, s.r.NTasksSet = n, true
	return nil
}

func setNodes(s *state, v string, _ bool) *Error {
	lo, hi, err := verifyNodeCount(v)
	if err != nil {
		return err
	}
	s.r.Nodes, s.r.NodesSet = NodeRange{Min: lo, Max: hi}, true
	return nil
}

func setVerboseEnv(s *state, v string, has bool) *Error {
	// Only SBATCH_DEBUG reaches this: -v on the command line is counted by
	// ParseCommandLine, and in a script it is ignored.
	if !has {
		s.r.Verbose++
		return nil
	}
	n, err := parseInt("--verbose", v, false)
	if err != nil {
		return err
	}
	s.r.Verbose = n
	return nil
}

func setGres(s *state, v string, _ bool) *Error {
	if strings.EqualFold(v, "help") || strings.EqualFold(v, "list") {
		return &Error{Kind: KindGresHelp, Option: "--gres"}
	}
	s.gres, s.gresSet = v, true
	return nil
}

// setGPUBind checks --gpu-bind as arg_set_gpu_bind does; a bad one exits
// 255 (slurm_process_option_or_exit).
func setGPUBind(s *state, v string, has bool) *Error {
	if msg := GPUBindError(v); msg != "" {
		return invalid(exitOption, "%s", msg)
	}
	s.other("gpu-bind", v, has)
	return nil
}

func setGPUsPerSocket(s *state, v string, has bool) *Error {
	s.gpusPerSocket = v
	s.other("gpus-per-socket", v, has)
	return nil
}

func setArray(s *state, v string, _ bool) *Error {
	s.arraySpec, s.arraySet = v, true
	return nil
}

func setDependency(s *state, v string, _ bool) *Error {
	s.depSpec, s.depSet = v, true
	return nil
}

func setBegin(s *state, v string, _ bool) *Error {
	t, err := slurmsyntax.ParseBegin(v, s.now)
	if err != nil || t.IsZero() {
		return invalid(exitOption, "Invalid --begin specification")
	}
	s.r.Begin = t
	return nil
}

func setDeadline(s *state, v string, _ bool) *Error {
	t, err := slurmsyntax.ParseBegin(v, s.now)
	if err != nil || t.IsZero() {
		return invalid(exitOption, "Invalid --deadline specification")
	}
	s.r.Deadline = t
	return nil
}

func setSignal(s *state, v string, _ bool) *Error {
	sig, err := slurmsyntax.ParseSignal(v)
	if err != nil {
		return invalid(exitOption, "Invalid --signal specification")
	}
	s.r.Signal = &sig
	return nil
}

func setNice(s *state, v string, has bool) *Error {
	n := int64(100)
	if has {
		// strtoll(arg, NULL, 10): whatever follows the number is ignored,
		// and no number at all is 0.
		n, _, _ = slurmsyntax.Strtol(v, slurmsyntax.Saturate)
	}
	const lim = 0x80000000 - 3 // NICE_OFFSET - 3
	if n > lim || n < -lim {
		return invalid(exitOption, "Invalid --nice value, out of range (+/- %d)", lim)
	}
	i := int(n)
	s.r.Nice = &i
	return nil
}

func setPriority(s *state, v string, _ bool) *Error {
	if strings.EqualFold(v, "TOP") {
		p := PriorityTop
		s.r.Priority = &p
		return nil
	}
	n, _, _ := slurmsyntax.Strtol(v, slurmsyntax.Saturate)
	if n < 0 {
		return invalid(exitOption, "Priority must be >= 0")
	}
	if n >= 0xfffffffe {
		return invalid(exitOption, "Priority must be < %d", uint32(0xfffffffe))
	}
	p := uint32(n)
	s.r.Priority = &p
	return nil
}

func setExclusive(s *state, v string, has bool) *Error {
	switch {
	case !has || strings.EqualFold(v, "exclusive"):
		s.r.Sharing = Exclusive
	case strings.EqualFold(v, "oversubscribe"):
		s.r.Sharing = Oversubscribe
	case strings.EqualFold(v, "user"):
		s.r.Sharing = ExclusiveUser
	case strings.EqualFold(v, "mcs"):
		s.r.Sharing = ExclusiveMCS
	default:
		return invalid(exitOption, "Invalid --exclusive specification")
	}
	return nil
}

func setOpenMode(s *state, v string, _ bool) *Error {
	switch {
	case v != "" && (v[0] == 'a' || v[0] == 'A'):
		s.r.OpenMode = "append"
	case v != "" && (v[0] == 't' || v[0] == 'T'):
		s.r.OpenMode = "truncate"
	default:
		return invalid(exitOption, "Invalid --open-mode specification")
	}
	return nil
}

func setGetUserEnv(s *state, v string, has bool) *Error {
	g := &GetUserEnv{}
	if has {
		n, rest, _ := slurmsyntax.Strtol(v, slurmsyntax.Saturate)
		g.Timeout = int(int32(n))
		switch {
		case rest == "":
		case rest[0] == 's' || rest[0] == 'S':
			g.Mode = "S"
		case rest[0] == 'l' || rest[0] == 'L':
			g.Mode = "L"
		default:
			return invalid(exitOption, "Invalid --get-user-env specification")
		}
	}
	s.r.GetUserEnv = g
	return nil
}

func setGresFlags(s *state, v string, has bool) *Error {
	if !strings.EqualFold(v, "disable-binding") && !strings.EqualFold(v, "enforce-binding") {
		return invalid(exitOption, "Invalid --gres-flags specification")
	}
	s.other("gres-flags", v, has)
	return nil
}

func setKillOnInvalidDep(s *state, v string, has bool) *Error {
	if !strings.EqualFold(v, "yes") && !strings.EqualFold(v, "no") {
		return invalid(exitOption, "Invalid --kill-on-invalid-dep specification")
	}
	s.other("kill-on-invalid-dep", v, has)
	return nil
}

func setNoKill(s *state, v string, has bool) *Error {
	switch {
	case !has || strings.EqualFold(v, "set"):
		s.other("no-kill", v, has)
	case strings.EqualFold(v, "off") || strings.EqualFold(v, "no"):
		s.dropOther("no-kill")
	default:
		return invalid(exitOption, "Invalid --no-kill specification")
	}
	return nil
}

func setNodefile(s *state, v string, has bool) *Error {
	// --nodefile and --nodelist replace each other.
	s.r.NodeList = ""
	s.other("nodefile", v, has)
	return nil
}

func setNodelist(s *state, v string, _ bool) *Error {
	s.dropOther("nodefile")
	s.r.NodeList = v
	return nil
}

func setProfile(s *state, v string, has bool) *Error {
	// acct_gather_profile_from_string looks for these words anywhere in
	// the value, in any case.
	l := strings.ToLower(v)
	ok := false
	for _, w := range []string{"none", "all", "energy", "task", "lustre", "network"} {
		ok = ok || strings.Contains(l, w)
	}
	if !ok {
		return invalid(exitOption, "invalid --profile=%s option", v)
	}
	s.other("profile", v, has)
	return nil
}

func setPropagate(s *state, v string, has bool) *Error {
	if !has {
		v = "ALL"
	}
	s.other("propagate", v, true)
	return nil
}

func setTmp(s *state, v string, has bool) *Error {
	if _, ok := strToMbytes(v); !ok {
		return invalid(exitOption, "Invalid --tmp specification")
	}
	s.other("tmp", v, has)
	return nil
}

func setDelayBoot(s *state, v string, has bool) *Error {
	if _, ok := timeStr2Secs(v); !ok {
		return invalid(exitOption, "Invalid --delay-boot specification")
	}
	s.other("delay-boot", v, has)
	return nil
}

func setSwitches(s *state, v string, has bool) *Error {
	count, _, _ := strings.Cut(v, "@")
	if _, err := parseInt("--switches", count, true); err != nil {
		return err
	}
	s.other("switches", v, has)
	return nil
}

func setSwitchReq(s *state, v string, has bool) *Error {
	if _, err := parseInt("--switches", v, true); err != nil {
		return err
	}
	s.other("switch-req", v, has)
	return nil
}

func setSwitchWait(s *state, v string, has bool) *Error {
	s.other("switch-wait", v, has)
	return nil
}

func setWaitAllNodes(s *state, v string, has bool) *Error {
	n, err := parseInt("--wait-all-nodes", v, false)
	if err != nil {
		return err
	}
	if uint16(n) > 1 {
		return invalid(exitOption, "Invalid --wait-all-nodes specification")
	}
	s.other("wait-all-nodes", v, has)
	return nil
}

func setCoreSpec(s *state, v string, has bool) *Error {
	if _, err := parseInt("--core-spec", v, false); err != nil {
		return err
	}
	s.coreSpec, s.lastSpecThread = true, false
	s.other("core-spec", v, has)
	return nil
}

func setThreadSpec(s *state, v string, has bool) *Error {
	if _, err := parseInt("--thread-spec", v, true); err != nil {
		return err
	}
	s.threadSpec, s.lastSpecThread = true, true
	s.other("thread-spec", v, has)
	return nil
}

func setBB(s *state, v string, has bool) *Error {
	s.burstBuffer = true
	s.other("bb", v, has)
	return nil
}

func setBBF(s *state, v string, has bool) *Error {
	s.burstBufferFile = true
	s.other("bbf", v, has)
	return nil
}

func setGPUMem(s *state, v string, _ bool) *Error {
	b, err := slurmsyntax.ParseSize(v, slurmsyntax.MiB)
	if err != nil || b <= 0 {
		return invalid(exitOption, "Invalid --gpu-mem specification")
	}
	s.r.GPUMem = b
	return nil
}

// setCheckpointInterval reads --checkpoint-interval, a time to the
// second in --time's forms ("10" minutes, "5:30", "1:00:00"): how often
// the job saves a checkpoint, counted from its start. "0" declares none;
// UNLIMITED is refused, since the scheduler would never yield a resumed
// job that declared it.
func setCheckpointInterval(s *state, v string, _ bool) *Error {
	d, err := slurmsyntax.ParseSeconds(v)
	if err != nil || d < 0 || d == slurmsyntax.Infinite {
		return invalid(exitOption, "Invalid --checkpoint-interval specification")
	}
	s.r.CheckpointInterval = Limit(d)
	return nil
}

func setBatchSize(s *state, v string, _ bool) *Error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return invalid(exitOption, "Invalid numeric value \"%s\" for --batch-size.", v)
	}
	s.r.BatchSize = n
	return nil
}
