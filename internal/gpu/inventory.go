package gpu

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultInterval is how often the daemon samples unless configured
// otherwise: often enough to catch a job's peak memory, and one sample
// costs microseconds (BenchmarkSample).
const DefaultInterval = 5 * time.Second

// Options tune an Inventory. The zero value is usable.
type Options struct {
	// Types are the configured short GPU type names (slurm.conf
	// Gres=gpu:a100:4 gives "a100"). A detected GPU takes the longest one
	// that matches its AutoType (see MatchType).
	Types []string
	// Procs looks up host processes; nil means HostProcs{Root: "/proc"}.
	Procs Procs
	// MinFree: a GPU that no job holds, with less free memory than this,
	// is Taken by whoever holds it. Default 1 GiB.
	MinFree uint64
	// ReleaseTimeout: an ended job's GPU whose memory is not back this
	// long after the job ended is drained. Default 30s.
	ReleaseTimeout time.Duration
	// ReleaseSlack: memory NVML counts as used but no process holds may
	// grow this much over what the GPU showed when idle before the
	// memory is said not to be back. Default 512 MiB.
	ReleaseSlack uint64
}

func (o Options) withDefaults() Options {
	o.MinFree = cmp.Or(o.MinFree, 1<<30)
	o.ReleaseTimeout = cmp.Or(o.ReleaseTimeout, 30*time.Second)
	o.ReleaseSlack = cmp.Or(o.ReleaseSlack, 512<<20)
	if o.Procs == nil {
		o.Procs = HostProcs{Root: "/proc"}
	}
	return o
}

// Inventory is the daemon's handle on the machine's GPUs, whatever their
// source. It keeps what must outlive one sample: which GPUs it has seen
// (by UUID), their drains, and what each GPU's memory looks like idle. Its
// methods are safe for concurrent use.
type Inventory struct {
	mu    sync.Mutex
	src   source
	opts  Options
	known map[string]*known // by UUID
	// drains holds the reason of each drained GPU, by UUID. Only Resume
	// removes one.
	drains map[string]string
	// lostBy holds, by UUID, the Xid that said a GPU fell off the bus:
	// the reason it shows while lost, rather than the failed call that
	// follows. Only Resume removes one.
	lostBy map[string]string
	procs  map[int]procInfo // /proc answers for the PIDs of the last sample
	last   Snapshot
}

type known struct {
	gpu       GPU // last row seen
	lastIndex int // Index when last enumerated
	// baseline is the least memory NVML counted as used beyond what the
	// processes hold (the driver's own reservation), over all samples.
	baseline     uint64
	haveBaseline bool
}

type procInfo struct {
	user, job string
}

// source is where GPU readings come from: NVML, a simulation, nothing.
type source interface {
	mode() Mode
	comment() string // before the first sample
	read(now time.Time, jobs []Job) reading
	probe(uuid string) error // nil when the GPU answers
	close()
}

// reading is what a source saw, before it means anything for jobs.
type reading struct {
	failed    bool // nothing could be enumerated: keep what is known
	nodeDrain string
	comment   string
	driver    string
	devices   []deviceReading
	xids      []XidEvent
	warnings  []string
}

type deviceReading struct {
	uuid, model, busID string
	autoType           string // set by sources that know better than TypeName(model)
	nvmlIndex          int
	total, used        uint64
	memKnown           bool
	util               int
	procs              []rawProc
	procsKnown         bool
	procMemUnknown     bool // NVML would not say what some process holds
	peers              []string
	err                string // the call that failed: the GPU is drained
	lost               bool
	simulated          bool
}

type rawProc struct {
	pid  int
	mem  uint64
	util int
	job  string // set by the simulation, which knows
}

func newInventory(src source, opts Options) *Inventory {
	return &Inventory{
		src:    src,
		opts:   opts.withDefaults(),
		known:  map[string]*known{},
		drains: map[string]string{},
		lostBy: map[string]string{},
		procs:  map[int]procInfo{},
	}
}

// None is an Inventory without GPUs; comment says why ("no NVIDIA driver:
// running without GPUs").
func None(comment string) *Inventory {
	return newInventory(noneSource{cmp.Or(comment, "GPUs: none")}, Options{Procs: noProcs{}})
}

type noneSource struct{ text string }

func (noneSource) mode() Mode                      { return ModeNone }
func (n noneSource) comment() string               { return n.text }
func (n noneSource) read(time.Time, []Job) reading { return reading{comment: n.text} }
func (noneSource) probe(string) error              { return fmt.Errorf("no GPUs on this node") }
func (noneSource) close()                          {}

// Mode says where the GPUs come from.
func (inv *Inventory) Mode() Mode { return inv.src.mode() }

// Comment says what the last sample saw, for the log and the node's
// Comment: "GPUs: simulated (4 x a100 80G)".
func (inv *Inventory) Comment() string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return cmp.Or(inv.last.Comment, inv.src.comment())
}

// Close releases NVML.
func (inv *Inventory) Close() {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.src.close()
}

// Run samples at every tick until ctx is done or ticks is closed, handing
// each snapshot to emit. jobs is asked, at each tick, for the jobs holding
// GPUs. The daemon passes a time.Ticker's channel; tests pass their own.
// Sample may be called at any time besides, for a snapshot on demand.
func (inv *Inventory) Run(ctx context.Context, ticks <-chan time.Time, jobs func() []Job, emit func(Snapshot)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case now, ok := <-ticks:
			if !ok {
				return nil
			}
			emit(inv.Sample(now, jobs()))
		}
	}
}

// Sample reads the GPUs now and says what that means for the given jobs:
// their usage, whether ended ones have released their GPUs, who broke
// their word, which GPUs must be drained or are lost.
func (inv *Inventory) Sample(now time.Time, jobs []Job) Snapshot {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	rd := inv.src.read(now, jobs)
	inv.last = inv.assemble(now, rd, jobs)
	return inv.last
}

// assemble turns a reading into a snapshot, in steps:
//  1. attribute each process to a job, or to nobody (foreign);
//  2. drain the GPUs whose NVML calls failed or that reported a critical
//     Xid, and note the lost ones, including those that vanished;
//  3. build a row per GPU, updating what is known about it; order the
//     rows by PCI bus id and number the GPUs NVML enumerates;
//  4. per job: usage and violations while it runs, release once ended
//     (which drains a GPU that did not come back in time);
//  5. give each row its state, and list the lost GPUs with their jobs.
func (inv *Inventory) assemble(now time.Time, rd reading, jobs []Job) Snapshot {
	snap := Snapshot{
		Time: now, Mode: inv.src.mode(), Comment: rd.comment, Driver: rd.driver,
		NodeDrain: rd.nodeDrain, Xids: rd.xids, Warnings: rd.warnings,
	}
	if rd.failed {
		snap.GPUs = inv.knownRows(rd.nodeDrain)
		return snap
	}

	// 1. Attribution.
	owners := inv.attribute(rd.devices, jobs)

	// 2. Health. Xids first: a GPU that falls off the bus reports Xid 79
	// and, in the same sample, fails its calls with "GPU is lost"; the Xid
	// is the cause, and stays the reason while the GPU is lost.
	lost := map[string]string{}
	seen := map[string]bool{}
	for _, d := range rd.devices {
		seen[d.uuid] = true
	}
	for _, x := range rd.xids {
		if x.Application || (!seen[x.UUID] && inv.known[x.UUID] == nil) {
			continue
		}
		inv.drain(x.UUID, x.Text)
		if xidLost[x.Xid] {
			lost[x.UUID] = x.Text
			if _, ok := inv.lostBy[x.UUID]; !ok {
				inv.lostBy[x.UUID] = x.Text
			}
		}
	}
	for _, d := range rd.devices {
		if d.err != "" {
			inv.drain(d.uuid, d.err)
			if d.lost {
				lost[d.uuid] = cmp.Or(lost[d.uuid], d.err)
			}
		}
	}
	for uuid := range inv.known {
		if !seen[uuid] {
			const gone = "GPU is gone from NVML (fell off the bus?)"
			inv.drain(uuid, gone)
			lost[uuid] = cmp.Or(lost[uuid], gone)
		}
	}
	for uuid := range lost {
		if why, ok := inv.lostBy[uuid]; ok {
			lost[uuid] = why
		}
	}

	// 3. Rows, in PCI bus order, numbered.
	rows := make([]*row, 0, len(rd.devices)+len(inv.known))
	byUUID := map[string]*row{}
	for i, d := range rd.devices {
		r := inv.row(d, owners[i])
		rows = append(rows, r)
		byUUID[d.uuid] = r
	}
	for uuid, k := range inv.known {
		if !seen[uuid] {
			g := k.gpu
			g.Index, g.NVMLIndex = -1, -1
			g.MemoryUsed, g.MemoryFree, g.Foreign, g.Utilization = 0, 0, 0, -1
			g.Processes, g.Peers = nil, nil
			r := &row{GPU: g, gone: true}
			rows = append(rows, r)
			byUUID[uuid] = r
		}
	}
	slices.SortFunc(rows, func(a, b *row) int { return comparePCI(a.GPU, b.GPU) })
	next := 0
	for _, r := range rows {
		if !r.gone {
			r.Index = next
			inv.known[r.UUID].lastIndex = next
			next++
		}
	}

	// 4. Jobs.
	snap.Jobs, snap.Releases, snap.Violations = inv.judge(now, jobs, rows, byUUID)

	// 5. States, and the lost.
	assigned := map[string][]string{}
	for _, j := range jobs {
		for _, u := range j.GPUs {
			assigned[u] = append(assigned[u], j.ID)
		}
	}
	snap.GPUs = make([]GPU, len(rows))
	for i, r := range rows {
		g := r.GPU
		g.State, g.Reason = inv.state(r, lost, assigned)
		inv.known[g.UUID].gpu = g
		snap.GPUs[i] = g
	}
	for _, g := range snap.GPUs {
		if reason, ok := lost[g.UUID]; ok {
			l := LostGPU{UUID: g.UUID, Index: g.Index, Reason: reason}
			if g.Index < 0 {
				l.Index = inv.known[g.UUID].lastIndex
			}
			for _, j := range jobs {
				if j.running() && slices.Contains(j.GPUs, g.UUID) {
					l.Jobs = append(l.Jobs, j.ID)
				}
			}
			slices.Sort(l.Jobs)
			snap.Lost = append(snap.Lost, l)
		}
	}
	return snap
}

// row is a GPU being assembled, with what the judgement of jobs needs.
type row struct {
	GPU
	gone           bool
	procsKnown     bool
	procMemUnknown bool
	unattributed   uint64 // used memory no listed process holds
	baseline       uint64
	haveBaseline   bool
}

func (inv *Inventory) row(d deviceReading, owners []procInfo) *row {
	k := inv.known[d.uuid]
	if k == nil {
		k = &known{}
		inv.known[d.uuid] = k
	}
	auto := cmp.Or(d.autoType, TypeName(d.model))
	g := GPU{
		NVMLIndex: d.nvmlIndex, UUID: d.uuid, PCIBusID: d.busID, Model: d.model,
		AutoType: auto, Type: resolveType(auto, inv.opts.Types),
		MemoryTotal: d.total, MemoryUsed: d.used, MemoryFree: d.total - d.used,
		Utilization: d.util, Peers: d.peers, Simulated: d.simulated,
	}
	if d.err != "" && d.model == "" { // keep what an earlier sample knew
		g.Model, g.PCIBusID, g.AutoType, g.Type = k.gpu.Model, k.gpu.PCIBusID, k.gpu.AutoType, k.gpu.Type
	}
	var held uint64
	for i, p := range d.procs {
		g.Processes = append(g.Processes, Process{
			PID: p.pid, User: owners[i].user, Memory: p.mem, Utilization: p.util, JobID: owners[i].job,
		})
		held += p.mem
		if owners[i].job == "" {
			g.Foreign += p.mem
		}
	}
	// By PID, then job: simulated GPUs' stand-ins may all have PID 0.
	slices.SortFunc(g.Processes, func(a, b Process) int { return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.JobID, b.JobID)) })
	r := &row{GPU: g, procsKnown: d.procsKnown, procMemUnknown: d.procMemUnknown}
	if d.memKnown && d.procsKnown && !d.procMemUnknown {
		r.unattributed = d.used - min(held, d.used)
		if !k.haveBaseline || r.unattributed < k.baseline {
			k.baseline, k.haveBaseline = r.unattributed, true
		}
	}
	r.baseline, r.haveBaseline = k.baseline, k.haveBaseline
	return r
}

// state says whether a GPU is offered, and why not.
func (inv *Inventory) state(r *row, lost map[string]string, assigned map[string][]string) (State, string) {
	if reason, ok := lost[r.UUID]; ok {
		return Lost, reason
	}
	if reason, ok := inv.drains[r.UUID]; ok {
		return Drained, reason
	}
	if len(assigned[r.UUID]) > 0 || r.MemoryFree >= inv.opts.MinFree {
		return Up, ""
	}
	var who []string
	for _, p := range r.Processes {
		if p.JobID != "" {
			return Up, "" // full because of our own jobs
		}
		if len(who) < 3 {
			who = append(who, fmt.Sprintf("pid %d (%s) %s", p.PID, cmp.Or(p.User, "?"), formatSize(p.Memory)))
		}
	}
	if len(who) == 0 {
		who = append(who, formatSize(r.MemoryUsed)+" used")
	}
	return Taken, "held outside the scheduler: " + strings.Join(who, ", ")
}

// knownRows are the GPUs known so far, for a sample that could not
// enumerate them: shown with the node's drain reason, nothing more.
func (inv *Inventory) knownRows(reason string) []GPU {
	var gs []GPU
	for _, k := range inv.known {
		g := k.gpu
		g.State, g.Reason = Drained, reason
		gs = append(gs, g)
	}
	slices.SortFunc(gs, comparePCI)
	return gs
}

// drain marks a GPU drained unless it already is: the first reason is the
// cause, later ones are its consequences.
func (inv *Inventory) drain(uuid, reason string) {
	if _, ok := inv.drains[uuid]; !ok {
		inv.drains[uuid] = reason
	}
}

// Drain takes a GPU out of service with the operator's reason. id is an
// index (as of the last sample), a UUID or a PCI bus id. The next Sample
// shows it Drained.
func (inv *Inventory) Drain(id, reason string) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	uuid, err := inv.resolve(id)
	if err != nil {
		return fmt.Errorf("drain GPU: %w", err)
	}
	if strings.TrimSpace(reason) == "" {
		return fmt.Errorf("drain GPU %q: a reason is required", id)
	}
	inv.drains[uuid] = reason
	return nil
}

// Resume puts a drained GPU back in service, provided NVML answers for it
// again; otherwise it stays drained and the error says why.
func (inv *Inventory) Resume(id string) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	uuid, err := inv.resolve(id)
	if err != nil {
		return fmt.Errorf("resume GPU: %w", err)
	}
	if err := inv.src.probe(uuid); err != nil {
		return fmt.Errorf("resume GPU %q: it still fails (%v), so it stays drained", id, err)
	}
	delete(inv.drains, uuid)
	delete(inv.lostBy, uuid)
	return nil
}

func (inv *Inventory) resolve(id string) (string, error) {
	if g, ok := inv.last.Find(id); ok {
		return g.UUID, nil
	}
	if _, ok := inv.known[id]; ok {
		return id, nil
	}
	return "", fmt.Errorf("no GPU %q on this node (give an index, a UUID or a PCI bus id)", id)
}
