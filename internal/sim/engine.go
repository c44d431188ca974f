package sim

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// fillerBase is where filler job ids start, far above any trace's.
const fillerBase uint32 = 1 << 30

// Outcome is what happened to one job of the trace.
type Outcome struct {
	Account string
	Submit  int64
	// FirstStart is when the job first started; End when it ended for
	// good. Both -1 if it never did.
	FirstStart int64
	End        int64
	// Runtime is the trace's duration, capped at the time limit.
	Runtime int64
	GPUs    int
	// GPUSeconds is what the job held, stops and restarts included.
	GPUSeconds float64
	// LostGPUSeconds is work redone after a stop (since the last
	// checkpoint) plus the time spent stopping and restarting, × GPUs.
	LostGPUSeconds float64
	Stops          int
	Shrinks        int
	TimedOut       bool
}

// Run is one policy's replay of a trace.
type Run struct {
	Policy   Policy
	Outcomes []Outcome // by trace job
	// Capacity is the lab's GPUs.
	Capacity int
	// Window is what utilisation is measured over, in trace seconds.
	WindowStart, WindowEnd int64
	// BusyGPUSeconds is what all jobs held inside the window, fillers
	// included.
	BusyGPUSeconds float64
	// GapIntegral is the integral over time of the fair-share gap while
	// demand exceeded capacity, GapTime that time.
	GapIntegral, GapTime float64
	FillerGPUSeconds     float64
	FillerLostGPUSeconds float64
	// Preemptions counts jobs stopped for others (fillers included);
	// Shrinks those of them requeued with fewer GPUs.
	Preemptions int
	Shrinks     int
	// Passes is the number of scheduling passes.
	Passes int
}

// Options are what one replay needs besides the trace and the policy.
type Options struct {
	Lab         Lab
	Setup       Setup
	Assumptions Assumptions
	Speedup     *Speedup
	// WindowEnd ends the utilisation window (trace seconds); 0 means the
	// last submission.
	WindowEnd int64
	// Tick, when above 0, adds a pass at every multiple of it (in trace
	// time) while anything is left: the daemon passes after every event
	// and also every GPUSampleInterval, and the decisions that change with
	// time alone (a yield that now pays back, an age that now ranks
	// higher) are taken at those passes. 0 passes at events only: much
	// faster on a long trace, and the same but for such decisions.
	Tick time.Duration
	// Grid, when above 0, is a live replay's wall second in trace seconds
	// (1 / its scale): the replay's jobs end on whole wall seconds, so a
	// run whose work does not (a job shrunk to 3 of its 4 GPUs works 4/3
	// as long) ends on the next multiple of Grid, as it does live.
	Grid int64
	// Reservations are held throughout the replay (--reservation), with
	// their times on the replay's clock; their windows' starts and ends
	// are passes, as the daemon passes every second.
	Reservations []sched.Reservation
}

// Simulate replays the trace under one policy: an event clock of
// submissions, job ends and the ends of stops, one sched.Cycle after each
// instant's events, usage advanced by sched.AdvanceUsage in between.
func Simulate(tr *Trace, pol Policy, opt Options) (*Run, error) {
	if err := checkFits(tr, opt.Lab); err != nil {
		return nil, err
	}
	e := newEngine(tr, pol, opt)
	e.run()
	return e.result(), nil
}

// checkFits refuses jobs no lab of this size could run.
func checkFits(tr *Trace, lab Lab) error {
	total := lab.Nodes * lab.GPUsPerNode
	for _, j := range tr.Jobs {
		if j.GPUs > total {
			return fmt.Errorf("%s:%d: job %s asks for %d GPUs, the simulated lab has %d (%d nodes × %d GPUs): give more --nodes or --gpus-per-node, or drop the job", tr.File, j.Line, j.Name, j.GPUs, total, lab.Nodes, lab.GPUsPerNode)
		}
	}
	return nil
}

type simJob struct {
	job sched.Job
	// run is its current run's index in engine.runs plus one while it
	// holds GPUs (0: none, or no budgets).
	run      int
	trace    int // index in the trace; -1 for a filler
	acct     int
	origGPUs int
	gpus     int
	// work is what remains, in seconds at the original GPU count.
	work     float64
	limit    int64 // seconds; 0 for none
	segStart int64 // start of the current run
	prodFrom int64 // from when the current run makes progress
	endAt    int64
	epoch    int
	stopping bool
	toGPUs   int
	// toLimit is the limit the core gave a job it shrank
	// (sched.Shrink.TimeLimit), in seconds; 0 keeps the limit.
	toLimit  int64
	restarts int
	pos      int // position in engine.act, -1 when not there
	timedOut bool
	out      Outcome
}

type eventKind int

const (
	evEnd eventKind = iota
	evStopped
)

type event struct {
	at    int64
	kind  eventKind
	job   int
	epoch int
	seq   int // insertion order: equal times pop in it
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(a, b int) bool {
	if h[a].at != h[b].at {
		return h[a].at < h[b].at
	}
	return h[a].seq < h[b].seq
}
func (h eventHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type engine struct {
	tr  *Trace
	pol Policy
	opt Options
	w   world
	// base is trace second 0 on the core's clock.
	base int64

	jobs []simJob
	// act holds the core's view of every job pending, running or stopping;
	// actJob[i] is the simJob behind act[i].
	act    []sched.Job
	actJob []int
	events eventHeap
	seq    int
	next   int // next trace job to submit
	now    int64
	usage  []sched.Usage
	// calc is the last fair-share recalculation, nextCalc when the next
	// is due (trace seconds); with Setup.CalcPeriod 0 calc stays zero and
	// every pass recomputes.
	calc     sched.Calc
	nextCalc int64
	// periodic: fair share and priorities are recomputed every
	// CalcPeriod (multifactor priority only: priority/basic has nothing
	// to recompute, and its runs get no instants for it).
	periodic bool

	capacity   int
	held       int
	heldAcct   []int
	demandAcct []int
	shares     []float64
	remaining  int
	nextFiller uint32
	// yielded counts jobs that may still name a job they yielded for.
	yielded int
	// budgets: some account has a GrpTRESMins; runs are then every run
	// since the last usage reset, for sched.AccountTRESUsage, as the
	// daemon reads them from its records.
	budgets bool
	runs    []sched.Run

	res Run
}

func newEngine(tr *Trace, pol Policy, opt Options) *engine {
	e := &engine{tr: tr, pol: pol, opt: opt, w: buildWorld(opt.Lab, opt.Setup, pol, tr, opt.Assumptions),
		base: Base, capacity: opt.Lab.Nodes * opt.Lab.GPUsPerNode, remaining: len(tr.Jobs)}
	acctIdx := map[string]int{}
	for _, a := range e.w.accounts {
		if a.Name == fillerAccount && pol.Fillers {
			continue
		}
		acctIdx[a.Name] = len(e.shares)
		e.shares = append(e.shares, float64(a.Shares))
	}
	e.heldAcct = make([]int, len(e.shares))
	e.demandAcct = make([]int, len(e.shares))
	e.jobs = make([]simJob, len(tr.Jobs), len(tr.Jobs)+1024)
	for i, t := range tr.Jobs {
		j := &e.jobs[i]
		*j = simJob{trace: i, acct: acctIdx[t.Account], origGPUs: t.GPUs, gpus: t.GPUs,
			work: float64(max(1, t.Duration)), limit: t.TimeLimit, pos: -1}
		j.job = sched.Job{ID: uint32(i + 1), Name: t.Name, User: t.User, Account: t.Account,
			State: slurm.Pending, Submit: e.clock(t.Submit), Req: sched.Request{GPUs: t.GPUs},
			Yieldable: pol.Yield && t.GPUs >= 2}
		if t.TimeLimit > 0 {
			j.job.TimeLimit = time.Duration(t.TimeLimit) * time.Second
			if pol.ShortRoute > 0 && j.job.TimeLimit <= pol.ShortRoute {
				j.job.Partition = shortPartition
			}
		}
		runtime := t.Duration
		if t.TimeLimit > 0 {
			runtime = min(runtime, t.TimeLimit)
		}
		j.out = Outcome{Account: t.Account, Submit: t.Submit, FirstStart: -1, End: -1, Runtime: runtime, GPUs: t.GPUs}
	}
	e.res = Run{Policy: pol, Capacity: e.capacity}
	if len(tr.Jobs) > 0 {
		e.now = tr.Jobs[0].Submit
		e.res.WindowStart = tr.Jobs[0].Submit
		e.res.WindowEnd = tr.Jobs[len(tr.Jobs)-1].Submit
	}
	if opt.WindowEnd > 0 {
		e.res.WindowEnd = opt.WindowEnd
	}
	for _, a := range e.w.accounts {
		e.budgets = e.budgets || a.GrpTRESMins.Any()
	}
	e.periodic = opt.Setup.CalcPeriod > 0 && e.w.cfg.PriorityType == sched.PriorityMultifactor
	if e.periodic {
		// The daemon recalculates when it starts, before the first job.
		e.calc, e.nextCalc = sched.Calc{At: e.clock(e.now)}, e.now+e.calcPeriod()
	}
	return e
}

// calcPeriod is Setup.CalcPeriod in whole trace seconds, at least one.
func (e *engine) calcPeriod() int64 {
	return max(1, int64(e.opt.Setup.CalcPeriod/time.Second))
}

// recalc makes the recalculation due at the instant e.now, as the daemon's
// pass at or after each CalcPeriod does: fair share and priorities from
// the usage as of now until the next.
func (e *engine) recalc() {
	if !e.periodic || e.now < e.nextCalc {
		return
	}
	e.calc = sched.Calc{At: e.clock(e.now), Usage: e.usage}
	for e.nextCalc <= e.now {
		e.nextCalc += e.calcPeriod()
	}
}

func (e *engine) clock(s int64) time.Time { return time.Unix(e.base+s, 0) }

// maxIdleEdges bounds the reservation edges passed one after another
// with nothing else happening: jobs that fit no window never start.
const maxIdleEdges = 60

// nextResvEdge is the next start or end of a reservation's window after
// now, in trace seconds.
func (e *engine) nextResvEdge() (int64, bool) {
	best, ok := int64(math.MaxInt64), false
	now := e.clock(e.now)
	for i := range e.opt.Reservations {
		s, end, in := e.opt.Reservations[i].Window(now)
		if !in {
			continue
		}
		edge := s
		if !s.After(now) {
			edge = end
		}
		if t := edge.Unix() - e.base; t > e.now && t < best {
			best, ok = t, true
		}
	}
	return best, ok
}

// nextUsageReset is the next UsageResetPeriod reset after now, in trace
// seconds, while some account has a budget and jobs wait.
func (e *engine) nextUsageReset() (int64, bool) {
	if !e.budgets || len(e.act) == 0 {
		return 0, false
	}
	r := sched.NextUsageReset(e.opt.Setup.UsageResetPeriod, e.clock(e.now), time.Local)
	if r.IsZero() {
		return 0, false
	}
	return r.Unix() - e.base, true
}

// addBudgets puts each account's usage per TRES and the next reset into
// snap, as the daemon's addBudgets does from its records: the runs since
// the last reset (older ones are dropped, they no longer count).
func (e *engine) addBudgets(snap *sched.Snapshot) {
	if !e.budgets {
		return
	}
	p := e.opt.Setup.UsageResetPeriod
	snap.Config.NextUsageReset = sched.NextUsageReset(p, snap.Now, time.Local)
	var since time.Time
	switch p {
	case "NONE", "", "NOW":
		// NOW: the replay's start, before every run.
		if hl := snap.Config.DecayHalfLife; hl > 0 {
			since = snap.Now.Add(-40 * hl)
		}
	default:
		since = sched.PrevUsageReset(p, snap.Now, time.Local)
	}
	if !since.IsZero() {
		kept := e.runs[:0]
		for _, r := range e.runs {
			if r.End.IsZero() || r.End.After(since) {
				kept = append(kept, r)
			}
		}
		if len(kept) < len(e.runs) {
			e.reindexRuns(kept)
		}
	}
	snap.TRESUsage = sched.AccountTRESUsage(*snap, e.runs, since)
}

// reindexRuns keeps the runs given (e.runs compacted in place) and points
// each running job at its run again.
func (e *engine) reindexRuns(kept []sched.Run) {
	for i := range e.jobs {
		e.jobs[i].run = 0
	}
	for k := range kept {
		if kept[k].End.IsZero() {
			if i, ok := e.index(kept[k].Job.ID); ok {
				e.jobs[i].run = k + 1
			}
		}
	}
	e.runs = kept
}

// Base is the Unix time of trace second 0 on the replay's clock.
const Base = 1_500_000_000

func (e *engine) push(at int64, kind eventKind, job int) {
	e.seq++
	heap.Push(&e.events, event{at: at, kind: kind, job: job, epoch: e.jobs[job].epoch, seq: e.seq})
}

func (e *engine) run() {
	idleEdges, idleResets, lastReset := 0, 0, int64(-1)
	for e.remaining > 0 {
		t := int64(math.MaxInt64)
		if e.next < len(e.tr.Jobs) {
			t = e.tr.Jobs[e.next].Submit
		}
		if len(e.events) > 0 {
			t = min(t, e.events[0].at)
		}
		if t == math.MaxInt64 && idleEdges < maxIdleEdges {
			// Jobs may wait for a reservation's end alone.
			if b, ok := e.nextResvEdge(); ok {
				t = b
				idleEdges++
			}
		}
		if t == math.MaxInt64 && idleResets < maxIdleEdges {
			// Jobs may wait for a spent budget's reset alone.
			// Counted once per reset: recalculations come between.
			if b, ok := e.nextUsageReset(); ok {
				if b != lastReset {
					idleResets++
				}
				t, lastReset = b, b
			}
		} else if t != math.MaxInt64 {
			idleResets = 0
		}
		if t == math.MaxInt64 {
			break // what is left can never start
		}
		if b, ok := e.nextResvEdge(); ok && b < t {
			t = b
		} else if t != math.MaxInt64 {
			idleEdges = 0
		}
		if b, ok := e.nextUsageReset(); ok && b < t {
			// Jobs waiting on a spent budget may start at the reset.
			t = b
		}
		if e.periodic {
			// A recalculation is an instant of its own: what was
			// waiting may rank otherwise after it.
			t = min(t, e.nextCalc)
		}
		if tick := int64(e.opt.Tick / time.Second); tick > 0 && len(e.tr.Jobs) > 0 {
			// From the first submission, as a live replay's seconds.
			first := e.tr.Jobs[0].Submit
			t = min(t, first+(max(0, e.now-first)/tick+1)*tick)
		}
		e.advance(t)
		for len(e.events) > 0 && e.events[0].at == t {
			ev := heap.Pop(&e.events).(event)
			if e.jobs[ev.job].epoch != ev.epoch {
				continue
			}
			switch ev.kind {
			case evEnd:
				e.finish(ev.job)
			case evStopped:
				e.stopped(ev.job)
			}
		}
		for e.next < len(e.tr.Jobs) && e.tr.Jobs[e.next].Submit == t {
			e.submit(e.next)
			e.next++
		}
		e.recalc()
		if e.remaining > 0 {
			e.pass()
		}
	}
}

// advance moves the clock to t, accruing utilisation, the fair-share gap
// and usage over the interval.
func (e *engine) advance(t int64) {
	dt := t - e.now
	if dt <= 0 {
		return
	}
	if lo, hi := max(e.now, e.res.WindowStart), min(t, e.res.WindowEnd); hi > lo {
		e.res.BusyGPUSeconds += float64(e.held) * float64(hi-lo)
	}
	if gap, ok := FairGap(e.heldAcct, e.demandAcct, e.shares, e.capacity); ok {
		e.res.GapIntegral += gap * float64(dt)
		e.res.GapTime += float64(dt)
	}
	snap := sched.Snapshot{Now: e.clock(e.now), Config: e.w.cfg, Partitions: e.w.partitions, QOS: e.w.qos,
		Accounts: e.w.accounts, Nodes: e.w.nodes, Usage: e.usage, Jobs: e.act}
	e.usage = sched.AdvanceUsage(snap, e.clock(t))
	e.now = t
}

func (e *engine) addActive(i int) {
	e.jobs[i].pos = len(e.act)
	e.act = append(e.act, e.jobs[i].job)
	e.actJob = append(e.actJob, i)
}

func (e *engine) removeActive(i int) {
	p := e.jobs[i].pos
	last := len(e.act) - 1
	e.act[p], e.actJob[p] = e.act[last], e.actJob[last]
	e.jobs[e.actJob[p]].pos = p
	e.act, e.actJob = e.act[:last], e.actJob[:last]
	e.jobs[i].pos = -1
}

// sync copies a job's core view into the active list.
func (e *engine) sync(i int) {
	if p := e.jobs[i].pos; p >= 0 {
		e.act[p] = e.jobs[i].job
	}
}

func (e *engine) submit(i int) {
	e.addActive(i)
	e.demandAcct[e.jobs[i].acct] += e.jobs[i].gpus
}

// pass runs one scheduling pass and carries out its plan. With fillers,
// as many pending 1-GPU filler jobs as there are idle GPUs join the
// snapshot; those that do not start are forgotten.
func (e *engine) pass() {
	e.res.Passes++
	n := len(e.act)
	fillers := 0
	if e.pol.Fillers {
		fillers = e.capacity - e.held
		limit := time.Duration(e.opt.Assumptions.FillerLimit)
		for k := range fillers {
			e.act = append(e.act, sched.Job{ID: fillerBase + e.nextFiller + uint32(k), User: fillerAccount,
				Account: fillerAccount, Partition: fillerPartition, QOS: fillerQOS, State: slurm.Pending,
				Submit: e.clock(e.now), TimeLimit: limit, Req: sched.Request{GPUs: 1}})
		}
	}
	snap := sched.Snapshot{Now: e.clock(e.now), Config: e.w.cfg, Nodes: e.w.nodes, Partitions: e.w.partitions,
		QOS: e.w.qos, Accounts: e.w.accounts, Usage: e.usage, Calc: e.calc, Jobs: e.act, Reservations: e.opt.Reservations}
	e.addBudgets(&snap)
	plan := sched.Cycle(snap)
	fillerJobs := e.act[n:]
	e.act = e.act[:n]
	for _, s := range plan.Starts {
		if s.JobID >= fillerBase {
			e.startFiller(fillerJobs[s.JobID-fillerBase-e.nextFiller], s)
			continue
		}
		e.start(int(s.JobID-1), s)
	}
	e.nextFiller += uint32(fillers)
	for _, p := range plan.Preempts {
		if i, ok := e.index(p.JobID); ok {
			e.stop(i, e.jobs[i].gpus, p.For, 0)
		}
	}
	for _, s := range plan.Shrinks {
		if i, ok := e.index(s.JobID); ok {
			e.stop(i, s.ToGPUs, s.For, s.TimeLimit)
		}
	}
	for _, g := range plan.Grows {
		if i, ok := e.index(g.JobID); ok {
			e.stop(i, g.ToGPUs, 0, 0)
		}
	}
}

// index finds the simJob of a job id: trace jobs by position, fillers in
// the active list.
func (e *engine) index(id uint32) (int, bool) {
	if id < fillerBase {
		return int(id - 1), int(id-1) < len(e.tr.Jobs)
	}
	for p, j := range e.act {
		if j.ID == id {
			return e.actJob[p], true
		}
	}
	return 0, false
}

func (e *engine) startFiller(j sched.Job, s sched.Start) {
	limit := int64(e.opt.Assumptions.FillerLimit / time.Second)
	e.jobs = append(e.jobs, simJob{trace: -1, origGPUs: 1, gpus: 1, work: float64(limit), limit: limit, pos: -1})
	i := len(e.jobs) - 1
	e.jobs[i].job = j
	e.addActive(i)
	e.start(i, s)
}

// rate is how fast job j progresses on its current GPUs, relative to its
// original count.
func (e *engine) rate(j *simJob) float64 {
	if j.gpus == j.origGPUs {
		return 1
	}
	return e.opt.Speedup.At(j.gpus) / e.opt.Speedup.At(j.origGPUs)
}

func (e *engine) start(i int, s sched.Start) {
	j := &e.jobs[i]
	// Resumed stays: a run after a yield is spared the scheduler's own
	// stops until it has run its minimum (sched.Config.YieldMinRun).
	j.job.State, j.job.Start, j.job.Alloc, j.job.YieldedFor = slurm.Running, e.clock(e.now), s.Alloc, 0
	if j.job.Eligible.IsZero() {
		j.job.Eligible = j.job.Start // as the daemon records it at a first start
	}
	if e.yielded > 0 {
		e.yieldDone(j.job.ID)
	}
	j.segStart, j.prodFrom = e.now, e.now
	if j.restarts > 0 {
		j.prodFrom += int64(e.opt.Assumptions.Restart / time.Second)
	}
	work := int64(math.Ceil(j.work/e.rate(j) - 1e-9))
	if g := e.opt.Grid; g > 0 {
		work = (work + g - 1) / g * g
	}
	run := j.prodFrom - e.now + work
	j.timedOut = false
	if j.limit > 0 && run > j.limit {
		run, j.timedOut = j.limit, true
	}
	j.endAt = e.now + max(1, run)
	j.epoch++
	e.push(j.endAt, evEnd, i)
	if e.budgets && j.trace >= 0 {
		e.runs = append(e.runs, sched.Run{Job: j.job})
		j.run = len(e.runs)
	}
	e.held += j.gpus
	if j.trace >= 0 {
		e.heldAcct[j.acct] += j.gpus
		if j.out.FirstStart < 0 {
			j.out.FirstStart = e.now
		}
	}
	e.sync(i)
}

// yieldDone clears YieldedFor on the jobs that yielded for job id, which
// has now started: they no longer need to wait for it.
func (e *engine) yieldDone(id uint32) {
	for p := range e.act {
		if e.act[p].YieldedFor == id {
			e.act[p].YieldedFor = 0
			e.jobs[e.actJob[p]].job.YieldedFor = 0
			e.yielded--
		}
	}
}

// release gives back what job i holds and accounts for it.
func (e *engine) release(i int) {
	j := &e.jobs[i]
	if j.run > 0 {
		e.runs[j.run-1].End = e.clock(e.now)
		j.run = 0
	}
	held := float64(j.gpus) * float64(e.now-j.segStart)
	e.held -= j.gpus
	if j.trace < 0 {
		e.res.FillerGPUSeconds += held
		return
	}
	j.out.GPUSeconds += held
	e.heldAcct[j.acct] -= j.gpus
}

func (e *engine) finish(i int) {
	j := &e.jobs[i]
	e.release(i)
	e.removeActive(i)
	j.epoch++
	if j.trace < 0 {
		return
	}
	e.demandAcct[j.acct] -= j.gpus
	j.out.End, j.out.TimedOut = e.now, j.timedOut
	e.remaining--
}

// stop begins stopping running job i for job forJob (preemption, or a
// shrink to gpus GPUs): work since its last checkpoint is lost and it
// holds its GPUs for the stop time; requeued, it names forJob
// (YieldedFor), as the yield protocol records it. A job that would end by
// itself first is left alone.
func (e *engine) stop(i, gpus int, forJob uint32, limit time.Duration) {
	j := &e.jobs[i]
	stopT := int64(e.opt.Assumptions.Stop / time.Second)
	if j.job.State != slurm.Running || j.stopping || j.endAt <= e.now+stopT {
		return
	}
	prod := max(0, e.now-j.prodFrom)
	ck := int64(0)
	if c := int64(e.opt.Assumptions.Checkpoint / time.Second); c > 0 {
		ck = prod / c * c
	}
	j.work = max(0, j.work-float64(ck)*e.rate(j))
	lost := float64(j.gpus) * float64(prod-ck+min(j.prodFrom, e.now)-j.segStart+stopT)
	if j.trace < 0 {
		e.res.FillerLostGPUSeconds += lost
	} else {
		j.out.LostGPUSeconds += lost
		j.out.Stops++
		if gpus < j.gpus {
			j.out.Shrinks++
		}
	}
	e.res.Preemptions++
	if gpus < j.gpus {
		e.res.Shrinks++
	}
	j.stopping, j.toGPUs, j.job.YieldedFor = true, gpus, forJob
	j.toLimit = int64(limit / time.Second)
	e.yielded++
	j.job.State = slurm.Completing
	j.epoch++
	e.push(e.now+stopT, evStopped, i)
	e.sync(i)
}

// stopped ends a stop: the GPUs are free; a filler is gone, a trace job is
// requeued (Resumed, so it goes first in its tier) with its new GPU count
// and, shrunk, the time limit the core stretched by the GPUs it gave up
// (sched.Shrink.TimeLimit, linear in GPUs: more than the measured speedup
// needs, so a shrink alone never makes a job time out).
func (e *engine) stopped(i int) {
	j := &e.jobs[i]
	e.release(i)
	j.stopping = false
	j.epoch++
	if j.trace < 0 {
		e.removeActive(i)
		return
	}
	e.demandAcct[j.acct] += j.toGPUs - j.gpus
	j.gpus = j.toGPUs
	j.restarts++
	switch {
	case j.limit > 0 && j.gpus < j.origGPUs && j.toLimit > 0:
		// Shrunk: the limit the core stretched (as the daemon takes it),
		// on a live replay's whole wall seconds.
		j.limit = j.toLimit
		if g := e.opt.Grid; g > 0 {
			j.limit = (j.limit + g - 1) / g * g
		}
	case j.limit > 0 && j.gpus >= j.origGPUs:
		j.limit = e.tr.Jobs[j.trace].TimeLimit // grown back to its full size
	}
	if j.limit > 0 {
		j.job.TimeLimit = time.Duration(j.limit) * time.Second
	}
	j.job.FullGPUs = 0
	if j.gpus < j.origGPUs {
		j.job.FullGPUs = j.origGPUs
	}
	j.job.State, j.job.Alloc, j.job.Resumed = slurm.Pending, sched.Alloc{}, true
	j.job.Req.GPUs = j.gpus
	j.job.Start = time.Time{}
	// The core sees a requeued job as the daemon records it: submitted
	// anew at its requeue (Slurm resets the submit time), eligible since
	// it first became so (set at its first start). The submit time breaks
	// ties of priority: kept at the trace's, it put the first of two
	// resumed jobs of equal priority ahead where the daemon put the last.
	j.job.Submit = e.clock(e.now)
	e.sync(i)
}

func (e *engine) result() *Run {
	r := e.res
	r.Outcomes = make([]Outcome, len(e.tr.Jobs))
	for i := range e.tr.Jobs {
		r.Outcomes[i] = e.jobs[i].out
	}
	return &r
}
