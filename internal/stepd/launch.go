package stepd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Main is "slurmd-lite stepd ARGS": "run SPEC" supervises the job whose
// launch spec is SPEC (in the job's state directory) and returns when the
// job has ended and its status is written; "exec" is the launcher, the
// supervisor's own child that becomes the batch script (internal).
func Main(args []string) int { return MainClock(args, nil) }

// MainClock is Main whose supervisor counts the time limit and KillWait
// on clk (nil: the machine's clock, as Main). Only the end-to-end test
// binary calls it, with its test clock (see Clock).
func MainClock(args []string, clk Clock) int {
	// What re-executes this binary as the launcher: the command words
	// before Main's arguments ("slurmd-lite stepd").
	if n := len(os.Args) - len(args); n >= 1 && slicesEqual(os.Args[n:], args) {
		selfArgs = append([]string(nil), os.Args[:n]...)
	}
	switch {
	case len(args) == 2 && args[0] == "run":
		if err := runOn(args[1], clk); err != nil {
			fmt.Fprintf(os.Stderr, "slurmd-lite stepd: error: %v\n", err)
			return 1
		}
		return 0
	case len(args) == 1 && args[0] == "exec":
		launcherMain()
		return 127 // launcherMain only returns by exec or exit
	}
	fmt.Fprintln(os.Stderr, "usage: slurmd-lite stepd run STATE_DIR/spec.json")
	return 2
}

// selfArgs is how the supervisor was invoked, up to its own arguments.
var selfArgs = []string{"slurmd-lite", "stepd"}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Launch starts a supervisor for the job whose state directory is dir
// (spec.json already written): cmd is the command that reaches Main, such
// as {"/usr/sbin/slurmd-lite", "stepd"}, env the supervisor's own
// environment (not the job's). The supervisor gets its own session and no
// terminal or pipes of the caller's, so it outlives the caller; the caller
// reaps it (Wait) while it lives, and a restarted daemon finds it again
// through Identity and Alive.
func Launch(cmd []string, env []string, dir string) (*os.Process, error) {
	if len(cmd) == 0 {
		return nil, fmt.Errorf("launching supervisor: no command")
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("launching supervisor: %w", err)
	}
	defer devnull.Close()
	argv := append(append([]string(nil), cmd...), "run", filepath.Join(dir, SpecFile))
	p, err := os.StartProcess(cmd[0], argv, &os.ProcAttr{
		Dir:   "/",
		Env:   env,
		Files: []*os.File{devnull, devnull, devnull},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("launching supervisor for %s: %w", dir, err)
	}
	return p, nil
}

// launch is what the supervisor tells the launcher, as JSON on fd 3.
type launch struct {
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// SetUser: switch to UID, GID and Groups (a root supervisor).
	SetUser bool              `json:"set_user,omitempty"`
	UID     uint32            `json:"uid"`
	GID     uint32            `json:"gid"`
	Groups  []uint32          `json:"groups,omitempty"`
	Umask   uint32            `json:"umask"`
	Rlimits map[string]uint64 `json:"rlimits,omitempty"`
	CPUs    []int             `json:"cpus,omitempty"`
	Node    string            `json:"node"`
	// Login, when set, has the launcher read the user's login
	// environment and make Env over it (loginenv.go); Env is the job's
	// environment over the login defaults, which it keeps when the
	// login environment cannot be read.
	Login *loginRequest `json:"login,omitempty"`
}

// rlimitResources are the limits sbatch propagates (PropagateResourceLimits
// =ALL), by Slurm's names, with Linux's numbers.
var rlimitResources = map[string]int{
	"CPU": 0, "FSIZE": 1, "DATA": 2, "STACK": 3, "CORE": 4,
	"RSS": 5, "NPROC": 6, "NOFILE": 7, "MEMLOCK": 8, "AS": 9,
}

// launcherMain is the launcher: a child of the supervisor, already the
// leader of the job's session and in the job's cgroup, with the job's
// files as its standard input, output and error. It sets what the batch
// script inherits and executes it, so the script keeps its pid, which is
// SLURM_TASK_PID. Errors go to the job's error file, as slurmstepd's.
func launcherMain() {
	// One thread from here to exec: CPU affinity is a thread's, and the
	// thread that calls execve passes its own on to the script.
	runtime.LockOSThread()
	in := os.NewFile(3, "launch")
	b, err := io.ReadAll(in)
	in.Close()
	var l launch
	if err == nil {
		err = json.Unmarshal(b, &l)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "slurmstepd: error: reading launch instructions: %v\n", err)
		os.Exit(1)
	}
	fail := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "slurmstepd-%s: error: %s\n", l.Node, fmt.Sprintf(format, a...))
	}
	if len(l.CPUs) > 0 {
		if err := setAffinity(l.CPUs); err != nil {
			fail("sched_setaffinity: %s", cError(err))
		}
	}
	for name, soft := range l.Rlimits {
		res := rlimitResources[name]
		var lim syscall.Rlimit
		if syscall.Getrlimit(res, &lim) != nil {
			continue
		}
		// The submitter's soft limit, within this machine's hard limit.
		lim.Cur = min(soft, lim.Max)
		if err := syscall.Setrlimit(res, &lim); err != nil {
			fail("Can't propagate RLIMIT_%s of %d from submit host: %s", name, soft, cError(err))
		}
	}
	syscall.Umask(int(l.Umask))
	// The daemon and its supervisors run shielded from the OOM killer
	// (systemd's OOMScoreAdjust=-1000, inherited); a job must not be:
	// when memory runs out, a job dies, not the supervisor that records
	// its end. Raising the score needs no privilege.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("0"), 0)
	if l.SetUser {
		groups := make([]int, len(l.Groups))
		for i, g := range l.Groups {
			groups[i] = int(g)
		}
		if len(groups) == 0 {
			groups = []int{int(l.GID)}
		}
		if err := syscall.Setgroups(groups); err != nil {
			fail("setgroups: %s", cError(err))
			os.Exit(1)
		}
		if err := syscall.Setgid(int(l.GID)); err != nil {
			fail("setgid(%d): %s", l.GID, cError(err))
			os.Exit(1)
		}
		if err := syscall.Setuid(int(l.UID)); err != nil {
			fail("setuid(%d): %s", l.UID, cError(err))
			os.Exit(1)
		}
	}
	if err := os.Chdir(l.Dir); err != nil {
		fail("couldn't chdir to `%s': %s: going to /tmp instead", l.Dir, cError(err))
		if err := os.Chdir("/tmp"); err != nil {
			fail("couldn't chdir to /tmp either. dying.")
			os.Exit(1)
		}
	}
	if l.Login != nil {
		// As the job's user, in the job's cgroup: a cancel meanwhile
		// ends the login shell with the launcher.
		env, why := l.Login.jobEnv()
		l.Env = env
		if why != "" {
			fmt.Fprintln(os.Stderr, why)
		}
	}
	env := append(l.Env, "SLURM_TASK_PID="+strconv.Itoa(os.Getpid()))
	resetSignals()
	err = syscall.Exec(l.Path, l.Argv, env)
	fail("execve(): %s: %s", l.Argv[0], cError(err))
	errno, _ := err.(syscall.Errno)
	os.Exit(int(errno))
}

// resetSignals gives every signal its default action before the script
// runs: an ignored signal would stay ignored across exec (a supervisor
// started under nohup ignores SIGHUP, and its job must not).
func resetSignals() {
	// struct kernel_sigaction: handler, flags, restorer, mask.
	var act [4]uintptr // handler SIG_DFL = 0
	for sig := 1; sig < 65; sig++ {
		if sig == int(syscall.SIGKILL) || sig == int(syscall.SIGSTOP) {
			continue
		}
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
	// Unblock everything as well: the mask survives exec too.
	var set uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 2 /* SIG_SETMASK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
}

// setAffinity pins the calling thread's process to cpus (the mask is
// inherited across fork and exec).
func setAffinity(cpus []int) error {
	var mask [16]uint64 // 1024 CPUs
	for _, c := range cpus {
		if c >= 0 && c < len(mask)*64 {
			mask[c/64] |= 1 << (c % 64)
		}
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
	if e != 0 {
		return e
	}
	return nil
}

// cError spells an error as C's strerror (%m) does: "No such file or
// directory", where Go writes "no such file or directory".
func cError(err error) string {
	var errno syscall.Errno
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if e, ok := err.(syscall.Errno); ok {
		errno = e
	}
	s := err.Error()
	if errno != 0 {
		s = errno.Error()
	}
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
