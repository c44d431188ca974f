package sched

import (
	"cmp"
	"fmt"
	"slices"
)

// Jobs larger than one node. The daemon has one machine; the simulator
// models a lab of several, where Slurm would give a 32-GPU job four whole
// 8-GPU nodes. Such a job (a gang) needs, on each of shape.gang nodes, the
// whole node's GPUs at once: the same per-node shape on every node, searched
// on every node's timeline until enough of them agree on a start. Gangs are
// never preempted or shrunk themselves; they may preempt lower-tier jobs
// node by node.

// gangShape makes sh a gang when it asks for more whole GPUs than any of
// its eligible nodes has: it then takes ceil(need / most) nodes whole,
// sharing its CPUs and memory out evenly.
func (p *pass) gangShape(sh *shape) {
	most := 0
	for i := range sh.nodes {
		most = max(most, len(sh.slots[i]))
	}
	if most == 0 || sh.need <= most {
		return
	}
	k := (sh.need + most - 1) / most
	sh.gang = k
	sh.per = p.shapeFor(shapeKey{part: sh.key.part, gpus: most, gpuType: sh.key.gpuType,
		cpus: (sh.key.cpus + k - 1) / k, mem: (sh.key.mem + int64(k) - 1) / int64(k),
		ports: sh.key.ports, length: sh.key.length}) // ports are per node, as Slurm reserves them
}

// earliestGang finds the earliest time at or after from when sh.gang nodes
// can each take the per-node shape for the whole time limit. Each round
// asks every node for its earliest start from t; no time before the
// gang-th smallest answer can have enough nodes, so the next round starts
// there, until that many nodes answer t itself. Nodes listed first win ties.
func (p *pass) earliestGang(sh *shape, from int64) searchResult {
	res := searchResult{version: p.version, node: -1}
	if sh.gang > len(sh.nodes) {
		return res
	}
	e := make([]int64, len(sh.nodes))
	sorted := make([]int64, len(sh.nodes))
	for t := from; ; {
		for i := range sh.nodes {
			e[i] = forever
			if s, ok := p.earliestOn(sh.per, i, t, forever); ok {
				e[i] = s
			}
		}
		copy(sorted, e)
		slices.Sort(sorted)
		kth := sorted[sh.gang-1]
		if kth >= forever {
			return res
		}
		if kth > t {
			t = kth
			continue
		}
		for i, n := range sh.nodes {
			if e[i] == t && len(res.nodes) < sh.gang {
				res.nodes = append(res.nodes, n)
			}
		}
		res.start, res.node, res.ok = t, res.nodes[0], true
		return res
	}
}

// holdGang holds the per-node shape on each of the gang's nodes over its
// window: from now for a job starting now, whose allocation it returns, or
// from its start rounded down to bf_resolution for a reservation.
func (p *pass) holdGang(sh *shape, res searchResult, now bool) Alloc {
	var allocs []Alloc
	end := satAdd(res.start, sh.key.length)
	for _, n := range res.nodes {
		i := sh.nodeEntry(n)
		agg := p.agg2s[n]
		p.tls[n].minOver(res.start, end, sh.cols[i], agg, p.yieldingOn(n, nil))
		if now {
			allocs = append(allocs, p.allocOn(sh.per, n, agg, p.now, ceilTo(end, p.res)))
			continue
		}
		p.deltas = p.holdDeltas(sh.per, n, p.choose(sh.per, n, agg), p.deltas)
		p.add(n, floorTo(res.start, p.res), ceilTo(end, p.res), p.deltas)
	}
	if len(allocs) == 0 {
		return Alloc{}
	}
	a := allocs[0]
	a.More = allocs[1:]
	return a
}

// tryPreemptGang is tryPreempt for a gang: the nodes where stopping every
// lower-tier REQUEUE job frees the whole node for the job's time limit
// qualify, those with the fewest such jobs first, then in node order. When
// fewer than sh.gang nodes qualify, nobody is preempted.
func (p *pass) tryPreemptGang(pj *pjob, sh *shape) ([]Preempt, int, bool) {
	end := satAdd(p.now, sh.key.length)
	type pick struct {
		entry   int
		victims []int
	}
	var picks []pick
	var rels []release
	for i, n := range sh.nodes {
		victims := p.preemptVictims(pj, n)
		var fits bool
		if rels, fits = p.fitsWithout(sh, sh.per, i, end, victims, rels); fits {
			p.byRecency(victims) // the plan must not depend on the snapshot's job order
			picks = append(picks, pick{i, victims})
		}
	}
	if len(picks) < sh.gang {
		return nil, -1, false
	}
	slices.SortStableFunc(picks, func(a, b pick) int { return cmp.Compare(len(a.victims), len(b.victims)) })
	picks = picks[:sh.gang]
	slices.SortFunc(picks, func(a, b pick) int { return cmp.Compare(a.entry, b.entry) })
	entries, victims := make([]int, len(picks)), make([][]int, len(picks))
	for x, pk := range picks {
		entries[x], victims[x] = pk.entry, pk.victims
	}
	pre := p.stopGang(pj, sh, end, entries, victims)
	return pre, sh.nodes[picks[0].entry], true
}

// gangDetail says why a gang does not start now.
func (p *pass) gangDetail(sh *shape) string {
	free := 0
	for i, n := range sh.nodes {
		r0 := p.tls[n].row(0)
		whole := len(sh.slots[i]) >= sh.per.need
		for _, s := range sh.slots[i] {
			whole = whole && r0[busyCol(p.slots[s].local)] == 0
		}
		if whole {
			free++
		}
	}
	return fmt.Sprintf("needs %d whole nodes of %d GPUs, %d are free", sh.gang, sh.per.need, free)
}
