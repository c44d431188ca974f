package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A batch job that scancel or its time limit ends is over at that moment
// in Slurm's eyes, though its processes may take KillWait to go: squeue
// shows it CG (COMPLETING) and scontrol JobState=COMPLETING until they are
// gone, and sacct already says CANCELLED by UID, or TIMEOUT, with that
// moment as its end. The store holds such a job as COMPLETING with its end
// time, and CancelledBy (a cancel) or Reason TimeLimit (its limit) saying
// which; the supervisor's final status, recorded when it exits, replaces
// all of it. Stops that lead elsewhere (requeue, preemption, yield, a lost
// GPU) keep the job RUNNING until then, and interactive jobs (srun,
// salloc) have their own end.

// markEnding records that a supervisor has begun ending job j for e (its
// status's Ending), if e is a cancel or the time limit. The job's end is
// the daemon's clock now, when it learns of the ending (a limit's: when it
// fell due, endAt), as slurmctld's end is its own time at the cancel or
// the limit (e.At is the supervisor's clock: not mixed in, see finish.go). The usage of the jobs running is
// charged up to it first, as a job's end charges it (usage.go): passes
// charge RUNNING jobs only.
func (d *Daemon) markEnding(ctx context.Context, j store.Job, e *stepd.Ending) {
	if e == nil || (e.Why != "" && e.Why != stepd.WhyTimeLimit) || interactive(j) {
		return
	}
	at := d.endAt(j, e, d.now())
	usage := d.chargeUntil(ctx, at)
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.Job(j.ID)
		if err != nil {
			return err
		}
		if cur.State != slurm.Running || cur.Restarts != j.Restarts {
			return errSkip // ended, requeued or marked meanwhile
		}
		if err := tx.PutUsage(usage...); err != nil {
			return err
		}
		cur.State, cur.End = slurm.Completing, at
		if e.Why == stepd.WhyTimeLimit {
			cur.Reason = slurm.ReasonTimeLimit
		} else {
			by := uint32(0)
			if e.By != nil {
				by = *e.By
			}
			cur.CancelledBy, cur.Reason = &by, slurm.ReasonNone
		}
		return tx.PutJob(cur)
	})
	if err != nil && !errors.Is(err, errSkip) {
		d.log.Error("recording a job's ending", "job", j.ID, "err", err)
	}
}

// endingState is the state accounting shows for a COMPLETING job: what
// its end will be (markEnding).
func endingState(j *store.Job) slurm.JobState {
	if j.State != slurm.Completing {
		return j.State
	}
	if j.Reason == slurm.ReasonTimeLimit {
		return slurm.Timeout
	}
	return slurm.Cancelled
}

// limitRecheck is how soon a job past its time limit whose supervisor has
// not ended it yet is asked again: the supervisor counts the limit from
// its own start, a moment after the start the store holds.
const limitRecheck = time.Second

// noteTimeouts has the running batch jobs past their time limits checked
// (checkTimeout), and returns when to look again: at the next limit, or
// in limitRecheck while a job past its limit is not marked yet. The pass
// never waits for a supervisor: one that is busy ending its job (or a
// loaded machine) can take seconds to answer, and the pass would start
// every other job that much later.
func (d *Daemon) noteTimeouts(now time.Time, jobs []*store.Job) (next time.Time) {
	cfg := d.config()
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	d.forgetLimitMails(jobs)
	for i := range jobs {
		j := jobs[i]
		if j.State != slurm.Running || interactive(*j) {
			continue
		}
		limit := effectiveLimit(cfg, j)
		if limit == slurmsyntax.Infinite || limit <= 0 {
			continue
		}
		if t := d.limitMails(now, *j, limit); !t.IsZero() {
			soonest(t)
		}
		if due := j.Start.Add(limit); now.Before(due) {
			soonest(due)
			continue
		}
		soonest(now.Add(limitRecheck))
		d.mu.Lock()
		busy := d.timeoutChecks[j.ID]
		if !busy {
			if d.timeoutChecks == nil {
				d.timeoutChecks = map[uint32]bool{}
			}
			d.timeoutChecks[j.ID] = true
		}
		d.mu.Unlock()
		if !busy {
			go d.checkTimeout(*j)
		}
	}
	return next
}

// checkTimeout asks a job's supervisor whether its time limit has ended
// it, and if so marks it (markEnding) and wakes the loop.
func (d *Daemon) checkTimeout(j store.Job) {
	defer func() {
		d.mu.Lock()
		delete(d.timeoutChecks, j.ID)
		d.mu.Unlock()
	}()
	rep, err := stepd.Call(d.runDir(j.ID, j.Restarts), stepd.Request{Op: stepd.OpStatus})
	if err != nil || rep.Status == nil {
		return // ended meanwhile: finish records it
	}
	if e := rep.Status.Ending; e != nil && e.Why == stepd.WhyTimeLimit {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d.markEnding(ctx, j, e)
		d.wake()
	}
}
