package gpu

import (
	"bytes"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// Procs answers the questions about host processes that GPU accounting
// needs. HostProcs reads /proc; tests give a fake.
type Procs interface {
	// User returns the login name of the process's owner (its uid as
	// text when the name cannot be found).
	User(pid int) (string, error)
	// JobID returns the Slurm job id the process belongs to, from
	// SLURM_JOB_ID in its environment or a job_N element of its cgroup
	// path; "" when it names none.
	JobID(pid int) (string, error)
	// Alive reports whether the process still exists (zombies do not
	// count: they hold no GPU memory).
	Alive(pid int) bool
}

// HostProcs reads a /proc tree. Root is "/proc" on a live machine.
type HostProcs struct{ Root string }

var _ Procs = HostProcs{}

func (h HostProcs) path(pid int, name string) string {
	return filepath.Join(h.Root, strconv.Itoa(pid), name)
}

// User reads the real uid from /proc/PID/status.
func (h HostProcs) User(pid int) (string, error) {
	b, err := os.ReadFile(h.path(pid, "status"))
	if err != nil {
		return "", fmt.Errorf("owner of pid %d: %w", pid, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "Uid:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		if u, err := user.LookupId(f[0]); err == nil {
			return u.Username, nil
		}
		return f[0], nil
	}
	return "", fmt.Errorf("owner of pid %d: no Uid line in %s", pid, h.path(pid, "status"))
}

// JobID looks for SLURM_JOB_ID in /proc/PID/environ (readable by the
// process's owner and root), then for a job_N element in /proc/PID/cgroup,
// where Slurm's cgroup plugins put a job's processes
// (/slurm/uid_1000/job_42/step_batch).
func (h HostProcs) JobID(pid int) (string, error) {
	env, envErr := os.ReadFile(h.path(pid, "environ"))
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("SLURM_JOB_ID=")); ok && len(v) > 0 {
			return string(v), nil
		}
	}
	cg, cgErr := os.ReadFile(h.path(pid, "cgroup"))
	if id := cgroupJobID(string(cg)); id != "" {
		return id, nil
	}
	if envErr != nil && cgErr != nil {
		return "", fmt.Errorf("job of pid %d: %w", pid, envErr)
	}
	return "", nil
}

// cgroupJobID finds "job_N" as a path element in /proc/PID/cgroup text.
func cgroupJobID(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		// hierarchy-ID:controllers:path
		_, rest, _ := strings.Cut(line, ":")
		_, path, _ := strings.Cut(rest, ":")
		for elem := range strings.SplitSeq(path, "/") {
			if id, ok := strings.CutPrefix(elem, "job_"); ok && id != "" {
				if _, err := strconv.ParseUint(id, 10, 64); err == nil {
					return id
				}
			}
		}
	}
	return ""
}

// Alive reports whether /proc/PID exists and is not a zombie.
func (h HostProcs) Alive(pid int) bool {
	b, err := os.ReadFile(h.path(pid, "stat"))
	if err != nil {
		return false
	}
	return procfs.StatLive(b)
}

// noProcs is the Procs of a machine where nothing can be looked up.
type noProcs struct{}

func (noProcs) User(int) (string, error)  { return "", nil }
func (noProcs) JobID(int) (string, error) { return "", nil }
func (noProcs) Alive(int) bool            { return false }
