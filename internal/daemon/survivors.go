package daemon

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// A GPU process that outlived its job is killed so that the next job gets
// the GPU. NVML names it by pid alone, and a pid is only a number: 0 where
// NVML cannot see it (a container), 1 or the daemon's own by mistake, or a
// pid the kernel gave to a new process since. kill(0) would end the
// daemon's own process group. So a survivor is killed only when it is
// verified: a real process (pid above 1), not this daemon nor in its
// process group, and started before its job ended (a process started
// after is not the job's, whatever its pid).

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// survivorOf reports whether pid may be killed as a process that outlived
// a job that ended at ended.
func survivorOf(pid int, ended time.Time) bool {
	if pid <= 1 || pid == os.Getpid() {
		return false
	}
	st, err := procfs.ReadStat(pid)
	if err != nil || !st.Live() || st.PGRP == syscall.Getpgrp() {
		return false
	}
	boot, ok := bootTime()
	if !ok {
		return false
	}
	started := boot.Add(time.Duration(st.StartTime) * time.Second / clockTicks)
	// A tick of slack each way: btime is whole seconds.
	return !ended.IsZero() && !started.After(ended.Add(time.Second))
}

// bootTime is when the machine booted (/proc/stat's btime).
func bootTime() (time.Time, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(n, 0), err == nil
		}
	}
	return time.Time{}, false
}
