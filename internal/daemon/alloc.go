package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Interactive allocations: srun and salloc outside a job. The caller
// submits a job without a script (POST /v1/alloc), which waits in the
// queue like any other. When the scheduling core starts it, the loop
// commits it RUNNING with its allocation as for a batch job, but launches
// no supervisor (startInteractive): the caller's own processes are the
// job. The caller learns that its job runs by asking (GET /v1/alloc, held
// until the job starts or a few seconds pass), and the first answer to the
// job's owner adopts the caller into the job: into a cgroup of its own
// where cgroup v2 lets the daemon make one and move the caller (the daemon
// runs as root), otherwise by tracking the caller's descendants and their
// process groups. The caller runs its command, then says how it ended
// (POST /v1/alloc/end), and the job ends.
//
// The daemon plays the supervisor's part for such a job:
//
//   - its control socket (stepd.sock in the run directory) answers the
//     supervisor's protocol, so that scancel, scontrol requeue, yield,
//     preemption, an updated time limit and a lost GPU end an interactive
//     job as they end a batch one: SIGCONT and the signal to every process
//     of the job, SIGKILL after KillWait;
//   - the time limit is a timer here (TIME LIMIT, then TIMEOUT);
//   - the caller is watched through a pidfd: if it dies without a word
//     while the job is pending, the job is cancelled; while it runs, the
//     job ends (CANCELLED, or as its ending says) and what it left is
//     killed;
//   - stepd.json names the caller, so that a restarted daemon finds the job
//     alive (stepd.Alive) and watches it, instead of calling it lost.
//
// An interactive job cannot be requeued (Slurm refuses to requeue a job
// that is not a batch job): a requeue or a preemption ends it.

// interactiveMark is the setting, in the request's Other, that marks an
// interactive job. sbatch never sets it: it is not an sbatch option.
const interactiveMark = "slurm-lite-interactive"

// interactive reports whether a job is an interactive allocation.
func interactive(j store.Job) bool {
	return slices.ContainsFunc(j.Request.Other, func(s jobscript.Setting) bool { return s.Name == interactiveMark })
}

// allocation is a running interactive job: no supervisor runs it; the
// daemon tracks the caller's processes itself.
type allocation struct {
	d      *Daemon
	jobID  uint32
	run    int
	dir    string // the run directory (control socket, identity)
	leader int    // the caller (srun, salloc); 0 when unknown

	mu sync.Mutex
	// cgroup is the job's cgroup, "" when its processes are tracked by
	// process group.
	cgroup string
	// groups are process groups seen among the caller's descendants.
	groups  map[int]bool
	adopted map[int]bool
	// ending is set once the daemon ends the job (cancel, time limit,
	// requeue, preemption).
	ending     *stepd.Ending
	killTimer  *time.Timer
	limitTimer *time.Timer
	ln         *net.UnixListener
	// recorded: the job's end is in the store; done: cleaned up.
	recorded, done bool
}

// alloc is the running interactive job id, or nil.
func (d *Daemon) alloc(id uint32) *allocation {
	x := d.extras()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.allocs[id]
}

// endingInfo says whether the daemon is ending the job.
func (a *allocation) endingInfo(killWait time.Duration) api.JobEnding {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ending == nil {
		return api.JobEnding{KillWait: killWait}
	}
	return api.JobEnding{Ending: true, Why: a.ending.Why, At: a.ending.At, KillWait: killWait}
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

// startInteractive is the loop's start hook: for an interactive job just
// committed RUNNING it sets up what its supervisor would (cgroup, control
// socket, identity, time limit) and reports true, so that no supervisor
// is launched; for a batch job it reports false.
func (d *Daemon) startInteractive(j store.Job, limit time.Duration) bool {
	if !interactive(j) {
		return false
	}
	x := d.extras()
	x.mu.Lock()
	leader := x.callers[j.ID]
	x.mu.Unlock()
	cg, err := allocCgroup(j, d.config().Node.CPUs)
	if err != nil {
		d.log.Info("interactive job tracked by process group", "job", j.ID, "why", err)
	}
	a := d.newAllocation(j, leader, cg, limit)
	if leader > 0 {
		a.writeIdentity()
	}
	d.log.Info("interactive job started", "job", j.ID, "caller", leader, "cgroup", a.cgroup)
	return true
}

// readoptInteractive takes an interactive job back after a restart of the
// daemon, when reattach found its caller alive (stepd.json names the
// caller): its control socket, its time limit and a watch on its caller,
// as startInteractive set them up. It reports false for a batch job.
func (d *Daemon) readoptInteractive(j store.Job, id stepd.Identity) bool {
	if !interactive(j) {
		return false
	}
	a := d.newAllocation(j, id.PID, id.Cgroup, effectiveLimit(d.config(), &j))
	a.adopted[id.PID] = true
	d.mu.Lock()
	d.watched[j.ID] = true
	d.mu.Unlock()
	go d.watchCaller(j.ID, id.PID)
	d.log.Info("interactive job taken back", "job", j.ID, "caller", id.PID, "cgroup", id.Cgroup)
	return true
}

// newAllocation sets up a running interactive job: its run directory and
// control socket, its time limit (counted from its start).
func (d *Daemon) newAllocation(j store.Job, leader int, cgroup string, limit time.Duration) *allocation {
	a := &allocation{d: d, jobID: j.ID, run: j.Restarts, dir: d.runDir(j.ID, j.Restarts), leader: leader,
		cgroup: cgroup, groups: map[int]bool{}, adopted: map[int]bool{}}
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		d.log.Error("interactive job: run directory", "job", j.ID, "err", err)
	}
	if err := a.listen(); err != nil {
		d.log.Error("interactive job: control socket", "job", j.ID, "err", err)
	}
	if limit > 0 && limit != slurmtime.Infinite {
		a.limitTimer = time.AfterFunc(max(time.Until(j.Start.Add(limit)), 0), func() {
			a.end(stepd.Ending{Why: stepd.WhyTimeLimit, Signal: syscall.SIGTERM}, d.config().KillWait, false)
		})
	}
	x := d.extras()
	x.mu.Lock()
	x.allocs[j.ID] = a
	x.mu.Unlock()
	return a
}

// waitAlloc is GET /v1/alloc?job=N&wait=SECONDS: the job as its caller
// waits for it, held while it is pending (up to wait, at most a minute).
// Once it runs, the answer carries its allocation and environment, and
// the caller is adopted into the job.
func (d *Daemon) waitAlloc(ctx context.Context, req *localapi.Request[struct{}]) (api.Allocation, error) {
	n, err := strconv.ParseUint(req.Query.Get("job"), 10, 32)
	if err != nil || n == 0 {
		return api.Allocation{}, localapi.Errorf(http.StatusBadRequest, "job=%q is not a job id", req.Query.Get("job"))
	}
	id := uint32(n)
	wait, _ := strconv.Atoi(req.Query.Get("wait"))
	deadline := time.Now().Add(time.Duration(min(max(wait, 0), 60)) * time.Second)
	for {
		j, err := d.st.Job(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return api.Allocation{}, stepRefusal(codeInvalidJobID)
		} else if err != nil {
			return api.Allocation{}, err
		}
		if req.Caller.UID != 0 && req.Caller.UID != j.UID {
			return api.Allocation{}, stepRefusal(codeAccessDenied)
		}
		a := d.alloc(id)
		// RUNNING is committed a moment before the loop sets the job up.
		settled := j.State != slurm.Pending && (j.State != slurm.Running || a != nil || !interactive(j))
		if settled || !time.Now().Before(deadline) {
			return d.allocAnswer(ctx, j, a, req.Caller.PID)
		}
		select {
		case <-ctx.Done():
			return api.Allocation{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// allocAnswer is the job as its caller sees it, adopting the caller once
// the job runs.
func (d *Daemon) allocAnswer(ctx context.Context, j store.Job, a *allocation, pid int) (api.Allocation, error) {
	cfg := d.config()
	out := api.Allocation{JobID: j.ID, State: j.State, Limit: effectiveLimit(cfg, &j), KillWait: cfg.KillWait}
	if j.State == slurm.Pending {
		out.Reason = j.Reason
		d.mu.Lock()
		if dec, ok := d.decisions[j.ID]; ok && j.Hold == store.HoldNone {
			out.Reason = dec.Reason
		}
		d.mu.Unlock()
		return out, nil
	}
	if j.State != slurm.Running || a == nil {
		return out, nil
	}
	out.Alloc = j.Alloc
	out.Adopted = a.adopt(pid)
	var err error
	out.Env, err = d.jobEnv(ctx, j, nil)
	return out, err
}

// adopt makes pid one of the job's processes and says how it is tracked.
func (a *allocation) adopt(pid int) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.leader == 0 && pid > 0 {
		// The job started before its caller was known.
		a.leader = pid
		defer a.writeIdentity()
	}
	if pid > 0 && !a.adopted[pid] && a.cgroup != "" {
		if err := joinCgroup(a.cgroup, pid); err != nil {
			a.d.log.Warn("interactive job tracked by process group", "job", a.jobID, "err", err)
			_ = os.Remove(a.cgroup)
			a.cgroup = ""
		}
	}
	a.adopted[pid] = true
	if a.cgroup != "" {
		return "cgroup"
	}
	return "process group"
}

// endAlloc is POST /v1/alloc/end: the caller's command ended.
func (d *Daemon) endAlloc(ctx context.Context, req *localapi.Request[api.AllocEnd]) (map[string]string, error) {
	e := req.Body
	j, err := d.st.Job(ctx, e.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, stepRefusal(codeInvalidJobID)
	} else if err != nil {
		return nil, err
	}
	if req.Caller.UID != 0 && req.Caller.UID != j.UID {
		return nil, stepRefusal(codeAccessDenied)
	}
	if !interactive(j) {
		return nil, refusal(codeBatchOnly, "Only batch jobs are accepted or processed")
	}
	if j.State != slurm.Running {
		return map[string]string{"status": "ok"}, nil
	}
	a := d.alloc(j.ID)
	if a == nil {
		// Started by an earlier daemon: record the end as it is said.
		return map[string]string{"status": "ok"}, d.recordAllocEnd(ctx, j.ID, nil, e.ExitCode)
	}
	a.mu.Lock()
	ending := a.ending
	a.mu.Unlock()
	if err := d.recordAllocEnd(ctx, j.ID, ending, e.ExitCode); err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.recorded = true
	a.mu.Unlock()
	// What the command left goes now; the caller itself, which is asking,
	// goes on to exit, and its watcher cleans up the rest.
	a.signal(syscall.SIGKILL, req.Caller.PID)
	a.mu.Lock()
	leader := a.leader
	a.mu.Unlock()
	if leader != req.Caller.PID && !alive(leader) {
		a.cleanup()
	}
	return map[string]string{"status": "ok"}, nil
}

// codeBatchOnly is ESLURM_BATCH_ONLY.
const codeBatchOnly = slurm.ErrBatchOnly

// recordAllocEnd writes an interactive job's end: its state from how the
// daemon ended it, else from the command's exit code.
func (d *Daemon) recordAllocEnd(ctx context.Context, id uint32, ending *stepd.Ending, exit store.ExitCode) error {
	d.mu.Lock()
	use := d.gpuUse[id]
	delete(d.gpuUse, id)
	after := d.after[id]
	delete(d.after, id)
	d.mu.Unlock()
	st := stepd.Status{JobID: id, State: slurm.Completed, ExitCode: exit.String(), End: time.Now(), Ending: ending}
	switch {
	case after == afterNodeFail:
		st.State, st.ExitCode = slurm.NodeFail, "0:0"
	case ending != nil && ending.Why == stepd.WhyTimeLimit:
		st.State, st.ExitCode = slurm.Timeout, "0:0"
	case ending != nil && ending.Why == stepd.WhyPreemption:
		st.State, st.ExitCode = slurm.Preempted, "0:0"
	case ending != nil:
		st.State, st.ExitCode = slurm.Cancelled, "0:0"
	case exit.Status != 0 || exit.Signal != 0:
		st.State = slurm.Failed
	}
	var j store.Job
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		var err error
		if j, err = tx.Job(id); err != nil {
			return err
		}
		if j.State != slurm.Running {
			return errSkip
		}
		st.Start = j.Start
		applyStatus(&j, st)
		if st.State == slurm.Cancelled && ending != nil && ending.By == nil {
			j.CancelledBy = nil
		}
		j.PeakGPUMem = int64(use.PeakTotal)
		if mean, ok := use.MeanUtilization(); ok {
			j.MeanGPUUtil = mean
		}
		return tx.PutJob(j)
	})
	if errors.Is(err, errSkip) {
		return nil
	}
	if err != nil {
		return err
	}
	d.log.Info("job ended", "job", id, "state", string(j.State), "exit", j.ExitCode.String())
	d.releaseGPUs(j, j.End)
	d.wake()
	return nil
}

// watchCaller follows the process that submitted an interactive job: if
// it dies while the job is pending, the job is cancelled; while it runs,
// the job ends and what is left of it is killed.
func (d *Daemon) watchCaller(id uint32, pid int) {
	x := d.extras()
	defer func() {
		x.mu.Lock()
		delete(x.callers, id)
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
		if a := d.alloc(id); a != nil {
			if a.isDone() {
				return
			}
			if a.tracksGroups() {
				a.noteGroups()
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := d.st.Job(ctx, id)
	if err != nil {
		return
	}
	switch {
	case j.State == slurm.Pending:
		d.log.Info("the caller of a pending interactive job is gone: job cancelled", "job", id, "pid", pid)
		by := j.UID
		err = d.st.Update(ctx, func(tx *store.Tx) error {
			cur, err := tx.Job(id)
			if err != nil || cur.State != slurm.Pending {
				return err
			}
			cur.State, cur.End, cur.CancelledBy, cur.Reason = slurm.Cancelled, time.Now(), &by, slurm.ReasonNone
			return tx.PutJob(cur)
		})
		d.wake()
	case j.State == slurm.Running:
		a := d.alloc(id)
		if a == nil {
			return
		}
		a.mu.Lock()
		recorded, ending := a.recorded, a.ending
		a.mu.Unlock()
		if !recorded {
			d.log.Warn("the caller of an interactive job ended without a word: job ended", "job", id, "pid", pid)
			if ending == nil {
				ending = &stepd.Ending{} // ended by no one: CANCELLED
			}
			err = d.recordAllocEnd(ctx, id, ending, store.ExitCode{Signal: int(syscall.SIGKILL)})
		}
		a.cleanup()
	default:
		// Ended and recorded (the caller said so before exiting): once the
		// caller itself is gone (not merely another process that spoke for
		// the job), what is left to clean up is the daemon's, the job's
		// cgroup with it. While the caller lives it may still be printing
		// its last words; endAlloc's own check covers the other order.
		if a := d.alloc(id); a != nil {
			a.mu.Lock()
			leader := a.leader
			a.mu.Unlock()
			if leader == pid || !alive(leader) {
				a.cleanup()
			}
		}
	}
	if err != nil {
		d.log.Error("ending an interactive job whose caller is gone", "job", id, "err", err)
	}
}

// tracksGroups says that the job has no cgroup: its processes are
// followed by process group.
func (a *allocation) tracksGroups() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cgroup == ""
}

func (a *allocation) isDone() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.done
}

// noteGroups remembers the process groups of the caller's descendants, so
// that they can be killed once the caller is gone (and its children with
// it from its tree).
func (a *allocation) noteGroups() {
	a.mu.Lock()
	leader := a.leader
	a.mu.Unlock()
	if leader <= 0 {
		return
	}
	own, _ := readStat(leader)
	for _, p := range descendantsOf(leader) {
		if st, err := readStat(p); err == nil && st.pgrp != own.pgrp && st.pgrp > 1 {
			a.mu.Lock()
			a.groups[st.pgrp] = true
			a.mu.Unlock()
		}
	}
}

// pids lists the job's live processes: the cgroup's, or the caller, its
// descendants and the process groups they made.
func (a *allocation) pids() []int {
	a.mu.Lock()
	cg, leader := a.cgroup, a.leader
	a.mu.Unlock()
	if cg != "" {
		return cgroupMembers(cg)
	}
	var out []int
	if leader > 0 {
		out = append([]int{leader}, descendantsOf(leader)...)
	}
	a.noteGroups()
	a.mu.Lock()
	groups := make([]int, 0, len(a.groups))
	for g := range a.groups {
		groups = append(groups, g)
	}
	a.mu.Unlock()
	for _, p := range allPIDs() {
		if st, err := readStat(p); err == nil && slices.Contains(groups, st.pgrp) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// signal sends sig to the job's processes but skip.
func (a *allocation) signal(sig syscall.Signal, skip ...int) int {
	n := 0
	for _, p := range a.pids() {
		// Never 0 or 1 (kill(0) is the daemon's own group).
		if p > 1 && !slices.Contains(skip, p) && syscall.Kill(p, sig) == nil {
			n++
		}
	}
	return n
}

// end starts ending the job as a supervisor does: SIGCONT and e.Signal to
// every process (the caller too, which then says that its step was
// aborted), SIGKILL after grace; with kill, SIGKILL now. A second request
// may only bring SIGKILL closer.
func (a *allocation) end(e stepd.Ending, grace time.Duration, kill bool) {
	a.mu.Lock()
	if a.done {
		a.mu.Unlock()
		return
	}
	if a.ending != nil {
		if kill && a.killTimer != nil {
			a.killTimer.Reset(0)
		}
		a.mu.Unlock()
		return
	}
	if e.Signal == 0 {
		e.Signal = syscall.SIGTERM
	}
	e.At = time.Now()
	a.ending = &e
	if kill {
		grace = 0
	}
	a.killTimer = time.AfterFunc(grace, a.killAll)
	a.mu.Unlock()
	a.d.log.Info("ending interactive job", "job", a.jobID, "why", e.Why, "grace", grace)
	if !kill {
		a.signal(syscall.SIGCONT)
		a.signal(e.Signal)
	}
}

// killAll sends SIGKILL to every process of the job.
func (a *allocation) killAll() {
	a.mu.Lock()
	cg := a.cgroup
	a.mu.Unlock()
	if cg != "" {
		_ = os.WriteFile(filepath.Join(cg, "cgroup.kill"), []byte("1"), 0)
	}
	a.signal(syscall.SIGKILL)
	if cg == "" {
		a.mu.Lock()
		for g := range a.groups {
			if g > 1 { // kill(-1) is every process
				_ = syscall.Kill(-g, syscall.SIGKILL)
			}
		}
		a.mu.Unlock()
	}
}

// cleanup kills what the job left and forgets it: timers, socket, cgroup.
func (a *allocation) cleanup() {
	a.mu.Lock()
	if a.done {
		a.mu.Unlock()
		return
	}
	a.done = true
	for _, t := range []*time.Timer{a.killTimer, a.limitTimer} {
		if t != nil {
			t.Stop()
		}
	}
	ln := a.ln
	a.mu.Unlock()
	a.killAll()
	if ln != nil {
		ln.Close()
	}
	a.mu.Lock()
	cg := a.cgroup
	a.mu.Unlock()
	if cg != "" {
		// The caller (srun, salloc) may still be in it, on its way out.
		go removeCgroup(cg)
	}
	x := a.d.extras()
	x.mu.Lock()
	if x.allocs[a.jobID] == a {
		delete(x.allocs, a.jobID)
	}
	x.mu.Unlock()
	a.d.mu.Lock()
	delete(a.d.watched, a.jobID)
	a.d.mu.Unlock()
}

// listen serves the supervisor's control protocol for the job at its run
// directory's stepd.sock, for the daemon's own stepd.Call.
func (a *allocation) listen() error {
	path := filepath.Join(a.dir, stepd.SocketFile)
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	a.ln = ln
	go func() {
		for {
			c, err := ln.AcceptUnix()
			if err != nil {
				return
			}
			go a.serve(c)
		}
	}()
	return nil
}

// serve answers one control request.
func (a *allocation) serve(c *net.UnixConn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	enc := json.NewEncoder(c)
	if uid, err := peerUID(c); err != nil || uid != 0 && int(uid) != os.Getuid() {
		_ = enc.Encode(stepd.Reply{Error: "only slurmd-lite may control this job"})
		return
	}
	var r stepd.Request
	if err := json.NewDecoder(c).Decode(&r); err != nil {
		_ = enc.Encode(stepd.Reply{Error: fmt.Sprintf("bad request: %v", err)})
		return
	}
	_ = enc.Encode(a.handle(r))
}

// handle answers the supervisor's operations for an interactive job.
func (a *allocation) handle(r stepd.Request) stepd.Reply {
	switch r.Op {
	case stepd.OpStatus:
		st := stepd.Status{JobID: a.jobID, State: slurm.Running, Tracking: "interactive"}
		a.mu.Lock()
		if a.ending != nil {
			e := *a.ending
			st.Ending = &e
		}
		a.mu.Unlock()
		return stepd.Reply{Status: &st}
	case stepd.OpSignal:
		if r.Signal <= 0 || r.Signal > 64 {
			return stepd.Reply{Error: fmt.Sprintf("signal %d is not a signal", r.Signal)}
		}
		if r.Target == stepd.TargetBatch {
			return stepd.Reply{} // an interactive job has no batch shell
		}
		// srun and salloc send on what people send them: the daemon's
		// signals go to the tasks alone, or they would get them twice.
		return stepd.Reply{Signalled: a.signal(r.Signal, a.launchers()...)}
	case stepd.OpCancel:
		grace := r.Grace
		if grace <= 0 {
			grace = a.d.config().KillWait
		}
		a.end(stepd.Ending{Why: r.Why, By: r.By, Signal: r.Signal}, grace, r.Kill)
		st := stepd.Status{JobID: a.jobID, State: slurm.Running}
		return stepd.Reply{Status: &st}
	}
	return stepd.Reply{Error: fmt.Sprintf("unknown operation %q; want status, signal or cancel", r.Op)}
}

// launchers are the job's srun and salloc processes.
func (a *allocation) launchers() []int {
	var out []int
	for _, p := range a.pids() {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm"); err == nil {
			if name := strings.TrimSpace(string(b)); name == "srun" || name == "salloc" {
				out = append(out, p)
			}
		}
	}
	return append(out, a.leader)
}

// writeIdentity names the caller in stepd.json, as a supervisor names
// itself, so that a restarted daemon finds the job alive (and watches it)
// rather than lost. The caller holds a.mu or owns a alone.
func (a *allocation) writeIdentity() {
	if err := a.identity(); err != nil {
		a.d.log.Warn("interactive job: identity not written; a restarted daemon will call it lost", "job", a.jobID, "err", err)
	}
}

func (a *allocation) identity() error {
	if a.leader <= 0 {
		return errors.New("the caller's pid is unknown")
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return err
	}
	st, err := readStat(a.leader)
	if err != nil {
		return err
	}
	id := stepd.Identity{JobID: a.jobID, PID: a.leader, BootID: strings.TrimSpace(string(boot)), StartTime: st.start,
		Started: time.Now(), Tracking: "interactive", Cgroup: a.cgroup, Socket: filepath.Join(a.dir, stepd.SocketFile)}
	b, err := json.MarshalIndent(id, "", "\t")
	if err != nil {
		return err
	}
	tmp := filepath.Join(a.dir, "."+stepd.IdentityFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(a.dir, stepd.IdentityFile))
}
