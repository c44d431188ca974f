package daemon

import (
	"context"
	"fmt"
	"slices"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Automatic requeues, as slurmctld makes them: a batch script that exits
// with a code in RequeueExit runs again (in RequeueExitHold, held in
// SPECIAL_EXIT until its owner releases it); a job whose supervisor could
// not be started is requeued held ("launch failed requeued held"); a lost
// one goes back to PENDING (lost). Each such run is archived with a note
// that says so, and SchedulerParameters' max_batch_requeue bounds them:
// past it a RequeueExit end stands (FAILED), and a launch failure or a lost
// run leaves the job held (JobHoldMaxRequeue), so that a job that can never
// run does not loop.

// Notes that mark an automatically requeued run (store.AutoRequeues
// counts them, with the NODE_FAIL runs).
const (
	requeueExitMark  = store.RequeueExitNote
	launchFailedHeld = "launch failed requeued held"
)

// autoMarks are the notes AutoRequeues counts.
var autoMarks = []string{requeueExitMark, launchFailedHeld}

// exitRequeue says whether a job's end asks for an automatic requeue: a
// batch script that ended by itself (not stopped by the supervisor: a
// cancel or a time limit is final, as in Slurm) with an exit code in
// RequeueExit, or in RequeueExitHold (hold). A signal or an out-of-memory
// end never does.
func exitRequeue(cfg *config.Config, j store.Job, st stepd.Status) (code int, hold, ok bool) {
	if interactive(j) || st.Ending != nil || (st.State != slurm.Failed && st.State != slurm.Completed) {
		return 0, false, false
	}
	ec := parseExit(st.ExitCode)
	switch {
	case ec.Signal != 0:
		return 0, false, false
	case slices.Contains(cfg.RequeueExit, ec.Status):
		return ec.Status, false, true
	case slices.Contains(cfg.RequeueExitHold, ec.Status):
		return ec.Status, true, true
	}
	return 0, false, false
}

// settleExit requeues a job whose end asked for it (exitRequeue), held
// for RequeueExitHold, and reports whether it took the end: past
// max_batch_requeue automatic requeues, or after CUDA ran out of memory
// (a run with the same parameters would fail the same way), the end is
// recorded as it is, with a note that says why it was not requeued.
func (d *Daemon) settleExit(ctx context.Context, j store.Job, st stepd.Status) (bool, error) {
	cfg := d.config()
	code, hold, ok := exitRequeue(cfg, j, st)
	if !ok {
		return false, nil
	}
	list := "RequeueExit"
	if hold {
		list = "RequeueExitHold"
	}
	if cudaOOMAsUser(j, stdPaths(cfg.Node.NodeName, j).Error) {
		return true, d.recordEnd(ctx, j.ID, st, fmt.Sprintf("not requeued: exit code %d is in %s, but CUDA ran out of memory, and a run with the same parameters would too", code, list))
	}
	n, err := d.st.AutoRequeues(ctx, j.ID, autoMarks...)
	if err != nil {
		return true, err
	}
	most := cfg.SchedulerParameters.MaxBatchRequeue
	if n >= most {
		return true, d.recordEnd(ctx, j.ID, st, fmt.Sprintf("not requeued: exit code %d is in %s, but the job was requeued automatically %d times (SchedulerParameters max_batch_requeue = %d)", code, list, n, most))
	}
	h := store.HoldNone
	if hold {
		h = store.HoldSpecialExit
	}
	note := fmt.Sprintf("%s %d is in %s (automatic requeue %d of max_batch_requeue %d)", requeueExitMark, code, list, n+1, most)
	return true, d.requeueAs(ctx, j, st, slurm.Requeued, requeueAs{hold: h, keepExit: true}, note)
}

// launchFailed ends a run whose supervisor could not be started: the job
// is requeued held, "launch failed requeued held" (its owner releases it
// once the cause is fixed), or, past max_batch_requeue such requeues or
// for a job that may not be requeued, it fails (JobLaunchFailure, 0:53).
func (d *Daemon) launchFailed(ctx context.Context, j store.Job, st stepd.Status, cause error) error {
	n, err := d.st.AutoRequeues(ctx, j.ID, autoMarks...)
	if err != nil {
		return err
	}
	if !j.Requeue || interactive(j) || n >= d.config().SchedulerParameters.MaxBatchRequeue {
		return d.recordEnd(ctx, j.ID, st)
	}
	return d.requeueAs(ctx, j, st, slurm.Failed, requeueAs{hold: store.HoldLaunchFailed},
		launchFailedHeld+": "+cause.Error())
}

// lostHold is the hold a lost job is requeued with: none, until it has been
// requeued automatically more than max_batch_requeue times, then
// JobHoldMaxRequeue (a supervisor that dies at once would otherwise loop).
func (d *Daemon) lostHold(ctx context.Context, j store.Job) store.Hold {
	n, err := d.st.AutoRequeues(ctx, j.ID, autoMarks...)
	if err == nil && n >= d.config().SchedulerParameters.MaxBatchRequeue {
		return store.HoldMaxRequeue
	}
	return store.HoldNone
}
