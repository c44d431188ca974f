package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/cron"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// finish records the end of a job whose supervisor has exited.
func (d *Daemon) finish(ctx context.Context, id uint32) {
	d.mu.Lock()
	delete(d.watched, id)
	d.mu.Unlock()
	in := d.stops.take(id)

	jr, err := d.st.JobRef(ctx, id)
	if err != nil {
		d.log.Error("job ended but cannot be read", "job", id, "err", err)
		return
	}
	j := *jr
	if j.State != slurm.Running && j.State != slurm.Completing {
		return
	}
	status, err := stepd.ReadStatus(d.runDir(id, j.Restarts))
	if err != nil {
		// The supervisor died without a word (killed, or the machine's
		// OOM killer): the job's fate is unknown, so it is lost.
		d.lost(ctx, j, fmt.Sprintf("supervisor ended without a status: %v", err))
		return
	}
	if in.kind == stopOwn {
		in.kind = stopFromStatus(status)
	}
	status = learnedEnd(j, status, d.endAt(j, status.Ending, d.now()))
	if err := d.settle(ctx, j, status, in); err != nil {
		// Kept, and tried again by every pass until it is recorded (a
		// full state disk): the status file stays where it is.
		d.log.Error("recording the end of a job; trying again at the next pass", "job", id, "err", err)
		d.stops.keepUnsettled(id, in)
	}
}

// settleAgain tries again to record the ends that could not be recorded.
func (d *Daemon) settleAgain(ctx context.Context) {
	for _, id := range d.stops.retry() {
		d.finish(ctx, id)
	}
}

// settle records a job's end as the stop that ended it meant: requeued,
// yielded, lost, preempted, or simply ended. in.note, when not "", says
// why the stop came (stopSparing): the requeued run keeps it, for sacct.
func (d *Daemon) settle(ctx context.Context, j store.Job, status stepd.Status, in stopIntent) error {
	var notes []string
	if in.note != "" {
		notes = []string{in.note}
	}
	after := in.kind
	// A stop that came too late: the script had ended by itself before
	// the supervisor got the request (it then sets no ending). The job's
	// own end stands; requeued instead, a job that had finished would run
	// again (seen when a pass yielded a job in the milliseconds between
	// its last line and the daemon hearing of its end).
	if interactive(j) && (after == stopRequeue || after == stopYield) {
		// Not a batch job: it cannot be requeued, and ends CANCELLED.
		if after == stopYield {
			dropYield(in.yield, status)
		}
		after = stopOwn
	}
	if status.Ending == nil && (after == stopRequeue || after == stopYield || after == stopPreempt) {
		d.log.Info("the job ended by itself before its stop", "job", j.ID, "stop", after.String(), "state", string(status.State))
		if after == stopYield {
			dropYield(in.yield, status)
		}
		after = stopOwn
	}
	switch after {
	case stopRequeue:
		return d.requeue(ctx, j, status, slurm.Requeued, notes...)
	case stopYield:
		return d.finishYield(ctx, j, status, in.yield)
	case stopNodeFail:
		d.lost(ctx, j, "its GPU was lost")
		return nil
	case stopPreempt:
		// Counted here, once per preempted run: a pass may plan the same
		// preemption again while the job is still stopping.
		d.web.preemptions.Add(1)
		if j.Requeue {
			return d.requeue(ctx, j, status, slurm.Preempted, notes...)
		}
		status.State = slurm.Preempted
	}
	if after == stopOwn {
		if took, err := d.settleCron(ctx, j, status); took {
			return err
		}
		if took, err := d.settleExit(ctx, j, status); took {
			return err
		}
	}
	return d.recordEnd(ctx, j.ID, status)
}

// stopFromStatus is what a stop was meant to lead to when this daemon did
// not ask for it (it was restarted meanwhile): the supervisor's status says
// why it ended the job. A yield's new batch size and GPUs were this
// process's alone, so a yield becomes a plain requeue.
func stopFromStatus(st stepd.Status) stopKind {
	if st.Ending == nil {
		return stopOwn
	}
	switch st.Ending.Why {
	case stepd.WhyRequeue:
		return stopRequeue
	case stepd.WhyPreemption:
		return stopPreempt
	case stepd.WhyNodeFail:
		return stopNodeFail
	}
	return stopOwn
}

// endLost ends a job whose GPU was lost: the supervisor stops it, and its
// end is recorded as NODE_FAIL (requeued if it may be).
func (d *Daemon) endLost(id uint32) {
	ctx := context.Background()
	j, err := d.st.Job(ctx, id)
	if err != nil || j.State != slurm.Running {
		return
	}
	if !d.stops.claim(id, stopIntent{kind: stopNodeFail}) {
		return // already being stopped
	}
	if _, err := d.callSupervisor(j, stepd.Request{Op: stepd.OpCancel, Why: stepd.WhyNodeFail}); err != nil {
		d.log.Error("stopping a job on a lost GPU", "job", id, "err", err)
	}
}

// releaseGPUs starts watching an ended job's GPUs until NVML shows them
// given back; until then the memory counts as held.
func (d *Daemon) releaseGPUs(j store.Job, ended time.Time) {
	if len(j.Alloc.GPUs) == 0 {
		return
	}
	d.mu.Lock()
	d.releasing[j.ID] = gpuJob(j, ended)
	d.mu.Unlock()
}

// recordEnd writes a job's final state, its batch step and its GPU use,
// and charges its last stretch of usage.
func (d *Daemon) recordEnd(ctx context.Context, id uint32, st stepd.Status, notes ...string) error {
	d.mu.Lock()
	use := d.gpuUse[id]
	delete(d.gpuUse, id)
	d.mu.Unlock()
	if st.End.IsZero() {
		st.End = d.now() // a lost job's: it ends now, by the daemon's clock
	}
	usage := d.chargeUntil(ctx, st.End)
	var stepsUser, stepsSys time.Duration
	if cur, err := d.st.JobRef(ctx, id); err == nil {
		stepsUser, stepsSys = d.stepsCPU(ctx, *cur)
	}
	var j store.Job
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = tx.Job(id); err != nil {
			return err
		}
		if err := tx.PutUsage(usage...); err != nil {
			return err
		}
		applyStatus(&j, st)
		if st.Reason == slurm.ReasonJobLaunchFailure && st.Error != "" {
			// Why, in the job's record (sacct -o Notes), for its user:
			// the daemon's log is the administrator's.
			j.Notes = append(j.Notes, "launch failed: "+st.Error)
		}
		j.PeakGPUMem = int64(use.PeakTotal)
		j.MeanGPUUtil = -1 // unknown (simulated GPUs, or NVML could not say)
		if mean, ok := use.MeanUtilization(); ok {
			j.MeanGPUUtil = mean
		}
		if _, err := tx.AppendEvent(d.schedEvent(id, evEnd, endDetail(j))); err != nil {
			return err
		}
		addNote(&j, d.memNote(j, st))
		if interactive(j) {
			// srun's or salloc's: no batch step, and its command's
			// output is the caller's terminal, not a file to look in.
			return tx.PutJob(j)
		}
		j.Notes = append(j.Notes, d.endNotes(j, use)...)
		j.Notes = append(j.Notes, notes...)
		if err := tx.PutJob(j); err != nil {
			return err
		}
		return tx.PutStep(batchStep(j, st, stepsUser, stepsSys))
	})
	if err != nil {
		return err
	}
	d.log.Info("job ended", "job", id, "state", string(j.State), "exit", j.ExitCode.String())
	// The end's mail goes out as slurmctld's job_completion_logger sends
	// it: for a job the controller ended, before the script's status
	// came in, so with accounting's exit code.
	ended := j
	ended.ExitCode = j.AccountedExitCode()
	d.tell(endKind(j), ended, "", string(j.Reason))
	d.arrayEnd(ctx, j)
	for _, n := range j.Notes {
		if strings.HasPrefix(n, gpu.LowMemoryNote) {
			d.tell(notify.GPUMemLow, j, "", n)
		}
	}
	d.releaseGPUs(j, j.End)
	d.wake()
	return nil
}

// A job's times are the daemon's clock's, as a job's are slurmctld's: its
// submit, eligible and start times are the daemon's when it took, freed
// and started the job, and its end is the daemon's when it learns of the
// end (learnedEnd), or when it marked the job COMPLETING (a cancel, its
// time limit: ending.go). A supervisor's own clock readings (status.json's
// start and ends) are not mixed in: a second later on a busy machine, they
// made the Began mail disagree with sacct and a job's Elapsed shrink once
// it ended. Its measurements stay its own: CPU time, peak memory, and how
// long its processes took to go (StopTime).
//
// The one exception is an end no daemon saw: a run that ended while the
// daemon was down (reattach, adoption). The supervisor's status.json is
// then the only witness of when it ended, and its end is taken (awayEnd),
// kept between the run's start and the moment the daemon found it.

// learnedEnd is st with the daemon's times: the start it gave the run,
// and an end at end (endAt), as the daemon learned that run j's
// supervisor had ended it (the job's end stays where markEnding put it).
// The batch step ends when the daemon learned its script had ended.
func learnedEnd(j store.Job, st stepd.Status, end time.Time) stepd.Status {
	st.Start = j.Start
	st.End = end
	if j.State == slurm.Completing && !j.End.IsZero() {
		st.End = j.End
	}
	st.Batch.End = end
	if st.End.After(end) {
		st.Batch.End = st.End
	}
	return st
}

// endAt is the end of run j that its supervisor ended for e (nil: the
// script ended by itself), as the daemon learns of it at now: now, but a
// time limit's end is the moment the limit fell due on the daemon's clock
// (the run's start and its limit), when that is earlier, as Slurm shows a
// TIMEOUT job's Elapsed at its limit. (The supervisor counts the limit on
// its own clock from its own start, a moment after the daemon's.)
func (d *Daemon) endAt(j store.Job, e *stepd.Ending, now time.Time) time.Time {
	if e == nil || e.Why != stepd.WhyTimeLimit {
		return now
	}
	limit := effectiveLimit(d.config(), &j)
	if limit == slurmsyntax.Infinite || limit <= 0 || j.Start.IsZero() {
		return now
	}
	if due := j.Start.Add(limit); due.Before(now) {
		return due
	}
	return now
}

// awayEnd is st for a run j that ended while no daemon was running, found
// at found: its ends are the supervisor's (the only witness), never
// before the run's start nor after found; its start is the daemon's.
func awayEnd(j store.Job, st stepd.Status, found time.Time) stepd.Status {
	within := func(t time.Time) time.Time {
		if t.IsZero() || t.After(found) {
			return found
		}
		if t.Before(j.Start) {
			return j.Start
		}
		return t
	}
	st.Start = j.Start
	st.End = within(st.End)
	if j.State == slurm.Completing && !j.End.IsZero() {
		st.End = j.End
	}
	st.Batch.End = within(st.Batch.End)
	return st
}

// applyStatus copies a supervisor's final status onto the job's row; its
// times are the daemon's already (learnedEnd, awayEnd).
func applyStatus(j *store.Job, st stepd.Status) {
	j.State = st.State
	j.ExitCode = parseExit(st.ExitCode)
	j.End = st.End
	switch {
	case st.Reason != "":
		j.Reason = st.Reason
	case st.State == slurm.Timeout:
		j.Reason = slurm.ReasonTimeLimit
	case st.State == slurm.Failed:
		j.Reason = slurm.ReasonNonZeroExitCode
	default:
		j.Reason = slurm.ReasonNone
	}
	if st.Ending != nil && st.Ending.By != nil && st.State == slurm.Cancelled {
		by := *st.Ending.By
		j.CancelledBy = &by
	}
}

// endNotes are what users should learn from how a job ended: that it died
// of CUDA running out of GPU memory (its stderr says so), and how its peak
// GPU memory compares with what it asked for.
func (d *Daemon) endNotes(j store.Job, use gpu.Usage) []string {
	var notes []string
	if j.State == slurm.Failed || j.State == slurm.Cancelled {
		errPath := stdPaths(d.config().Node.NodeName, j).Error
		if cudaOOMAsUser(j, errPath) {
			notes = append(notes, "CUDA out of memory (the job's stderr says so): ask for more GPU memory (--gpu-mem, --gres=shard:N) or lower the batch size")
		}
	}
	var asked uint64
	for _, g := range j.Alloc.GPUs {
		asked = uint64(g.Mem)
	}
	if note := use.Note(asked); note != "" {
		notes = append(notes, note)
	}
	return notes
}

// cudaOOMAsUser is cudaOOM with the job user's credentials (on a thread
// of its own: stepd.AsUser). The path is the user's to choose, down to
// every directory on it: read as root, a directory swapped for a link
// would let them learn whether a file only root may read holds the
// words. As the user, they learn nothing they could not read.
func cudaOOMAsUser(j store.Job, path string) bool {
	cred, err := credential(j)
	if err != nil {
		return false
	}
	oom := false
	_ = stepd.AsUser(cred, func() error {
		oom = cudaOOM(path)
		return nil
	})
	return oom
}

// cudaOOM reports whether the end of a job's error file shows CUDA's (or
// PyTorch's) out-of-memory error. Only the last 64 KiB is read: the words
// come last, and the file may be huge. The file is the user's: it is
// opened without following a symlink and without blocking on a FIFO, and
// only a regular file is read.
func cudaOOM(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	} else if fi.Size() > 64<<10 {
		_, _ = f.Seek(-64<<10, io.SeekEnd)
	}
	tail, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	for _, sig := range []string{"CUDA out of memory", "CUDA error: out of memory", "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation"} {
		if bytes.Contains(tail, []byte(sig)) {
			return true
		}
	}
	return false
}

// batchStep is the N.batch line of sacct for a run.
//
// Its CPU time is what the supervisor's reaped processes used less what
// the run's steps' tasks did (stepsCPU): srun's tasks are the batch
// shell's descendants, but their time is their steps', as in Slurm.
func batchStep(j store.Job, st stepd.Status, stepsUser, stepsSys time.Duration) store.Step {
	end := st.Batch.End
	if end.IsZero() {
		end = j.End
	}
	return store.Step{
		JobID: j.ID, Run: j.Restarts, ID: "batch", Name: "batch",
		State: st.Batch.State, Start: j.Start, End: end,
		ExitCode: parseExit(st.Batch.ExitCode), NTasks: 1, MaxRSS: st.PeakRSS,
		UserCPU: max(st.Batch.UserCPU-stepsUser, 0), SystemCPU: max(st.Batch.SystemCPU-stepsSys, 0),
	}
}

// stepsCPU sums the CPU time of the steps (srun) of j's current run.
func (d *Daemon) stepsCPU(ctx context.Context, j store.Job) (user, sys time.Duration) {
	user, sys, err := d.st.StepsCPU(ctx, j.ID, j.Restarts)
	if err != nil {
		return 0, 0
	}
	return user, sys
}

// requeue ends a run and puts the job back to PENDING under the same id,
// its run archived as REQUEUED (or PREEMPTED) for sacct -D, with notes
// that say why (a yield's: by whom, for which job, the checkpoint).
func (d *Daemon) requeue(ctx context.Context, j store.Job, st stepd.Status, as slurm.JobState, notes ...string) error {
	return d.requeueAs(ctx, j, st, as, requeueAs{}, notes...)
}

// requeueAs is how an automatic requeue differs from the others (retry.go).
type requeueAs struct {
	// hold is the hold the job waits in (SPECIAL_EXIT, a launch failure,
	// max_batch_requeue reached).
	hold store.Hold
	// keepExit keeps the ended run's exit code on the pending job, as
	// Slurm shows a job requeued by RequeueExit (ExitCode=42:0).
	keepExit bool
	// cron requeues a scrontab job for its schedule's next time
	// (settleCron); errCronOff when it no longer recurs.
	cron bool
}

// requeueAs is requeue with how (requeueAs).
func (d *Daemon) requeueAs(ctx context.Context, j store.Job, st stepd.Status, as slurm.JobState, how requeueAs, notes ...string) error {
	now := d.now()
	if st.End.IsZero() {
		st.End = now
	}
	d.releaseGPUs(j, now)
	usage := d.chargeUntil(ctx, st.End)
	stepsUser, stepsSys := d.stepsCPU(ctx, j)
	var ended store.Job
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.Job(j.ID)
		if err != nil {
			return err
		}
		if how.cron && (cur.Request.Cron == nil || cur.Request.Cron.Off) {
			// Its crontab was replaced or removed since the end was
			// read: the run ends as a plain job's.
			return errCronOff
		}
		if err := tx.PutUsage(usage...); err != nil {
			return err
		}
		applyStatus(&cur, st)
		cur.State = as
		cur.Notes = append(cur.Notes, notes...)
		addNote(&cur, d.memNote(cur, st))
		if err := tx.PutJob(cur); err != nil {
			return err
		}
		if err := tx.PutStep(batchStep(cur, st, stepsUser, stepsSys)); err != nil {
			return err
		}
		action := evRequeue
		if as == slurm.NodeFail {
			action = evNodeFail
		}
		if _, err := tx.AppendEvent(d.schedEvent(j.ID, action, endDetail(cur)+"; back to PENDING")); err != nil {
			return err
		}
		ended = cur
		next, err := tx.Requeue(j.ID, now)
		if err != nil || (how == requeueAs{}) {
			return err
		}
		switch how.hold {
		case store.HoldNone:
		case store.HoldMaxRequeue:
			next.Hold, next.Reason = how.hold, slurm.ReasonJobHoldMaxRequeue
		default:
			next.Hold, next.Reason = how.hold, slurm.ReasonJobHeldUser
		}
		if how.keepExit {
			next.ExitCode = cur.ExitCode
		}
		if how.cron {
			entry, err := cron.ParseSchedule(cur.Request.Cron.Spec)
			if err != nil {
				return fmt.Errorf("job %d's CrontabSpec: %w", j.ID, err)
			}
			next.Request.Begin = entry.Next(now)
			next.Eligible, next.Reason = next.Request.Begin, slurm.ReasonBeginTime
		}
		return tx.PutJob(next)
	})
	if err == nil {
		d.log.Info("job requeued", "job", j.ID, "as", string(as), "hold", int(how.hold))
		// The run as it ended: the mail's run time is its run's.
		d.tell(notify.Requeue, ended, "", string(as))
		d.wake()
	}
	return err
}

// removeCgroup removes a job's cgroup that the daemon, not a supervisor,
// must clean up (a lost job's, an interactive job's) once its processes
// have gone (until then rmdir says EBUSY), so that no empty cgroups are
// left behind. It gives up after 30 s: a process stuck in the kernel, or
// an interactive caller that lingers, keeps it, and it is then left as is.
func removeCgroup(dir string) {
	for range 600 {
		if err := os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lost ends a job whose supervisor is gone without a status: NODE_FAIL,
// and back to PENDING when the job may be requeued (Slurm's rule for a
// node that failed under a job).
func (d *Daemon) lost(ctx context.Context, j store.Job, why string) {
	d.log.Warn("job lost", "job", j.ID, "why", why)
	// What the dead supervisor left running must not hold the job's GPUs
	// and CPUs: its cgroup, when it had one, names every process. It is
	// killed only once proven to be this run's (stepd.LeftCgroup): a kill
	// on another run's record would end someone else's live job.
	dir := d.runDir(j.ID, j.Restarts)
	if cg, err := stepd.LeftCgroup(dir, stepd.RunOwner{JobID: j.ID, Run: j.Restarts, UID: j.UID}); err != nil {
		if _, ierr := stepd.ReadIdentity(dir); ierr == nil {
			d.log.Warn("not killing what the lost job's run directory names: not proven to be this run's", "job", j.ID, "why", err)
		}
	} else if cg != "" {
		if err := os.WriteFile(cg+"/cgroup.kill", []byte("1"), 0); err == nil {
			d.log.Info("killed what the lost job left running", "job", j.ID, "cgroup", cg)
		}
		go removeCgroup(cg)
	}
	st := stepd.Status{JobID: j.ID, State: slurm.NodeFail, ExitCode: "0:0", Start: j.Start, End: d.now(),
		Batch: stepd.StepStatus{State: slurm.Cancelled, ExitCode: "0:9"}}
	var err error
	if j.Requeue {
		err = d.requeueAs(ctx, j, st, slurm.NodeFail, requeueAs{hold: d.lostHold(ctx, j)})
	} else {
		err = d.recordEnd(ctx, j.ID, st)
	}
	if err != nil {
		d.log.Error("recording a lost job", "job", j.ID, "err", err)
	}
}

// stop asks a running job's supervisor to end it (SIGTERM, the grace time,
// SIGKILL) and remembers to requeue it afterwards. The scheduler's own
// stops (a preemption, idle GPUs, a GPU violation) are in the audit trail
// with detail as their why, and a preemption is told as PREEMPT.
func (d *Daemon) stop(ctx context.Context, id uint32, why, detail string) {
	_ = d.stopSparing(ctx, id, why, detail, 0, true) // logged there; the loop tries again
}

// stopSparing is stop, asked by process spare (the caller's, when a job
// requeues itself: its supervisor answers first and stops the job once
// spare and the job's processes it runs under have exited, see
// stepd.Request.Spare); audit
// says whether to record the stop as the scheduler's (a caller's requeue
// is recorded as the caller's by its handler).
func (d *Daemon) stopSparing(ctx context.Context, id uint32, why, detail string, spare int, audit bool) error {
	j, err := d.st.Job(ctx, id)
	if err != nil {
		return fmt.Errorf("reading job %d: %w", id, err)
	}
	if j.State != slurm.Running {
		return nil
	}
	cfg := d.config()
	var grace time.Duration
	for _, p := range cfg.Partitions {
		if p.PartitionName == j.Partition {
			grace = p.GraceTime
		}
	}
	kind := stopRequeue
	if why == stepd.WhyPreemption {
		kind = stopPreempt
	}
	if !d.stops.claim(id, stopIntent{kind: kind, note: stopNote(why, detail)}) {
		d.log.Info("job already being stopped", "job", id, "why", detail)
		return nil
	}
	if audit {
		// Recorded before the supervisor is asked, so that it precedes
		// the requeue the stop leads to.
		action := evRequeue
		if why == stepd.WhyPreemption {
			action = evPreempt
		}
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.AppendEvent(d.schedEvent(id, action, detail))
			return err
		})
		if err != nil {
			d.log.Error("recording an event", "job", id, "err", err)
		}
		if why == stepd.WhyPreemption {
			d.tell(notify.Preempt, j, schedulerName, detail)
		}
	}
	req := stepd.Request{Op: stepd.OpCancel, Why: why, Grace: grace, Spare: spare}
	if j.Request.Signal != nil && j.Request.Signal.Signal != 0 && why == stepd.WhyPreemption {
		req.Signal = j.Request.Signal.Signal // the job's checkpoint signal
	}
	rep, err := d.callSupervisor(j, req)
	if err != nil {
		d.log.Error("stopping job", "job", id, "err", err)
		return d.whyUnreached(j, err)
	}
	if st := rep.Status; st != nil && st.Ending == nil {
		// The batch script had ended by itself: the supervisor took no
		// stop (settle keeps the job's own end), so this is not a
		// requeue, and the caller must not be told it is.
		d.log.Info("stopping job: it had ended by itself", "job", id, "state", string(st.State))
		return d.whyUnreached(j, errors.New("the batch script had ended before the stop"))
	}
	d.log.Info("stopping job", "job", id, "why", detail)
	return nil
}

// stopNote is what a requeued run keeps of why it was stopped: "preempted
// for job 5", "requeued by alice", "requeued: GPUs idle past
// IdleGPUTimeout".
func stopNote(why, detail string) string {
	if why == stepd.WhyPreemption || strings.HasPrefix(detail, "requeued") {
		return detail
	}
	return "requeued: " + detail
}

// reattach matches every job the store says is running with its
// supervisor, before anything is scheduled:
//
//  1. a final status: the job ended while the daemon was away; record it;
//  2. a live supervisor (same boot, same process start time): watch it;
//  3. a supervisor still starting (it holds its lock): watch it;
//  4. nothing: the supervisor died with the machine or was killed: lost.
func (d *Daemon) reattach(ctx context.Context) error {
	jobs, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Running, slurm.Completing}})
	if err != nil {
		return fmt.Errorf("reading running jobs: %w", err)
	}
	// The jobs that ended while the daemon was away are settled in the
	// order they ended: each end charges the jobs still running up to it
	// (usage.go), and one that ended earlier must not be among them.
	type ended struct {
		j  store.Job
		st stepd.Status
	}
	var done []ended
	var live []store.Job
	found := d.now()
	for _, j := range jobs {
		if st, err := stepd.ReadStatus(d.runDir(j.ID, j.Restarts)); err == nil {
			done = append(done, ended{j, awayEnd(j, st, found)})
		} else {
			live = append(live, j)
		}
	}
	slices.SortStableFunc(done, func(a, b ended) int { return a.st.End.Compare(b.st.End) })
	for _, e := range done {
		d.log.Info("job ended while the daemon was away", "job", e.j.ID, "state", string(e.st.State))
		if err := d.settle(ctx, e.j, e.st, stopIntent{kind: stopFromStatus(e.st)}); err != nil {
			return err
		}
	}
	for _, j := range live {
		dir := d.runDir(j.ID, j.Restarts)
		if st, err := stepd.ReadStatus(dir); err == nil { // ended just now
			if err := d.settle(ctx, j, learnedEnd(j, st, d.endAt(j, st.Ending, d.now())), stopIntent{kind: stopFromStatus(st)}); err != nil {
				return err
			}
			continue
		}
		if id, err := stepd.ReadIdentity(dir); err == nil && stepd.Alive(id) {
			d.log.Info("reattached", "job", j.ID, "supervisor", id.PID)
			d.watch(j.ID, id.PID, dir)
			continue
		}
		if stepd.Supervised(dir) || supervisorComing(j, dir, d.now()) {
			d.log.Info("reattached to a starting supervisor", "job", j.ID)
			d.watch(j.ID, 0, dir)
			continue
		}
		if neverLaunched(j, dir) {
			if err := d.unstart(ctx, j); err != nil {
				return err
			}
			continue
		}
		d.lost(ctx, j, "no supervisor after a restart")
	}
	return nil
}

// watch waits, in a goroutine, for a supervisor that is not the daemon's
// child (it was started by an earlier daemon) to exit. A pidfd names the
// process itself, so a pid reused later cannot fool it; without one (old
// kernels) the supervisor's lock is polled.
func (d *Daemon) watch(id uint32, pid int, dir string) {
	d.mu.Lock()
	d.watched[id] = true
	d.mu.Unlock()
	go func() {
		if pid > 0 {
			if fd, err := unix.PidfdOpen(pid, 0); err == nil {
				// The identity was checked before the pidfd was opened:
				// check again now that the pidfd pins the process.
				if ident, err := stepd.ReadIdentity(dir); err == nil && stepd.Alive(ident) {
					fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
					for {
						if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
							break
						}
					}
				}
				unix.Close(fd)
				d.ended <- id
				return
			}
		}
		for stepd.Supervised(dir) {
			time.Sleep(time.Second)
		}
		d.ended <- id
	}()
}

// neverLaunched says whether a batch job committed RUNNING never had a
// supervisor: the daemon died between the commit and writing the launch
// spec (start's steps 1 and 2), so no supervisor was or can be started,
// and the job's script never ran. Interactive jobs have no spec.
func neverLaunched(j store.Job, dir string) bool {
	if interactive(j) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, stepd.SpecFile))
	return errors.Is(err, fs.ErrNotExist)
}

// unstart puts a job that never ran back to PENDING as it was before its
// start was committed: not a run, so no NODE_FAIL, no requeue and no
// restart counted (a restart count of 2 for a job that ran once misled
// both its checkpoint logic and sacct).
func (d *Daemon) unstart(ctx context.Context, j store.Job) error {
	d.log.Warn("job was never launched before the daemon stopped: pending again", "job", j.ID)
	return d.st.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.Job(j.ID)
		if err != nil {
			return err
		}
		cur.State, cur.Reason = slurm.Pending, slurm.ReasonNone
		cur.Start, cur.End, cur.Alloc = time.Time{}, time.Time{}, store.Alloc{}
		return tx.PutJob(cur)
	})
}

// supervisorStartGrace bounds how long a job's supervisor may take from
// the daemon's launch to holding its lock. A daemon that died in that
// moment leaves a supervisor that is still coming: the restarted one waits
// for it rather than declaring the job lost (and running it twice).
const supervisorStartGrace = 5 * time.Second

// supervisorComing waits, while the job started less than
// supervisorStartGrace ago, for its supervisor to take its lock or to have
// written its status; it reports whether one did.
//
// now is the daemon's time, which j.Start is on; the wait itself is real
// time (the supervisor is a real process), so the grace left is turned
// into a deadline on the machine's clock.
func supervisorComing(j store.Job, dir string, now time.Time) bool {
	if _, err := os.Stat(filepath.Join(dir, stepd.SpecFile)); err != nil {
		return false // never launched
	}
	for deadline := clock.After(j.Start.Add(supervisorStartGrace).Sub(now)); !deadline.Passed(); {
		if stepd.Supervised(dir) {
			return true
		}
		if _, err := stepd.ReadStatus(dir); err == nil {
			return true // it came and went: the watch reads its status
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// parseExit reads Slurm's "status:signal".
func parseExit(s string) store.ExitCode {
	a, b, _ := strings.Cut(s, ":")
	st, _ := strconv.Atoi(a)
	sig, _ := strconv.Atoi(b)
	return store.ExitCode{Status: st, Signal: sig}
}

// callSupervisor sends a request to a running job's supervisor. A job is
// RUNNING on disk a moment before its supervisor listens (see start), so a
// request in that moment waits for the socket, as long as the supervisor is
// starting; one that is gone answers at once.
func (d *Daemon) callSupervisor(j store.Job, req stepd.Request) (stepd.Reply, error) {
	dir := d.runDir(j.ID, j.Restarts)
	req.Run = &stepd.RunOwner{JobID: j.ID, Run: j.Restarts, UID: j.UID}
	deadline := clock.After(10 * time.Second) // real: a real process's socket
	for {
		rep, err := stepd.Call(dir, req)
		if err == nil || rep.Error != "" || deadline.Passed() {
			return rep, err
		}
		if _, serr := stepd.ReadStatus(dir); serr == nil {
			return rep, err // it has ended meanwhile
		}
		d.mu.Lock()
		starting := d.watched[j.ID]
		d.mu.Unlock()
		if !starting && !stepd.Supervised(dir) {
			return rep, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
