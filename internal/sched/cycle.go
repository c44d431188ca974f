package sched

import (
	"fmt"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// descHigherPartition is the description Slurm 22.05 gives a job whose
// nodes a blocked job of another partition has claimed (job_scheduler.c);
// squeue's %r prints it instead of the reason word.
const descHigherPartition = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"

// Cycle runs one scheduling pass over the snapshot and returns the plan:
// which jobs start where, which running jobs are preempted or shrunk, and
// for every other pending job its reason and expected start.
func Cycle(snap Snapshot) Plan {
	p := newPass(&snap)
	p.buildTimeline()
	return p.cycle()
}

// cycle is the pass's body:
//
//  1. resolve and prioritise every pending job, and order them
//     (compareJobs);
//  2. walk them in that order; a job held back by something other than
//     resources (staticBlock) gets that reason;
//  3. the job is searched on the timeline for the earliest time it fits
//     for its whole time limit; one that fits now starts, unless FIFO
//     scheduling stopped at a blocked job;
//  4. a job that does not fit now may preempt lower-tier REQUEUE jobs, or
//     shrink a yieldable job (Config.Shrink, the first blocked job only,
//     or ShrinkTries of them), or else stop lower-ranked yieldable jobs
//     when that pays back (Config.YieldPayback, tryYield);
//  5. otherwise it gets a reservation on specific GPUs when it is expected
//     within bf_window, so lower jobs only start where they delay no
//     reservation (backfill); its reason is Resources for the first blocked
//     job of its partition, Priority for the others;
//  6. once bf_max_job_test jobs could not start, the rest wait with reason
//     Priority without being searched.
func (p *pass) cycle() Plan {
	// 1.
	// Counted first: finished jobs kept in the snapshot cost no memory.
	n := 0
	for i := range p.snap.Jobs {
		if isPending(p.snap.Jobs[i].State) {
			n++
		}
	}
	pend := make([]pjob, 0, n)
	var yieldedTo map[uint32]bool
	for i := range p.snap.Jobs {
		if j := &p.snap.Jobs[i]; j.YieldedFor != 0 && isPending(j.State) {
			if yieldedTo == nil {
				yieldedTo = map[uint32]bool{}
			}
			yieldedTo[j.YieldedFor] = true
		}
	}
	for i := range p.snap.Jobs {
		j := &p.snap.Jobs[i]
		if !isPending(j.State) {
			continue
		}
		pj := p.resolve(j)
		pj.prio = p.factors(&pj).total
		pj.yieldedTo = yieldedTo[j.ID]
		pend = append(pend, pj)
	}
	slices.SortFunc(pend, func(a, b pjob) int { return compareJobs(&a, &b) })

	plan := Plan{Pending: make([]Decision, 0, len(pend))}
	var (
		tested       int
		maxTest      = p.cfg.bfMaxJobTest()
		blocked      bool  // a job before this one could not start
		fifoFloor    int64 // FIFO: no job starts before an earlier blocked one
		fifoNever    bool  // FIFO: an earlier blocked job has no start
		shrinkTried  bool
		shrinkTries  int
		failedPart   = make([]bool, len(p.snap.Partitions))
		failedNode   = make([]bool, len(p.snap.Nodes))
		fifo         = p.cfg.fifo()
		firstBlocked = true
	)
	for i := range pend {
		pj := &pend[i]
		j := pj.job
		d := Decision{JobID: j.ID, Priority: pj.prio}
		if j.Hold != HoldNone {
			d.Priority = 0 // Slurm shows held jobs with priority 0
		}
		if j.Eligible.IsZero() && p.eligible(pj) {
			plan.Eligible = append(plan.Eligible, Eligibility{JobID: j.ID, At: p.eligibleAt(j)})
		}
		if len(j.Deps.Items) > 0 {
			switch r, _ := p.depState(j); r {
			case depWaiting:
				d.DepReason = slurm.ReasonDependency
			case depNever:
				d.DepReason = slurm.ReasonDependencyNeverSatisfied
			}
		}
		// 2.
		if b, ok := p.staticBlock(pj); ok {
			d.Reason, d.Detail = b.reason, b.detail
			if b.expected > 0 {
				d.ExpectedStart = time.Unix(b.expected, 0)
			}
			plan.Pending = append(plan.Pending, d)
			continue
		}
		// 6.
		if tested >= maxTest {
			d.Reason = slurm.ReasonPriority
			plan.Pending = append(plan.Pending, d)
			continue
		}
		// 3.
		sh := p.shapeOf(pj)
		rv, startedIn, ok := p.resvTry(pj, sh, &d, fifo && blocked)
		if startedIn != nil {
			plan.Starts = append(plan.Starts, *startedIn)
			continue
		}
		if !ok {
			plan.Pending = append(plan.Pending, d)
			continue
		}
		if rv != nil {
			p.enter(rv, 1) // given back below, once it is placed
		}
		from := p.now
		if fifo && blocked {
			from = max(from, fifoFloor)
		}
		var res searchResult
		if !(fifo && fifoNever) {
			res = p.search(sh, from)
		}
		if res.ok && res.start == p.now && !(fifo && blocked) {
			plan.Starts = append(plan.Starts, p.start(pj, sh, res, blocked))
			if rv != nil {
				p.enter(rv, -1)
			}
			continue
		}
		tested++ // only jobs that do not start count: the limit bounds reservation work
		// 4.
		handled := false
		if (!res.ok || res.start > p.now) && !(fifo && blocked) && rv == nil {
			if pre, node, ok := p.tryPreempt(pj, sh); ok {
				// It starts once the victims have yielded: count it as
				// running for limits and throttles already.
				p.countStart(pj, 1)
				plan.Preempts = append(plan.Preempts, pre...)
				d.Detail = preemptDetail(pre)
				res = searchResult{start: p.now, node: node, ok: true}
				handled = true
			} else {
				wait := forever
				if res.ok {
					wait = res.start - p.now
				}
				if !handled && p.cfg.Shrink && p.mayShrink(firstBlocked, shrinkTried, shrinkTries) {
					shrinkTried = true
					shrinkTries++
					if s, node, ok := p.tryShrink(pj, sh, wait); ok {
						p.countStart(pj, 1)
						plan.Shrinks = append(plan.Shrinks, s)
						d.Detail = shrinkDetail(s)
						res = searchResult{start: p.now, node: node, ok: true}
						handled = true
					}
				}
				if !handled && p.cfg.YieldPayback {
					if pre, node, ok := p.tryYield(pj, sh, wait); ok {
						p.countStart(pj, 1)
						plan.Preempts = append(plan.Preempts, pre...)
						d.Detail = yieldDetail(pre)
						res = searchResult{start: p.now, node: node, ok: true}
						handled = true
					}
				}
			}
		}
		// 5.
		if !handled && res.ok && res.start <= p.windowEnd {
			p.reserve(sh, res)
		}
		if res.ok {
			d.ExpectedStart = time.Unix(res.start, 0)
			d.SchedNode = p.snap.Nodes[res.node].Name
		}
		if rv != nil {
			p.enter(rv, -1)
		}
		if d.Detail == "" {
			d.Detail = p.resourceDetail(sh)
		}
		switch {
		case rv != nil && rv.windows[0][0] > p.now:
			d.Reason = slurm.ReasonReservation
			d.Detail = fmt.Sprintf("reservation %s starts at %s", rv.r.Name, time.Unix(rv.windows[0][0], 0).UTC().Format("2006-01-02T15:04:05"))
		case rv == nil && !handled && len(p.resvs) > 0 && p.resvHolds(sh, &d):
		case failedPart[pj.part]:
			d.Reason = slurm.ReasonPriority
		default:
			d.Reason = slurm.ReasonResources
			if p.nodesTaken(pj.part, failedNode) {
				d.StateDesc = descHigherPartition
			}
			failedPart[pj.part] = true
			for n := range failedNode {
				failedNode[n] = failedNode[n] || p.partHasNode(pj.part, n)
			}
		}
		if fifo {
			if res.ok {
				fifoFloor = max(fifoFloor, res.start)
			} else {
				fifoNever = true
			}
		}
		blocked, firstBlocked = true, false
		plan.Pending = append(plan.Pending, d)
	}
	if p.cfg.ShrinkRegrow {
		plan.Grows = p.regrow()
	}
	return plan
}

// mayShrink reports whether the blocked job at hand may try a shrink: the
// first blocked job of the pass, or with ShrinkTries that many of them.
func (p *pass) mayShrink(firstBlocked, tried bool, tries int) bool {
	if p.cfg.ShrinkTries <= 0 {
		return firstBlocked && !tried
	}
	return tries < p.cfg.ShrinkTries
}

// search is earliest with two memos, both valid while the timeline is
// unchanged. Jobs of one shape get one answer, if it changes nothing (never,
// or beyond bf_window; other answers lead to a reservation and need the
// window's minima). And a job that asks for no less than an earlier one of
// its class (more GPUs, memory or CPUs, a longer limit) cannot start before
// that one could: the search starts there. Once the window is full that
// makes the search of the remaining jobs short.
func (p *pass) search(sh *shape, from int64) searchResult {
	if !searchMemo {
		return p.earliest(sh, from)
	}
	k := memoKey{sh, from}
	if r, ok := p.memo[k]; ok && r.version == p.version && (!r.ok || r.start > p.windowEnd) {
		return r
	}
	lo := from
	for _, b := range p.bounds[sh.eligible] {
		if b.version != p.version || b.from > from || !b.below(sh) {
			continue
		}
		if !b.ok {
			return searchResult{version: p.version, node: -1}
		}
		lo = max(lo, b.start)
	}
	r := p.earliest(sh, lo)
	p.memo[k] = r
	bs := p.bounds[sh.eligible]
	if len(bs) >= maxBounds {
		bs = bs[1:]
	}
	p.bounds[sh.eligible] = append(bs, bound{version: p.version, from: from, key: sh.key, need: sh.need, start: r.start, ok: r.ok})
	return r
}

// searchMemo is only turned off by tests, to check that the memos change
// no answer.
var searchMemo = true

// maxBounds is how many earlier answers per class search remembers.
const maxBounds = 32

// bound is an earlier search answer: a job of this size could start no
// earlier than start (never, if !ok).
type bound struct {
	version int
	from    int64
	key     shapeKey
	need    int
	start   int64
	ok      bool
}

// below reports whether sh asks for at least as much as the bound's job, so
// that it cannot start earlier.
func (b *bound) below(sh *shape) bool {
	return b.need <= sh.need && b.key.gpuMem <= sh.key.gpuMem && b.key.cpus <= sh.key.cpus &&
		b.key.mem <= sh.key.mem && b.key.ports <= sh.key.ports && b.key.length <= sh.key.length
}

// start places a job that fits now: the GPUs chosen on the window's minima,
// the lowest free CPU ids, held until its limit ends.
func (p *pass) start(pj *pjob, sh *shape, res searchResult, backfilled bool) Start {
	var alloc Alloc
	if sh.gang > 0 {
		alloc = p.holdGang(sh, res, true)
	} else {
		alloc = p.allocOn(sh, res.node, p.aggs[res.node], p.now, ceilTo(satAdd(p.now, pj.limit), p.res))
	}
	p.countStart(pj, 1)
	limit := Unlimited
	if pj.limit < forever {
		limit = time.Duration(pj.limit) * time.Second
	}
	return Start{JobID: pj.job.ID, Alloc: alloc, TimeLimit: limit, Priority: pj.prio, Backfilled: backfilled}
}

// reserve holds the GPUs, CPUs and memory a job is expected to start on,
// from its start rounded down to bf_resolution to its end rounded up
// (backfill.c rounds its reservations to bf_resolution too; rounding the end
// up rather than down keeps lower jobs clear of the reserved job's whole
// time limit).
func (p *pass) reserve(sh *shape, res searchResult) {
	if sh.gang > 0 {
		p.holdGang(sh, res, false)
		return
	}
	if p.aggFor != sh || p.aggVersion != p.version || p.aggStart != res.start || p.aggNode != res.node {
		res = p.earliest(sh, res.start) // the window's minima were not kept
	}
	slots := p.choose(sh, res.node, p.aggs[res.node])
	p.deltas = p.holdDeltas(sh, res.node, slots, p.deltas)
	p.add(res.node, floorTo(res.start, p.res), ceilTo(satAdd(res.start, sh.key.length), p.res), p.deltas)
}

// allocOn places a job of one node on node n, choosing its GPUs on agg
// (the minima over its window), and holds them over [from, to).
func (p *pass) allocOn(sh *shape, n int, agg []int64, from, to int64) Alloc {
	slots := p.choose(sh, n, agg)
	node := &p.snap.Nodes[n]
	alloc := Alloc{Node: node.Name, CPUs: p.pickCPUs(n, sh.key.cpus), Mem: sh.key.mem,
		Ports: p.pickPorts(n, sh.key.ports)}
	for _, s := range slots {
		g := p.slots[s].gpu
		ga := GPUAlloc{UUID: g.UUID, Index: g.Index}
		if sh.shared {
			ga.Mem = sh.key.gpuMem
		}
		alloc.GPUs = append(alloc.GPUs, ga)
	}
	p.deltas = p.holdDeltas(sh, n, slots, p.deltas)
	p.add(n, from, to, p.deltas)
	return alloc
}

// nodesTaken reports whether every node of the partition was claimed by a
// blocked job of an earlier partition.
func (p *pass) nodesTaken(part int, failed []bool) bool {
	covered := false
	for n := range failed {
		if p.partHasNode(part, n) {
			if !failed[n] {
				return false
			}
			covered = true
		}
	}
	return covered
}

// Estimate is what sbatch --test-only reports for a job.
type Estimate struct {
	// Start is when the job would start: now if at once; zero if unknown.
	Start     time.Time
	Node      string
	CPUs      int
	Partition string
	Reason    slurm.Reason
	Detail    string
}

// WillRun plans the snapshot with one more pending job and reports when
// that job would start, as sbatch --test-only asks.
func WillRun(snap Snapshot, j Job) Estimate {
	if j.State == "" {
		j.State = slurm.Pending
	}
	snap.Jobs = append(slices.Clip(snap.Jobs), j)
	p := newPass(&snap)
	p.buildTimeline()
	plan := p.cycle()
	est := Estimate{CPUs: max(1, j.Req.CPUs)}
	pj := p.resolve(&snap.Jobs[len(snap.Jobs)-1])
	if pj.part >= 0 {
		est.Partition = snap.Partitions[pj.part].Name
	}
	for _, s := range plan.Starts {
		if s.JobID == j.ID {
			est.Start, est.Node, est.CPUs = snap.Now, s.Alloc.Node, len(s.Alloc.CPUs)
			return est
		}
	}
	for _, d := range plan.Pending {
		if d.JobID == j.ID {
			est.Start, est.Node, est.Reason, est.Detail = d.ExpectedStart, d.SchedNode, d.Reason, d.Detail
		}
	}
	return est
}
