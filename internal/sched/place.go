package sched

import (
	"cmp"
	"math/bits"
	"slices"
	"strings"
)

// gpuSlot is one GPU as the pass indexes it.
type gpuSlot struct {
	node  int
	gpu   *GPU
	local int // position among the node's GPUs, for NVLink masks
	// peers has bit l set when the node's GPU at local position l is an
	// NVLink peer (first 64 GPUs of a node).
	peers uint64
	// foreignOK: other people's processes hold no more than the slack, so
	// the GPU can be given whole.
	foreignOK bool
}

// Columns of a node's timeline (see timeline): per GPU at local position
// l its negated busy count and free memory, then the node's free CPUs and
// host memory.
func busyCol(l int) int          { return 2 * l }
func memCol(l int) int           { return 2*l + 1 }
func (p *pass) cpuCol(n int) int { return 2 * len(p.nodeSlots[n]) }
func (p *pass) hmemCol(n int) int {
	return 2*len(p.nodeSlots[n]) + 1
}

// typeMatches is Slurm's gres type match: the requested name is a substring
// of the GPU's configured or model-derived name ("a100" matches
// "nvidia_a100-sxm4-80gb"), ignoring case.
func typeMatches(gpuType, want string) bool {
	if want == "" {
		return true
	}
	return strings.Contains(strings.ToLower(gpuType), strings.ToLower(want))
}

// shapeKey is everything that decides where and when a job fits; jobs of
// one shape share a search result while the timeline is unchanged.
type shapeKey struct {
	part    int
	gpus    int
	gpuType string
	gpuMem  int64
	cpus    int
	mem     int64
	ports   int
	length  int64
}

// shape is a job's demand resolved against the pass's nodes.
type shape struct {
	key    shapeKey
	need   int  // GPUs
	shared bool // GPUs are shared by memory
	// gang is the number of whole nodes a job larger than any node takes,
	// 0 for a job of one node; per is then the shape it needs on each of
	// them, whose eligible nodes it shares.
	gang int
	per  *shape
	*eligible
}

// eligible is where jobs of a partition, GPU count, type and sharing may
// run; many shapes share one.
type eligible struct {
	nodes []int
	slots [][]int // per entry of nodes, the GPUs (slot ids) the job may use
	cols  [][]int // per entry of nodes, the columns of its timeline that matter
}

type eligibleKey struct {
	part    int
	need    int
	shared  bool
	gpuType string
	// ports: the port column matters (only jobs that hold ports watch it).
	ports bool
}

func (p *pass) shapeOf(pj *pjob) *shape {
	r := &pj.job.Req
	return p.shapeFor(shapeKey{part: pj.part, gpus: r.GPUs, gpuType: r.GPUType, gpuMem: r.GPUMem,
		cpus: max(1, r.CPUs), mem: r.Mem, ports: JobPorts(p.snap.Ports, *r), length: pj.limit})
}

func (p *pass) shapeFor(k shapeKey) *shape {
	if sh, ok := p.shapes[k]; ok {
		return sh
	}
	sh := &shape{key: k, need: k.gpus, shared: k.gpuMem > 0}
	if sh.shared {
		sh.need = max(1, k.gpus)
	}
	sh.eligible = p.eligibleFor(eligibleKey{k.part, sh.need, sh.shared, k.gpuType, k.ports > 0})
	if !sh.shared && sh.need > 0 {
		p.gangShape(sh)
	}
	p.shapes[k] = sh
	return sh
}

func (p *pass) eligibleFor(k eligibleKey) *eligible {
	if e, ok := p.eligibles[k]; ok {
		return e
	}
	e := &eligible{}
	for n := range p.snap.Nodes {
		if p.snap.Nodes[n].Drained || !p.partHasNode(k.part, n) {
			continue
		}
		var slots, cols []int
		if k.need > 0 {
			for _, s := range p.nodeSlots[n] {
				sl := &p.slots[s]
				if sl.gpu.Drained || !typeMatches(sl.gpu.Type, k.gpuType) || (!k.shared && !sl.foreignOK) {
					continue
				}
				slots = append(slots, s)
				cols = append(cols, busyCol(sl.local))
				if k.shared {
					cols = append(cols, memCol(sl.local))
				}
			}
		}
		e.nodes = append(e.nodes, n)
		e.slots = append(e.slots, slots)
		cols = append(cols, p.cpuCol(n), p.hmemCol(n))
		if k.ports {
			cols = append(cols, p.portCol(n))
		}
		e.cols = append(e.cols, cols)
	}
	p.eligibles[k] = e
	return e
}

// fitsOn reports whether the job fits on the i-th node of its shape given
// agg, the least free amount of each column of that node over the job's
// window.
func (p *pass) fitsOn(sh *shape, i int, agg []int64) bool {
	n := sh.nodes[i]
	if agg[p.cpuCol(n)] < int64(sh.key.cpus) || agg[p.hmemCol(n)] < sh.key.mem ||
		agg[p.portCol(n)] < int64(sh.key.ports) {
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

// nodeEntry is the position of node n among the eligible nodes, or -1.
func (e *eligible) nodeEntry(n int) int {
	for i, m := range e.nodes {
		if m == n {
			return i
		}
	}
	return -1
}

func (p *pass) slotUsable(sh *shape, s int, agg []int64) bool {
	l := p.slots[s].local
	if sh.shared {
		return agg[busyCol(l)] > -excl && agg[memCol(l)] >= sh.key.gpuMem
	}
	return agg[busyCol(l)] == 0
}

// searchResult is the earliest time a shape fits.
type searchResult struct {
	version int
	start   int64
	node    int
	ok      bool
	// nodes are a gang's nodes, node being the first.
	nodes []int
}

// earliest finds the earliest time at or after from when the job fits for
// its whole time limit, and the node: each node's timeline is searched for
// a start earlier than the best so far, ties going to the node listed
// first. The winner's window minima stay in p.aggs[node].
func (p *pass) earliest(sh *shape, from int64) searchResult {
	if sh.gang > 0 {
		return p.earliestGang(sh, from)
	}
	best := searchResult{version: p.version, node: -1}
	for i, n := range sh.nodes {
		limit := forever
		if best.ok {
			limit = best.start
		}
		if t, ok := p.earliestOn(sh, i, from, limit); ok {
			best.start, best.node, best.ok = t, n, true
		}
	}
	if best.ok {
		p.aggFor, p.aggVersion, p.aggStart, p.aggNode = sh, p.version, best.start, best.node
	}
	return best
}

// earliestOn searches the timeline of the shape's i-th node for the
// earliest start in [from, limit). Candidate starts are from and the
// starts of later rows, since availability only grows at row starts; a
// sliding minimum over the rows each candidate's window covers decides.
func (p *pass) earliestOn(sh *shape, i int, from, limit int64) (int64, bool) {
	n := sh.nodes[i]
	tl, agg := p.tls[n], p.aggs[n]
	rows := len(tl.times)
	p.win.reset(sh.cols[i], rows)
	i0 := tl.rowAt(from)
	j := i0
	for k := i0; k < rows; k++ {
		t := max(tl.times[k], from)
		if t >= limit {
			break
		}
		end := satAdd(t, sh.key.length)
		for j < rows && (tl.times[j] < end || j == k) {
			p.win.push(tl, j)
			j++
		}
		p.win.drop(k)
		p.win.fill(tl, agg)
		if p.fitsOn(sh, i, agg) {
			return t, true
		}
	}
	return 0, false
}

// choose picks the GPUs on node n for a job that fits there given agg.
//
// Whole GPUs: the set with the most NVLink links among its members (grown
// greedily from each candidate), and for one GPU the candidate with the
// fewest idle NVLink peers, so linked groups stay whole for larger jobs;
// ties go to lower indices. Shared GPUs: best fit, so whole GPUs stay free:
// GPUs that are already in use first, then the least free memory, then the
// lower index.
func (p *pass) choose(sh *shape, n int, agg []int64) []int {
	if sh.need == 0 {
		return nil
	}
	var cands []int
	if i := sh.nodeEntry(n); i >= 0 {
		for _, s := range sh.slots[i] {
			if p.slotUsable(sh, s, agg) {
				cands = append(cands, s)
			}
		}
	}
	if len(cands) < sh.need {
		return nil
	}
	slices.SortFunc(cands, func(a, b int) int { return cmp.Compare(p.slots[a].gpu.Index, p.slots[b].gpu.Index) })
	if sh.shared {
		slices.SortStableFunc(cands, func(a, b int) int {
			return cmp.Or(
				boolFirst(!p.wholeFree(a, agg), !p.wholeFree(b, agg)),
				cmp.Compare(agg[memCol(p.slots[a].local)], agg[memCol(p.slots[b].local)]),
				cmp.Compare(p.slots[a].gpu.Index, p.slots[b].gpu.Index),
			)
		})
		return cands[:sh.need]
	}
	var mask uint64
	for _, s := range cands {
		mask |= p.slots[s].bit()
	}
	if sh.need == 1 {
		best := cands[0]
		for _, s := range cands[1:] {
			if bits.OnesCount64(p.slots[s].peers&mask) < bits.OnesCount64(p.slots[best].peers&mask) {
				best = s
			}
		}
		return []int{best}
	}
	linked := false
	for _, s := range cands {
		linked = linked || p.slots[s].peers&mask != 0
	}
	if !linked {
		return cands[:sh.need]
	}
	var best []int
	bestScore := -1
	for _, seed := range cands {
		set := []int{seed}
		in := p.slots[seed].bit()
		for len(set) < sh.need {
			pick, pickLinks := -1, -1
			for _, c := range cands {
				if slices.Contains(set, c) {
					continue
				}
				if l := bits.OnesCount64(p.slots[c].peers & in); l > pickLinks {
					pick, pickLinks = c, l
				}
			}
			set = append(set, pick)
			in |= p.slots[pick].bit()
		}
		score := 0
		for _, s := range set {
			score += bits.OnesCount64(p.slots[s].peers & in)
		}
		if score > bestScore {
			best, bestScore = set, score
		}
	}
	slices.SortFunc(best, func(a, b int) int { return cmp.Compare(p.slots[a].gpu.Index, p.slots[b].gpu.Index) })
	return best
}

func (s *gpuSlot) bit() uint64 {
	if s.local >= 64 {
		return 0
	}
	return 1 << s.local
}

// wholeFree: nobody holds any of the GPU over the window and it could be
// given whole.
func (p *pass) wholeFree(s int, agg []int64) bool {
	return agg[busyCol(p.slots[s].local)] == 0 && p.slots[s].foreignOK
}

// holdDeltas is what a job of shape sh placed on node n and GPUs slots
// takes from the node's timeline.
func (p *pass) holdDeltas(sh *shape, n int, slots []int, buf []colDelta) []colDelta {
	buf = append(buf[:0],
		colDelta{p.cpuCol(n), -int64(sh.key.cpus)},
		colDelta{p.hmemCol(n), -sh.key.mem})
	if sh.key.ports > 0 {
		buf = append(buf, colDelta{p.portCol(n), -int64(sh.key.ports)})
	}
	for _, s := range slots {
		l := p.slots[s].local
		if sh.shared {
			buf = append(buf, colDelta{busyCol(l), -1}, colDelta{memCol(l), -sh.key.gpuMem})
		} else {
			buf = append(buf, colDelta{busyCol(l), -excl})
		}
	}
	return buf
}

// pickCPUs takes the lowest free CPU ids of node n.
func (p *pass) pickCPUs(n, count int) []int {
	used := p.cpuUsed[n]
	ids := make([]int, 0, count)
	for id := 0; id < len(used) && len(ids) < count; id++ {
		if !used[id] {
			ids = append(ids, id)
			used[id] = true
		}
	}
	return ids
}
