package benchsys

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcCPU is CPU time read from /proc/PID/stat: the process's own (user
// and system) and that of its children it has waited for.
type ProcCPU struct {
	Self, Children time.Duration
}

// JobCPU is the CPU of the daemon's processes (as CPU), and of the
// children they have reaped. For slurm-lite the children are the jobs'
// supervisors (slurmstepd-lite), each with what it reaped in turn: the
// launcher, which becomes the job's script, and the script's own
// children. Real Slurm's slurmd starts slurmstepd through a double fork,
// so its supervisors are nobody's children here: Children counts only
// what slurmctld and slurmd reaped themselves.
func (s *System) JobCPU() (ProcCPU, error) {
	var total ProcCPU
	for _, pid := range s.pids() {
		c, err := readProcCPU(pid)
		if err != nil {
			return ProcCPU{}, err
		}
		total.Self += c.Self
		total.Children += c.Children
	}
	return total, nil
}

func readProcCPU(pid int) (ProcCPU, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcCPU{}, err
	}
	// The fields after the command name, which is in parentheses: state is
	// f[0], so utime, stime, cutime and cstime (fields 14-17 of proc(5))
	// are f[11] to f[14].
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 15 {
		return ProcCPU{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var t [4]int64
	for i := range t {
		if t[i], err = strconv.ParseInt(f[11+i], 10, 64); err != nil {
			return ProcCPU{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	tick := time.Second / clockTicks
	return ProcCPU{Self: time.Duration(t[0]+t[1]) * tick, Children: time.Duration(t[2]+t[3]) * tick}, nil
}
