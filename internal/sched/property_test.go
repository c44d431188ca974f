package sched_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// genSnapshot draws a consistent snapshot: nodes with GPUs (some drained,
// linked, or holding other people's memory), running jobs whose
// allocations fit what exists, and pending jobs of every kind.
func genSnapshot(t *rapid.T) sched.Snapshot {
	now := st.Epoch
	b := st.Snap().Configure(func(c *sched.Config) {
		c.SchedulerType = rapid.SampledFrom([]sched.SchedulerType{sched.SchedBackfill, sched.SchedBackfill, sched.SchedBuiltin}).Draw(t, "sched")
		c.Backfill.Resolution = time.Duration(rapid.SampledFrom([]int{1, 60, 600}).Draw(t, "res")) * time.Second
		c.Backfill.Window = time.Duration(rapid.IntRange(10, 3000).Draw(t, "window")) * time.Minute
		c.Backfill.MaxJobTest = rapid.IntRange(1, 40).Draw(t, "maxtest")
		c.Shrink = rapid.Bool().Draw(t, "shrink")
		c.YieldPayback = rapid.Bool().Draw(t, "yieldpayback")
		c.YieldOwn = rapid.Bool().Draw(t, "yieldown")
		c.ShrinkRegrow = rapid.Bool().Draw(t, "regrow")
		c.YieldCost = time.Duration(rapid.IntRange(0, 30).Draw(t, "yieldcost")) * time.Minute
		c.YieldMinRun = time.Duration(rapid.SampledFrom([]int{0, 0, 1, 60, 600, 3600}).Draw(t, "minrun")) * time.Second
	})
	b.Part(st.Part("gpu").Default(), st.Part("scav").Tier(0).Requeue(), st.Part("high").Tier(2))
	types := []string{"a100", "nvidia_h100-80gb", "t4"}
	nodes := rapid.IntRange(1, 3).Draw(t, "nodes")
	type gpuState struct {
		excl, shared bool
		free         int64 // what a new job may still take
	}
	nextID := uint32(1)
	var running []*st.JobBuilder
	for n := range nodes {
		name := fmt.Sprintf("n%d", n)
		cpus := rapid.IntRange(1, 16).Draw(t, "cpus")
		mem := int64(rapid.IntRange(1, 64).Draw(t, "mem")) * st.GiB
		nb := st.Node(name).CPUs(cpus).Mem(mem)
		ngpu := rapid.IntRange(0, 6).Draw(t, "gpus")
		state := make([]gpuState, ngpu)
		for g := range ngpu {
			total := int64(rapid.SampledFrom([]int{16, 24, 80}).Draw(t, "gpumem")) * st.GiB
			nb.GPUs(1, rapid.SampledFrom(types).Draw(t, "type"), total)
			state[g] = gpuState{free: total}
			if rapid.IntRange(0, 9).Draw(t, "foreign") == 0 {
				f := int64(rapid.IntRange(1, 16).Draw(t, "foreignGiB")) * st.GiB
				nb.Foreign(g, min(f, total))
				state[g].free -= min(f, total)
			}
			if rapid.IntRange(0, 9).Draw(t, "drain") == 0 {
				nb.Drain(g)
			}
		}
		if ngpu >= 2 && rapid.Bool().Draw(t, "nvlink") {
			nb.NVLink([]int{0, 1})
		}
		b.Node(nb)
		freeCPU, freeMem := cpus, mem
		for range rapid.IntRange(0, 4).Draw(t, "running") {
			c := rapid.IntRange(1, max(1, freeCPU)).Draw(t, "rcpus")
			m := int64(rapid.IntRange(0, 4).Draw(t, "rmem")) * st.GiB
			if c > freeCPU || m > freeMem {
				break
			}
			jb := st.Job(nextID).User(fmt.Sprintf("u%d", nextID%3)).CPUs(c).Mem(m).
				Partition(rapid.SampledFrom([]string{"gpu", "scav"}).Draw(t, "rpart")).
				Time(time.Duration(rapid.SampledFrom([]int{10, 60, 240, 0}).Draw(t, "rlimit")) * time.Minute)
			if rapid.Bool().Draw(t, "ryield") {
				jb.Yieldable()
			}
			if rapid.IntRange(0, 2).Draw(t, "rresumed") == 0 {
				jb.Resumed().CheckpointInterval(time.Duration(rapid.SampledFrom([]int{0, 0, 30, 600, 7200}).Draw(t, "rckpt")) * time.Second)
			}
			jb.Running(now.Add(-time.Duration(rapid.SampledFrom([]int{0, 1, 59, 60, 61, 599, 600, 601, 3600, 18000}).Draw(t, "rage"))*time.Second), name)
			jb.CPUIDs(seq(cpus-freeCPU, c)...).HostMem(m)
			freeCPU -= c
			freeMem -= m
			if rapid.Bool().Draw(t, "rshared") {
				g := rapid.IntRange(0, max(0, ngpu-1)).Draw(t, "rgpu")
				if ngpu > 0 && !state[g].excl && state[g].free >= st.GiB {
					res := int64(rapid.IntRange(1, int(state[g].free/st.GiB)).Draw(t, "rres")) * st.GiB
					used := int64(rapid.IntRange(0, int(res/st.GiB)).Draw(t, "rused")) * st.GiB
					jb.GPUMem(res).Sharing(g, res, used)
					state[g].free -= res
					state[g].shared = true
				}
			} else {
				want := rapid.IntRange(0, 3).Draw(t, "rn")
				var idx []int
				for g := range state {
					if !state[g].excl && !state[g].shared && len(idx) < want {
						idx = append(idx, g)
					}
				}
				for _, g := range idx {
					used := int64(rapid.IntRange(0, int(state[g].free/st.GiB)).Draw(t, "rwused")) * st.GiB
					state[g].excl = true
					jb.Sharing(g, 0, used)
				}
				jb.GPUs(len(idx))
				if len(idx) > 0 && rapid.IntRange(0, 3).Draw(t, "rshrunk") == 0 {
					jb.Shrunk(len(idx) + rapid.IntRange(1, 3).Draw(t, "rfull"))
				}
			}
			running = append(running, jb)
			nextID++
		}
	}
	b.Job(running...)
	for range rapid.IntRange(0, 25).Draw(t, "pending") {
		jb := st.Job(nextID).User(fmt.Sprintf("u%d", rapid.IntRange(0, 3).Draw(t, "user"))).
			CPUs(rapid.IntRange(1, 8).Draw(t, "pcpus")).Mem(int64(rapid.IntRange(0, 8).Draw(t, "pmem")) * st.GiB).
			Partition(rapid.SampledFrom([]string{"gpu", "gpu", "scav", "high"}).Draw(t, "ppart")).
			Time(time.Duration(rapid.SampledFrom([]int{5, 30, 90, 600, 0}).Draw(t, "plimit")) * time.Minute).
			Submitted(now.Add(-time.Duration(rapid.IntRange(0, 1000).Draw(t, "psub")) * time.Minute)).
			Nice(rapid.IntRange(-100, 100).Draw(t, "nice"))
		switch rapid.IntRange(0, 5).Draw(t, "kind") {
		case 0, 1:
			jb.GPUs(rapid.IntRange(1, 4).Draw(t, "pgpus"))
		case 2:
			jb.GPUMem(int64(rapid.IntRange(1, 40).Draw(t, "pgpumem")) * st.GiB).GPUs(rapid.IntRange(0, 2).Draw(t, "pshare"))
		case 3:
			jb.GPUs(1).GPUType(rapid.SampledFrom([]string{"a100", "h100", "v100"}).Draw(t, "ptype"))
		}
		switch rapid.IntRange(0, 9).Draw(t, "extra") {
		case 0:
			jb.Hold()
		case 1:
			jb.AfterOK(uint32(rapid.IntRange(1, int(nextID)).Draw(t, "dep")))
		case 2:
			jb.Task(1000, int(nextID), 1)
		case 3:
			jb.YieldedFor(uint32(rapid.IntRange(1, int(nextID)+1).Draw(t, "yieldedfor")))
		}
		b.Job(jb)
		nextID++
	}
	snap := b.Build()
	drawPorts(t, &snap)
	return snap
}

// drawPorts sometimes lends ports (MpiParams): running jobs hold some of
// each node's, pending jobs ask for a count or take their tasks + 1.
func drawPorts(t *rapid.T, snap *sched.Snapshot) {
	if rapid.IntRange(0, 2).Draw(t, "ports") != 0 {
		return
	}
	snap.Ports = sched.PortRange{Lo: 12000, Hi: 12000 + rapid.IntRange(1, 11).Draw(t, "portsize")}
	next := map[string]int{}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if j.State == slurm.Running {
			n := rapid.IntRange(0, 3).Draw(t, "rports")
			for range n {
				if p := snap.Ports.Lo + next[j.Alloc.Node]; p <= snap.Ports.Hi {
					j.Alloc.Ports = append(j.Alloc.Ports, p)
					next[j.Alloc.Node]++
				}
			}
			j.Req.Ports, j.Req.PortsAsked = len(j.Alloc.Ports), true
			continue
		}
		if rapid.Bool().Draw(t, "pasked") {
			j.Req.Ports, j.Req.PortsAsked = rapid.IntRange(0, 5).Draw(t, "pports"), true
		} else {
			j.Req.Tasks = rapid.IntRange(1, 4).Draw(t, "ptasks")
		}
	}
}

func seq(from, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

func TestPropertiesOfEveryPlan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := genSnapshot(t)
		before := st.Clone(snap)
		plan := sched.Cycle(snap)
		if diff := cmp.Diff(before, snap); diff != "" {
			t.Fatalf("Cycle modified its input (-before +after):\n%s", diff)
		}
		checkAllocations(t, snap, plan)
		checkPorts(t, snap, plan)
		checkEveryPendingJobDecided(t, snap, plan)
		checkStops(t, snap, plan)
		checkResumedRunTheirMinimum(t, snap, plan)
		if again := sched.Cycle(snap); !cmp.Equal(plan, again) {
			t.Fatalf("same input, different plan:\n%s", cmp.Diff(plan, again))
		}
		shuffled := st.Clone(snap)
		perm := rapid.Permutation(shuffled.Jobs).Draw(t, "perm")
		shuffled.Jobs = perm
		if other := sched.Cycle(shuffled); !cmp.Equal(plan, other) {
			t.Fatalf("job order changed the plan:\n%s", cmp.Diff(plan, other))
		}
		checkTopReservationNotDelayed(t, snap, plan)
	})
}

func TestSearchMemosChangeNoAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := genSnapshot(t)
		plan := sched.Cycle(snap)
		defer sched.SetSearchMemo(sched.SetSearchMemo(false))
		if plain := sched.Cycle(snap); !cmp.Equal(plan, plain) {
			t.Fatalf("memoised and plain searches differ (-memo +plain):\n%s", cmp.Diff(plan, plain))
		}
	})
}

func TestSearchMemosChangeNoAnswerOnABusyCluster(t *testing.T) {
	snap := busyCluster(8, 2000, 0)
	plan := sched.Cycle(snap)
	defer sched.SetSearchMemo(sched.SetSearchMemo(false))
	if plain := sched.Cycle(snap); !cmp.Equal(plan, plain) {
		t.Fatalf("memoised and plain searches differ (-memo +plain):\n%s", cmp.Diff(plan, plain))
	}
}

// checkStops: every job a plan preempts or shrinks is running, is stopped
// once, and is stopped for a pending job; a job stopped for one of its own
// tier or a higher one is yieldable (--yieldable, or in a REQUEUE
// partition). A job grown back is running, stopped for nothing else, and
// grows from fewer GPUs to its FullGPUs.
func checkStops(t *rapid.T, snap sched.Snapshot, plan sched.Plan) {
	jobs := map[uint32]sched.Job{}
	for _, j := range snap.Jobs {
		jobs[j.ID] = j
	}
	tier := map[string]int{}
	requeue := map[string]bool{}
	def := ""
	for _, p := range snap.Partitions {
		tier[p.Name] = p.PriorityTier
		requeue[p.Name] = p.PreemptMode == sched.PreemptRequeue
		if p.Default && def == "" {
			def = p.Name
		}
	}
	partOf := func(j sched.Job) string {
		if j.Partition == "" {
			return def
		}
		return j.Partition
	}
	seen := map[uint32]bool{}
	check := func(id, forID uint32) {
		j, ok := jobs[id]
		if !ok || j.State != slurm.Running {
			t.Fatalf("job %d is stopped but is not a running job of the snapshot", id)
		}
		if seen[id] {
			t.Fatalf("job %d is stopped twice", id)
		}
		seen[id] = true
		f, ok := jobs[forID]
		if !ok || f.State != slurm.Pending {
			t.Fatalf("job %d is stopped for job %d, which is not pending", id, forID)
		}
		if tier[partOf(j)] >= tier[partOf(f)] && !j.Yieldable && !requeue[partOf(j)] {
			t.Fatalf("job %d (not yieldable) is stopped for job %d of a tier no higher", id, forID)
		}
	}
	for _, p := range plan.Preempts {
		check(p.JobID, p.For)
	}
	for _, s := range plan.Shrinks {
		check(s.JobID, s.For)
	}
	for _, g := range plan.Grows {
		j, ok := jobs[g.JobID]
		if !ok || j.State != slurm.Running || seen[g.JobID] {
			t.Fatalf("job %d grows but is not a running job of the snapshot, or is also stopped", g.JobID)
		}
		seen[g.JobID] = true
		if g.ToGPUs != j.FullGPUs || g.FromGPUs >= g.ToGPUs || g.For != 0 {
			t.Fatalf("grow %+v of job %d with FullGPUs %d", g, j.ID, j.FullGPUs)
		}
	}
}

// checkResumedRunTheirMinimum: a job resumed after a yield is never
// stopped by the scheduler's own rules (a payback yield, a shrink, a
// regrowth) before it has run its minimum, Config.YieldMinRun or the
// longer checkpoint interval it declared; only a higher tier's
// preemption of a REQUEUE partition, Slurm's, may stop it sooner.
func checkResumedRunTheirMinimum(t *rapid.T, snap sched.Snapshot, plan sched.Plan) {
	jobs := map[uint32]sched.Job{}
	for _, j := range snap.Jobs {
		jobs[j.ID] = j
	}
	tier, requeue := map[string]int{}, map[string]bool{}
	def := ""
	for _, p := range snap.Partitions {
		tier[p.Name], requeue[p.Name] = p.PriorityTier, p.PreemptMode == sched.PreemptRequeue
		if p.Default && def == "" {
			def = p.Name
		}
	}
	partOf := func(j sched.Job) string {
		if j.Partition == "" {
			return def
		}
		return j.Partition
	}
	early := func(id uint32) (sched.Job, bool) {
		j := jobs[id]
		ran := snap.Now.Sub(j.Start)
		return j, j.Resumed && ran < max(j.CheckpointInterval, snap.Config.YieldMinRun)
	}
	for _, p := range plan.Preempts {
		j, ok := early(p.JobID)
		if !ok {
			continue
		}
		if f := jobs[p.For]; !requeue[partOf(j)] || tier[partOf(j)] >= tier[partOf(f)] {
			t.Fatalf("job %d, resumed after a yield %s ago (minimum %s, checkpoint interval %s), is yielded again for job %d",
				j.ID, snap.Now.Sub(j.Start), snap.Config.YieldMinRun, j.CheckpointInterval, p.For)
		}
	}
	for _, s := range slices.Concat(plan.Shrinks, plan.Grows) {
		if j, ok := early(s.JobID); ok {
			t.Fatalf("job %d, resumed after a yield %s ago (minimum %s, checkpoint interval %s), is shrunk or grown: %+v",
				j.ID, snap.Now.Sub(j.Start), snap.Config.YieldMinRun, j.CheckpointInterval, s)
		}
	}
}

// checkAllocations: every start gets what it asked for and only what
// exists; no GPU is given whole twice or shared while owned; GPU memory,
// CPU ids and host memory are never over-committed, counting what running
// jobs hold (preempted ones included: they have not stopped yet).
func checkAllocations(t *rapid.T, snap sched.Snapshot, plan sched.Plan) {
	type gpuUse struct {
		gpu          sched.GPU
		node         string
		excl, shared int
		avail        int64
	}
	gpus := map[string]*gpuUse{}
	cpus := map[string]map[int]bool{}
	mem := map[string]int64{}
	nodes := map[string]sched.Node{}
	for _, n := range snap.Nodes {
		nodes[n.Name] = n
		cpus[n.Name] = map[int]bool{}
		for _, g := range n.GPUs {
			gpus[g.UUID] = &gpuUse{gpu: g, node: n.Name, avail: g.FreeMem}
		}
	}
	jobs := map[uint32]sched.Job{}
	for _, j := range snap.Jobs {
		jobs[j.ID] = j
		if j.State != slurm.Running {
			continue
		}
		for _, a := range j.Alloc.GPUs {
			u := gpus[a.UUID]
			if a.Mem == 0 {
				u.excl++
			} else {
				u.shared++
				u.avail -= max(0, a.Mem-a.Used)
			}
		}
		for _, c := range j.Alloc.CPUs {
			cpus[j.Alloc.Node][c] = true
		}
		mem[j.Alloc.Node] += j.Alloc.Mem
	}
	for _, s := range plan.Starts {
		j, ok := jobs[s.JobID]
		if !ok || j.State != slurm.Pending {
			t.Fatalf("started job %d is not a pending job of the snapshot", s.JobID)
		}
		need, shared := j.Req.GPUs, j.Req.GPUMem > 0
		if shared {
			need = max(1, need)
		}
		// A job larger than a node (a gang) takes whole nodes: its
		// allocation continues in Alloc.More, one part per node, and may
		// hold more GPUs than it asked for.
		parts := append([]sched.Alloc{s.Alloc}, s.Alloc.More...)
		got := 0
		for _, part := range parts {
			got += len(part.GPUs)
		}
		if got != need && (len(parts) == 1 || got < need) {
			t.Fatalf("job %d asked for %d GPUs and got %d", j.ID, need, got)
		}
		seen := map[string]bool{}
		for pi, part := range parts {
			node, ok := nodes[part.Node]
			if !ok || node.Drained {
				t.Fatalf("job %d started on node %q, which does not exist or is drained", j.ID, part.Node)
			}
			for _, a := range part.GPUs {
				u, ok := gpus[a.UUID]
				switch {
				case !ok || u.node != node.Name:
					t.Fatalf("job %d got GPU %s, which is not on node %s", j.ID, a.UUID, node.Name)
				case seen[a.UUID]:
					t.Fatalf("job %d got GPU %s twice", j.ID, a.UUID)
				case u.gpu.Drained:
					t.Fatalf("job %d got drained GPU %s", j.ID, a.UUID)
				case !typeMatchesForTest(u.gpu.Type, j.Req.GPUType):
					t.Fatalf("job %d asked for type %q and got %s", j.ID, j.Req.GPUType, u.gpu.Type)
				case u.excl > 0:
					t.Fatalf("job %d got GPU %s, which another job owns", j.ID, a.UUID)
				}
				seen[a.UUID] = true
				if shared {
					if a.Mem != j.Req.GPUMem {
						t.Fatalf("job %d reserved %d on %s, asked %d", j.ID, a.Mem, a.UUID, j.Req.GPUMem)
					}
					u.avail -= a.Mem
					u.shared++
					if u.avail < 0 {
						t.Fatalf("GPU %s over-committed by job %d: %d bytes short", a.UUID, j.ID, -u.avail)
					}
				} else {
					if a.Mem != 0 || u.shared > 0 || u.gpu.ForeignMem > snap.Config.ForeignMemSlack {
						t.Fatalf("job %d got GPU %s whole while it is shared or used by others", j.ID, a.UUID)
					}
					u.excl++
				}
			}
			// A gang shares its CPUs out over its nodes.
			if wantCPUs := max(1, j.Req.CPUs); (len(parts) == 1 && len(part.CPUs) != wantCPUs) || len(part.CPUs) == 0 {
				t.Fatalf("job %d asked for %d CPUs and got %v on node %d of its allocation", j.ID, wantCPUs, part.CPUs, pi)
			}
			for _, c := range part.CPUs {
				if c < 0 || c >= node.CPUs || cpus[node.Name][c] {
					t.Fatalf("job %d got CPU %d on %s, which is taken or does not exist", j.ID, c, node.Name)
				}
				cpus[node.Name][c] = true
			}
			mem[node.Name] += part.Mem
			if mem[node.Name] > node.Mem {
				t.Fatalf("node %s memory over-committed by job %d", node.Name, j.ID)
			}
		}
	}
}

func typeMatchesForTest(have, want string) bool {
	return want == "" || strings.Contains(strings.ToLower(have), strings.ToLower(want))
}

// checkEveryPendingJobDecided: each pending job is started or has exactly
// one decision, and nothing else appears.
func checkEveryPendingJobDecided(t *rapid.T, snap sched.Snapshot, plan sched.Plan) {
	var want, got []uint32
	for _, j := range snap.Jobs {
		if j.State == slurm.Pending {
			want = append(want, j.ID)
		}
	}
	got = append(got, st.Started(plan)...)
	for _, d := range plan.Pending {
		got = append(got, d.JobID)
		if d.Reason == "" {
			t.Fatalf("job %d has no reason", d.JobID)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decided jobs (-pending +decided):\n%s", diff)
	}
}

// checkTopReservationNotDelayed: backfill never delays the top reservation.
// Let the jobs the plan starts run; planning again at the same moment must
// not expect the first job holding a reservation any later.
func checkTopReservationNotDelayed(t *rapid.T, snap sched.Snapshot, plan sched.Plan) {
	window := snap.Now.Add(snap.Config.Backfill.Window)
	var top sched.Decision
	for _, d := range plan.Pending {
		waits := d.Reason == slurm.ReasonResources || d.Reason == slurm.ReasonPriority
		if waits && d.ExpectedStart.After(snap.Now) && !d.ExpectedStart.After(window) {
			top = d
			break
		}
	}
	if top.JobID == 0 {
		return
	}
	after := st.Clone(snap)
	array := func(id uint32) uint32 {
		return after.Jobs[slices.IndexFunc(after.Jobs, func(j sched.Job) bool { return j.ID == id })].ArrayJobID
	}
	for _, s := range plan.Starts {
		if a := array(s.JobID); a != 0 && a == array(top.JobID) {
			// A task of the same array started: the %N throttle, not
			// the reservation, decides when the top task may run.
			return
		}
		i := slices.IndexFunc(after.Jobs, func(j sched.Job) bool { return j.ID == s.JobID })
		j := &after.Jobs[i]
		if j.YieldedFor != 0 {
			// Running, it no longer puts the job it yielded for ahead:
			// the order of the replan is not the plan's.
			return
		}
		j.State, j.Start, j.Alloc, j.TimeLimit = slurm.Running, snap.Now, s.Alloc, s.TimeLimit
		// As ordinary work they cannot become preemption or shrink
		// victims, which would change what the replan preempts.
		j.Partition, j.Yieldable = "gpu", false
	}
	again := sched.Cycle(after)
	if slices.Contains(st.Started(again), top.JobID) {
		return
	}
	d, _ := st.Decision(again, top.JobID)
	if d.ExpectedStart.IsZero() || d.ExpectedStart.After(top.ExpectedStart) {
		t.Fatalf("job %d was expected at %v; with the backfilled jobs running it is expected at %v",
			top.JobID, top.ExpectedStart, d.ExpectedStart)
	}
}

// checkPorts: no port is held by two jobs of a node at once, every port
// given is in the range, and a started job gets the count it needs.
func checkPorts(t *rapid.T, snap sched.Snapshot, plan sched.Plan) {
	held := map[string]map[int]uint32{}
	take := func(id uint32, a sched.Alloc) {
		if held[a.Node] == nil {
			held[a.Node] = map[int]uint32{}
		}
		for _, p := range a.Ports {
			if other, ok := held[a.Node][p]; ok {
				t.Fatalf("port %d of %s given to job %d while job %d holds it", p, a.Node, id, other)
			}
			held[a.Node][p] = id
		}
	}
	jobs := map[uint32]sched.Job{}
	for _, j := range snap.Jobs {
		jobs[j.ID] = j
		if j.State == slurm.Running {
			take(j.ID, j.Alloc)
		}
	}
	for _, s := range plan.Starts {
		if want := sched.JobPorts(snap.Ports, jobs[s.JobID].Req); len(s.Alloc.Ports) != want {
			t.Fatalf("job %d started with ports %v, needs %d", s.JobID, s.Alloc.Ports, want)
		}
		for _, p := range s.Alloc.Ports {
			if p < snap.Ports.Lo || p > snap.Ports.Hi {
				t.Fatalf("job %d got port %d outside %d-%d", s.JobID, p, snap.Ports.Lo, snap.Ports.Hi)
			}
		}
		take(s.JobID, s.Alloc)
	}
}
