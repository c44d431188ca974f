package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The recordings in /work/shared/golden, replayed on the same cluster
// (schedtest.Anchor).

func TestGoldenSqueueStart(t *testing.T) {
	// squeue_start.txt: a blocker of root's holds every GPU without a time
	// limit; 27 and 28 want a GPU, 29 waits for the blocker, 30 is held,
	// the array 31_[0-3] waits. No start time is known (N/A).
	snap := st.Anchor().Job(
		st.Job(26).User("root").Name("big").GPUs(4).Running(st.Epoch, "gpu01", 0, 1, 2, 3),
		st.Job(27).User("alice").Name("alicegpu").GPUs(1),
		st.Job(28).User("bob").Name("bobgpu").GPUs(1),
		st.Job(29).User("root").Name("afterbig").AfterOK(26),
		st.Job(30).User("root").Name("held").Hold(),
		st.Job(31).User("root").Name("arr").GPUs(1).Task(31, 0, 0),
		st.Job(32).User("root").Name("arr").GPUs(1).Task(31, 1, 0),
		st.Job(33).User("root").Name("arr").GPUs(1).Task(31, 2, 0),
		st.Job(34).User("root").Name("arr").GPUs(1).Task(31, 3, 0),
	).Build()
	plan := st.Cycle(t, snap)
	want := []sched.Decision{
		{JobID: 27, Reason: slurm.ReasonResources, Priority: 11000},
		{JobID: 28, Reason: slurm.ReasonPriority, Priority: 11000},
		{JobID: 29, Reason: slurm.ReasonDependency, Priority: 11000, DepReason: slurm.ReasonDependency},
		{JobID: 30, Reason: slurm.ReasonJobHeldUser, Priority: 0},
		{JobID: 31, Reason: slurm.ReasonPriority, Priority: 11000},
		{JobID: 32, Reason: slurm.ReasonPriority, Priority: 11000},
		{JobID: 33, Reason: slurm.ReasonPriority, Priority: 11000},
		{JobID: 34, Reason: slurm.ReasonPriority, Priority: 11000},
	}
	if diff := cmp.Diff(want, plan.Pending, cmpopts.IgnoreFields(sched.Decision{}, "Detail")); diff != "" {
		t.Errorf("pending decisions (-want +got):\n%s", diff)
	}
	if len(plan.Starts) != 0 {
		t.Errorf("started %v, want nothing", st.Started(plan))
	}
}

func TestGoldenPriorityOrderAfterUsage(t *testing.T) {
	// squeue_priority_order.txt: after usage, bob's job (8500) leads and
	// waits on Resources, root's (6000) and alice's (3500) wait on
	// Priority; root's scavenger job finds the node claimed by the higher
	// partition.
	snap := st.Anchor().
		Usage("lab", "alice", 80).Usage("lab", "bob", 10).Usage("lab", "root", 20).
		Job(
			st.Job(10155).User("root").Name("blocker").GPUs(4).Running(st.Epoch.Add(-time.Minute), "gpu01", 0, 1, 2, 3),
			st.Job(10156).User("alice").Name("a_pend").GPUs(1),
			st.Job(10157).User("bob").Name("b_pend").GPUs(1),
			st.Job(10158).User("root").Name("r_pend").GPUs(1),
			st.Job(10159).User("root").Name("r_scav").GPUs(1).Partition("scavenger"),
		).Build()
	plan := st.Cycle(t, snap)
	want := []sched.Decision{
		{JobID: 10157, Reason: slurm.ReasonResources, Priority: 8500},
		{JobID: 10158, Reason: slurm.ReasonPriority, Priority: 6000},
		{JobID: 10156, Reason: slurm.ReasonPriority, Priority: 3500},
		{JobID: 10159, Reason: slurm.ReasonResources, Priority: 6000,
			StateDesc: "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"},
	}
	if diff := cmp.Diff(want, plan.Pending, cmpopts.IgnoreFields(sched.Decision{}, "Detail")); diff != "" {
		t.Errorf("pending decisions (-want +got):\n%s", diff)
	}
}

func TestGoldenPreemption(t *testing.T) {
	// preempt_*.txt: bob's scavenger job holds all four GPUs; alice submits
	// a 2-GPU job to gpu, which preempts it (REQUEUE).
	snap := st.Anchor().Job(
		st.Job(38).User("bob").Name("scav").Partition("scavenger").GPUs(4).Running(st.Epoch.Add(-3*time.Second), "gpu01", 0, 1, 2, 3),
		st.Job(39).User("alice").Name("urgent").GPUs(2),
	).Build()
	plan := st.Cycle(t, snap)
	if diff := cmp.Diff([]sched.Preempt{{JobID: 38, For: 39}}, plan.Preempts); diff != "" {
		t.Errorf("preemptions (-want +got):\n%s", diff)
	}
	d, _ := st.Decision(plan, 39)
	if d.Reason != slurm.ReasonResources || !d.ExpectedStart.Equal(st.Epoch) {
		t.Errorf("urgent job: %+v, want Resources expected now", d)
	}
}
