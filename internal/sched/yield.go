package sched

import (
	"cmp"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Yield payback (Config.YieldPayback): a blocked job may stop running
// yieldable jobs that rank below it (a lower tier, or its own tier and a
// lower priority; with YieldOwn also its own association's), when the
// wait it saves is longer than the delay it causes. The stopped jobs are requeued
// by the yield protocol, keep their size, and name the job they yielded
// for (Job.YieldedFor); they come back ahead of ordinary work once it has
// started, so each is delayed by about the job's time limit plus
// Config.YieldCost; resumed, each runs its minimum (Config.YieldMinRun,
// or its longer Job.CheckpointInterval) before any stop of the
// scheduler's own reaches it again (settled). Everything is estimated
// from time limits, the only durations the scheduler knows: a job with a
// short limit that would wait long pays back easily, a long one rarely.

// yieldVictim reports whether running job r may be stopped for pj by a
// yield, and whether that is free (a lower-tier REQUEUE job, which
// preemption could stop anyway) or costs r a delay.
func (p *pass) yieldVictim(pj *pjob, r *runInfo) (ok, free bool) {
	if r.gone || r.node < 0 || r.job.State != slurm.Running || len(r.more) > 0 {
		return false, false
	}
	if r.preemptable && r.pj.tier < pj.tier {
		return true, true
	}
	if !p.settled(r) {
		return false, false
	}
	// A job of a REQUEUE partition that did not offer to yield is stopped
	// by higher tiers only, as Slurm's partition_prio preemption stops it:
	// never by its peers. (Its peers stopping it for their own age made a
	// full scavenger partition stop and restart itself on every pass.)
	if !r.job.Yieldable {
		return false, false
	}
	if r.pj.tier < pj.tier {
		return true, false
	}
	if r.pj.tier > pj.tier {
		return false, false
	}
	if r.pj.prio < pj.prio {
		return true, false
	}
	// YieldOwn reorders one association's own queue, but not between two
	// jobs resumed after a yield: the order ranks those by priority, and
	// the exception let two of one account that did not fit beside each
	// other stop each other in turn for days (node8: 29 and 21 stops).
	own := p.cfg.YieldOwn && pj.assoc >= 0 && r.pj.assoc == pj.assoc && !(r.job.Resumed && pj.job.Resumed)
	return own, false
}

// yieldPays reports whether stopping `costly` jobs, each delayed by the
// waiting job's limit plus YieldCost, costs less than the wait it saves.
func (p *pass) yieldPays(costly int, limit, wait int64) bool {
	if costly == 0 {
		return true
	}
	if limit >= forever {
		return false
	}
	if wait >= forever {
		return true
	}
	delay := limit + ceilSeconds(p.cfg.YieldCost)
	return int64(costly)*delay < wait
}

// tryYield looks for the running jobs whose yield lets pj start now and
// pays back: on one node for a job of one node (the node where the
// fewest costly jobs must stop, then the fewest jobs, then the first),
// on sh.gang whole nodes for a larger one. wait is how long pj would wait
// otherwise (forever if it has no start). On success the victims'
// resources go to pj from now on, as with preemption.
func (p *pass) tryYield(pj *pjob, sh *shape, wait int64) ([]Preempt, int, bool) {
	if sh.key.length >= forever || (wait < forever && wait <= sh.key.length) {
		return nil, -1, false // not even one yield could pay back
	}
	if sh.gang > 0 {
		return p.tryYieldGang(pj, sh, wait)
	}
	end := satAdd(p.now, sh.key.length)
	var best []int
	bestEntry, bestCost := -1, 0
	var rels []release
	for i, n := range sh.nodes {
		var free, costly []int
		for k := range p.running {
			r := &p.running[k]
			if r.node != n {
				continue
			}
			if ok, f := p.yieldVictim(pj, r); ok && f {
				free = append(free, k)
			} else if ok {
				costly = append(costly, k)
			}
		}
		if len(costly) == 0 {
			continue // preemption alone would have done it
		}
		p.byRecency(free)
		p.byRecency(costly)
		cands := slices.Concat(free, costly)
		fitsWithout := func(set []int) bool {
			var ok bool
			rels, ok = p.fitsWithout(sh, sh, i, end, set, rels)
			return ok
		}
		if !fitsWithout(cands) {
			continue
		}
		set := cheapestSet(free, costly, fitsWithout)
		cost := len(set) - countIn(set, free)
		if !p.yieldPays(cost, sh.key.length, wait) {
			continue
		}
		if best == nil || cost < bestCost || (cost == bestCost && len(set) < len(best)) {
			best, bestEntry, bestCost = set, i, cost
		}
	}
	if best == nil {
		return nil, -1, false
	}
	n := sh.nodes[bestEntry]
	pre := p.stopFor(pj, best)
	p.holdNow(sh, bestEntry, end)
	for _, k := range best {
		p.untilYielded(&p.running[k])
	}
	return pre, n, true
}

// cheapestSet returns a set of victims that passes ok with the fewest
// costly ones: for k = 0, 1, ... costly jobs (the smallest set of them,
// in the order given), with every free one, the free ones then thinned
// to the fewest that still pass.
func cheapestSet(free, costly []int, ok func([]int) bool) []int {
	for k := 0; k <= len(costly); k++ {
		var found []int
		try := func(c []int) bool {
			set := append(slices.Clone(free), c...)
			if ok(set) {
				found = c
				return true
			}
			return false
		}
		if k == 0 {
			if !try(nil) {
				continue
			}
		} else if budget := 4096; firstSubset(costly, k, &budget, try) == nil {
			continue
		}
		// Keep as few free victims as still make room.
		set := append(slices.Clone(free), found...)
		for i := len(free) - 1; i >= 0; i-- {
			without := slices.Delete(slices.Clone(set), i, i+1)
			if ok(without) {
				set = without
			}
		}
		return set
	}
	return nil
}

func countIn(set, of []int) int {
	c := 0
	for _, x := range set {
		if slices.Contains(of, x) {
			c++
		}
	}
	return c
}

// stopFor takes the victims out of the timeline and the counters, and
// returns them as preemptions for pj.
func (p *pass) stopFor(pj *pjob, victims []int) []Preempt {
	pre := make([]Preempt, 0, len(victims))
	for _, k := range victims {
		r := &p.running[k]
		r.gone = true
		p.add(r.node, p.now, r.end, r.rel.deltas)
		p.countStart(&r.pj, -1)
		pre = append(pre, Preempt{JobID: r.job.ID, For: pj.job.ID})
	}
	return pre
}

// tryYieldGang is tryYield for a job larger than a node: a node qualifies
// when stopping every victim on it frees the whole node for the job's
// time limit; the sh.gang nodes with the fewest costly victims, then the
// fewest victims, then in node order, are taken if that pays back.
func (p *pass) tryYieldGang(pj *pjob, sh *shape, wait int64) ([]Preempt, int, bool) {
	end := satAdd(p.now, sh.key.length)
	type pick struct {
		entry, cost int
		victims     []int
	}
	var picks []pick
	var rels []release
	for i, n := range sh.nodes {
		var victims []int
		cost := 0
		for k := range p.running {
			r := &p.running[k]
			if r.node != n {
				continue
			}
			if ok, free := p.yieldVictim(pj, r); ok {
				victims = append(victims, k)
				if !free {
					cost++
				}
			}
		}
		var fits bool
		if rels, fits = p.fitsWithout(sh, sh.per, i, end, victims, rels); fits {
			picks = append(picks, pick{i, cost, victims})
		}
	}
	if len(picks) < sh.gang {
		return nil, -1, false
	}
	for _, pk := range picks {
		p.byRecency(pk.victims) // the plan must not depend on the snapshot's job order
	}
	slices.SortStableFunc(picks, func(a, b pick) int {
		return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(len(a.victims), len(b.victims)))
	})
	picks = picks[:sh.gang]
	cost := 0
	for _, pk := range picks {
		cost += pk.cost
	}
	if cost == 0 || !p.yieldPays(cost, sh.key.length, wait) {
		return nil, -1, false // with no cost, preemption would have done it
	}
	slices.SortFunc(picks, func(a, b pick) int { return cmp.Compare(a.entry, b.entry) })
	entries, victims := make([]int, len(picks)), make([][]int, len(picks))
	for x, pk := range picks {
		entries[x], victims[x] = pk.entry, pk.victims
	}
	return p.stopGang(pj, sh, end, entries, victims), sh.nodes[picks[0].entry], true
}

// regrow picks the running jobs a shrink left smaller that may get their
// GPUs back (Config.ShrinkRegrow), once every pending job of the pass has
// been placed, so that a regrowth takes nothing a pending job was given or
// promised: in job id order, each whose missing GPUs are free on its node
// for its whole time limit at its full size (its limit scaled down by the
// GPUs it gets back), when the time that saves is longer than YieldCost.
func (p *pass) regrow() []Shrink {
	var cands []int
	for k := range p.running {
		r := &p.running[k]
		if r.job.FullGPUs > r.wholeGPUs && r.wholeGPUs > 0 && !r.gone && r.node >= 0 && p.settled(r) &&
			r.job.State == slurm.Running && len(r.more) == 0 && r.job.Req.GPUMem == 0 && r.end < forever {
			cands = append(cands, k)
		}
	}
	slices.SortFunc(cands, func(a, b int) int { return cmp.Compare(p.running[a].job.ID, p.running[b].job.ID) })
	var grows []Shrink
	for _, k := range cands {
		r := &p.running[k]
		full, m := r.job.FullGPUs, r.wholeGPUs
		left := r.end - p.now
		if left*int64(full-m) <= int64(full)*ceilSeconds(p.cfg.YieldCost) {
			continue // what it would save does not pay for the stop
		}
		j := *r.job
		j.Req.GPUs = full
		pj := r.pj
		pj.job = &j
		if pj.limit < forever {
			pj.limit = (pj.limit*int64(m) + int64(full) - 1) / int64(full)
		}
		sh := p.shapeOf(&pj)
		i := sh.nodeEntry(r.node)
		if i < 0 {
			continue
		}
		n := r.node
		end := satAdd(p.now, pj.limit)
		agg := p.agg2s[n]
		p.tls[n].minOver(p.now, end, sh.cols[i], agg, p.yieldingOn(n, []release{r.rel}))
		if !p.fitsOn(sh, i, agg) {
			continue
		}
		r.gone = true
		p.add(n, p.now, r.end, r.rel.deltas)
		p.holdNow(sh, i, end)
		p.untilYielded(r)
		grows = append(grows, Shrink{JobID: r.job.ID, FromGPUs: m, ToGPUs: full, TimeLimit: fullLimit(r.pj.limit, m, full)})
	}
	return grows
}

// fullLimit is the limit at full GPUs of a job whose limit at m GPUs is
// limit: its limit before a shrink stretched it (stretched rounds up, so
// rounding this down gives that back).
func fullLimit(limit int64, m, full int) time.Duration {
	if limit <= 0 || limit >= forever {
		return 0
	}
	return time.Duration(limit*int64(m)/int64(full)) * time.Second
}

// settled reports whether the scheduler's own stops (a shrink, a
// regrowth, a payback yield) may reach running job r in this pass.
//
//  1. Never in the second it started: the daemon passes after every
//     event, and a pass that followed a hand-over within the same second
//     stopped the job just handed the GPUs (each pass found the next
//     waiting job worth it), where the simulator, which passes once per
//     instant, does not. Stopping a job that has not yet run a second
//     saves nothing anyway.
//  2. A job resumed after a yield, not before it has run its minimum
//     (minRun): long enough to reach a checkpoint, so that every run
//     after a yield makes progress. Without it a resumed job, which the
//     order puts ahead of higher-priority work of its tier (compareJobs),
//     was started and stopped by that work a pass later, over and over:
//     a 53-second job was yielded one second after each of 8 starts.
//     While it runs its minimum it keeps the rank the order gave it, so
//     the order and this rule agree.
//
// Preemption by a higher tier is Slurm's and keeps its rules.
func (p *pass) settled(r *runInfo) bool {
	ran := p.now - r.job.Start.Unix()
	if ran < 1 {
		return false
	}
	return !r.job.Resumed || ran >= minRun(r.job, p.cfg)
}

// minRun is how long, in whole seconds, a job resumed after a yield runs
// before the scheduler's own stops may reach it again: the checkpoint
// interval it declared, or Config.YieldMinRun when that is longer.
func minRun(j *Job, cfg *Config) int64 {
	return ceilSeconds(max(j.CheckpointInterval, cfg.YieldMinRun))
}
