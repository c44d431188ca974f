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

// Columns of the timeline (see timeline).
func busyCol(s int) int           { return 2 * s }
func memCol(s int) int            { return 2*s + 1 }
func (p *pass) cpuCol(n int) int  { return 2*len(p.slots) + 2*n }
func (p *pass) hmemCol(n int) int { return 2*len(p.slots) + 2*n + 1 }

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
	length  int64
}

// shape is a job's demand resolved against the pass's nodes.
type shape struct {
	key    shapeKey
	need   int  // GPUs
	shared bool // GPUs are shared by memory
	nodes  []int
	slots  [][]int // per entry of nodes, the GPUs the job may use
	cols   []int   // the timeline columns that matter to it
}

func (p *pass) shapeOf(pj *pjob) *shape {
	r := &pj.job.Req
	k := shapeKey{part: pj.part, gpus: r.GPUs, gpuType: r.GPUType, gpuMem: r.GPUMem,
		cpus: max(1, r.CPUs), mem: r.Mem, length: pj.limit}
	if sh, ok := p.shapes[k]; ok {
		return sh
	}
	sh := &shape{key: k, need: r.GPUs, shared: r.GPUMem > 0}
	if sh.shared {
		sh.need = max(1, r.GPUs)
	}
	for n := range p.snap.Nodes {
		if p.snap.Nodes[n].Drained || !p.partHasNode(pj.part, n) {
			continue
		}
		var slots []int
		if sh.need > 0 {
			for _, s := range p.nodeSlots[n] {
				g := p.slots[s].gpu
				if g.Drained || !typeMatches(g.Type, r.GPUType) || (!sh.shared && !p.slots[s].foreignOK) {
					continue
				}
				slots = append(slots, s)
				sh.cols = append(sh.cols, busyCol(s))
				if sh.shared {
					sh.cols = append(sh.cols, memCol(s))
				}
			}
		}
		sh.nodes = append(sh.nodes, n)
		sh.slots = append(sh.slots, slots)
		sh.cols = append(sh.cols, p.cpuCol(n), p.hmemCol(n))
	}
	p.shapes[k] = sh
	return sh
}

// fits returns the first node on which the job fits given agg, the least
// free amount of each column over the job's window, or -1.
func (p *pass) fits(sh *shape, agg []int64) int {
	for i, n := range sh.nodes {
		if agg[p.cpuCol(n)] < int64(sh.key.cpus) || agg[p.hmemCol(n)] < sh.key.mem {
			continue
		}
		count := 0
		for _, s := range sh.slots[i] {
			if p.slotUsable(sh, s, agg) {
				count++
			}
		}
		if count >= sh.need {
			return n
		}
	}
	return -1
}

func (p *pass) slotUsable(sh *shape, s int, agg []int64) bool {
	if sh.shared {
		return agg[busyCol(s)] > -excl && agg[memCol(s)] >= sh.key.gpuMem
	}
	return agg[busyCol(s)] == 0
}

// searchResult is the earliest time a shape fits.
type searchResult struct {
	version int
	start   int64
	node    int
	ok      bool
}

// earliest finds the earliest time at or after from when the job fits for
// its whole time limit, and the node, leaving the window's minima in p.agg.
// Candidate times are from and the starts of later rows: availability only
// grows at row starts.
func (p *pass) earliest(sh *shape, from int64) searchResult {
	tl := p.tl
	rows := len(tl.times)
	p.win.reset(sh.cols, rows)
	i0 := tl.rowAt(from)
	j := i0
	for i := i0; i < rows; i++ {
		t := max(tl.times[i], from)
		end := satAdd(t, sh.key.length)
		for j < rows && (tl.times[j] < end || j == i) {
			p.win.push(tl, j)
			j++
		}
		p.win.drop(i)
		p.win.fill(tl, p.agg)
		if n := p.fits(sh, p.agg); n >= 0 {
			p.aggFor, p.aggVersion, p.aggStart = sh, tl.version, t
			return searchResult{version: tl.version, start: t, node: n, ok: true}
		}
	}
	return searchResult{version: tl.version, node: -1}
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
	for i, node := range sh.nodes {
		if node != n {
			continue
		}
		for _, s := range sh.slots[i] {
			if p.slotUsable(sh, s, agg) {
				cands = append(cands, s)
			}
		}
	}
	if len(cands) < sh.need {
		return nil
	}
	if sh.shared {
		slices.SortStableFunc(cands, func(a, b int) int {
			return cmp.Or(
				boolFirst(!p.wholeFree(a, agg), !p.wholeFree(b, agg)),
				cmp.Compare(agg[memCol(a)], agg[memCol(b)]),
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
				if in&p.slots[c].bit() != 0 {
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
	return agg[busyCol(s)] == 0 && p.slots[s].foreignOK
}

// holdDeltas is what a job of shape sh placed on node n and GPUs slots
// takes from the timeline (negate to give it back).
func (p *pass) holdDeltas(sh *shape, n int, slots []int, buf []colDelta) []colDelta {
	buf = append(buf[:0],
		colDelta{p.cpuCol(n), -int64(sh.key.cpus)},
		colDelta{p.hmemCol(n), -sh.key.mem})
	for _, s := range slots {
		if sh.shared {
			buf = append(buf, colDelta{busyCol(s), -1}, colDelta{memCol(s), -sh.key.gpuMem})
		} else {
			buf = append(buf, colDelta{busyCol(s), -excl})
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
