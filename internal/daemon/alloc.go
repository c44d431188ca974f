package daemon

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Interactive allocations: srun and salloc outside a job. The caller
// submits a job without a script (POST /v1/alloc), which waits in the
// queue like any other. When the scheduling core starts it, the loop
// commits it RUNNING and launches its supervisor as for a batch job, in
// the supervisor's adopt mode (stepd.Spec.Adopt, internal/stepd's
// adopt.go): no script runs, the caller's own processes are the job. The
// caller learns that its job runs by asking (GET /v1/alloc, held until
// the job starts or a few seconds pass), and the answer to the job's
// owner has the supervisor adopt the caller (stepd.OpAdopt): into the
// job's cgroup, or tracked with its descendants and their process groups.
// The caller runs its command, then says how it ended (POST
// /v1/alloc/end), which the daemon passes on (stepd.OpFinish); the
// supervisor kills what the command left, writes the job's status and
// exits, and the loop records the end as a batch job's.
//
//	srun/salloc          daemon (handlers)                loop                  supervisor
//	POST /v1/alloc ────▶ submit, watch the caller
//	                     while pending (cancel if
//	                     it dies)
//	                                                      start: Launch ──────▶ adopt Spec.Caller
//	GET /v1/alloc ─────▶ OpAdopt{PID} ───────────────────────────────────────▶ (idempotent)
//	POST /v1/alloc/end ▶ OpFinish{PID, Exit} ────────────────────────────────▶ kill the rest,
//	                     wait for the record ◀─────────── finish(id) ◀──────── status.json
//
// Everything else is the supervisor's, as for a batch job: scancel, the
// time limit, requeue, preemption and a lost GPU end the job (SIGCONT and
// the signal to every process of the job, SIGKILL after KillWait); a
// caller that dies without a word ends it (CANCELLED, or as its ending
// says); a restarted daemon finds the supervisor alive (stepd.json).
//
// An interactive job cannot be requeued (Slurm refuses to requeue a job
// that is not a batch job): a requeue or a yield ends it CANCELLED, a
// preemption PREEMPTED (settle).

// interactiveMark is the setting, in the request's Other, that marks an
// interactive job. sbatch never sets it: it is not an sbatch option.
const interactiveMark = "slurm-lite-interactive"

// interactive reports whether a job is an interactive allocation.
func interactive(j store.Job) bool {
	return slices.ContainsFunc(j.Request.Other, func(s jobscript.Setting) bool { return s.Name == interactiveMark })
}

// submitAlloc is POST /v1/alloc: an interactive job, submitted as sbatch's
// are (the same checks and refusals), marked, and never requeued.
func (d *Daemon) submitAlloc(ctx context.Context, req *localapi.Request[api.AllocRequest]) (api.Allocation, error) {
	sub := req.Body.Submit
	r := &sub.Request
	no := false
	r.Requeue = &no
	r.Other = append(slices.DeleteFunc(slices.Clone(r.Other), func(s jobscript.Setting) bool { return s.Name == interactiveMark }),
		jobscript.Setting{Name: interactiveMark, Value: strings.Join(req.Body.Command, " "), HasValue: true})
	res, err := d.submit(ctx, &localapi.Request[api.Submit]{Caller: req.Caller, Body: sub})
	if err != nil || sub.TestOnly {
		return api.Allocation{JobID: res.JobID, State: slurm.Pending}, err
	}
	if pid := req.Caller.PID; pid > 0 {
		x := d.extras()
		x.mu.Lock()
		x.callers[res.JobID] = pid
		x.mu.Unlock()
		go d.watchCaller(res.JobID, pid)
	}
	return api.Allocation{JobID: res.JobID, State: slurm.Pending, KillWait: d.config().KillWait}, nil
}

// adoptSpec makes an interactive job's launch spec: the supervisor runs
// no script and adopts the caller, whom it watches from then on (the
// pending job's watcher lets go of it).
func (d *Daemon) adoptSpec(j store.Job, spec *stepd.Spec) {
	x := d.extras()
	x.mu.Lock()
	caller := x.callers[j.ID]
	delete(x.callers, j.ID)
	x.mu.Unlock()
	spec.Adopt, spec.Caller = true, caller
	spec.Script, spec.ScriptText, spec.Args = "", "", nil
}

// waitAlloc is GET /v1/alloc?job=N&wait=SECONDS: the job as its caller
// waits for it, held while it is pending (up to wait, at most a minute).
// Once it runs, the answer carries its allocation and environment, and
// the caller is adopted into the job. Asked to wait, a pending answer
// waits past wait for a scheduling pass to have decided on the job: slurmctld tries an
// allocation at once and srun says "queued and waiting" only when that
// try fails, so a loaded machine whose pass comes late must not make srun
// say it (srun_alloc.txtar failed so at a load of 30).
func (d *Daemon) waitAlloc(ctx context.Context, req *localapi.Request[struct{}]) (api.Allocation, error) {
	n, err := strconv.ParseUint(req.Query.Get("job"), 10, 32)
	if err != nil || n == 0 {
		return api.Allocation{}, localapi.Errorf(http.StatusBadRequest, "job=%q is not a job id", req.Query.Get("job"))
	}
	id := uint32(n)
	wait, _ := strconv.Atoi(req.Query.Get("wait"))
	deadline := clock.After(time.Duration(min(max(wait, 0), 60)) * time.Second)
	undecided := clock.After(time.Minute)
	for {
		j, err := d.st.Job(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return api.Allocation{}, stepRefusal(slurm.ErrInvalidJobID)
		} else if err != nil {
			return api.Allocation{}, err
		}
		if req.Caller.UID != 0 && req.Caller.UID != j.UID {
			return api.Allocation{}, stepRefusal(slurm.ErrAccessDenied)
		}
		if j.State != slurm.Pending || deadline.Passed() && (wait <= 0 || d.passDecided(j.ID) || undecided.Passed()) {
			return d.allocAnswer(ctx, j, req.Caller.PID)
		}
		select {
		case <-ctx.Done():
			return api.Allocation{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// passDecided reports whether a scheduling pass has decided on job id
// and left it pending: the published view holds its decision.
func (d *Daemon) passDecided(id uint32) bool {
	_, ok := d.liveView().decisions[id]
	return ok
}

// allocAnswer is the job as its caller sees it, adopting the caller once
// the job runs.
func (d *Daemon) allocAnswer(ctx context.Context, j store.Job, pid int) (api.Allocation, error) {
	cfg := d.config()
	out := api.Allocation{JobID: j.ID, State: j.State, Limit: effectiveLimit(cfg, &j), KillWait: cfg.KillWait}
	if j.State == slurm.Pending {
		out.Reason = j.Reason
		if dec, ok := d.liveView().decisions[j.ID]; ok && j.Hold == store.HoldNone {
			out.Reason = dec.Reason
		}
		return out, nil
	}
	if j.State != slurm.Running || !interactive(j) {
		return out, nil
	}
	out.Alloc = j.Alloc
	if pid > 0 {
		rep, err := d.callSupervisor(j, stepd.Request{Op: stepd.OpAdopt, PID: pid})
		if err != nil {
			d.log.Warn("interactive job: caller not adopted", "job", j.ID, "pid", pid, "err", err)
		}
		out.Adopted = rep.Adopted
	}
	var err error
	out.Env, err = d.jobEnv(ctx, j, nil)
	return out, err
}

// endAlloc is POST /v1/alloc/end: the caller's command ended. The
// supervisor ends the job; the answer waits until the loop has recorded
// the end, so that what the caller's user asks next (sacct) sees it.
func (d *Daemon) endAlloc(ctx context.Context, req *localapi.Request[api.AllocEnd]) (map[string]string, error) {
	e := req.Body
	j, err := d.st.Job(ctx, e.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, stepRefusal(slurm.ErrInvalidJobID)
	} else if err != nil {
		return nil, err
	}
	if req.Caller.UID != 0 && req.Caller.UID != j.UID {
		return nil, stepRefusal(slurm.ErrAccessDenied)
	}
	if !interactive(j) {
		return nil, refusal(slurm.ErrBatchOnly, slurm.ErrBatchOnly.Error())
	}
	ok := map[string]string{"status": "ok"}
	if j.State != slurm.Running {
		return ok, nil
	}
	if _, err := d.callSupervisor(j, stepd.Request{Op: stepd.OpFinish, PID: req.Caller.PID, Exit: e.ExitCode.String()}); err != nil {
		// Ended meanwhile (its caller's end raced this), or unreachable:
		// the loop records what the supervisor wrote, or the job as lost.
		d.log.Warn("interactive job: end not passed on to its supervisor", "job", j.ID, "err", err)
	}
	return ok, d.awaitRecord(ctx, j)
}

// recordPatience bounds how long endAlloc waits for the loop to record
// an interactive job's end.
const recordPatience = 30 * time.Second

// awaitRecord waits until the store shows j's run ended. Once its status
// is written the loop is told, as when a supervisor exits: the supervisor
// of an interactive job waits for its caller, which waits for this answer.
func (d *Daemon) awaitRecord(ctx context.Context, j store.Job) error {
	status := filepath.Join(d.runDir(j.ID, j.Restarts), stepd.StatusFile)
	told := false
	for deadline := clock.After(recordPatience); !deadline.Passed(); {
		cur, err := d.st.Job(ctx, j.ID)
		if err != nil {
			return err
		}
		if cur.Restarts != j.Restarts || (cur.State != slurm.Running && cur.State != slurm.Completing) {
			return nil
		}
		if _, err := os.Stat(status); err == nil && !told {
			select {
			case d.ended <- j.ID:
				told = true
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	d.log.Warn("interactive job: its end not recorded yet", "job", j.ID)
	return nil
}

// watchCaller follows the process that submitted an interactive job while
// the job is pending: if it dies then, the job is cancelled. Once the job
// starts, its supervisor watches the caller (adoptSpec takes it).
func (d *Daemon) watchCaller(id uint32, pid int) {
	x := d.extras()
	ours := func() bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.callers[id] == pid
	}
	defer func() {
		x.mu.Lock()
		if x.callers[id] == pid {
			delete(x.callers, id)
		}
		x.mu.Unlock()
	}()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n > 0 {
			break
		}
		if !ours() {
			return // started: its supervisor watches the caller
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cancelled := false
	err = d.st.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.Job(id)
		if err != nil || cur.State != slurm.Pending {
			return err
		}
		by := cur.UID
		cur.State, cur.End, cur.CancelledBy, cur.Reason = slurm.Cancelled, d.now(), &by, slurm.ReasonNone
		cancelled = true
		return tx.PutJob(cur)
	})
	if err != nil {
		d.log.Error("cancelling a pending interactive job whose caller is gone", "job", id, "err", err)
		return
	}
	if cancelled {
		d.log.Info("the caller of a pending interactive job is gone: job cancelled", "job", id, "pid", pid)
		d.wake()
	}
}
