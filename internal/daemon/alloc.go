package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// allocation is a running interactive job (srun or salloc outside a job):
// no supervisor runs it; the daemon tracks the caller's processes itself.
type allocation struct {
	mu sync.Mutex
	// cgroup is the job's cgroup, "" when its processes are tracked by
	// process group.
	cgroup string
	// endingWhy and endingAt are set once the daemon ends the job (cancel,
	// time limit, requeue): Slurm's "DUE TO" words and when.
	endingWhy string
	endingAt  time.Time
}

// alloc is the running interactive job id, or nil.
func (d *Daemon) alloc(id uint32) *allocation {
	x := d.extras()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.allocs[id]
}

// ending says whether the daemon is ending the job.
func (a *allocation) ending(killWait time.Duration) api.JobEnding {
	a.mu.Lock()
	defer a.mu.Unlock()
	return api.JobEnding{Ending: !a.endingAt.IsZero(), Why: a.endingWhy, At: a.endingAt, KillWait: killWait}
}

// joinCgroup moves pid into the cgroup dir (and so every process it
// starts after).
func joinCgroup(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("moving pid %d into %s: %w", pid, dir, err)
	}
	return nil
}
