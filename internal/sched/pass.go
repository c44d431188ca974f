package sched

import (
	"cmp"
	"slices"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// pass is one scheduling pass's working state: indices over the snapshot,
// the fair-share tree, the timeline, and the counters jobs started in the
// pass update. It reads the snapshot and never writes it.
type pass struct {
	snap *Snapshot
	cfg  *Config
	now  int64
	res  int64 // bf_resolution
	// windowEnd is now + bf_window: reservations start no later.
	windowEnd int64

	partIdx       map[string]int
	defPart       int
	partNodes     [][]bool // per partition, the nodes it covers (nil: all)
	qosIdx        map[string]int
	maxPartFactor float64
	maxQOSPrio    float64
	tree          *shareTree
	totalCPUs     int
	// partTRES caches each partition's TRES totals (partitionTRES).
	partTRES [][]float64

	nodeIdx   map[string]int
	slots     []gpuSlot
	slotUUID  map[string]int
	nodeSlots [][]int
	cpuUsed   [][]bool
	// portUsed marks, per node, the ports of Snapshot.Ports held.
	portUsed [][]bool

	deps depIndex

	// tls holds one timeline per node; version counts changes to any.
	tls     []*timeline
	version int
	win     window
	// aggs holds per node the window minima of the last search there;
	// aggFor fits on aggNode from aggStart, while version is aggVersion.
	aggs       [][]int64
	aggFor     *shape
	aggVersion int
	aggStart   int64
	aggNode    int
	agg2s      [][]int64 // per node scratch for preemption and shrink
	everyCol   [][]int
	shapes     map[shapeKey]*shape
	eligibles  map[eligibleKey]*eligible
	memo       map[memoKey]searchResult
	bounds     map[*eligible][]bound
	// preemptFails are the shapes that failed to preempt, per eligible
	// set and tier, since the pass last stopped a job (preemptFailed);
	// failsAt is how many stops (p.yielding) there were then.
	preemptFails map[preemptKey][]shapeKey
	failsAt      int

	// resvs are the reservations placed on the timeline.
	resvs    []resv
	running  []runInfo
	yielding []yieldHold
	userQOS  map[userQOSKey]userCount
	quota    *quotaIndex
	arrayRun map[uint32]int
	deltas   []colDelta
}

type memoKey struct {
	sh   *shape
	from int64
}

type userQOSKey struct {
	user string
	qos  int
}

type userCount struct {
	jobs, gpus, cpus, nodes int
	mem                     int64
	billing                 float64
}

// pjob is a job as the pass resolved it.
type pjob struct {
	job  *Job
	part int // -1: no such partition
	qos  int // -1: none; -2: no such QOS
	// partQOS is the partition's QOS, -1 for none (or the same as qos).
	partQOS int
	assoc   int // -1: no association
	tier    int
	limit   int64 // effective time limit, seconds (forever: unlimited)
	prio    uint32
	submit  int64 // Unix nanoseconds, for ordering
	// yieldedTo: a pending job yielded for this one is pending too.
	yieldedTo bool
}

// runInfo is a job holding resources, as preemption and shrink see it.
type runInfo struct {
	job       *Job
	pj        pjob
	node      int
	end       int64
	rel       release // what stopping it now gives back, until its end
	wholeGPUs int
	// more holds, for a job spanning several nodes, what it holds on each
	// further node; such a job is neither preempted nor shrunk.
	more        []nodeHold
	preemptable bool
	gone        bool // chosen for preemption or shrink in this pass
}

func newPass(snap *Snapshot) *pass {
	p := newCheckPass(snap)
	p.buildDepIndex()
	return p
}

// newCheckPass is newPass without the dependency index, which only the
// pass's waiting reasons read (depState): CheckSubmit never looks at a
// dependency, and building the index scanned every job for every
// submission.
func newCheckPass(snap *Snapshot) *pass {
	cfg := &snap.Config
	p := &pass{
		snap:         snap,
		cfg:          cfg,
		now:          snap.Now.Unix(),
		res:          cfg.bfResolution(),
		partIdx:      make(map[string]int, len(snap.Partitions)),
		defPart:      -1,
		qosIdx:       make(map[string]int, len(snap.QOS)),
		nodeIdx:      make(map[string]int, len(snap.Nodes)),
		slotUUID:     map[string]int{},
		shapes:       map[shapeKey]*shape{},
		eligibles:    map[eligibleKey]*eligible{},
		memo:         map[memoKey]searchResult{},
		bounds:       map[*eligible][]bound{},
		preemptFails: map[preemptKey][]shapeKey{},
		userQOS:      map[userQOSKey]userCount{},
		arrayRun:     map[uint32]int{},
		nodeSlots:    make([][]int, len(snap.Nodes)),
		cpuUsed:      make([][]bool, len(snap.Nodes)),
		portUsed:     make([][]bool, len(snap.Nodes)),
	}
	p.windowEnd = satAdd(p.now, cfg.bfWindow())
	for i, n := range snap.Nodes {
		p.nodeIdx[n.Name] = i
		p.totalCPUs += max(0, n.CPUs)
		p.cpuUsed[i] = make([]bool, max(0, n.CPUs))
		p.portUsed[i] = make([]bool, snap.Ports.Size())
		for g := range n.GPUs {
			s := len(p.slots)
			p.slots = append(p.slots, gpuSlot{node: i, gpu: &n.GPUs[g], local: g,
				foreignOK: n.GPUs[g].ForeignMem <= cfg.ForeignMemSlack})
			p.slotUUID[n.GPUs[g].UUID] = s
			p.nodeSlots[i] = append(p.nodeSlots[i], s)
		}
	}
	for s := range p.slots {
		sl := &p.slots[s]
		for _, peer := range sl.gpu.NVLinkPeers {
			if o, ok := p.slotUUID[peer]; ok && p.slots[o].node == sl.node {
				sl.peers |= p.slots[o].bit()
			}
		}
	}
	p.partNodes = make([][]bool, len(snap.Partitions))
	for i, pt := range snap.Partitions {
		if _, dup := p.partIdx[pt.Name]; !dup {
			p.partIdx[pt.Name] = i
		}
		if pt.Default && p.defPart < 0 {
			p.defPart = i
		}
		p.maxPartFactor = max(p.maxPartFactor, float64(pt.PriorityJobFactor))
		if len(pt.Nodes) > 0 {
			p.partNodes[i] = make([]bool, len(snap.Nodes))
			for _, name := range pt.Nodes {
				if n, ok := p.nodeIdx[name]; ok {
					p.partNodes[i][n] = true
				}
			}
		}
	}
	for i, q := range snap.QOS {
		if _, dup := p.qosIdx[q.Name]; !dup {
			p.qosIdx[q.Name] = i
		}
		p.maxQOSPrio = max(p.maxQOSPrio, float64(q.Priority))
	}
	// Fair share as of the last recalculation (calcView).
	p.tree = buildShareTree(calcView(snap))
	p.quota = newQuotaIndex(snap)
	return p
}

func (p *pass) partHasNode(part, n int) bool {
	return part >= 0 && (p.partNodes[part] == nil || p.partNodes[part][n])
}

// resolve looks up a job's partition, QOS and association, and its
// effective time limit: its own, else the partition's DefaultTime, else
// its MaxTime, else unlimited.
func (p *pass) resolve(j *Job) pjob {
	pj := pjob{job: j, part: p.defPart, qos: -1, partQOS: -1, assoc: -1, limit: forever, submit: j.Submit.UnixNano()}
	if j.Partition != "" {
		var ok bool
		if pj.part, ok = p.partIdx[j.Partition]; !ok {
			pj.part = -1
		}
	}
	if j.QOS != "" {
		var ok bool
		if pj.qos, ok = p.qosIdx[j.QOS]; !ok {
			pj.qos = -2
		}
	}
	if a, ok := p.tree.assoc(j.Account, j.User); ok {
		pj.assoc = a
	}
	limit := j.TimeLimit
	if pj.part >= 0 {
		pt := &p.snap.Partitions[pj.part]
		pj.tier = pt.PriorityTier
		if i, ok := p.qosIdx[pt.QOS]; ok && pt.QOS != "" && i != pj.qos {
			pj.partQOS = i
		}
		if limit <= 0 {
			limit = pt.DefaultTime
		}
		if limit <= 0 {
			limit = pt.MaxTime
		}
	}
	// A job that gives no limit gets at most its QOS's MaxWall
	// (acct_policy.c, _set_time_limit).
	if j.TimeLimit <= 0 {
		for _, q := range pj.qosList() {
			if w := p.snap.QOS[q].MaxWall; w > 0 && (limit <= 0 || limit >= Unlimited || limit > w) {
				limit = w
			}
		}
	}
	if limit > 0 {
		pj.limit = ceilSeconds(limit)
	}
	return pj
}

// buildTimeline fills each node's timeline from its free resources and
// the jobs holding some, and the counters limits are checked against.
func (p *pass) buildTimeline() {
	rows := make([][]int64, len(p.snap.Nodes))
	for n, node := range p.snap.Nodes {
		row := make([]int64, 2*len(p.nodeSlots[n])+3)
		for _, s := range p.nodeSlots[n] {
			row[memCol(p.slots[s].local)] = p.slots[s].gpu.FreeMem
		}
		row[p.cpuCol(n)] = int64(node.CPUs)
		row[p.hmemCol(n)] = node.Mem
		row[p.portCol(n)] = int64(p.snap.Ports.Size())
		rows[n] = row
	}
	for i := range p.snap.Jobs {
		j := &p.snap.Jobs[i]
		if !holdsResources(j.State) {
			continue
		}
		r := runInfo{job: j, pj: p.resolve(j), node: -1}
		r.pj.prio = p.factors(&r.pj).total
		if r.pj.part >= 0 {
			r.preemptable = p.snap.Partitions[r.pj.part].PreemptMode == PreemptRequeue
		}
		switch {
		case j.State == slurm.Completing:
			r.end = p.now + 1 // ending; free once the daemon confirms
		case j.State == slurm.Suspended || r.pj.limit >= forever:
			r.end = forever
		default:
			r.end = max(satAdd(j.Start.Unix(), r.pj.limit), p.now+1)
		}
		for k := range j.Alloc.More {
			if n, ok := p.nodeIdx[j.Alloc.More[k].Node]; ok {
				r.more = append(r.more, nodeHold{n, p.holding(&j.Alloc.More[k], 1, n, rows[n])})
			}
		}
		if n, ok := p.nodeIdx[j.Alloc.Node]; ok {
			r.node = n
			r.rel.deltas = p.holding(&j.Alloc, j.Req.CPUs, n, rows[n])
			for _, g := range j.Alloc.GPUs {
				if s, ok := p.slotUUID[g.UUID]; ok && p.slots[s].node == n && g.Mem == 0 {
					r.wholeGPUs++
				}
			}
		}
		r.rel.end = r.end
		p.running = append(p.running, r)
		if j.State != slurm.Completing {
			p.countStart(&r.pj, 1)
		}
	}
	p.tls = make([]*timeline, len(rows))
	p.aggs = make([][]int64, len(rows))
	p.agg2s = make([][]int64, len(rows))
	for n, row := range rows {
		p.tls[n] = newTimeline(p.now, row)
		p.aggs[n] = make([]int64, len(row))
		p.agg2s[n] = make([]int64, len(row))
	}
	// Releases in order of end, so rows are appended rather than inserted.
	order := make([]int, len(p.running))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(p.running[a].end, p.running[b].end), cmp.Compare(a, b))
	})
	for _, i := range order {
		r := &p.running[i]
		if r.node >= 0 {
			p.add(r.node, r.end, forever, r.rel.deltas)
		}
		for _, m := range r.more {
			p.add(m.node, r.end, forever, m.deltas)
		}
	}
	p.buildReservations()
}

// nodeHold is what a running job holds on one further node.
type nodeHold struct {
	node   int
	deltas []colDelta
}

// holding takes what a running job's allocation a holds on node n out of
// the node's first row, marks its CPU ids used, and returns the deltas that
// give it back; reqCPUs counts when a names no CPU ids.
func (p *pass) holding(a *Alloc, reqCPUs, n int, row []int64) []colDelta {
	cpus := int64(len(a.CPUs))
	if cpus == 0 {
		cpus = int64(max(1, reqCPUs))
	}
	for _, id := range a.CPUs {
		if id >= 0 && id < len(p.cpuUsed[n]) {
			p.cpuUsed[n][id] = true
		}
	}
	row[p.cpuCol(n)] -= cpus
	row[p.hmemCol(n)] -= a.Mem
	rel := []colDelta{{p.cpuCol(n), cpus}, {p.hmemCol(n), a.Mem}}
	if held := p.holdPorts(n, a.Ports); held > 0 {
		row[p.portCol(n)] -= held
		rel = append(rel, colDelta{p.portCol(n), held})
	}
	for _, g := range a.GPUs {
		s, ok := p.slotUUID[g.UUID]
		if !ok || p.slots[s].node != n {
			continue // the card is gone: it holds nothing we could plan with
		}
		l := p.slots[s].local
		if g.Mem == 0 {
			row[busyCol(l)] -= excl
			rel = append(rel, colDelta{busyCol(l), excl}, colDelta{memCol(l), g.Used})
		} else {
			// Reserved but not yet touched memory is not free.
			row[busyCol(l)]--
			row[memCol(l)] -= max(0, g.Mem-g.Used)
			rel = append(rel, colDelta{busyCol(l), 1}, colDelta{memCol(l), max(g.Mem, g.Used)})
		}
	}
	return rel
}

// add changes node n's timeline over [from, to).
func (p *pass) add(n int, from, to int64, deltas []colDelta) {
	p.tls[n].add(from, to, deltas)
	p.version++
}

// countStart adds (sign 1) or removes (-1) a running job in the per-user
// QOS and per-array counters.
func (p *pass) countStart(pj *pjob, sign int) {
	j := pj.job
	for _, q := range pj.qosList() {
		k := userQOSKey{j.User, q}
		c := p.userQOS[k]
		c.jobs += sign
		if j.Req.GPUMem == 0 {
			c.gpus += sign * j.Req.GPUs
		}
		c.cpus += sign * max(1, j.Req.CPUs)
		c.mem += int64(sign) * j.Req.Mem
		c.nodes += sign
		c.billing += float64(sign) * p.jobBilling(pj)
		p.userQOS[k] = c
	}
	if j.ArrayJobID != 0 {
		p.arrayRun[j.ArrayJobID] += sign
	}
	p.countRun(pj, sign)
}
