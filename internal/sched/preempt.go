package sched

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// tryPreempt looks for running jobs of lower-tier partitions with
// PreemptMode=REQUEUE whose release lets pj start now: the fewest of them
// (on one node, the first such node), and among sets of that size the most
// recently started, so the least work is lost. When even all of them would
// not make room, nobody is preempted. On success the victims' resources go
// to pj from now on, held as a reservation until the daemon has yielded
// them and starts pj.
func (p *pass) tryPreempt(pj *pjob, sh *shape) ([]Preempt, int, bool) {
	if p.preemptFailed(pj, sh) {
		return nil, -1, false
	}
	pre, n, ok := p.tryPreemptShape(pj, sh)
	if !ok && searchMemo {
		p.forgetFailsAfterStops()
		k := preemptKey{sh.eligible, pj.tier}
		if fs := p.preemptFails[k]; len(fs) < maxBounds {
			p.preemptFails[k] = append(fs, sh.key)
		}
	}
	return pre, n, ok
}

// preemptKey groups the failed preemption attempts of a pass.
type preemptKey struct {
	e    *eligible
	tier int
}

// preemptFailed reports whether a job of the same tier and eligible nodes
// that asked for no more than this one already failed to preempt in this
// pass, with no job stopped since. Between stops, what preemption could
// free only shrinks (jobs start, reservations are made), so this one would
// fail too; skipping it saves the search, which
// is most of a pass with a long queue and many preemptable jobs.
func (p *pass) preemptFailed(pj *pjob, sh *shape) bool {
	if !searchMemo {
		return false
	}
	p.forgetFailsAfterStops()
	for _, f := range p.preemptFails[preemptKey{sh.eligible, pj.tier}] {
		if f.gpus <= sh.key.gpus && f.gpuMem <= sh.key.gpuMem && f.cpus <= sh.key.cpus && f.ports <= sh.key.ports &&
			f.mem <= sh.key.mem && f.length <= sh.key.length && (f.gpuMem == 0) == (sh.key.gpuMem == 0) {
			return true
		}
	}
	return false
}

// forgetFailsAfterStops empties the memo of failed preemptions once the
// pass has stopped a job since they were recorded. A yield or shrink for
// one job counts the stopped job as gone for every later preemption
// (yieldingOn), so a preemption that failed before it may succeed after
// it (found by TestSearchMemosChangeNoAnswer: job 27 failed to preempt,
// then yielded job 2 for itself, after which job 24 of the same shape
// could preempt job 3).
func (p *pass) forgetFailsAfterStops() {
	if len(p.yielding) != p.failsAt {
		clear(p.preemptFails)
		p.failsAt = len(p.yielding)
	}
}

func (p *pass) tryPreemptShape(pj *pjob, sh *shape) ([]Preempt, int, bool) {
	if sh.gang > 0 {
		return p.tryPreemptGang(pj, sh)
	}
	end := satAdd(p.now, sh.key.length)
	var best []int
	bestEntry := -1
	var rels []release
	for i, n := range sh.nodes {
		cands := p.preemptVictims(pj, n)
		if len(cands) == 0 {
			continue
		}
		p.byRecency(cands)
		fitsWithout := func(set []int) bool {
			var ok bool
			rels, ok = p.fitsWithout(sh, sh, i, end, set, rels)
			return ok
		}
		if !fitsWithout(cands) {
			continue
		}
		if set := smallestSet(cands, fitsWithout); best == nil || len(set) < len(best) {
			best, bestEntry = set, i
		}
	}
	if best == nil {
		return nil, -1, false
	}
	pre := p.stopFor(pj, best)
	p.holdNow(sh, bestEntry, end)
	for _, k := range best {
		p.untilYielded(&p.running[k])
	}
	return pre, sh.nodes[bestEntry], true
}

// fitsWithout says whether entry i of fit (sh's own shape, or a gang's
// per-node one) fits on node sh.nodes[i] from now to end once the running
// jobs in set, and those already being yielded there, are gone. rels is
// scratch space, returned for the next call.
func (p *pass) fitsWithout(sh, fit *shape, i int, end int64, set []int, rels []release) ([]release, bool) {
	n := sh.nodes[i]
	rels = p.yieldingOn(n, rels[:0])
	for _, k := range set {
		rels = append(rels, p.running[k].rel)
	}
	agg := p.agg2s[n]
	p.tls[n].minOver(p.now, end, sh.cols[i], agg, rels)
	return rels, p.fitsOn(fit, i, agg)
}

// stopGang stops each pick's victims for pj and holds the picked nodes for
// it from now to end: the end of a gang's preemption or yield.
func (p *pass) stopGang(pj *pjob, sh *shape, end int64, entries []int, victims [][]int) []Preempt {
	var pre []Preempt
	for _, v := range victims {
		pre = append(pre, p.stopFor(pj, v)...)
	}
	for _, e := range entries {
		p.holdNow(sh.per, e, end)
	}
	for _, v := range victims {
		for _, k := range v {
			p.untilYielded(&p.running[k])
		}
	}
	return pre
}

// untilYielded holds a job being stopped a little longer: it runs until
// the daemon has yielded it, so nothing may start now on what it frees
// (held twice where the job it is stopped for takes it, which only means
// unusable). Other jobs that preempt or shrink in this pass wait for
// yields anyway, so for them it counts as gone (yieldingOn).
func (p *pass) untilYielded(r *runInfo) {
	p.deltas = p.deltas[:0]
	for _, d := range r.rel.deltas {
		p.deltas = append(p.deltas, colDelta{d.col, -d.delta})
	}
	p.add(r.node, p.now, p.now+p.res, p.deltas)
	p.yielding = append(p.yielding, yieldHold{r.node, release{end: p.now + p.res, deltas: r.rel.deltas}})
}

// yieldHold is what a job being yielded still holds for a moment.
type yieldHold struct {
	node int
	rel  release
}

// yieldingOn appends the releases of jobs being yielded on node n.
func (p *pass) yieldingOn(n int, rels []release) []release {
	for _, y := range p.yielding {
		if y.node == n {
			rels = append(rels, y.rel)
		}
	}
	return rels
}

// holdNow reserves what sh needs on its i-th node from now to end, using
// the minima over [now, end) where jobs being yielded count as gone.
func (p *pass) holdNow(sh *shape, i int, end int64) {
	n := sh.nodes[i]
	agg := p.agg2s[n]
	p.tls[n].minOver(p.now, end, sh.cols[i], agg, p.yieldingOn(n, nil))
	slots := p.choose(sh, n, agg)
	p.deltas = p.holdDeltas(sh, n, slots, p.deltas)
	p.add(n, p.now, ceilTo(end, p.res), p.deltas)
}

// preemptVictims are the running jobs on node n that preemption may stop
// for pj (by index in p.running): lower-tier REQUEUE jobs running on that
// node alone (a gang's members are stopped together or not at all).
func (p *pass) preemptVictims(pj *pjob, n int) []int {
	var out []int
	for k := range p.running {
		r := &p.running[k]
		if !r.gone && r.preemptable && r.pj.tier < pj.tier && r.node == n && r.job.State == slurm.Running && len(r.more) == 0 {
			out = append(out, k)
		}
	}
	return out
}

// byRecency orders running jobs most recently started first, then by
// higher id.
func (p *pass) byRecency(idx []int) {
	slices.SortFunc(idx, func(a, b int) int {
		ja, jb := p.running[a].job, p.running[b].job
		return cmp.Or(-ja.Start.Compare(jb.Start), -cmp.Compare(ja.ID, jb.ID))
	})
}

// smallestSet returns the first subset of cands, by size and then in the
// order of cands, that passes ok, trying at most a few thousand subsets;
// past that it adds candidates in order until ok passes and then drops
// every one it can, last added first.
func smallestSet(cands []int, ok func([]int) bool) []int {
	budget := 4096
	for k := 1; k <= len(cands) && budget > 0; k++ {
		if set := firstSubset(cands, k, &budget, ok); set != nil {
			return set
		}
	}
	set := make([]int, 0, len(cands))
	for _, c := range cands {
		set = append(set, c)
		if ok(set) {
			break
		}
	}
	for i := len(set) - 1; i >= 0 && len(set) > 1; i-- {
		without := slices.Delete(slices.Clone(set), i, i+1)
		if ok(without) {
			set = without
		}
	}
	return set
}

// firstSubset returns the first subset of cands of exactly k elements, in
// lexicographic order of their positions, that passes ok; nil when none
// does. Each subset tried spends one of *budget, and the search stops when
// it is spent. ok must not keep the slice it is given, except the one it
// passes, which is returned.
func firstSubset(cands []int, k int, budget *int, ok func([]int) bool) []int {
	if k > len(cands) {
		return nil
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	set := make([]int, k)
	for *budget > 0 {
		for i, x := range idx {
			set[i] = cands[x]
		}
		*budget--
		if ok(set) {
			return set
		}
		// Next combination in lexicographic order.
		i := k - 1
		for i >= 0 && idx[i] == len(cands)-k+i {
			i--
		}
		if i < 0 {
			return nil
		}
		idx[i]++
		for j := i + 1; j < k; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
	return nil
}

func preemptDetail(pre []Preempt) string {
	ids := make([]string, len(pre))
	for i, x := range pre {
		ids[i] = fmt.Sprint(x.JobID)
	}
	return "waiting for preempted jobs to yield: " + strings.Join(ids, ",")
}

func yieldDetail(pre []Preempt) string {
	ids := make([]string, len(pre))
	for i, x := range pre {
		ids[i] = fmt.Sprint(x.JobID)
	}
	return "waiting for jobs to yield: " + strings.Join(ids, ",")
}

func shrinkDetail(s Shrink) string {
	return fmt.Sprintf("waiting for job %d to shrink from %d to %d GPUs", s.JobID, s.FromGPUs, s.ToGPUs)
}

// ChooseShrink decides, for the pending job `waiting`, which running
// yieldable job holding several whole GPUs to shrink, and to how many GPUs,
// so that both the waiting job and the shrunk job fit now. The daemon and
// the simulator rely on this one policy: Cycle applies it (tryShrink) to
// its first blocked job when Config.Shrink is set, or to ShrinkTries of
// them, with ShrinkPayback's cost check when set, so it cannot fork. It
// looks at the running jobs only, as if the waiting job were the first to
// be considered.
func ChooseShrink(snap Snapshot, waiting uint32) (Shrink, bool) {
	p := newPass(&snap)
	p.buildTimeline()
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if j.ID != waiting || !isPending(j.State) {
			continue
		}
		pj := p.resolve(j)
		if pj.part < 0 {
			return Shrink{}, false
		}
		pj.prio = p.factors(&pj).total
		sh := p.shapeOf(&pj)
		wait := forever
		if r := p.earliest(sh, p.now); r.ok && r.start == p.now {
			return Shrink{}, false // it fits as things are
		} else if r.ok {
			wait = r.start - p.now
		}
		s, _, ok := p.tryShrink(&pj, sh, wait)
		return s, ok
	}
	return Shrink{}, false
}

// tryShrink picks, among running jobs that hold at least two whole GPUs,
// are yieldable (--yieldable or a REQUEUE partition) and come after pj in
// scheduling order, the one that can keep the most GPUs while pj fits
// beside it on its node, ties to the most recently started. Both then hold
// their resources from now: pj, and the shrunk job that resumes with
// ToGPUs. wait is how long pj would wait without a shrink (forever if it
// has no start), for Config.ShrinkPayback.
func (p *pass) tryShrink(pj *pjob, sh *shape, wait int64) (Shrink, int, bool) {
	var cands []int
	for k := range p.running {
		r := &p.running[k]
		if r.gone || r.node < 0 || r.job.State != slurm.Running || r.wholeGPUs < 2 || r.job.Req.GPUMem > 0 || len(r.more) > 0 || !p.settled(r) {
			continue
		}
		if !r.job.Yieldable && !r.preemptable {
			continue
		}
		if r.pj.tier > pj.tier || (r.pj.tier == pj.tier && r.pj.prio >= pj.prio) {
			continue
		}
		if sh.nodeEntry(r.node) < 0 {
			continue
		}
		cands = append(cands, k)
	}
	p.byRecency(cands)
	best, bestM := -1, 0
	var bestShape *shape
	for _, k := range cands {
		r := &p.running[k]
		for m := r.wholeGPUs - 1; m > bestM; m-- {
			if shR, ok := p.shrinkFits(sh, r, m); ok {
				// Keeping fewer GPUs only costs more.
				if p.cfg.ShrinkPayback && !paysBack(r.end-p.now, r.wholeGPUs, m, wait) {
					break
				}
				best, bestM, bestShape = k, m, shR
				break
			}
		}
	}
	if best < 0 {
		return Shrink{}, -1, false
	}
	r := &p.running[best]
	r.gone = true
	p.add(r.node, p.now, r.end, r.rel.deltas)
	p.countStart(&r.pj, -1)
	p.holdShrinkPair(sh, bestShape, r.node)
	p.untilYielded(r)
	return Shrink{JobID: r.job.ID, FromGPUs: r.wholeGPUs, ToGPUs: bestM, For: pj.job.ID, TimeLimit: p.stretched(r, bestM)}, r.node, true
}

// stretched is running job r's limit when it runs again on m of the GPUs
// it holds: at a speed proportional to its GPUs it needs wholeGPUs/m as
// long, so its limit (the partition's default applied) grows by that,
// rounded up to the second and capped by the partition's MaxTime (a
// longer limit would leave it pending with PartitionTimeLimit); 0 when it
// has no limit.
func (p *pass) stretched(r *runInfo, m int) time.Duration {
	limit := r.pj.limit
	if limit <= 0 || limit >= forever {
		return 0
	}
	s := (limit*int64(r.wholeGPUs) + int64(m) - 1) / int64(m)
	if r.pj.part >= 0 {
		if mx := p.snap.Partitions[r.pj.part].MaxTime; mx > 0 && mx < Unlimited {
			s = min(s, ceilSeconds(mx))
		}
	}
	return time.Duration(s) * time.Second
}

// paysBack reports whether shrinking a job with left seconds to run from
// `from` to `to` GPUs (left × (from − to) / to seconds later, at a speed
// proportional to GPUs) costs less than the wait it saves.
func paysBack(left int64, from, to int, wait int64) bool {
	if wait >= forever {
		return true
	}
	if left >= forever/int64(from) {
		return false
	}
	return left*int64(from-to) < wait*int64(to)
}

// shrunkShape is r's shape with m GPUs.
func (p *pass) shrunkShape(r *runInfo, m int) *shape {
	j := *r.job
	j.Req.GPUs = m
	pj := r.pj
	pj.job = &j
	return p.shapeOf(&pj)
}

// shrinkFits reports whether the waiting job fits now on r's node beside r
// shrunk to m GPUs, with r's current resources released.
func (p *pass) shrinkFits(sh *shape, r *runInfo, m int) (*shape, bool) {
	n := r.node
	shR := p.shrunkShape(r, m)
	iR := shR.nodeEntry(n)
	if iR < 0 {
		return nil, false
	}
	i := sh.nodeEntry(n)
	agg := p.agg2s[n]
	end := satAdd(p.now, max(sh.key.length, shR.key.length))
	p.tls[n].minOver(p.now, end, p.allCols(n), agg, p.yieldingOn(n, []release{r.rel}))
	if !p.fitsOn(sh, i, agg) {
		return nil, false
	}
	for _, d := range p.holdDeltas(sh, n, p.choose(sh, n, agg), nil) {
		agg[d.col] += d.delta
	}
	return shR, p.fitsOn(shR, iR, agg)
}

// holdShrinkPair reserves on node n the waiting job and then the shrunk
// job, both from now to the end of the longer, choosing GPUs on the same
// minima shrinkFits saw.
func (p *pass) holdShrinkPair(sh, shR *shape, n int) {
	end := satAdd(p.now, max(sh.key.length, shR.key.length))
	agg := p.agg2s[n]
	p.tls[n].minOver(p.now, end, p.allCols(n), agg, p.yieldingOn(n, nil))
	for _, s := range []*shape{sh, shR} {
		p.deltas = p.holdDeltas(s, n, p.choose(s, n, agg), p.deltas)
		p.add(n, p.now, ceilTo(end, p.res), p.deltas)
		for _, d := range p.deltas {
			agg[d.col] += d.delta
		}
	}
}

// allCols lists every column of node n's timeline.
func (p *pass) allCols(n int) []int {
	if p.everyCol == nil {
		p.everyCol = make([][]int, len(p.tls))
	}
	if p.everyCol[n] == nil {
		p.everyCol[n] = make([]int, p.tls[n].cols)
		for i := range p.everyCol[n] {
			p.everyCol[n][i] = i
		}
	}
	return p.everyCol[n]
}
