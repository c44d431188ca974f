package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// The processes of interactive jobs (alloc.go), as the kernel shows them:
// cgroups, /proc, a socket's peer.

// joinCgroup moves pid into the cgroup dir (and so every process it
// starts after).
func joinCgroup(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("moving pid %d into %s: %w", pid, dir, err)
	}
	return nil
}

// allocCgroup makes the job's cgroup under the daemon's own, with its
// memory limit and CPUs where the controllers allow.
func allocCgroup(j store.Job, cpus int) (string, error) {
	parent, err := stepd.ProbeCgroup("")
	if err != nil {
		return "", err
	}
	// The name carries this daemon's pid and the job's run: never another
	// daemon's cgroup, even an empty one (see stepd's track.go for the race
	// that reusing one opens).
	dir := filepath.Join(parent, fmt.Sprintf("job_%d_%d_r%d", j.ID, os.Getpid(), j.Restarts))
	if err := os.Mkdir(dir, 0o755); errors.Is(err, os.ErrExist) {
		if err := os.Remove(dir); err != nil {
			return "", fmt.Errorf("cgroup %s is left over and not empty: %w", dir, err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	if j.Alloc.Mem > 0 {
		_ = os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(j.Alloc.Mem, 10)), 0)
	}
	if c := pinnable(j.Alloc.CPUs); len(c) > 0 && len(c) < cpus {
		_ = os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(slurmtime.FormatRanges(c)), 0)
	}
	return dir, nil
}

// peerUID is the uid of a Unix socket's peer.
func peerUID(c *net.UnixConn) (uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}

// procStat is what the daemon reads of /proc/PID/stat.
type procStat struct {
	state byte
	ppid  int
	pgrp  int
	start uint64
}

// readStat reads /proc/PID/stat; the command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed /proc stat %q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("malformed /proc stat %q", b)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	start, err3 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc stat %q: %w", b, err)
	}
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp, start: start}, nil
}

// alive says whether pid names a live process (not a zombie).
func alive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z' && st.state != 'X'
}

// allPIDs lists the processes in /proc.
func allPIDs() []int {
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

// descendantsOf lists root's live descendants.
func descendantsOf(root int) []int {
	children := map[int][]int{}
	for _, p := range allPIDs() {
		if st, err := readStat(p); err == nil && st.state != 'Z' && st.state != 'X' {
			children[st.ppid] = append(children[st.ppid], p)
		}
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

// cgroupMembers lists the processes of a cgroup and its children.
func cgroupMembers(dir string) []int {
	var out []int
	_ = filepath.WalkDir(dir, func(path string, de os.DirEntry, err error) error {
		if err != nil || !de.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil && alive(p) {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}
