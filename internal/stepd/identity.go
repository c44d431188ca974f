package stepd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// Identity is what a supervisor records about itself (stepd.json in the
// state directory) so that a restarted daemon can tell a live supervisor
// from a dead one whose pid the kernel gave to another process: a pid
// alone proves nothing after a reboot or a pid wrap, but the pair (boot
// id, process start time) names one process for the machine's lifetime.
type Identity struct {
	JobID uint32 `json:"job_id"`
	PID   int    `json:"pid"`
	// BootID is /proc/sys/kernel/random/boot_id when the supervisor
	// started; StartTime its start in clock ticks after boot (field 22 of
	// /proc/PID/stat).
	BootID    string    `json:"boot_id"`
	StartTime uint64    `json:"start_time"`
	Started   time.Time `json:"started"`
	// JobPID is the batch script's pid (SLURM_TASK_PID), 0 until it runs.
	JobPID int `json:"job_pid,omitempty"`
	// Tracking is how the job's processes are followed: "cgroup" or
	// "subreaper"; Cgroup the job's cgroup directory in cgroup mode.
	Tracking string `json:"tracking,omitempty"`
	Cgroup   string `json:"cgroup,omitempty"`
	// Socket is the control socket's path.
	Socket string `json:"socket"`
}

// Alive reports whether the supervisor that wrote rec still runs: the
// machine has not rebooted since (same boot id) and the process with
// rec.PID started when rec says. A pid reused by another process has
// another start time.
func Alive(rec Identity) bool {
	if rec.PID <= 0 || rec.BootID == "" {
		return false
	}
	boot, err := bootID()
	if err != nil || boot != rec.BootID {
		return false
	}
	st, err := procfs.ReadStat(rec.PID)
	// A zombie has ended: it only waits for its parent to read its status.
	return err == nil && st.StartTime == rec.StartTime && st.Live()
}

// ReadIdentity reads the supervisor's record from a job's state directory.
func ReadIdentity(dir string) (Identity, error) {
	var rec Identity
	b, err := os.ReadFile(filepath.Join(dir, IdentityFile))
	if err != nil {
		return rec, fmt.Errorf("reading supervisor record: %w", err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("reading supervisor record %s: %w", filepath.Join(dir, IdentityFile), err)
	}
	return rec, nil
}

func writeIdentity(dir string, rec Identity) error {
	b, err := json.MarshalIndent(rec, "", "\t")
	if err != nil {
		return err
	}
	return writeFileVolatile(filepath.Join(dir, IdentityFile), append(b, '\n'))
}

// selfIdentity is this process's identity.
func selfIdentity(job uint32) (Identity, error) {
	boot, err := bootID()
	if err != nil {
		return Identity{}, err
	}
	st, err := procStartTime(os.Getpid())
	if err != nil {
		return Identity{}, err
	}
	return Identity{JobID: job, PID: os.Getpid(), BootID: boot, StartTime: st, Started: time.Now()}, nil
}

func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("reading boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func procStartTime(pid int) (uint64, error) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return 0, err
	}
	return st.StartTime, nil
}
