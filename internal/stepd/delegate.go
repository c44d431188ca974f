package stepd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// DaemonLeaf is the cgroup the daemon and its supervisors live in, a
// child of the cgroup it was started in (the base), beside the jobs'
// cgroups: systemd's unit names it (DelegateSubgroup=slurmd-lite) or the
// daemon moves itself there at start.
const DaemonLeaf = "slurmd-lite"

// jobControllers are the controllers job cgroups get where the base can
// give them: memory for --mem and OOM kills, pids for the count of a
// job's tasks, cpuset for its CPUs.
var jobControllers = []string{"memory", "pids", "cpuset"}

// Delegation is what the daemon found of cgroups at its start and did
// about them: where job cgroups go, which controllers they get, and, when
// memory is not among them, why and how to fix it.
//
// cgroup v2 gives a controller to a cgroup's children only when the
// cgroup lists it in cgroup.subtree_control, which it may only do while
// it holds no process of its own ("no internal processes"; the root is
// exempt). A daemon started in a cgroup (systemd's Delegate=yes unit, a
// container's, a test's) therefore moves itself, and the supervisors of
// its running jobs, into a leaf of its own (BASE/slurmd-lite), and turns
// the controllers on in BASE, whose other children are the jobs'
// cgroups:
//
//	BASE                 (no processes; +memory +pids +cpuset)
//	├── slurmd-lite      the daemon and the job supervisors
//	├── job_7_4242       job 7's processes (memory.max, pids, cpuset)
//	└── job_8_4250
//
// It moves nothing that is not its own: a process of another program in
// BASE is left where it is, and jobs then go without those controllers,
// which the daemon says loudly (Problem, Fix).
type Delegation struct {
	// Base is the cgroup directory job cgroups go under; "" when jobs
	// get no cgroup (Problem says why).
	Base string
	// Moved: the daemon moved itself into Base/slurmd-lite at this start,
	// so whatever starts it again puts it in Base (systemd without
	// DelegateSubgroup=, a script): Release gives Base back as it was.
	Moved bool
	// Enabled are the controllers this start turned on in Base;
	// Controllers those job cgroups get.
	Enabled, Controllers []string
	// Memory: job cgroups get the memory controller, so --mem is
	// enforced. Problem says why not, Fix what to do.
	Memory       bool
	Problem, Fix string
}

// Delegate sets up the cgroups of a daemon starting now: this process
// and ours (the live supervisors of its running jobs and their
// descendants, started by an earlier daemon) move into Base/slurmd-lite
// where that lets Base give job cgroups their controllers, which it then
// turns on. It never fails: what it could not do is in Problem.
func Delegate(ours []int) Delegation {
	return delegate(ours, true)
}

// ProbeDelegation says what Delegate would find for a daemon started in
// this process's cgroup, changing nothing (slurmd-lite config without a
// running daemon).
func ProbeDelegation() Delegation {
	return delegate(nil, false)
}

func delegate(ours []int, act bool) Delegation {
	var d Delegation
	mnt, err := cgroup2Mount()
	if err != nil {
		d.Problem = "no cgroup v2 hierarchy is mounted"
		d.Fix = "boot with cgroup v2 (the kernel parameter systemd.unified_cgroup_hierarchy=1 on older systems)"
		return d
	}
	own, err := ownCgroup()
	if err != nil {
		d.Problem, d.Fix = err.Error(), "boot with cgroup v2 (systemd.unified_cgroup_hierarchy=1)"
		return d
	}
	self := filepath.Join(mnt, own)
	base := self
	// Started in its leaf already (systemd's DelegateSubgroup=slurmd-lite,
	// or a restart that placed it there): the base is the parent.
	inLeaf := own != "/" && filepath.Base(own) == DaemonLeaf
	if inLeaf {
		base = filepath.Dir(self)
		if _, err := ProbeCgroup(base); err != nil {
			// A cgroup of that name not made for it: its own, then.
			base, inLeaf = self, false
		}
	}
	if _, err := ProbeCgroup(base); err != nil {
		d.Problem = err.Error()
		d.Fix = "run slurmd-lite as root, or in a cgroup delegated to its user (systemd: Delegate=yes)"
		return d
	}
	d.Base = base
	leaf := filepath.Join(base, DaemonLeaf)
	isRoot := !exists(filepath.Join(base, "cgroup.type")) // the root cgroup has no type
	var foreign []int
	if !isRoot {
		mine := map[int]bool{os.Getpid(): true}
		for _, p := range ours {
			mine[p] = true
		}
		var move []int
		for _, p := range cgroupMembers(base) {
			if mine[p] {
				move = append(move, p)
			} else {
				foreign = append(foreign, p)
			}
		}
		// With another program's process in the base, the base can give
		// its children nothing, and moving ours would gain nothing.
		if act && len(foreign) == 0 && len(move) > 0 {
			if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				d.Problem = fmt.Sprintf("making the daemon's own cgroup %s: %v", leaf, err)
				d.Fix = "run slurmd-lite in a cgroup it may write (systemd: Delegate=yes)"
				return d
			}
			for _, p := range move {
				if err := procfs.JoinCgroup(leaf, p); err != nil && procfs.Alive(p) {
					foreign = append(foreign, p) // still there: it blocks as another's would
				}
			}
			d.Moved = !inLeaf
		}
	}
	avail := readList(filepath.Join(base, "cgroup.controllers"))
	var enableErr error
	for _, c := range jobControllers {
		if !act || !slices.Contains(avail, c) || slices.Contains(readList(filepath.Join(base, "cgroup.subtree_control")), c) {
			continue
		}
		if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+"+c), 0); err != nil {
			if c == "memory" {
				enableErr = err
			}
			continue
		}
		d.Enabled = append(d.Enabled, c)
	}
	on := readList(filepath.Join(base, "cgroup.subtree_control"))
	if !act {
		// What a start would turn on: what the base is offered, unless
		// processes of others keep it from giving anything.
		if isRoot || len(foreign) == 0 {
			on = avail
		}
	}
	for _, c := range jobControllers {
		if slices.Contains(on, c) {
			d.Controllers = append(d.Controllers, c)
		}
	}
	d.Memory = slices.Contains(d.Controllers, "memory")
	if !d.Memory {
		d.Problem, d.Fix = explainNoMemory(base, avail, foreign, enableErr, memoryOnV1())
	}
	return d
}

// explainNoMemory says why job cgroups under base get no memory
// controller, and what to do: avail is what base is offered
// (cgroup.controllers), foreign the processes of other programs in base,
// enableErr what turning memory on said, onV1 whether the kernel's
// memory controller serves a cgroup v1 hierarchy instead.
func explainNoMemory(base string, avail []string, foreign []int, enableErr error, onV1 bool) (problem, fix string) {
	switch {
	case !slices.Contains(avail, "memory") && onV1:
		return "the memory controller is mounted as cgroup v1 (a hybrid cgroup setup), and job cgroups are cgroup v2's",
			"boot with cgroup v2 alone (the kernel parameter systemd.unified_cgroup_hierarchy=1)"
	case !slices.Contains(avail, "memory") && filepath.Dir(base) == base:
		return "the kernel offers no memory controller (cgroup_disable=memory?)",
			"boot without cgroup_disable=memory"
	case !slices.Contains(avail, "memory"):
		parent := filepath.Dir(base)
		return fmt.Sprintf("cgroup %s is not given the memory controller (its cgroup.controllers: %q)", base, strings.Join(avail, " ")),
			fmt.Sprintf("run slurmd-lite under systemd with the shipped unit (examples/slurmd-lite.service: Delegate=yes), or give it the controller: echo +memory > %s/cgroup.subtree_control", parent)
	case len(foreign) > 0:
		var names []string
		for _, p := range foreign {
			names = append(names, fmt.Sprintf("%d (%s)", p, procfs.Comm(p)))
		}
		return fmt.Sprintf("processes of other programs share slurmd-lite's cgroup %s: %s, and cgroup v2 gives controllers only to the children of a cgroup with no processes of its own",
				base, strings.Join(names, ", ")),
			"run slurmd-lite in a cgroup of its own: under systemd with the shipped unit (examples/slurmd-lite.service: Delegate=yes), or move those processes out"
	case enableErr != nil:
		return fmt.Sprintf("turning on memory in %s/cgroup.subtree_control: %v", base, errors.Unwrap(enableErr)),
			fmt.Sprintf("run slurmd-lite as root or under systemd with the shipped unit (Delegate=yes), or: echo +memory > %s/cgroup.subtree_control", base)
	}
	return fmt.Sprintf("cgroup %s does not give its children the memory controller", base),
		fmt.Sprintf("echo +memory > %s/cgroup.subtree_control", base)
}

// Release turns off, at the daemon's stop, the controllers this start
// turned on, where it had moved itself out of Base: whoever starts it
// again puts the new daemon in Base (systemd older than 254 has no
// DelegateSubgroup=), which the kernel refuses while Base gives its
// children controllers. The running jobs' limits lapse until the next
// start, which turns them on again and sets each job's limit back
// (RestoreMemoryLimit).
func (d Delegation) Release() error {
	if !d.Moved || len(d.Enabled) == 0 {
		return nil
	}
	var off []string
	for _, c := range slices.Backward(d.Enabled) {
		off = append(off, "-"+c)
	}
	if err := os.WriteFile(filepath.Join(d.Base, "cgroup.subtree_control"), []byte(strings.Join(off, " ")), 0); err != nil {
		return fmt.Errorf("turning off %s in %s: %w", strings.Join(d.Enabled, " "), d.Base, err)
	}
	return nil
}

// RestoreMemoryLimit sets a running job's memory limit again where its
// cgroup has the memory controller but no limit: after a start that
// turned the controller on (the limits of jobs that ran without it, or
// that lapsed while the daemon was stopped: Release). It reports whether
// it set one.
func RestoreMemoryLimit(cgroup string, limit int64) (bool, error) {
	if cgroup == "" || limit <= 0 {
		return false, nil
	}
	b, err := os.ReadFile(filepath.Join(cgroup, "memory.max"))
	if err != nil || strings.TrimSpace(string(b)) != "max" {
		return false, nil
	}
	if err := os.WriteFile(filepath.Join(cgroup, "memory.max"), []byte(strconv.FormatInt(limit, 10)), 0); err != nil {
		return false, fmt.Errorf("setting memory.max of %s: %w", cgroup, err)
	}
	return true, nil
}

// cgroupMembers lists the live processes of dir itself (not of its
// children); a zombie no longer counts against cgroup v2's rules.
func cgroupMembers(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil && procfs.Alive(p) {
			out = append(out, p)
		}
	}
	return out
}

// readList reads a space-separated cgroup file (cgroup.controllers,
// cgroup.subtree_control).
func readList(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// memoryOnV1 reports whether the kernel's memory controller is bound to
// a cgroup v1 hierarchy (/proc/cgroups: a hierarchy id other than 0),
// where cgroup v2 cannot have it.
func memoryOnV1() bool {
	f, err := os.Open("/proc/cgroups")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "#subsys_name hierarchy num_cgroups enabled"
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "memory" {
			return fs[1] != "0"
		}
	}
	return false
}
