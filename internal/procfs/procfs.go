// Package procfs reads what the kernel shows of processes and cgroups
// under /proc and a cgroup v2 directory: a process's stat line, whether
// it lives, its descendants, a cgroup's members. The supervisor
// (internal/stepd), the daemon and the GPU inventory's tests share it.
//
// Glossary:
//   - Live: a process that has not exited. A zombie (state Z) or a dead
//     task (X) has exited and only waits for its parent to reap it.
//   - Start time: field 22 of /proc/PID/stat, in clock ticks after boot;
//     with the boot id it names one process for the machine's life.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// Stat is what slurm-lite reads of /proc/PID/stat.
type Stat struct {
	State     byte
	PPID      int
	PGRP      int
	StartTime uint64
}

// Live reports whether the stat is a live process's (not a zombie's).
func (s Stat) Live() bool { return s.State != 'Z' && s.State != 'X' }

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b)
}

// ParseStat parses a /proc/PID/stat line. The command name (field 2) is
// in parentheses and may itself hold spaces and parentheses, so the
// fields are counted from the last ')'.
func ParseStat(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("malformed /proc stat %q", b)
	}
	// Fields from 3 (state) on.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("malformed /proc stat %q", b)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Stat{}, fmt.Errorf("malformed /proc stat ppid %q", f[1])
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return Stat{}, fmt.Errorf("malformed /proc stat pgrp %q", f[2])
	}
	st, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("malformed /proc stat start time %q", f[19])
	}
	return Stat{State: f[0][0], PPID: ppid, PGRP: pgrp, StartTime: st}, nil
}

// StatLive reports whether a /proc/PID/stat line is a live process's: its
// state, the first field after the command name, is not Z or X. A line
// too short to say counts as live.
func StatLive(b []byte) bool {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return true
	}
	f := strings.Fields(string(b[i+1:]))
	return len(f) == 0 || (f[0] != "Z" && f[0] != "X")
}

// Alive reports whether pid names a live process.
func Alive(pid int) bool {
	st, err := ReadStat(pid)
	return err == nil && st.Live()
}

// Comm is the process's command name (/proc/PID/comm), "" when gone.
func Comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// PIDs lists the processes in /proc.
func PIDs() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if p, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Descendants lists the live descendants of root. It follows the
// kernel's lists of each thread's children (/proc/PID/task/TID/children),
// so that a look costs what the job runs, not what the machine runs:
// reading every process's stat on every look was a tenth of a trivial
// job's CPU. A kernel without those lists (CONFIG_PROC_CHILDREN unset)
// gets the scan of /proc.
func Descendants(root int) []int {
	if root == os.Getpid() && !HasChildren() {
		// The usual answer once a job is over, for a subreaper: the
		// orphans of its descendants are its own children, so none
		// means no descendant at all. Asked this way, /proc is not
		// touched: reading it for every thread of the supervisor cost
		// its reaper more, in the kernel, than the question saved.
		return nil
	}
	if !haveChildrenLists() {
		return descendantsByScan(root)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range Children(p) {
			st, err := ReadStat(c)
			if err != nil || !st.Live() {
				continue // gone, or a zombie, which has no children
			}
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// HasChildren reports whether the calling process has a child, live or
// not yet reaped (waitid answers ECHILD when it has none).
func HasChildren() bool {
	var info [128]byte // siginfo_t
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, 0 /* P_ALL */, 0, uintptr(unsafe.Pointer(&info)),
			syscall.WEXITED|syscall.WNOHANG|syscall.WNOWAIT, 0, 0)
		if e != syscall.EINTR {
			return e != syscall.ECHILD
		}
	}
}

// Children lists pid's children, of every thread (a process's children
// are its forking thread's, and an orphan given to a subreaper goes to
// any of its threads); none once pid has ended.
func Children(pid int) []int {
	base := "/proc/" + strconv.Itoa(pid) + "/task/"
	d, err := os.Open(base)
	if err != nil {
		return nil
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	for _, tid := range tids {
		b, err := os.ReadFile(base + tid + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// haveChildrenLists reports whether the kernel has /proc's children lists.
var haveChildrenLists = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
})

// descendantsByScan lists the live descendants of root from every
// process's stat in /proc.
func descendantsByScan(root int) []int {
	children := map[int][]int{}
	for _, pid := range PIDs() {
		st, err := ReadStat(pid)
		if err != nil || !st.Live() {
			continue
		}
		children[st.PPID] = append(children[st.PPID], pid)
	}
	var out []int
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// InGroups lists the live processes whose process group is one of groups.
func InGroups(groups map[int]bool) []int {
	if len(groups) == 0 {
		return nil
	}
	var out []int
	for _, p := range PIDs() {
		if st, err := ReadStat(p); err == nil && st.Live() && groups[st.PGRP] {
			out = append(out, p)
		}
	}
	return out
}

// CgroupProcs lists the members of a cgroup and of its descendants, as
// cgroup.procs lists them (zombies included).
func CgroupProcs(dir string) []int {
	var out []int
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}

// JoinCgroup moves pid into the cgroup dir (and so every process it
// starts after).
func JoinCgroup(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("moving pid %d into %s: %w", pid, dir, err)
	}
	return nil
}
