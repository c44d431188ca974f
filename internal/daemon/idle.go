package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// idleTracker follows how long each running job's GPUs have sat at 0%
// utilization (IdleGPUTimeout): people hold GPUs with an idle notebook.
type idleTracker struct {
	since  map[uint32]time.Time // first sample of the current idle stretch
	warned map[uint32]bool
}

// idleVerdict is what one sample means for one job.
type idleVerdict int

const (
	idleNo    idleVerdict = iota
	idleWarn              // idle past the timeout: note it (once)
	idleYield             // and it is yieldable: yield it
)

// observe takes one sample of a job's GPU utilization (-1: unknown, as for
// simulated GPUs, which are never called idle) and says what to do.
func (t *idleTracker) observe(id uint32, util float64, now time.Time, timeout time.Duration, yieldable bool) idleVerdict {
	if timeout <= 0 || util != 0 {
		delete(t.since, id)
		return idleNo
	}
	start, ok := t.since[id]
	if !ok {
		t.since[id] = now
		return idleNo
	}
	if now.Sub(start) < timeout {
		return idleNo
	}
	if yieldable {
		delete(t.since, id)
		return idleYield
	}
	if t.warned[id] {
		return idleNo
	}
	t.warned[id] = true
	return idleWarn
}

// forget drops a job that no longer runs.
func (t *idleTracker) forget(id uint32) {
	delete(t.since, id)
	delete(t.warned, id)
}

// checkIdle applies IdleGPUTimeout to the running jobs of a sample.
func (d *Daemon) checkIdle(ctx context.Context, now time.Time, jobs []*store.Job, gs gpu.Snapshot) {
	timeout := d.config().IdleGPUTimeout
	running := map[uint32]bool{}
	for _, j := range jobs {
		if j.State != slurm.Running || len(j.Alloc.GPUs) == 0 {
			continue
		}
		running[j.ID] = true
		util := -1.0
		if js, ok := gs.Jobs[strconv.Itoa(int(j.ID))]; ok {
			util = js.Utilization
		}
		yieldable := d.yieldable(*j) // reads the config: not under d.mu
		d.mu.Lock()
		v := d.idle.observe(j.ID, util, now, timeout, yieldable)
		d.mu.Unlock()
		switch v {
		case idleWarn:
			d.log.Warn("job's GPUs are idle", "job", j.ID, "for", timeout.String())
			d.addNote(ctx, j.ID, fmt.Sprintf("GPUs idle (0%% utilization) for %s or more", timeout))
		case idleYield:
			d.log.Warn("yielding a job whose GPUs are idle", "job", j.ID, "for", timeout.String())
			d.addNote(ctx, j.ID, fmt.Sprintf("yielded: GPUs idle (0%% utilization) for %s", timeout))
			d.stop(ctx, j.ID, stepd.WhyRequeue, "GPUs idle past IdleGPUTimeout")
		}
	}
	d.mu.Lock()
	for id := range d.idle.since {
		if !running[id] {
			d.idle.forget(id)
		}
	}
	d.mu.Unlock()
}

// addNote adds a note to a job's record.
func (d *Daemon) addNote(ctx context.Context, id uint32, note string) {
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		j, err := tx.Job(id)
		if err != nil {
			return err
		}
		j.Notes = append(j.Notes, note)
		return tx.PutJob(j)
	})
	if err != nil {
		d.log.Error("noting a job", "job", id, "err", err)
	}
}

// sweepCheckpoints removes the checkpoint directories of jobs that ended
// more than CheckpointKeepDays ago (never at job end: a checkpoint may hold
// the final weights). It runs at most once an hour.
func (d *Daemon) sweepCheckpoints(ctx context.Context, now time.Time) {
	cfg := d.config()
	if cfg.CheckpointKeepDays <= 0 || now.Sub(d.lastSweep) < time.Hour {
		return
	}
	d.lastSweep = now
	keep := time.Duration(cfg.CheckpointKeepDays) * 24 * time.Hour
	// Jobs that ended in the day before the cut: each sweep looks a little
	// further back than an hour so that a daemon down for a while catches up.
	ended, err := d.st.Jobs(ctx, store.Filter{Since: now.Add(-keep - 48*time.Hour), Until: now.Add(-keep)})
	if err != nil {
		return
	}
	for _, j := range ended {
		if !j.State.Finished() || j.End.IsZero() || now.Sub(j.End) < keep {
			continue
		}
		dir := checkpointDir(cfg.CheckpointDir, j)
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		// As root, in directories that are the users': through safepath,
		// following no symlink (dirs.go).
		removed, err := removeCheckpointDir(cfg.CheckpointDir, dir, j)
		switch {
		case err != nil:
			d.log.Warn("an old checkpoint directory is not removed", "job", j.ID, "dir", dir, "err", err)
		case removed:
			d.log.Info("removed an old checkpoint directory", "job", j.ID, "dir", dir)
		}
	}
}

// handleViolations applies GPUViolationPolicy to the jobs that broke their
// word on a GPU this sample: each (job, kind) is noted once; "yield" then
// yields the job, "kill" cancels it, so that the jobs sharing its GPU are
// not the ones to die of out-of-memory.
func (d *Daemon) handleViolations(vs []gpu.Violation) {
	ctx := context.Background()
	policy := d.config().GPUViolationPolicy
	for _, v := range vs {
		d.log.Warn("job broke its word on a GPU", "job", v.JobID, "gpu", v.Index, "kind", string(v.Kind), "detail", v.Text, "policy", policy)
		n, err := strconv.Atoi(v.JobID)
		if err != nil {
			continue
		}
		id := uint32(n)
		key := v.JobID + "/" + string(v.Kind)
		d.mu.Lock()
		seen := d.violated[key]
		d.violated[key] = true
		d.mu.Unlock()
		if seen {
			continue
		}
		d.addNote(ctx, id, fmt.Sprintf("GPU %d: %s (GPUViolationPolicy=%s)", v.Index, v.Text, policy))
		switch policy {
		case config.ViolationYield:
			d.stop(ctx, id, stepd.WhyRequeue, "broke its word on a GPU: "+v.Text)
		case config.ViolationKill:
			if j, err := d.st.Job(ctx, id); err == nil && j.State == slurm.Running {
				if _, err := d.callSupervisor(j, stepd.Request{Op: stepd.OpCancel}); err != nil {
					d.log.Error("cancelling a job that broke its word", "job", id, "err", err)
				}
			}
		}
	}
}
