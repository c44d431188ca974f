package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

// placed is where a plan put each started job: GPU indices (with the
// memory reserved on shared ones) and CPU ids.
type placed struct {
	GPUs []int
	Mem  []int64
	CPUs []int
}

func placements(p sched.Plan) map[uint32]placed {
	m := map[uint32]placed{}
	for _, s := range p.Starts {
		var pl placed
		for _, g := range s.Alloc.GPUs {
			pl.GPUs = append(pl.GPUs, g.Index)
			pl.Mem = append(pl.Mem, g.Mem)
		}
		pl.CPUs = s.Alloc.CPUs
		m[s.JobID] = pl
	}
	return m
}

func TestPlacement(t *testing.T) {
	now := st.Epoch
	eight := func() *st.NodeBuilder {
		return st.Node("gpu01").CPUs(32).GPUs(8, "nvidia_a100-sxm4-80gb", 80*st.GiB).NVLink([]int{0, 1, 2, 3}, []int{4, 5, 6, 7})
	}
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want map[uint32]placed
	}{
		{
			name: "whole GPUs are exclusive and all or nothing",
			snap: fourGPUs().Job(
				st.Job(1).GPUs(2).Running(now, "gpu01", 0, 1).CPUIDs(0),
				st.Job(2).GPUs(3),
				st.Job(3).GPUs(2)),
			// Job 2 cannot have 3 of 2 free GPUs; job 3 is blocked behind
			// its reservation (job 1 has no limit, so job 2 waits forever
			// and makes none): job 3 starts.
			want: map[uint32]placed{3: {GPUs: []int{2, 3}, Mem: []int64{0, 0}, CPUs: []int{1}}},
		},
		{
			name: "a multi-GPU job gets GPUs linked by NVLink",
			snap: st.Snap().Node(eight()).Job(
				st.Job(1).GPUs(3).Running(now, "gpu01", 0, 1, 2).CPUIDs(0),
				st.Job(2).GPUs(4)),
			// Lowest indices would be 3,4,5,6, which straddle two NVLink
			// groups; 4-7 are all linked.
			want: map[uint32]placed{2: {GPUs: []int{4, 5, 6, 7}, Mem: []int64{0, 0, 0, 0}, CPUs: []int{1}}},
		},
		{
			name: "a one-GPU job leaves linked groups whole",
			snap: st.Snap().Node(eight()).Job(
				st.Job(1).GPUs(3).Running(now, "gpu01", 4, 5, 6).CPUIDs(0),
				st.Job(2).GPUs(1)),
			// GPU 7 has no idle NVLink peer left; GPUs 0-3 stay a group of 4.
			want: map[uint32]placed{2: {GPUs: []int{7}, Mem: []int64{0}, CPUs: []int{1}}},
		},
		{
			name: "a memory job goes to a GPU already shared (best fit), keeping whole GPUs free",
			snap: fourGPUs().Job(
				st.Job(1).GPUMem(40*st.GiB).Running(now, "gpu01").Sharing(2, 40*st.GiB, 30*st.GiB).CPUIDs(0),
				st.Job(2).GPUMem(20*st.GiB)),
			want: map[uint32]placed{2: {GPUs: []int{2}, Mem: []int64{20 * st.GiB}, CPUs: []int{1}}},
		},
		{
			name: "among shared GPUs the one with the least room that fits wins",
			snap: fourGPUs().Job(
				st.Job(1).GPUMem(40*st.GiB).Running(now, "gpu01").Sharing(0, 40*st.GiB, 0).CPUIDs(0),
				st.Job(2).GPUMem(70*st.GiB).Running(now, "gpu01").Sharing(1, 70*st.GiB, 0).CPUIDs(1),
				st.Job(3).GPUMem(20*st.GiB).Running(now, "gpu01").Sharing(3, 20*st.GiB, 0).CPUIDs(2),
				st.Job(4).GPUMem(30*st.GiB)),
			// GPU 1 has 10 GiB left (too little), GPU 0 has 40, GPU 3 60.
			want: map[uint32]placed{4: {GPUs: []int{0}, Mem: []int64{30 * st.GiB}, CPUs: []int{3}}},
		},
		{
			name: "memory reserved but not yet touched is not free",
			snap: fourGPUs().Job(
				// GPUs 0, 1, 3 are taken whole; GPU 2 has a job that
				// reserved 30 GiB and touched 10: the driver shows 70 free,
				// 50 are.
				st.Job(1).GPUs(3).Running(now, "gpu01", 0, 1, 3).CPUIDs(0),
				st.Job(2).GPUMem(30*st.GiB).Running(now, "gpu01").Sharing(2, 30*st.GiB, 10*st.GiB).CPUIDs(1),
				st.Job(3).GPUMem(60*st.GiB).Submitted(now.Add(-time.Minute)),
				st.Job(4).GPUMem(50*st.GiB)),
			want: map[uint32]placed{4: {GPUs: []int{2}, Mem: []int64{50 * st.GiB}, CPUs: []int{2}}},
		},
		{
			name: "other people's processes count against free memory",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(2, "a100", 80*st.GiB).Foreign(0, 70*st.GiB).Foreign(1, 75*st.GiB)).Job(
				st.Job(1).GPUMem(8 * st.GiB)),
			want: map[uint32]placed{1: {GPUs: []int{0}, Mem: []int64{8 * st.GiB}, CPUs: []int{0}}},
		},
		{
			name: "a GPU someone grabbed by hand is not given whole",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(2, "a100", 80*st.GiB).Foreign(0, 2*st.GiB)).Job(
				st.Job(1).GPUs(1), st.Job(2).GPUs(1)),
			want: map[uint32]placed{1: {GPUs: []int{1}, Mem: []int64{0}, CPUs: []int{0}}},
		},
		{
			name: "a drained GPU is never used",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(2, "a100", 80*st.GiB).Drain(0)).Job(
				st.Job(1).GPUMem(st.GiB), st.Job(2).GPUs(1)),
			want: map[uint32]placed{1: {GPUs: []int{1}, Mem: []int64{st.GiB}, CPUs: []int{0}}},
		},
		{
			name: "a GPU type is a hard constraint matched as a substring",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(2, "nvidia_h100-80gb", 80*st.GiB).GPUs(2, "nvidia_a100-sxm4-80gb", 80*st.GiB)).Job(
				st.Job(1).GPUs(2).GPUType("a100"), st.Job(2).GPUs(1).GPUType("a100")),
			want: map[uint32]placed{1: {GPUs: []int{2, 3}, Mem: []int64{0, 0}, CPUs: []int{0}}},
		},
		{
			name: "CPUs are checked and given as ids no running job holds",
			snap: st.Snap().Node(st.Node("n").CPUs(8)).Job(
				st.Job(1).CPUs(3).Running(now, "n").CPUIDs(0, 2, 4),
				st.Job(2).CPUs(4),
				st.Job(3).CPUs(6)),
			want: map[uint32]placed{2: {CPUs: []int{1, 3, 5, 6}}},
		},
		{
			name: "host memory is checked against the node",
			snap: st.Snap().Node(st.Node("n").Mem(64*st.GiB)).Job(
				st.Job(1).Mem(40*st.GiB).Running(now, "n").CPUIDs(0).HostMem(40*st.GiB),
				st.Job(2).Mem(30*st.GiB).Submitted(now.Add(-time.Minute)),
				st.Job(3).Mem(20*st.GiB)),
			want: map[uint32]placed{3: {CPUs: []int{1}}},
		},
		{
			name: "a job runs on a node of its partition",
			snap: st.Snap().Node(st.Node("a").GPUs(1, "t4", 16*st.GiB), st.Node("b").GPUs(1, "t4", 16*st.GiB)).
				Part(st.Part("onlyb").Default().Nodes("b")).Job(st.Job(1).GPUs(1)),
			want: map[uint32]placed{1: {GPUs: []int{0}, Mem: []int64{0}, CPUs: []int{0}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := placements(st.Cycle(t, tt.snap.Build()))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPartitionNodeIsHonoured(t *testing.T) {
	plan := st.Cycle(t, st.Snap().Node(st.Node("a").GPUs(1, "t4", 16*st.GiB), st.Node("b").GPUs(1, "t4", 16*st.GiB)).
		Part(st.Part("onlyb").Default().Nodes("b")).Job(st.Job(1).GPUs(1)).Build())
	if len(plan.Starts) != 1 || plan.Starts[0].Alloc.Node != "b" || plan.Starts[0].Alloc.GPUs[0].UUID != st.UUID("b", 0) {
		t.Errorf("starts = %+v, want job 1 on b's GPU", plan.Starts)
	}
}

func TestResourceDetailCarriesNumbers(t *testing.T) {
	now := st.Epoch
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want string
	}{
		{
			name: "a memory job is told what the best GPU has free",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(2, "l40", 48*st.GiB).Foreign(0, 29*st.GiB+st.GiB/5).Foreign(1, 40*st.GiB)).
				Job(st.Job(1).GPUMem(24 * st.GiB)),
			want: "needs 24.0 GiB of GPU memory, the best GPU has 18.8 GiB free",
		},
		{
			name: "a whole-GPU job is told how many are free",
			snap: fourGPUs().Job(st.Job(1).GPUs(3).Running(now, "gpu01", 0, 1, 2).CPUIDs(0), st.Job(2).GPUs(2)),
			want: "needs 2 GPUs, 1 free",
		},
		{
			name: "a job asking for more GPUs of a type than exist is told so",
			snap: fourGPUs().Job(st.Job(1).GPUs(2).GPUType("h100")),
			want: "needs 2 h100 GPUs, the partition has 0 usable",
		},
		{
			name: "a CPU job is told how many CPUs are free",
			snap: st.Snap().Node(st.Node("n").CPUs(4)).Job(st.Job(1).CPUs(3).Running(now, "n").CPUIDs(0, 1, 2), st.Job(2).CPUs(2)),
			want: "needs 2 CPUs, 1 free",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := st.Cycle(t, tt.snap.Build())
			if len(plan.Pending) != 1 {
				t.Fatalf("pending = %+v, want one job", plan.Pending)
			}
			if got := plan.Pending[0].Detail; got != tt.want {
				t.Errorf("detail = %q, want %q", got, tt.want)
			}
		})
	}
}
