package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/durable"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// placeholderBase starts the ids the core sees for array tasks still in
// their pending record. Real ids stop at 0x03ff0000 (the store's maximum),
// so these never meet one.
const placeholderBase uint32 = 0x40000000

// arrayKey names an array task that has no row of its own yet.
type arrayKey struct {
	array uint32
	task  int
}

// loop is the scheduling loop: the one goroutine that starts and finishes
// jobs. It sleeps until something happens, or until the next GPU sample.
//
// Its ticker and timers, and passPace, run on the machine's clock, not the
// daemon's (Options.Clock): they pace real work (samples of real GPUs, the
// CPU a pass costs), and a loop paced by a fake clock would either spin or
// never wake.
func (d *Daemon) loop(ctx context.Context) {
	interval := d.config().GPUSampleInterval
	if interval <= 0 {
		interval = gpu.DefaultInterval
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var pace passPace
	pace.run(func() time.Duration { return d.passed(d.pass(ctx)) })
	for {
		// A job's end frees resources that the pass can fill: its pass
		// comes sooner than one for a submission or a change.
		factor := kickedPace
		select {
		case <-ctx.Done():
			d.saveUsage(context.Background())
			return
		case id := <-d.ended:
			d.finishAll(ctx, id)
			factor = endedPace
		case <-d.kick:
		case <-d.idleKick:
			factor = heldPace
		case <-tick.C:
		}
		// Let the pass wait its turn (passPace), finishing the jobs that
		// end meanwhile: they are what the pass will fill. A wake-up
		// that wants a pass sooner than the one waited for brings it
		// forward.
		if wait := pace.wait(factor); wait > 0 {
			timer := time.NewTimer(wait)
		waiting:
			for {
				var kicked <-chan struct{}
				if factor > kickedPace {
					kicked = d.kick
				}
				select {
				case <-ctx.Done():
					timer.Stop()
					d.saveUsage(context.Background())
					return
				case id := <-d.ended:
					d.finishAll(ctx, id)
					if factor != endedPace {
						factor = endedPace
						timer.Reset(max(pace.wait(factor), 0))
					}
				case <-kicked:
					factor = kickedPace
					timer.Reset(max(pace.wait(factor), 0))
				case <-timer.C:
					break waiting
				}
			}
		}
		// A wake-up that came before the pass begins is answered by it:
		// every waker makes its change first, and the pass reads the jobs
		// after this. A job's end wakes the loop (recordEnd) for the pass
		// that follows the end anyway, and that wake-up, left waiting,
		// was a second pass after every end, for nothing.
		select {
		case <-d.kick:
		default:
		}
		select {
		case <-d.idleKick:
		default:
		}
		pace.run(func() time.Duration { return d.passed(d.pass(ctx)) })
	}
}

// passed tells Options.Passed of a pass, and returns its planning time.
func (d *Daemon) passed(planned time.Duration) time.Duration {
	if d.opts.Passed != nil {
		d.opts.Passed()
	}
	return planned
}

// finishAll records job id's end and those of every job that ended with it.
func (d *Daemon) finishAll(ctx context.Context, id uint32) {
	d.finish(ctx, id)
	for {
		select {
		case id := <-d.ended:
			d.finish(ctx, id)
		default:
			return
		}
	}
}

// passPace rations the scheduling passes' CPU. A pass follows every
// submission and every job's end at once while passes are cheap (a few
// hundred microseconds with a short queue, so a trivial job's successor
// starts within a millisecond of its end). With thousands of jobs queued a
// pass plans for milliseconds, and a pass after every one of hundreds of
// submissions a second would take a core from the submissions themselves
// (on two cores, sbatch's latency grew by half). So the next pass waits,
// after the last one ended, a multiple of what the last one cost: twice
// after a job's end (a third of a core at most), eight times after a
// submission or a change (a ninth), sixty-four times after the submission
// of a held job (wakeIdle: nothing for the pass to act on), and the
// events that arrive meanwhile share it. A job submitted then starts, and squeue shows its reason, that
// much later: 40 ms with 10,000 jobs queued.
type passPace struct {
	ended clock.Stopwatch // started when the last pass ended
	took  time.Duration   // what it cost
}

// The multiples of the last pass's cost that the next one waits.
// heldPace is for a pass after changes that no pass can act on (wakeIdle):
// held jobs submitted by users the share tree already knows. Such a pass
// only brings the views up to date (the job counts of the web page; the
// new jobs' reasons and priorities, which squeue already shows from the
// hold), so it may wait long: with 8 submitters of held jobs, a pass per
// ninth of a core, each building the whole queue again, was a sixth of
// the daemon's CPU and most of its garbage.
const (
	endedPace  = 2
	kickedPace = 8
	heldPace   = 64
)

// minPassGap is below any wait worth a timer.
const minPassGap = 200 * time.Microsecond

// wait is how long the next pass should still wait, at factor times the
// last one's cost.
func (p *passPace) wait(factor int) time.Duration {
	gap := time.Duration(factor) * p.took
	if gap < minPassGap {
		return 0
	}
	return gap - p.ended.Elapsed()
}

// run runs a pass and notes its cost: the planning time it reports, not
// the time its job starts spent waiting for the disk and for fork.
func (p *passPace) run(pass func() time.Duration) {
	p.took = pass()
	p.ended = clock.Start()
}

// snapshot is what one pass plans over, with the ways back from the core's
// ids to stored jobs.
type snapshot struct {
	sched.Snapshot
	byID        map[uint32]*store.Job // into the pass's jobs: a Job is large
	placeholder map[uint32]arrayKey
}

// pass is one scheduling pass: sample, plan, carry out. In order (the
// steps are numbered in the body, as sched.Cycle's are):
//
//  1. read the jobs, and set the wake-up for the next time limit
//     (noteTimeouts);
//  2. record again the ends a full disk left unrecorded (settleAgain);
//  3. sample the GPUs and act on the sample: use, survivors, lost GPUs
//     (sample), idle GPUs (checkIdle), reservations that ended, old
//     checkpoints;
//  4. build the core's snapshot, and keep its jobs for the submissions'
//     checks until the next pass;
//  5. charge usage up to now (reset and recalculated when due) and the
//     budgets, published for the views;
//  6. plan (sched.Cycle) and record the jobs that became eligible;
//  7. publish the pending decisions and priorities (view), and mail the
//     jobs whose dependencies can never be met;
//  8. start the jobs planned, and sample again when they took GPUs;
//  9. stop the jobs planned: preemptions, payback yields, shrinks and
//     regrows (each a stopIntent, stops.go);
//  10. save the usage when due.
//
// No route waits for it: the routes read what steps 3, 5 and 7 publish.
//
// It returns the time it took to plan (everything but starting and
// stopping jobs): the CPU a pass costs, which passPace rations.
func (d *Daemon) pass(ctx context.Context) (planned time.Duration) {
	began := clock.Start() // the planning's cost is real time (passPace)
	now := d.now()
	cfg := d.config()
	// 1. The jobs, and the wake-up for the next time limit. The store's
	// own (JobRefs): the pass changes none, and copying them was a fifth
	// of the daemon's CPU with a thousand jobs queued.
	jobs, err := d.st.JobRefs(ctx, store.Filter{Since: now.Add(-max(cfg.MinJobAge, time.Minute))})
	if err != nil {
		d.log.Error("reading jobs", "err", err)
		return
	}
	if next := d.noteTimeouts(now, jobs); !next.IsZero() {
		// A moment after the limit: the supervisor counts it from its own
		// start, just after the store's. (A real timer for a wait on the
		// daemon's clock: the pass it wakes looks again at its own now.)
		wait := next.Sub(now) + 200*time.Millisecond
		if d.limitWake == nil {
			d.limitWake = time.AfterFunc(wait, d.wake)
		} else {
			d.limitWake.Reset(wait)
		}
	}
	// 2. The ends not recorded yet.
	d.settleAgain(ctx)
	// 3. The GPUs' sample, and what it asks for.
	gs := d.sample(now, jobs)
	d.checkIdle(ctx, now, jobs, gs)
	d.expireReservations(ctx, now, jobs)
	d.sweepCheckpoints(ctx, now)
	// 4. The core's snapshot.
	snap := d.buildSnapshot(ctx, now, jobs, gs)
	d.keepCheckJobs(snap.Jobs)

	// 5. Usage and budgets.
	d.mu.Lock()
	at := usageClock(now)
	reset := d.resetUsageLocked(snap.Snapshot, cfg.Priority.UsageResetPeriod, at)
	snap.Usage = advanceUsage(snap.Snapshot, d.usage, d.usageAt, at)
	if at.After(d.usageAt) {
		d.usage, d.usageAt = snap.Usage, at
	}
	d.recalcLocked(cfg.Priority, at)
	snap.Calc = d.calc
	d.publishLocked()
	d.mu.Unlock()
	if !reset.IsZero() {
		d.log.Info("fair-share usage cleared (Priority.UsageResetPeriod)", "period", cfg.Priority.UsageResetPeriod, "at", reset)
		d.saveUsage(ctx)
	}
	d.addBudgets(ctx, cfg, &snap.Snapshot, jobs)

	// 6. The plan.
	plan := sched.Cycle(snap.Snapshot)
	d.recordEligible(ctx, snap, plan.Eligible)

	// 7. The decisions and priorities, published.
	decisions := map[uint32]sched.Decision{}
	for _, dec := range plan.Pending {
		id := dec.JobID
		if k, ok := snap.placeholder[id]; ok {
			id = k.array
		}
		if _, seen := decisions[id]; !seen {
			decisions[id] = dec
		}
	}
	prio := map[uint32]uint32{}
	for _, row := range sched.Priorities(snap.Snapshot) {
		id := row.JobID
		if k, ok := snap.placeholder[id]; ok {
			id = k.array
		}
		if _, seen := prio[id]; !seen {
			prio[id] = row.Priority
		}
	}
	d.mu.Lock()
	d.decisions, d.prio = decisions, prio
	d.publishLocked()
	d.mu.Unlock()
	d.dependMails(decisions, snap.byID)

	planned = began.Elapsed()
	d.web.publishPass(snap.Snapshot, planned)
	// 8. The starts.
	var yielders map[uint32][]uint32
	for i := range jobs {
		if j := jobs[i]; j.YieldedFor != 0 && j.State == slurm.Pending {
			if yielders == nil {
				yielders = map[uint32][]uint32{}
			}
			yielders[j.YieldedFor] = append(yielders[j.YieldedFor], j.ID)
		}
	}
	var starts []pendingStart
	for _, s := range plan.Starts {
		j, ok := snap.byID[s.JobID]
		task := -1
		if k, isTask := snap.placeholder[s.JobID]; isTask {
			j, ok, task = snap.byID[k.array], true, k.task
		}
		if !ok {
			continue
		}
		starts = append(starts, pendingStart{job: *j, task: task, s: s, yielders: yielders[s.JobID]})
	}
	d.startAll(ctx, starts)
	if startsGPUs(starts) {
		// The views (sinfo -G, scontrol show node) read the last sample:
		// take one with the new jobs on their GPUs, rather than show
		// them idle until the next tick.
		if jobs, err := d.st.JobRefs(ctx, store.Filter{Since: now.Add(-max(cfg.MinJobAge, time.Minute)),
			States: []slurm.JobState{slurm.Running, slurm.Completing}}); err == nil {
			d.sample(d.now(), jobs)
		}
	}
	// 9. The stops.
	for _, p := range plan.Preempts {
		// A job of a REQUEUE partition is preempted (sacct: PREEMPTED);
		// any other the core stops is a yieldable job that YieldPayback
		// stops for a waiting one: a yield, for that job.
		if j, ok := snap.byID[p.JobID]; ok && !d.preemptible(*j) {
			d.autoYield(ctx, p.JobID, 0, p.For, 0, "payback")
			continue
		}
		d.stop(ctx, p.JobID, stepd.WhyPreemption, "preempted for job "+strconv.Itoa(int(p.For)))
	}
	for _, s := range plan.Shrinks {
		d.autoYield(ctx, s.JobID, s.ToGPUs, s.For, s.TimeLimit, "shrink")
	}
	for _, g := range plan.Grows {
		d.autoYield(ctx, g.JobID, g.ToGPUs, 0, g.TimeLimit, "regrow")
	}
	// 10. The usage, saved when due.
	if now.Sub(d.lastUsageSave()) > usageSaveEvery(cfg.Priority.CalcPeriod) {
		d.saveUsage(ctx)
	}
	return planned
}

// sample reads the GPUs, telling the inventory which running job holds
// which GPU and which ended jobs still have to give theirs back, and acts
// on what it sees: use accumulated for accounting, survivors of ended jobs
// killed, GPUs that did not come back drained, jobs on a lost GPU ended.
func (d *Daemon) sample(now time.Time, jobs []*store.Job) gpu.Snapshot {
	var gjobs []gpu.Job
	running := map[uint32]time.Time{} // job -> its run's start
	for _, j := range jobs {
		if j.State != slurm.Running && j.State != slurm.Completing {
			continue
		}
		running[j.ID] = j.Start
		if len(j.Alloc.GPUs) > 0 {
			gjobs = append(gjobs, gpuJob(*j, time.Time{}))
		}
	}
	d.mu.Lock()
	for _, id := range foldRestarted(d.releasing, running) {
		d.log.Info("the job runs again: its earlier run's GPU processes are the new run's now", "job", id)
	}
	for _, rj := range d.releasing {
		gjobs = append(gjobs, rj)
	}
	d.mu.Unlock()
	gs := d.inv.Sample(now, gjobs)

	d.mu.Lock()
	d.gsnap = gs
	d.publishLocked()
	for id, js := range gs.Jobs {
		if n, err := strconv.Atoi(id); err == nil {
			d.gpuUse[uint32(n)] = d.gpuUse[uint32(n)].Add(js)
		}
	}
	for id, rel := range gs.Releases {
		n, err := strconv.Atoi(id)
		if err != nil {
			continue
		}
		// A process that outlived its job keeps the GPU from the next
		// one: it dies now (the supervisor already gave it KillWait),
		// once verified as the job's (survivors.go).
		for _, pid := range rel.Survivors {
			if !survivorOf(pid, d.releasing[uint32(n)].Ended) {
				d.log.Warn("not killing a GPU process that cannot be verified as the job's", "job", id, "pid", pid)
				continue
			}
			d.log.Warn("killing a process that outlived its job", "job", id, "pid", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, uuid := range rel.Drained {
			d.log.Error("GPU memory did not come back after the job: GPU drained", "job", id, "gpu", uuid)
		}
		if rel.Done() {
			delete(d.releasing, uint32(n))
		}
	}
	d.mu.Unlock()
	d.handleViolations(gs.Violations)
	for _, x := range gs.Xids {
		d.log.Warn("xid", "gpu", x.UUID, "xid", x.Xid, "application", x.Application, "detail", x.Text)
	}
	for _, l := range gs.Lost {
		for _, id := range l.Jobs {
			if n, err := strconv.Atoi(id); err == nil {
				d.log.Error("GPU lost under a running job", "job", id, "gpu", l.Index, "reason", l.Reason)
				d.endLost(uint32(n))
			}
		}
	}
	d.saveDrains(gs)
	return gs
}

// gpuJob is a job as the GPU inventory needs to know it; ended is zero
// while it runs.
func gpuJob(j store.Job, ended time.Time) gpu.Job {
	gj := gpu.Job{ID: strconv.Itoa(int(j.ID)), User: j.User, Ended: ended}
	for _, g := range j.Alloc.GPUs {
		gj.GPUs = append(gj.GPUs, g.UUID)
		gj.MemPerGPU = uint64(g.Mem)
	}
	return gj
}

// foldRestarted stops waiting for the GPUs of an earlier run of a job that
// runs again (requeued, resumed after a yield) and returns those jobs.
// The GPU sample knows a job's processes by its id (SLURM_JOB_ID, its
// cgroup), which the two runs share: waiting on, it would take the new
// run's processes for the old run's survivors and kill them, and drain
// the GPU when the "release" never came (seen when a requeued run started
// 40 ms after the last ended). What the old run left behind is the job's
// still, and is the new run's to account for and to end with it. A run
// is new when it started no earlier than the earlier one ended: a job
// list read just before an end still shows the ended run, which started
// before, and its release goes on.
func foldRestarted(releasing map[uint32]gpu.Job, running map[uint32]time.Time) []uint32 {
	var folded []uint32
	for id, rj := range releasing {
		if start, ok := running[id]; ok && !start.Before(rj.Ended) {
			delete(releasing, id)
			folded = append(folded, id)
		}
	}
	slices.Sort(folded)
	return folded
}

// saveDrains keeps the inventory's drains in the store, so that a drain
// survives a restart (keyed by UUID, which survives renumbering).
func (d *Daemon) saveDrains(gs gpu.Snapshot) {
	ctx := context.Background()
	var add []store.Drain
	d.mu.Lock()
	for _, g := range gs.GPUs {
		if (g.State == gpu.Drained || g.State == gpu.Lost) && !d.drained[g.UUID] {
			add = append(add, store.Drain{UUID: g.UUID, Index: g.Index, Reason: g.Reason, Since: gs.Time, By: uint32(os.Geteuid())})
			d.drained[g.UUID] = true
		}
	}
	d.mu.Unlock()
	if len(add) == 0 {
		return
	}
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		for _, dr := range add {
			if err := tx.PutDrain(dr); err != nil {
				return err
			}
			e := d.schedEvent(0, evDrain, dr.Reason)
			e.GPU = dr.UUID
			if _, err := tx.AppendEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		d.log.Error("saving GPU drains", "err", err)
		return
	}
	for _, dr := range add {
		d.tellGPU(notify.Drain, dr.Index, dr.UUID, schedulerName, dr.Reason)
	}
}

// buildSnapshot maps jobs, configuration and GPUs onto the core's types
// (mapSnapshot), with the ended jobs that pending jobs' dependencies name.
func (d *Daemon) buildSnapshot(ctx context.Context, now time.Time, jobs []*store.Job, gs gpu.Snapshot) snapshot {
	cfg := d.config()
	snap := mapSnapshot(cfg, gs, d.nodeDrained(), now, jobs)
	snap.Users = d.implicitUsers(ctx, cfg)
	snap.Reservations = schedResvs(d.reservations(ctx))
	node, shard := snap.Nodes[0], cfg.ShardSize
	// Dependencies may name jobs that ended long ago: the core needs their
	// end states to decide afterok and friends. (known, the jobs the pass
	// has, is made for the first dependency only: a map of every job at
	// every pass was garbage when no job has one.)
	var known map[uint32]bool
	for _, j := range jobs {
		if j.State != slurm.Pending || j.Request.Dependency == nil {
			continue
		}
		if known == nil {
			known = make(map[uint32]bool, len(jobs))
			for _, k := range jobs {
				known[k.ID] = true
			}
		}
		for _, t := range j.Request.Dependency.Parsed.Terms {
			for _, ref := range t.Jobs {
				if known[ref.JobID] {
					continue
				}
				known[ref.JobID] = true
				if old, err := d.st.Jobs(ctx, store.Filter{IDs: []uint32{ref.JobID}}); err == nil {
					for i := range old {
						o := &old[i]
						snap.Jobs = append(snap.Jobs, schedJob(o, o.ID, o.ArrayTaskID, shard, node))
					}
				}
			}
		}
	}
	return snap
}

// mapSnapshot is the core's view of the configuration, the GPUs as last
// sampled and the stored jobs: pure, so that what the daemon hands the
// core can be checked without a daemon (snapshot_test.go). A running job's GPUs
// carry what its processes hold (withUsed).
func mapSnapshot(cfg *config.Config, gs gpu.Snapshot, drained bool, now time.Time, jobs []*store.Job) snapshot {
	node := schedNode(cfg, gs, drained)
	lo, hi := cfg.Ports()
	snap := snapshot{
		Snapshot: sched.Snapshot{
			Now:        now,
			Config:     schedConfig(cfg),
			Nodes:      []sched.Node{node},
			Partitions: schedPartitions(cfg),
			QOS:        schedQOS(cfg),
			Accounts:   schedAccounts(cfg),
			Ports:      sched.PortRange{Lo: lo, Hi: hi},
		},
		byID:        make(map[uint32]*store.Job, len(jobs)),
		placeholder: map[uint32]arrayKey{},
	}
	shard := cfg.ShardSize
	snap.Jobs = make([]sched.Job, 0, len(jobs))
	next := placeholderBase
	for _, j := range jobs {
		snap.byID[j.ID] = j
		if j.ArrayRecord() {
			for _, task := range j.ArrayPending {
				snap.placeholder[next] = arrayKey{j.ID, task}
				snap.Jobs = append(snap.Jobs, schedJob(j, next, task, shard, node))
				next++
			}
			continue
		}
		sj := schedJob(j, j.ID, j.ArrayTaskID, shard, node)
		if len(sj.Alloc.GPUs) > 0 {
			sj.Alloc = withUsed(sj.Alloc, gs.Jobs[strconv.Itoa(int(j.ID))])
		}
		snap.Jobs = append(snap.Jobs, sj)
	}
	return snap
}

// startsGPUs says whether any of a pass's starts holds a GPU.
func startsGPUs(starts []pendingStart) bool {
	for _, ps := range starts {
		if len(ps.s.Alloc.GPUs) > 0 {
			return true
		}
	}
	return false
}

// pendingStart is a job the pass starts: the row it read (an array's
// own row for a task), the task, and the core's decision.
type pendingStart struct {
	job  store.Job
	task int
	s    sched.Start
	// yielders are the pending jobs that yielded their GPUs for this one
	// (their YieldedFor): its start ends their hand-over, and they no
	// longer let it go first (sched.Job.YieldedFor: "until it has
	// started"), even if it is stopped and pending again later.
	yielders []uint32
}

// startAll commits every job a pass starts as RUNNING, then starts their
// supervisors. The order matters for "no job runs twice":
//
//  1. the job is RUNNING on disk, with its allocation;
//  2. the supervisor starts and records its identity;
//  3. the daemon watches it.
//
// A crash between 1 and 2 leaves a RUNNING job with no supervisor, which
// the next start-up finds lost (NODE_FAIL, requeued if it may be): the job
// did not run, and it cannot run twice. The jobs of one pass share one
// commit (one fsync, not one per job: a wave of trivial jobs waited for
// each in turn), each in its own savepoint, so that one that cannot start
// leaves the others alone.
func (d *Daemon) startAll(ctx context.Context, starts []pendingStart) {
	if len(starts) == 0 {
		return
	}
	now := d.now()
	jobs := make([]store.Job, len(starts))
	fns := make([]func(tx *store.Tx) error, len(starts))
	for i, ps := range starts {
		fns[i] = func(tx *store.Tx) error {
			j, err := d.toRunning(tx, ps, now)
			jobs[i] = j
			return err
		}
	}
	firsts := d.arrayFirsts(ctx, starts)
	errs := d.st.UpdateEach(ctx, fns)
	for i, ps := range starts {
		j, err := jobs[i], errs[i]
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			if j.ID != 0 {
				d.mu.Lock()
				delete(d.watched, j.ID)
				d.mu.Unlock()
			}
			d.log.Error("starting job", "job", ps.job.ID, "task", ps.task, "err", err)
			continue
		}
		if err := d.run(ctx, j, ps.s, now); err != nil {
			d.log.Error("starting job", "job", j.ID, "err", err)
			continue
		}
		d.tell(notify.Begin, j, "", "")
		if firsts[i] {
			meta := j // the array's record, as slurmctld mails it
			meta.ID = j.ArrayJobID
			d.notifier.Load().Send(notify.Event{Kind: notify.Begin, Time: now, Job: &meta, Array: &notify.Array{}})
		}
	}
}

// toRunning is a start's change in the store: the job (or the array's
// task, split off its row) RUNNING with its allocation; errSkip when it
// was cancelled or held since the pass read it.
func (d *Daemon) toRunning(tx *store.Tx, ps pendingStart, now time.Time) (store.Job, error) {
	var j store.Job
	var err error
	if ps.task >= 0 {
		if j, err = tx.SplitTask(ps.job.ID, ps.task); err != nil {
			return j, err
		}
	} else if j, err = tx.Job(ps.job.ID); err != nil {
		return j, err
	}
	if j.State != slurm.Pending || j.Hold != store.HoldNone {
		return j, errSkip
	}
	j.State, j.Reason = slurm.Running, slurm.ReasonNone
	j.Start = now
	j.YieldedFor = 0 // it has its GPUs again: the yield's hand-over is over
	if j.Eligible.IsZero() {
		j.Eligible = now
	}
	j.Alloc = storeAlloc(ps.s.Alloc)
	if ps.s.Reservation != "" {
		// A MAGNETIC reservation drew it in: it runs in it, as squeue and
		// sacct show.
		j.Request.Reservation = ps.s.Reservation
	}
	j.Alloc.Priority = ps.s.Priority // the pass's priority, which it keeps
	// Watched from before the commit: a cancel that reads RUNNING
	// waits for the supervisor's socket instead of missing it.
	d.mu.Lock()
	d.watched[j.ID] = true
	d.mu.Unlock()
	if err := tx.PutJob(j); err != nil {
		return j, err
	}
	on := fmt.Sprintf("on GPUs %v", gpuIndices(j.Alloc))
	if len(j.Alloc.GPUs) == 0 {
		on = "without GPUs" // not "on GPUs []"
	}
	// (Never less than none: a clock stepped back since the submission.)
	detail := fmt.Sprintf("started %s after %s pending", on, max(now.Sub(j.Submit), 0).Round(time.Second))
	if _, err := tx.AppendEvent(d.schedEvent(j.ID, evStart, detail)); err != nil {
		return j, err
	}
	for _, id := range ps.yielders {
		y, err := tx.Job(id)
		if err != nil || y.YieldedFor != j.ID {
			continue // gone or changed since the pass read it
		}
		y.YieldedFor = 0
		if err := tx.PutJob(y); err != nil {
			return j, err
		}
	}
	return j, nil
}

// run starts a job committed as RUNNING: its supervisor (which, for an
// interactive job, adopts the srun or salloc waiting for it: alloc.go); a
// job whose supervisor cannot start ends at once (JobLaunchFailure).
func (d *Daemon) run(ctx context.Context, j store.Job, s sched.Start, now time.Time) error {
	d.log.Info("job started", "job", j.ID, "user", j.User, "gpus", gpuIndices(j.Alloc), "cpus", len(j.Alloc.CPUs))
	if err := d.launch(ctx, j, s.TimeLimit); err != nil {
		d.log.Error("job launch failed", "job", j.ID, "err", err)
		d.mu.Lock()
		delete(d.watched, j.ID)
		d.mu.Unlock()
		st := stepd.Status{
			JobID: j.ID, State: slurm.Failed, ExitCode: "0:53", Reason: slurm.ReasonJobLaunchFailure,
			Error: err.Error(), Start: now, End: d.now(),
			Batch: stepd.StepStatus{State: slurm.Cancelled, ExitCode: "0:53", End: d.now()},
		}
		var nsErr *supervisorNotStarted
		if errors.As(err, &nsErr) {
			// The machine's fault, not the job's: requeued held, as
			// slurmctld does when slurmd cannot launch a batch job.
			return d.launchFailed(ctx, j, st, err)
		}
		return d.recordEnd(ctx, j.ID, st)
	}
	return nil
}

var errSkip = errors.New("skip")

// launch writes the job's launch spec and starts its supervisor.
func (d *Daemon) launch(ctx context.Context, j store.Job, limit time.Duration) error {
	script, err := d.st.Script(ctx, j.ID)
	if err != nil && !(interactive(j) && errors.Is(err, store.ErrNotFound)) {
		return fmt.Errorf("reading the stored script: %w", err)
	}
	dir := d.runDir(j.ID, j.Restarts)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	spec, err := d.spec(j, script, limit)
	if err != nil {
		return err
	}
	// The supervisor runs a copy of the stored script, which the spec
	// carries.
	spec.ScriptText = script.Text
	if interactive(j) {
		d.adoptSpec(j, spec)
	}
	// A run directory is made once, by its run's start: one that holds
	// a launch spec already is another run's (a database put back behind
	// its job directories, which adopt.go is there to prevent). Never
	// launch over it, and never remove what it holds.
	if _, err := os.Lstat(filepath.Join(dir, stepd.SpecFile)); err == nil {
		return fmt.Errorf("run directory %s already holds a run of job %d (its launch spec); not launching over it: restart slurmd-lite, which puts the run it holds back in the database", dir, j.ID)
	}
	if spec.Record, err = json.Marshal(j); err != nil {
		return fmt.Errorf("recording job %d in its launch spec: %w", j.ID, err)
	}
	// A run directory left by an earlier attempt at this run holds a
	// status that is not this run's. Its removal must survive a crash as
	// the status did (the spec below is no longer synced, so it does not
	// carry the directory's fsync).
	if os.Remove(filepath.Join(dir, "status.json")) == nil {
		if err := durable.SyncDir(dir); err != nil {
			return err
		}
	}
	if err := stepd.WriteSpec(dir, spec); err != nil {
		return err
	}
	p, err := stepd.Launch(d.stepd, append(supervisorEnv(), d.opts.SupervisorEnv...), dir)
	if err != nil {
		return &supervisorNotStarted{err}
	}
	d.mu.Lock()
	d.watched[j.ID] = true
	d.mu.Unlock()
	go func() {
		_, _ = p.Wait()
		d.ended <- j.ID
	}()
	return nil
}

// supervisorEnv is the supervisor's own environment: enough to find
// itself, nothing of the daemon's caller (Options.SupervisorEnv aside).
func supervisorEnv() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
}

// spec is a job's launch spec.
func (d *Daemon) spec(j store.Job, script store.Script, limit time.Duration) (*stepd.Spec, error) {
	cfg := d.config()
	r := &j.Request
	cred, err := credential(j)
	if err != nil {
		return nil, err
	}
	workDir := j.SubmitDir
	if r.Chdir != "" {
		workDir = r.Chdir
		if !filepath.IsAbs(workDir) {
			workDir = filepath.Join(j.SubmitDir, workDir)
		}
	}
	host, _ := os.Hostname()
	spec := &stepd.Spec{
		JobID:        j.ID,
		Name:         j.Name,
		Partition:    j.Partition,
		Account:      j.Account,
		QOS:          j.QOS,
		RestartCount: j.Restarts,
		User:         cred,
		WorkDir:      workDir,
		SubmitDir:    j.SubmitDir,
		SubmitHost:   host,
		Script:       script.Text,
		Args:         r.Args,
		SubmitEnv:    script.Env,
		Options:      specOptions(r),
		NodeName:     cfg.Node.NodeName,
		ClusterName:  cfg.ClusterName,
		CPUs:         pinnable(j.Alloc.CPUs),
		CPUsOnNode:   len(j.Alloc.CPUs),
		GPUs:         gpuIndices(j.Alloc),
		ResvPorts:    j.Alloc.Ports,
		TimeLimit:    limit,
		Start:        j.Start,
		Signal:       r.Signal,
		KillWait:     cfg.KillWait,
		Output:       r.Output,
		Error:        r.Error,
		Input:        r.Input,
		MemLimit:     j.Alloc.Mem,
		Cgroup:       stepd.Cgroup{Parent: d.cg.Base},
		ConfPath:     d.cfgPath,
		BatchSize:    j.BatchSize,
	}
	if spec.BatchSize == 0 {
		spec.BatchSize = r.BatchSize
	}
	if r.Array != nil && j.ArrayJobID != 0 {
		spec.ArrayJobID = j.ArrayJobID
		spec.ArrayTaskID = j.ArrayTaskID
		spec.ArrayTaskCount = len(r.Array.Tasks)
		spec.ArrayTaskMin = slices.Min(r.Array.Tasks)
		spec.ArrayTaskMax = slices.Max(r.Array.Tasks)
		spec.ArrayTaskStep = slurmsyntax.ArrayTaskStep(r.Array.Spec)
	}
	for _, g := range j.Alloc.GPUs {
		if g.Mem > 0 && cfg.ShardSize > 0 {
			spec.Shards += int(g.Mem / int64(cfg.ShardSize))
		}
	}
	spec.CheckpointDir = checkpointDir(cfg.CheckpointDir, j)
	if err := prepareCheckpointDir(cfg.CheckpointDir, spec.CheckpointDir, cred); err != nil {
		return nil, err
	}
	spec.Umask, spec.Rlimits = submitterLimits(script.Env)
	return spec, nil
}

// pinnable is the CPUs to pin a job to: its allocation, unless the
// configuration claims more CPUs than the machine has (a test or demo
// node, like slurm.conf's config_overrides), where the ids past the real
// ones cannot be pinned and the job runs unpinned.
func pinnable(cpus []int) []int {
	n := runtime.NumCPU()
	for _, c := range cpus {
		if c >= n {
			return nil
		}
	}
	return cpus
}

// credential is who a job runs as: the submitter, with their groups from
// the user database as they are now.
func credential(j store.Job) (stepd.Credential, error) {
	c := stepd.Credential{Name: j.User, UID: j.UID, GID: j.GID}
	u, err := user.LookupId(strconv.Itoa(int(j.UID)))
	if err != nil {
		return c, fmt.Errorf("looking up the job's user %d: %w", j.UID, err)
	}
	c.Home = u.HomeDir
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				c.Groups = append(c.Groups, uint32(n))
			}
		}
	}
	// The login shell, which os/user does not give: what --get-user-env
	// runs, and SHELL in a login environment (/bin/sh where none is set,
	// as login(1)).
	c.Shell = "/bin/sh"
	if pw, err := userdb.ByID(j.UID); err == nil && pw.Shell != "" {
		c.Shell = pw.Shell
	}
	return c, nil
}

// submitterLimits reads sbatch's SLURM_UMASK and SLURM_RLIMIT_* from the
// submission environment: the umask and limits the job runs with.
func submitterLimits(env []string) (*uint32, map[string]uint64) {
	var umask *uint32
	limits := map[string]uint64{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "SLURM_UMASK":
			if n, err := strconv.ParseUint(v, 8, 32); err == nil {
				u := uint32(n)
				umask = &u
			}
		case strings.HasPrefix(k, "SLURM_RLIMIT_"):
			name := strings.TrimPrefix(k, "SLURM_RLIMIT_")
			if v == "unlimited" || v == "infinity" {
				limits[name] = stepd.RlimInfinity
			} else if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				limits[name] = n
			}
		}
	}
	if len(limits) == 0 {
		limits = nil
	}
	return umask, limits
}

func gpuIndices(a store.Alloc) []int {
	var out []int
	for _, g := range a.GPUs {
		out = append(out, g.Index)
	}
	return out
}

// specOptions is what a job's environment repeats of its options.
func specOptions(r *jobscript.Request) stepd.Options {
	o := stepd.Options{
		CPUsPerTask:   r.CPUsPerTask,
		NTasks:        r.NTasks,
		NTasksSet:     r.NTasksSet,
		NTasksPerNode: r.NTasksPerNode,
		CPUsPerGPU:    r.CPUsPerGPU,
		GPUs:          gresSpec(r.GPUs),
		GPUsPerNode:   gresSpec(r.GPUsPerNode),
		GPUsPerTask:   gresSpec(r.GPUsPerTask),
		GPUsPerSocket: gresSpec(r.GPUsPerSocket()),
		OpenMode:      r.OpenMode,
		Export:        r.Export,
		GetUserEnv:    r.GetUserEnv != nil,
	}
	if r.MemPerCPU != nil {
		o.MemPerCPU = *r.MemPerCPU
	}
	if r.MemPerNode != nil {
		o.MemPerNode = *r.MemPerNode
	}
	if r.MemPerGPU != nil {
		o.MemPerGPU = *r.MemPerGPU
	}
	if r.Dependency != nil {
		o.Dependency = r.Dependency.Spec
	}
	o.GPUBind, _ = r.OtherValue("gpu-bind")
	if r.Nice != nil {
		o.Nice = *r.Nice
	}
	return o
}

// gresSpec prints --gpus and friends as sbatch's environment repeats them
// ("2", "a100:1").
func gresSpec(gs []jobscript.Gres) string {
	var parts []string
	for _, g := range gs {
		if g.Type != "" {
			parts = append(parts, fmt.Sprintf("%s:%d", g.Type, g.Count))
		} else {
			parts = append(parts, strconv.FormatUint(g.Count, 10))
		}
	}
	return strings.Join(parts, ",")
}

// supervisorNotStarted is a launch that failed because the job's
// supervisor could not be started (its binary gone, no processes left):
// the machine's fault, so the job is requeued held (launchFailed), where
// a fault of the job's own (its checkpoint directory) fails it.
type supervisorNotStarted struct{ err error }

func (e *supervisorNotStarted) Error() string {
	return "starting the job's supervisor: " + e.err.Error()
}

func (e *supervisorNotStarted) Unwrap() error { return e.err }
