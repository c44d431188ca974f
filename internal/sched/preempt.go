package sched

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// tryPreempt looks for running jobs of lower-tier partitions with
// PreemptMode=REQUEUE whose release lets pj start now: the fewest of them,
// and among sets of that size the most recently started (the work lost is
// the least). When even all of them would not make room, nobody is
// preempted. On success the victims' resources go to pj from now on, held
// as a reservation until the daemon has yielded them and starts pj.
func (p *pass) tryPreempt(pj *pjob, sh *shape) ([]Preempt, int, bool) {
	var cands []int
	for i := range p.running {
		r := &p.running[i]
		if !r.gone && r.preemptable && r.pj.tier < pj.tier && r.node >= 0 && r.job.State == slurm.Running {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil, -1, false
	}
	p.byRecency(cands)
	end := satAdd(p.now, sh.key.length)
	var rels []release
	fitsWithout := func(set []int) bool {
		rels = rels[:0]
		for _, i := range set {
			rels = append(rels, p.running[i].rel)
		}
		p.tl.minOver(p.now, end, sh.cols, p.agg2, rels)
		return p.fits(sh, p.agg2) >= 0
	}
	if !fitsWithout(cands) {
		return nil, -1, false
	}
	chosen := smallestSet(cands, fitsWithout)
	pre := make([]Preempt, 0, len(chosen))
	for _, i := range chosen {
		r := &p.running[i]
		r.gone = true
		p.tl.add(p.now, r.end, r.rel.deltas)
		p.countStart(&r.pj, -1)
		pre = append(pre, Preempt{JobID: r.job.ID, For: pj.job.ID})
	}
	n := p.holdNow(sh, end, -1)
	return pre, n, true
}

// holdNow reserves what sh needs from now to end, on node n if n ≥ 0 and
// else on the first node it fits, using the minima over [now, end).
func (p *pass) holdNow(sh *shape, end int64, n int) int {
	p.tl.minOver(p.now, end, sh.cols, p.agg2, nil)
	if n < 0 {
		n = p.fits(sh, p.agg2)
	}
	slots := p.choose(sh, n, p.agg2)
	p.deltas = p.holdDeltas(sh, n, slots, p.deltas)
	p.tl.add(p.now, ceilTo(end, p.res), p.deltas)
	return n
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
	set := make([]int, 0, len(cands))
	for k := 1; k <= len(cands) && budget > 0; k++ {
		idx := make([]int, k)
		for i := range idx {
			idx[i] = i
		}
		for budget > 0 {
			set = set[:0]
			for _, i := range idx {
				set = append(set, cands[i])
			}
			budget--
			if ok(set) {
				return set
			}
			// Next combination in lexicographic order.
			i := k - 1
			for i >= 0 && idx[i] == len(cands)-k+i {
				i--
			}
			if i < 0 {
				break
			}
			idx[i]++
			for j := i + 1; j < k; j++ {
				idx[j] = idx[j-1] + 1
			}
		}
	}
	set = set[:0]
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

func preemptDetail(pre []Preempt) string {
	ids := make([]string, len(pre))
	for i, x := range pre {
		ids[i] = fmt.Sprint(x.JobID)
	}
	return "waiting for preempted jobs to yield: " + strings.Join(ids, ",")
}

func shrinkDetail(s Shrink) string {
	return fmt.Sprintf("waiting for job %d to shrink from %d to %d GPUs", s.JobID, s.FromGPUs, s.ToGPUs)
}

// ChooseShrink decides, for the pending job `waiting`, which running
// yieldable job holding several whole GPUs to shrink, and to how many GPUs,
// so that both the waiting job and the shrunk job fit now. The daemon and
// the simulator call this one function, and Cycle calls it for its first
// blocked job when Config.Shrink is set, so the policy cannot fork. It
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
		if r := p.earliest(sh, p.now); r.ok && r.start == p.now {
			return Shrink{}, false // it fits as things are
		}
		s, _, ok := p.tryShrink(&pj, sh)
		return s, ok
	}
	return Shrink{}, false
}

// tryShrink picks, among running jobs that hold at least two whole GPUs,
// are yieldable (--yieldable or a REQUEUE partition) and come after pj in
// scheduling order, the one that can keep the most GPUs while pj fits
// beside it, ties to the most recently started. Both then hold their
// resources from now: pj, and the shrunk job that resumes with ToGPUs.
func (p *pass) tryShrink(pj *pjob, sh *shape) (Shrink, int, bool) {
	var cands []int
	for i := range p.running {
		r := &p.running[i]
		if r.gone || r.node < 0 || r.job.State != slurm.Running || r.wholeGPUs < 2 || r.job.Req.GPUMem > 0 {
			continue
		}
		if !r.job.Yieldable && !r.preemptable {
			continue
		}
		if r.pj.tier > pj.tier || (r.pj.tier == pj.tier && r.pj.prio >= pj.prio) {
			continue
		}
		cands = append(cands, i)
	}
	p.byRecency(cands)
	best, bestM := -1, 0
	var bestShape *shape
	for _, i := range cands {
		r := &p.running[i]
		for m := r.wholeGPUs - 1; m > bestM; m-- {
			if shR, ok := p.shrinkFits(pj, sh, r, m); ok {
				best, bestM, bestShape = i, m, shR
				break
			}
		}
	}
	if best < 0 {
		return Shrink{}, -1, false
	}
	r := &p.running[best]
	r.gone = true
	p.tl.add(p.now, r.end, r.rel.deltas)
	p.countStart(&r.pj, -1)
	end := satAdd(p.now, max(sh.key.length, bestShape.key.length))
	n := p.holdShrinkPair(sh, bestShape, r.node, end)
	return Shrink{JobID: r.job.ID, FromGPUs: r.wholeGPUs, ToGPUs: bestM, For: pj.job.ID}, n, true
}

// shrunkShape is r's shape with m GPUs.
func (p *pass) shrunkShape(r *runInfo, m int) *shape {
	j := *r.job
	j.Req.GPUs = m
	pj := r.pj
	pj.job = &j
	return p.shapeOf(&pj)
}

// shrinkFits reports whether pj fits now beside r shrunk to m GPUs (on
// r's node), with r's current resources released.
func (p *pass) shrinkFits(pj *pjob, sh *shape, r *runInfo, m int) (*shape, bool) {
	shR := p.shrunkShape(r, m)
	end := satAdd(p.now, max(sh.key.length, shR.key.length))
	p.tl.minOver(p.now, end, p.allCols(), p.agg2, []release{r.rel})
	n := p.fits(sh, p.agg2)
	if n < 0 {
		return nil, false
	}
	slots := p.choose(sh, n, p.agg2)
	for _, d := range p.holdDeltas(sh, n, slots, nil) {
		p.agg2[d.col] += d.delta
	}
	return shR, p.fitsNode(shR, r.node, p.agg2)
}

// holdShrinkPair reserves the waiting job and then the shrunk job, both
// from now to end, choosing GPUs on the same minima shrinkFits saw.
func (p *pass) holdShrinkPair(sh, shR *shape, node int, end int64) int {
	p.tl.minOver(p.now, end, p.allCols(), p.agg2, nil)
	n := p.fits(sh, p.agg2)
	slots := p.choose(sh, n, p.agg2)
	p.deltas = p.holdDeltas(sh, n, slots, p.deltas)
	p.tl.add(p.now, ceilTo(end, p.res), p.deltas)
	for _, d := range p.deltas {
		p.agg2[d.col] += d.delta
	}
	slotsR := p.choose(shR, node, p.agg2)
	p.deltas = p.holdDeltas(shR, node, slotsR, p.deltas)
	p.tl.add(p.now, ceilTo(end, p.res), p.deltas)
	return n
}

// fitsNode is fits restricted to node n.
func (p *pass) fitsNode(sh *shape, n int, agg []int64) bool {
	for i, node := range sh.nodes {
		if node != n {
			continue
		}
		if agg[p.cpuCol(n)] < int64(sh.key.cpus) || agg[p.hmemCol(n)] < sh.key.mem {
			return false
		}
		count := 0
		for _, s := range sh.slots[i] {
			if p.slotUsable(sh, s, agg) {
				count++
			}
		}
		return count >= sh.need
	}
	return false
}

func (p *pass) allCols() []int {
	if len(p.everyCol) != p.tl.cols {
		p.everyCol = make([]int, p.tl.cols)
		for i := range p.everyCol {
			p.everyCol[i] = i
		}
	}
	return p.everyCol
}
