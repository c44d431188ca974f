package stepd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// Tracking modes, as Identity.Tracking and Status.Tracking name them.
const (
	TrackCgroup    = "cgroup"
	TrackSubreaper = "subreaper"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER.
const prSetChildSubreaper = 36

// tracker follows every process of a job. The supervisor is always a
// child subreaper, so a process of the job whose parent dies is
// reparented to the supervisor, never to init: the job is exactly the
// supervisor's descendants, whatever setsid, nohup or double forks do.
// Where a cgroup v2 can be made, the job also gets one: it is killed at
// once with cgroup.kill (no race with a process that forks while being
// killed), and its memory limit and OOM kills are the cgroup's.
type tracker struct {
	self int
	// cgroup is the job's cgroup directory; "" in subreaper mode, with
	// why saying what made the cgroup unavailable.
	cgroup string
	why    string
	// memory: the memory controller is on in the job's cgroup.
	memory   bool
	warnings []string
	// roots are an interactive job's adopted processes (adopt.go), groups
	// the process groups their descendants made.
	roots  []int
	groups map[int]bool
}

func (t *tracker) mode() string {
	if t.cgroup != "" {
		return TrackCgroup
	}
	return TrackSubreaper
}

// describe says which mode is in use, and why not a cgroup.
func (t *tracker) describe() string {
	if t.cgroup != "" {
		mem := "without a memory controller"
		if t.memory {
			mem = "with memory accounting"
		}
		return fmt.Sprintf("process tracking: cgroup %s, %s", t.cgroup, mem)
	}
	return "process tracking: child subreaper (" + t.why + ")"
}

// newTracker makes the supervisor a subreaper and, unless disabled, the
// job's cgroup with its memory limit and CPUs where the controllers are
// available.
func newTracker(s *Spec) (*tracker, error) {
	t := &tracker{self: os.Getpid()}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return nil, fmt.Errorf("becoming a child subreaper: %w", e)
	}
	if s.Cgroup.Disable {
		t.why = "cgroups disabled in the launch spec"
	} else if err := t.makeCgroup(s); err != nil {
		t.why = err.Error()
	}
	if s.MemLimit > 0 && !t.memory {
		why := "no cgroup: " + t.why
		if t.cgroup != "" {
			why = "no memory controller in cgroup " + t.cgroup
		}
		t.warnings = append(t.warnings, fmt.Sprintf("memory limit of %d bytes not enforced: %s", s.MemLimit, why))
	}
	return t, nil
}

// ProbeCgroup says where job cgroups would go for a supervisor in this
// process's place: parent, or "" for the caller's own cgroup. It returns
// the directory, or why jobs will be tracked without cgroups, which the
// daemon can log at start.
func ProbeCgroup(parent string) (string, error) {
	dir, err := cgroupParent(parent)
	if err != nil {
		return "", err
	}
	probe := filepath.Join(dir, fmt.Sprintf("slurm-lite-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return "", fmt.Errorf("cgroup %s not writable: %w", dir, err)
	}
	return dir, os.Remove(probe)
}

// cgroupParent is the cgroup v2 directory job cgroups go under: parent, or
// the calling process's own cgroup.
func cgroupParent(parent string) (string, error) {
	if parent == "" {
		mnt, err := cgroup2Mount()
		if err != nil {
			return "", err
		}
		own, err := ownCgroup()
		if err != nil {
			return "", err
		}
		parent = filepath.Join(mnt, own)
	}
	if _, err := os.Stat(filepath.Join(parent, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("no cgroup v2 at %s", parent)
	}
	return parent, nil
}

// makeCgroup creates PARENT/job_ID; PARENT is the spec's or the
// supervisor's own cgroup.
func (t *tracker) makeCgroup(s *Spec) error {
	parent, err := cgroupParent(s.Cgroup.Parent)
	if err != nil {
		return err
	}
	// Ask for the controllers; this fails where the parent holds
	// processes itself (cgroup v2's "no internal processes" rule) or
	// was not delegated them, and then the job goes without.
	for _, c := range []string{"+memory", "+cpuset"} {
		_ = os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte(c), 0)
	}
	// The name carries this supervisor's pid: job ids repeat across
	// daemons (and runs), and reusing another's cgroup, even an empty one,
	// races: 1. daemon B makes job_1 for its job 1, empty for a moment;
	// 2. A's supervisor finds job_1, removes it as a leftover and makes its
	// own; 3. B moves its job into what is now A's cgroup; 4. B's job ends,
	// B kills the cgroup, and A's job dies with it.
	dir := filepath.Join(parent, fmt.Sprintf("job_%d_%d", s.JobID, t.self))
	if err := os.Mkdir(dir, 0o755); errors.Is(err, os.ErrExist) {
		// Left by a dead supervisor that had this pid: ours to reuse
		// once empty.
		if err := os.Remove(dir); err != nil {
			return fmt.Errorf("cgroup %s is left over and not empty: %w", dir, err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("cgroup %s not writable: %w", dir, err)
		}
	} else if err != nil {
		return fmt.Errorf("cgroup %s not writable: %w", parent, err)
	}
	t.cgroup = dir
	if s.MemLimit > 0 {
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(s.MemLimit, 10)), 0); err == nil {
			t.memory = true
			if s.Cgroup.SwapMax != nil {
				if err := os.WriteFile(filepath.Join(dir, "memory.swap.max"),
					[]byte(strconv.FormatInt(*s.Cgroup.SwapMax, 10)), 0); err != nil {
					t.warnings = append(t.warnings, "swap limit not set: "+err.Error())
				}
			}
		}
	} else if _, err := os.Stat(filepath.Join(dir, "memory.events")); err == nil {
		t.memory = true
	}
	if len(s.CPUs) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "cpuset.cpus")); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(cpuList(s.CPUs)), 0); err != nil {
				t.warnings = append(t.warnings, "cpuset not set: "+err.Error())
			}
		}
	}
	return nil
}

// forkExec starts the launcher in the job's cgroup from its first
// instruction (clone3's CLONE_INTO_CGROUP), where the kernel can. Moving a
// process in afterwards (adopt), by writing cgroup.procs, waits for an RCU
// grace period (the kernel takes cgroup_threadgroup_rwsem for writing):
// 10 ms and more on a busy machine, a third of a trivial job's time from
// sbatch to its first line. A kernel before 5.7, or one that refuses,
// gets the launcher started outside and moved in as before.
func (t *tracker) forkExec(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	if t.cgroup != "" {
		if fd, err := syscall.Open(t.cgroup, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0); err == nil {
			sys := *attr.Sys
			sys.UseCgroupFD, sys.CgroupFD = true, fd
			into := *attr
			into.Sys = &sys
			pid, err := syscall.ForkExec(path, argv, &into)
			syscall.Close(fd)
			if err == nil {
				return pid, nil
			}
		}
	}
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil {
		return 0, err
	}
	t.adopt(pid)
	return pid, nil
}

// adopt moves the launcher into the job's cgroup before it runs anything.
// Where that fails the job is tracked as a subreaper's alone.
func (t *tracker) adopt(pid int) {
	if t.cgroup == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(t.cgroup, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.why = fmt.Sprintf("could not join cgroup %s: %v", t.cgroup, err)
		os.Remove(t.cgroup)
		t.cgroup, t.memory = "", false
	}
}

// pids lists the job's live processes: the supervisor's descendants and,
// in cgroup mode, the cgroup's members. Zombies are not live.
func (t *tracker) pids() []int {
	set := procfs.Descendants(t.self)
	if t.cgroup != "" {
		for _, p := range procfs.CgroupProcs(t.cgroup) {
			if st, err := procfs.ReadStat(p); err == nil && st.State != 'Z' && p != t.self {
				set = append(set, p)
			}
		}
	} else {
		set = append(set, t.rootPIDs()...)
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// signal sends sig to pids; it returns how many it reached. A pid of 1 or
// less is never signalled: kill(0) and kill(-1) name process groups and
// every process, not a process.
func signalPIDs(pids []int, sig syscall.Signal) int {
	n := 0
	for _, p := range pids {
		if p > 1 && syscall.Kill(p, sig) == nil {
			n++
		}
	}
	return n
}

// killAll sends SIGKILL to every process of the job.
func (t *tracker) killAll() {
	if t.cgroup != "" {
		_ = os.WriteFile(filepath.Join(t.cgroup, "cgroup.kill"), []byte("1"), 0)
	}
	signalPIDs(t.pids(), syscall.SIGKILL)
	t.killGroups()
}

// oomKills is the cgroup's count of OOM kills (memory.events oom_kill).
func (t *tracker) oomKills() int {
	if !t.memory {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(t.cgroup, "memory.events"))
	if err != nil {
		return 0
	}
	return keyedInt(b, "oom_kill")
}

// peakRSS is the cgroup's memory.peak, or the largest peak RSS of the
// supervisor's reaped descendants (getrusage counts them all) where that
// is more: the cgroup's peak counts from when its memory controller came
// on, which for a job may be after its start (a daemon that turned it on
// while the job ran, or turned it on again after a restart).
func (t *tracker) peakRSS() int64 {
	var peak int64
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		peak = ru.Maxrss * 1024 // KiB on Linux
	}
	if t.cgroup != "" {
		if b, err := os.ReadFile(filepath.Join(t.cgroup, "memory.peak")); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				peak = max(peak, n)
			}
		}
	}
	return peak
}

// remove deletes the job's cgroup, which must be empty by then.
func (t *tracker) remove() error {
	if t.cgroup == "" {
		return nil
	}
	return os.Remove(t.cgroup)
}

// Cgroup2Mount finds where the cgroup v2 hierarchy is mounted:
// /sys/fs/cgroup on a unified system, /sys/fs/cgroup/unified on a hybrid
// one.
func Cgroup2Mount() (string, error) { return cgroup2Mount() }

func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("no cgroup v2: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "36 25 0:31 / /sys/fs/cgroup rw,... shared:9 - cgroup2 cgroup2 rw"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 1 && qf[0] == "cgroup2" && pf[3] == "/" {
			return pf[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy mounted")
}

// ownCgroup is the supervisor's cgroup v2 path ("0::/PATH" in
// /proc/self/cgroup).
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no cgroup v2: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("no cgroup v2 membership in /proc/self/cgroup")
}

// keyedInt reads "key N" from a cgroup's flat keyed file.
func keyedInt(b []byte, key string) int {
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(" "))
		if ok && string(k) == key {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}

// cpuList prints CPU ids as the kernel's list format: "0-3,8".
func cpuList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}
