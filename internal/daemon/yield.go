package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// yieldPlan is what a yield in progress will do once the job has stopped.
type yieldPlan struct {
	by        uint32
	byName    string
	batchSize int
	gpus      *int
	gpuMem    int64
	priority  uint32
	eligible  time.Time
	// forJob is the pending job the GPUs go to first (yieldFor); 0 for
	// none.
	forJob uint32
	// fullGPUs, for a shrink, is the GPUs the job had before (kept for the
	// regrow); -1 for a regrow, which clears it; 0 leaves it.
	fullGPUs int
	// timeLimit, for a shrink or a regrow, is the limit the job runs with
	// next (sched.Shrink.TimeLimit: stretched by the GPUs a shrink takes,
	// brought back by a regrow); 0 leaves it.
	timeLimit time.Duration
	// done receives the supervisor's final status once the job is
	// requeued (buffered: the loop never waits on a caller that left).
	done chan stepd.Status
	// steps are what a waited-for yield has done so far, for scontrol's
	// progress lines (yieldSteps); under Daemon.yieldWaits.mu.
	steps []api.YieldStep
}

// yieldWaiters are the yields a caller waits for, by job, until the
// answer (past finishYield, through the GPUs' release): their steps are
// what GET PathYieldSteps shows. Their own lock, which also guards each
// plan's steps: a terminal's polling never takes the daemon's mu.
type yieldWaiters struct {
	mu    sync.Mutex
	byJob map[uint32]*yieldPlan
}

// addStep records a step of a waited-for yield for yieldSteps.
func (d *Daemon) addStep(plan *yieldPlan, st api.YieldStep) {
	w := &d.yieldWaits
	w.mu.Lock()
	plan.steps = append(plan.steps, st)
	w.mu.Unlock()
}

// stepsOf is a copy of a plan's steps so far.
func (d *Daemon) stepsOf(plan *yieldPlan) []api.YieldStep {
	w := &d.yieldWaits
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(plan.steps)
}

// yieldSteps answers GET PathYieldSteps: the steps the yield in progress
// on a job (?job=ID, or ?gpu=INDEX) has taken; none when no yield is in
// progress there (not started yet, or over: the yield's answer then
// carries them all). It reads the store and d.yieldWaits only, so a terminal's
// polling never holds up the loop.
func (d *Daemon) yieldSteps(ctx context.Context, req *localapi.Request[struct{}]) ([]api.YieldStep, error) {
	j, err := d.yieldTarget(ctx, api.Yield{Job: req.Query.Get("job"), GPU: req.Query.Get("gpu")})
	if err != nil {
		return nil, err
	}
	if d.yieldDenied(req.Caller, j) != "" {
		return nil, refusal(slurm.ErrAccessDenied, slurm.ErrAccessDenied.Error())
	}
	w := &d.yieldWaits
	w.mu.Lock()
	defer w.mu.Unlock()
	if plan := w.byJob[j.ID]; plan != nil {
		return slices.Clone(plan.steps), nil
	}
	return []api.YieldStep{}, nil
}

// yield is scontrol yield. In order (the design brief's protocol):
//
//  1. find the job (or whatever holds the GPU) and check the caller may:
//     the owner, root, an operator, or a YieldGroup member for a yieldable
//     job (--yieldable, or in a partition with PreemptMode REQUEUE);
//  2. a pending job only changes its request;
//  3. a running one gets its checkpoint signal (its --signal, else
//     SIGTERM) from its supervisor, the grace time, then SIGKILL;
//  4. when it has ended, it is requeued under the same id with the new
//     batch size, GPU count or memory, keeping its priority and eligible
//     time (finishYield);
//  5. the answer waits until the inventory shows its GPU memory back.
func (d *Daemon) yield(ctx context.Context, req *localapi.Request[api.Yield]) (api.Yielded, error) {
	y := req.Body
	caller := req.Caller
	j, err := d.yieldTarget(ctx, y)
	if err != nil {
		return api.Yielded{}, err
	}
	if why := d.yieldDenied(caller, j); why != "" {
		e := refusal(slurm.ErrAccessDenied, slurm.ErrAccessDenied.Error())
		e.Hint = why
		return api.Yielded{}, e
	}
	var gpuMem int64
	if y.GPUMem != "" {
		b, err := slurmsyntax.ParseSize(y.GPUMem, slurmsyntax.MiB)
		if err != nil || b <= 0 {
			return api.Yielded{}, localapi.Errorf(http.StatusBadRequest, "GpuMem=%q is not a size such as 16G", y.GPUMem)
		}
		gpuMem = int64(b)
	}
	if y.BatchSize != nil && *y.BatchSize < 1 || y.GPUs != nil && *y.GPUs < 1 {
		return api.Yielded{}, localapi.Errorf(http.StatusBadRequest, "BatchSize and Gpus must be 1 or more")
	}
	batch := nextBatchSize(j, y.BatchSize, y.GPUs)
	if j.State == slurm.Pending {
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			cur, err := tx.Job(j.ID)
			if err != nil {
				return err
			}
			applyYieldRequest(&cur, batch, y.GPUs, gpuMem)
			return tx.PutJob(cur)
		})
		if err != nil {
			return api.Yielded{}, err
		}
		d.auditYield(ctx, caller, j.ID, "pending: request changed")
		d.wake()
		out := api.Yielded{JobID: j.ID, Pending: true, BatchSize: batch, GPUMem: gpuMem}
		if y.GPUs != nil {
			out.NumGPUs = *y.GPUs
		}
		return out, nil
	}
	if j.State != slurm.Running {
		e := refusal(slurm.ErrAlreadyDone, slurm.ErrAlreadyDone.Error())
		e.Hint = fmt.Sprintf("job %d is %s: only a pending or running job can be yielded", j.ID, j.State)
		return api.Yielded{}, e
	}

	grace := d.graceOf(j)
	if y.Grace != nil {
		grace = time.Duration(*y.Grace) * time.Second
	}
	plan := &yieldPlan{by: caller.UID, byName: caller.User, batchSize: batch, gpus: y.GPUs, gpuMem: gpuMem,
		eligible: j.Eligible, forJob: d.yieldFor(ctx, caller, j), done: make(chan stepd.Status, 1)}
	if err := d.startYield(j, plan, grace); err != nil {
		var u *unreached
		if errors.As(err, &u) {
			d.log.Info("yield not sent", "job", j.ID, "by", caller.User, "err", err)
			e := refusal(u.code(), u.code().Error())
			e.Hint = u.tell("yield", "nothing to yield")
			return api.Yielded{}, e
		}
		return api.Yielded{}, err
	}
	out := api.Yielded{JobID: j.ID, GPUs: gpuIndices(j.Alloc), BatchSize: batch, GPUMem: gpuMem, For: plan.forJob}
	out.NumGPUs = len(j.Alloc.GPUs)
	if y.GPUs != nil {
		out.NumGPUs = *y.GPUs
	}
	if y.NoWait {
		return out, nil
	}
	sig := "SIGTERM"
	if s := j.Request.Signal; s != nil && s.Signal != 0 {
		sig = "SIG" + slurmsyntax.SignalName(s.Signal)
	}
	w := &d.yieldWaits
	w.mu.Lock()
	w.byJob[j.ID] = plan
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.byJob[j.ID] == plan {
			delete(w.byJob, j.ID)
		}
		w.mu.Unlock()
	}()
	d.addStep(plan, api.YieldStep{JobID: j.ID, Step: "signalled", Signal: sig, GraceSeconds: int(grace / time.Second)})
	select {
	case st := <-plan.done:
		out.Waited = true
		out.StopSeconds = st.StopTime.Seconds()
		out.Clean = st.ExitedAfterSignal && !st.Killed
		if st.Ending == nil {
			out.Ended = string(st.State)
		} else {
			d.addStep(plan, api.YieldStep{JobID: j.ID, Step: "stopped", Seconds: out.StopSeconds, Clean: out.Clean})
		}
	case <-ctx.Done():
		return out, ctx.Err()
	}
	out.Released = d.waitReleased(ctx, j.ID, 2*time.Minute)
	out.Steps = d.stepsOf(plan)
	return out, nil
}

// graceOf is the time a stopped job has between its checkpoint signal and
// SIGKILL: its partition's GraceTime, else KillWait.
func (d *Daemon) graceOf(j store.Job) time.Duration {
	cfg := d.config()
	for _, p := range cfg.Partitions {
		if p.PartitionName == j.Partition && p.GraceTime > 0 {
			return p.GraceTime
		}
	}
	return cfg.KillWait
}

// startYield sends a running job its checkpoint signal (its --signal, else
// SIGTERM) through its supervisor, which gives it grace before SIGKILL, and
// remembers the plan for finishYield. Both scontrol yield and the
// scheduler's own shrinks, regrows and payback stops start here.
func (d *Daemon) startYield(j store.Job, plan *yieldPlan, grace time.Duration) error {
	plan.priority = d.liveView().prio[j.ID]
	if !d.stops.claim(j.ID, stopIntent{kind: stopYield, yield: plan}) {
		return localapi.Errorf(http.StatusConflict, "job %d is already being stopped", j.ID)
	}

	creq := stepd.Request{Op: stepd.OpCancel, Why: stepd.WhyRequeue, Grace: grace, By: &plan.by}
	if s := j.Request.Signal; s != nil && s.Signal != 0 {
		creq.Signal = s.Signal // the signal the job checkpoints on
	}
	if _, err := d.callSupervisor(j, creq); err != nil {
		d.stops.take(j.ID)
		return d.whyUnreached(j, err)
	}
	gpus := len(j.Alloc.GPUs)
	if plan.gpus != nil {
		gpus = *plan.gpus
	}
	d.log.Info("yielding job", "job", j.ID, "by", plan.byName, "grace", grace.String(), "for", plan.forJob,
		"next_gpus", gpus)
	return nil
}

// autoYield carries out a yield the scheduling core planned (Plan.Shrinks,
// Plan.Grows, and Plan.Preempts of jobs outside a REQUEUE partition, which
// YieldPayback stops): the job is yielded as scontrol yield would, by the
// daemon, for the job named (0 for a regrow), and comes back with gpus
// GPUs (0: as it was) and the time limit the core gave it (0: as it was:
// a shrunk job kept its limit and, working slower, could time out only
// because of the shrink). It runs in the loop; it does not wait.
func (d *Daemon) autoYield(ctx context.Context, id uint32, gpus int, forJob uint32, limit time.Duration, what string) {
	j, err := d.st.Job(ctx, id)
	if err != nil || j.State != slurm.Running {
		return
	}
	if d.stops.busy(id) {
		return // a stop already under way: the core plans it again each pass until it ends
	}
	plan := &yieldPlan{by: uint32(os.Geteuid()), byName: "slurmd-lite (" + what + ")", eligible: j.Eligible,
		forJob: forJob, timeLimit: limit, done: make(chan stepd.Status, 1)}
	if gpus > 0 {
		plan.gpus = &gpus
		plan.batchSize = nextBatchSize(j, nil, &gpus)
		switch have := len(j.Alloc.GPUs); {
		case gpus < have: // a shrink: remember the full size for the regrow
			plan.fullGPUs = max(j.FullGPUs, have)
		case j.FullGPUs > 0 && gpus >= j.FullGPUs: // a regrow: the batch it had
			plan.batchSize = max(j.Request.BatchSize, plan.batchSize)
			plan.fullGPUs = -1
		}
	} else {
		plan.batchSize = nextBatchSize(j, nil, nil)
	}
	if err := d.startYield(j, plan, d.graceOf(j)); err != nil {
		d.log.Error("yielding job", "job", id, "for", forJob, "what", what, "err", err)
	}
}

// yieldTarget is the job a yield names, or the running job on a GPU.
func (d *Daemon) yieldTarget(ctx context.Context, y api.Yield) (store.Job, error) {
	if y.GPU == "" {
		ts, err := d.resolve(ctx, y.Job)
		if err != nil || len(ts) != 1 || ts[0].tasks != nil {
			return store.Job{}, refusal(slurm.ErrInvalidJobID, slurm.ErrInvalidJobID.Error())
		}
		return ts[0].job, nil
	}
	running, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Running}})
	if err != nil {
		return store.Job{}, err
	}
	for _, j := range running {
		for _, g := range j.Alloc.GPUs {
			if y.GPU == g.UUID || y.GPU == strconv.Itoa(g.Index) {
				return j, nil
			}
		}
	}
	return store.Job{}, localapi.Errorf(http.StatusNotFound, "no running job holds GPU %s", y.GPU)
}

// yieldDenied is "" when caller may yield j, else why not, for the
// refusal's hint: the owner, root and operators may yield any of their
// jobs; members of YieldGroup may yield a yieldable job of anyone's.
func (d *Daemon) yieldDenied(caller localapi.Identity, j store.Job) string {
	if d.mayAct(caller, j) {
		return ""
	}
	cfg := d.config()
	owner := fmt.Sprintf("job %d is %s's", j.ID, j.User)
	switch {
	case !d.yieldable(j):
		return fmt.Sprintf("%s and not yieldable: only its owner, root and operators may yield it (a job is yieldable when submitted with --yieldable, or in a partition with PreemptMode REQUEUE)", owner)
	case cfg.YieldGroup == "":
		return fmt.Sprintf("%s; YieldGroup is not set, so only its owner, root and operators may yield it", owner)
	}
	g, err := user.LookupGroup(cfg.YieldGroup)
	if err != nil {
		return fmt.Sprintf("%s; YieldGroup %q does not exist on this machine, so only its owner, root and operators may yield it: create the group (groupadd %s) and add its members", owner, cfg.YieldGroup, cfg.YieldGroup)
	}
	gid, err := strconv.ParseUint(g.Gid, 10, 32)
	if err == nil && slices.Contains(caller.Groups, uint32(gid)) {
		return ""
	}
	return fmt.Sprintf("%s; %s is not in YieldGroup %s, whose members may yield other users' yieldable jobs: ask an administrator to add you (usermod -aG %s %s), then log in again", owner, caller.User, cfg.YieldGroup, cfg.YieldGroup, caller.User)
}

// yieldable: marked --yieldable, or in a preemptible partition.
func (d *Daemon) yieldable(j store.Job) bool {
	return j.Request.Yieldable || d.preemptible(j)
}

// preemptible: in a partition with PreemptMode REQUEUE (filler work).
func (d *Daemon) preemptible(j store.Job) bool {
	p := d.config().Partition(j.Partition)
	return p != nil && p.PreemptMode == "REQUEUE"
}

// nextBatchSize is the batch size a yielded job comes back with: the one
// given; else, when the yield shrinks it (Gpus= below what it holds or
// asks), half of what it ran with (never below 1); else the same. A plain
// yield hands the GPUs over for a while: the job's work is unchanged.
func nextBatchSize(j store.Job, given, gpus *int) int {
	if given != nil {
		return *given
	}
	cur := j.BatchSize
	if cur == 0 {
		cur = j.Request.BatchSize
	}
	if cur == 0 || gpus == nil || *gpus >= jobGPUs(j) {
		return cur
	}
	return max(cur/2, 1)
}

// jobGPUs is how many GPUs a job holds, or asks for when it holds none.
func jobGPUs(j store.Job) int {
	if n := len(j.Alloc.GPUs); n > 0 {
		return n
	}
	return max(j.Request.NodeGPUs().GPUs, 1)
}

// yieldFor is the pending job that the GPUs a yield frees go to first, as
// the design brief says: of the caller's own pending jobs (of anyone's,
// when the caller is the job's owner, root or an operator), the first the
// plan would start, with the yielded job gone and its GPU memory back, on
// at least one of its GPUs; 0 when none would, and then the yielded job
// may take them back. The yielded job keeps its priority but is ordered
// behind this one until it has started (sched.Job.YieldedFor).
func (d *Daemon) yieldFor(ctx context.Context, caller localapi.Identity, j store.Job) uint32 {
	now := d.now()
	cfg := d.config()
	jobs, err := d.st.JobRefs(ctx, store.Filter{Since: now.Add(-max(cfg.MinJobAge, time.Minute))})
	if err != nil {
		d.log.Warn("finding the job a yield is for", "job", j.ID, "err", err)
		return 0
	}
	jobs = slices.DeleteFunc(jobs, func(o *store.Job) bool { return o.ID == j.ID })
	gs := d.liveView().sample()
	snap := d.buildSnapshot(ctx, now, jobs, gs)
	freed := map[string]bool{}
	held := gs.Jobs[strconv.Itoa(int(j.ID))].Memory
	for _, g := range j.Alloc.GPUs {
		freed[g.UUID] = true
	}
	for i := range snap.Nodes[0].GPUs {
		if g := &snap.Nodes[0].GPUs[i]; freed[g.UUID] {
			g.FreeMem = min(g.TotalMem, g.FreeMem+int64(held[g.UUID]))
		}
	}
	d.withCalc(&snap.Snapshot)
	anyone := d.mayAct(caller, j)
	for _, s := range sched.Cycle(snap.Snapshot).Starts {
		o, ok := snap.byID[s.JobID]
		if !ok || o.ArrayRecord() || (!anyone && o.UID != caller.UID) {
			continue // an array's task not split yet has no id to name
		}
		if slices.ContainsFunc(s.Alloc.GPUs, func(g sched.GPUAlloc) bool { return freed[g.UUID] }) {
			return o.ID
		}
	}
	return 0
}

// applyYieldRequest writes a yield's changes into a job's request.
func applyYieldRequest(j *store.Job, batch int, gpus *int, gpuMem int64) {
	if batch > 0 {
		j.BatchSize = batch
	}
	r := &j.Request
	if gpus != nil {
		setGPUCount(r, *gpus)
	}
	if gpuMem > 0 {
		r.GPUMem = slurmsyntax.Bytes(gpuMem)
	}
}

// setGPUCount changes how many GPUs a request asks for in all: where it
// asked per job or per node (--gpus, --gpus-per-node or --gres=gpu), the
// first of these now asks n, keeping its type; asking per task or per
// socket is dropped, since n need not divide among them.
func setGPUCount(r *jobscript.Request, n int) {
	typ := ""
	for _, g := range append(r.GPUsPerSocket(), r.GPUsPerTask...) {
		if g.Name == "gpu" && typ == "" {
			typ = g.Type
		}
	}
	r.GPUsPerTask = nil
	r.DropGPUsPerSocket()
	for _, set := range []*[]jobscript.Gres{&r.GPUs, &r.GPUsPerNode, &r.Gres} {
		for i := range *set {
			if (*set)[i].Name == "gpu" {
				(*set)[i].Count = uint64(n)
				return
			}
		}
	}
	r.GPUs = append(r.GPUs, jobscript.Gres{Name: "gpu", Type: typ, Count: uint64(n)})
}

// finishYield requeues a yielded job with its new request, its priority
// and its eligible time, records the yield, and tells the waiting caller.
// Without a plan (the daemon that made it is gone) it is a plain requeue.
func (d *Daemon) finishYield(ctx context.Context, j store.Job, st stepd.Status, plan *yieldPlan) error {
	if plan == nil {
		return d.requeue(ctx, j, st, slurm.Requeued)
	}
	detail := fmt.Sprintf("stopped in %s, %s", st.StopTime.Round(time.Second), cleanWords(st))
	note := "yielded by " + plan.byName
	if plan.forJob != 0 {
		note += fmt.Sprintf(" for job %d", plan.forJob)
	}
	note += ": " + detail
	ckpt := checkpointDir(d.config().CheckpointDir, j)
	if ckpt != "" {
		note += "; checkpoint in " + ckpt
	}
	if err := d.requeue(ctx, j, st, slurm.Requeued, note); err != nil {
		return err
	}
	var yielded store.Job
	var why string
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.Job(j.ID)
		if err != nil {
			return err
		}
		applyYieldRequest(&cur, plan.batchSize, plan.gpus, plan.gpuMem)
		// A shrunk job resumes ahead of ordinary work of its tier: it keeps
		// its priority and is not charged a new wait.
		if plan.priority > 0 {
			cur.Priority = plan.priority
		}
		if !plan.eligible.IsZero() {
			cur.Eligible = plan.eligible
		}
		by := plan.by
		cur.YieldedBy = &by
		cur.YieldedFor = plan.forJob
		switch {
		case plan.fullGPUs > 0:
			cur.FullGPUs = plan.fullGPUs
		case plan.fullGPUs < 0:
			cur.FullGPUs = 0
		}
		if plan.timeLimit > 0 {
			cur.TimeLimit = plan.timeLimit
		}
		if err := tx.PutJob(cur); err != nil {
			return err
		}
		detail := detail + "; requeued" + requeuedWith(cur.BatchSize, gpusAfter(j, plan), plan.gpuMem, plan.timeLimit)
		if plan.forJob != 0 {
			detail += fmt.Sprintf("; for job %d", plan.forJob)
		}
		if ckpt != "" {
			detail += "; checkpoint in " + ckpt
		}
		_, err = tx.AppendEvent(d.actorEvent(plan.by, plan.byName, j.ID, evYield, detail))
		yielded, why = cur, detail
		return err
	})
	if err == nil {
		d.tell(notify.Yield, yielded, plan.byName, why)
		d.web.yields.Add(1)
	}
	plan.done <- st
	return err
}

// gpusAfter is how many GPUs a yielded job asks for when it runs again:
// what the yield set, else what it held.
func gpusAfter(j store.Job, plan *yieldPlan) int {
	if plan.gpus != nil {
		return *plan.gpus
	}
	return len(j.Alloc.GPUs)
}

// requeuedWith is what a yielded job comes back with, in scontrol yield's
// words (" with BatchSize=16 Gpus=2"), and the time limit a shrink or a
// regrow gave it, leaving out what it does not have: an automatic yield
// of a job without a batch size was recorded "requeued with BatchSize=0".
func requeuedWith(batch, gpus int, gpuMem int64, limit time.Duration) string {
	var b strings.Builder
	if batch > 0 {
		fmt.Fprintf(&b, " BatchSize=%d", batch)
	}
	if gpus > 0 {
		fmt.Fprintf(&b, " Gpus=%d", gpus)
	}
	if gpuMem > 0 {
		fmt.Fprintf(&b, " GpuMem=%s", slurmsyntax.FormatSize(slurmsyntax.Bytes(gpuMem)))
	}
	if limit > 0 {
		fmt.Fprintf(&b, " TimeLimit=%s", slurmsyntax.FormatDuration(limit))
	}
	if b.Len() == 0 {
		return ""
	}
	return " with" + b.String()
}

// dropYield tells a waiting scontrol of the yield planned (plan, nil for
// none) for a job whose script ended by itself before the signal came.
func dropYield(plan *yieldPlan, st stepd.Status) {
	if plan != nil {
		plan.done <- st
	}
}

func cleanWords(st stepd.Status) string {
	if st.ExitedAfterSignal && !st.Killed {
		return "exited cleanly"
	}
	return "killed after the grace time"
}

// waitReleased waits until the inventory no longer waits for an ended
// job's GPUs to come back; false when they did not within limit. limit
// is real time: the GPUs are released by real processes ending.
func (d *Daemon) waitReleased(ctx context.Context, id uint32, limit time.Duration) bool {
	for deadline := clock.After(limit); !deadline.Passed(); {
		d.mu.Lock()
		_, pending := d.releasing[id]
		d.mu.Unlock()
		if !pending {
			return true
		}
		d.wake() // the next pass samples the GPUs
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
	return false
}

// auditYield records a yield in the audit trail.
func (d *Daemon) auditYield(ctx context.Context, caller localapi.Identity, id uint32, detail string) {
	d.audit(ctx, caller, id, evYield, detail)
}
