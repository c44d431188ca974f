package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

// scavengers returns the anchor cluster with three scavenger jobs holding
// all four GPUs: 11 (1 GPU, started 3 h ago), 12 (1 GPU, 2 h ago) and 13
// (2 GPUs, 1 h ago).
func scavengers() *st.SnapBuilder {
	now := st.Epoch
	return st.Anchor().Job(
		st.Job(11).User("bob").Partition("scavenger").GPUs(1).Running(now.Add(-3*time.Hour), "gpu01", 0),
		st.Job(12).User("bob").Partition("scavenger").GPUs(1).Running(now.Add(-2*time.Hour), "gpu01", 1),
		st.Job(13).User("bob").Partition("scavenger").GPUs(2).Running(now.Add(-time.Hour), "gpu01", 2, 3),
	)
}

func TestPreemption(t *testing.T) {
	now := st.Epoch
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want []sched.Preempt
	}{
		{
			name: "one victim suffices: the most recently started",
			snap: scavengers().Job(st.Job(20).User("alice").GPUs(1)),
			want: []sched.Preempt{{JobID: 13, For: 20}},
		},
		{
			name: "the fewest victims win over more recent ones",
			snap: scavengers().Job(st.Job(20).User("alice").GPUs(2)),
			want: []sched.Preempt{{JobID: 13, For: 20}},
		},
		{
			name: "when one is not enough, the most recent pair that is",
			snap: scavengers().Job(st.Job(20).User("alice").GPUs(3)),
			want: []sched.Preempt{{JobID: 13, For: 20}, {JobID: 12, For: 20}},
		},
		{
			// Job 20 takes one of job 13's two GPUs; job 21 needs the
			// other and one more.
			name: "each blocked job of a higher tier preempts for itself, using what is left",
			snap: scavengers().Job(st.Job(20).User("alice").GPUs(1).Submitted(now.Add(-time.Minute)), st.Job(21).User("bob").GPUs(2)),
			want: []sched.Preempt{{JobID: 13, For: 20}, {JobID: 12, For: 21}},
		},
		{
			name: "nobody is preempted for a job that would still not fit",
			snap: scavengers().Job(
				st.Job(10).User("root").GPUs(1).Running(now.Add(-time.Hour), "gpu01", 0),
				st.Job(20).User("alice").GPUs(4)),
		},
		{
			name: "jobs of the same tier are never preempted",
			snap: st.Anchor().Job(
				st.Job(10).User("bob").GPUs(4).Running(now, "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1)),
		},
		{
			name: "a partition without PreemptMode=REQUEUE is never preempted",
			snap: fourGPUs().Part(st.Part("high").Default().Tier(2), st.Part("low").Tier(1)).Job(
				st.Job(10).Partition("low").GPUs(4).Running(now, "gpu01", 0, 1, 2, 3),
				st.Job(20).GPUs(1)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := st.Cycle(t, tt.snap.Build())
			if diff := cmp.Diff(tt.want, plan.Preempts); diff != "" {
				t.Errorf("preemptions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreemptedGPUsAreNotGivenToOthersInThePass(t *testing.T) {
	plan := st.Cycle(t, scavengers().Job(
		st.Job(20).User("alice").GPUs(2).Submitted(st.Epoch.Add(-time.Minute)),
		st.Job(21).User("bob").Partition("scavenger").GPUs(1).Time(time.Minute)).Build())
	if len(plan.Starts) != 0 {
		t.Errorf("started %v while the preemption is under way, want nothing", st.Started(plan))
	}
}

func TestHarnessStartsThePreemptorOnceVictimsAreGone(t *testing.T) {
	h := st.NewHarness(t, scavengers().Job(st.Job(20).User("alice").GPUs(2)).Build())
	h.Cycle()
	plan := h.Cycle()
	if diff := cmp.Diff([]uint32{20}, st.Started(plan)); diff != "" {
		t.Errorf("second pass (-want +got):\n%s", diff)
	}
	if got := h.Job(13); !got.Resumed || got.State != "PENDING" {
		t.Errorf("victim after the yield: state %s resumed %v, want PENDING and resumed", got.State, got.Resumed)
	}
}

func TestShrink(t *testing.T) {
	now := st.Epoch
	wide := func(gpus ...int) *st.JobBuilder {
		return st.Job(10).User("bob").GPUs(len(gpus)).Yieldable().Nice(100).Running(now.Add(-time.Hour), "gpu01", gpus...)
	}
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want sched.Shrink
		ok   bool
	}{
		{
			name: "a 4-GPU job shrinks to 2 for a 2-GPU job",
			snap: fourGPUs().Job(wide(0, 1, 2, 3), st.Job(20).User("alice").GPUs(2)),
			want: sched.Shrink{JobID: 10, FromGPUs: 4, ToGPUs: 2, For: 20}, ok: true,
		},
		{
			name: "free GPUs count: with one free the job keeps three",
			snap: fourGPUs().Job(wide(0, 1, 2), st.Job(20).User("alice").GPUs(2)),
			want: sched.Shrink{JobID: 10, FromGPUs: 3, ToGPUs: 2, For: 20}, ok: true,
		},
		{
			name: "the job that keeps the most GPUs is chosen",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(8, "a100", 80*st.GiB)).Job(
				st.Job(10).User("bob").GPUs(2).Yieldable().Nice(100).Running(now.Add(-2*time.Hour), "gpu01", 0, 1),
				st.Job(11).User("bob").GPUs(6).Yieldable().Nice(100).Running(now.Add(-3*time.Hour), "gpu01", 2, 3, 4, 5, 6, 7),
				st.Job(20).User("alice").GPUs(1)),
			want: sched.Shrink{JobID: 11, FromGPUs: 6, ToGPUs: 5, For: 20}, ok: true,
		},
		{
			name: "a job that is not yieldable is not shrunk",
			snap: fourGPUs().Job(st.Job(10).User("bob").GPUs(4).Nice(100).Running(now, "gpu01", 0, 1, 2, 3), st.Job(20).User("alice").GPUs(2)),
		},
		{
			name: "a job ahead of the waiting one in priority is not shrunk",
			snap: fourGPUs().Job(st.Job(10).User("bob").GPUs(4).Yieldable().Running(now, "gpu01", 0, 1, 2, 3), st.Job(20).User("alice").GPUs(2).Nice(100)),
		},
		{
			name: "no shrink when the waiting job would not fit beside one GPU",
			snap: fourGPUs().Job(wide(0, 1, 2, 3), st.Job(20).User("alice").GPUs(4)),
		},
		{
			name: "no shrink when the waiting job fits already",
			snap: fourGPUs().Job(wide(0, 1), st.Job(20).User("alice").GPUs(2)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.snap.Build()
			before := st.Clone(snap)
			got, ok := sched.ChooseShrink(snap, 20)
			if ok != tt.ok || got != tt.want {
				t.Errorf("ChooseShrink = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			if diff := cmp.Diff(before, snap); diff != "" {
				t.Errorf("ChooseShrink modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestCycleShrinksWhenEnabledAndBothResume(t *testing.T) {
	now := st.Epoch
	snap := fourGPUs().Configure(func(c *sched.Config) { c.Shrink = true }).Job(
		st.Job(10).User("bob").GPUs(4).Yieldable().Nice(100).Time(10*time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1, 2, 3),
		st.Job(20).User("alice").GPUs(2).Time(time.Hour),
	).Build()
	if plan := st.Cycle(t, fourGPUs().Job(st.Job(10).User("bob").GPUs(4).Yieldable().Nice(100).Running(now, "gpu01", 0, 1, 2, 3),
		st.Job(20).User("alice").GPUs(2)).Build()); len(plan.Shrinks) != 0 {
		t.Errorf("shrink without Config.Shrink: %+v", plan.Shrinks)
	}
	h := st.NewHarness(t, snap)
	first := h.Cycle()
	// At half its GPUs its 10-hour limit doubles.
	if diff := cmp.Diff([]sched.Shrink{{JobID: 10, FromGPUs: 4, ToGPUs: 2, For: 20, TimeLimit: 20 * time.Hour}}, first.Shrinks); diff != "" {
		t.Errorf("shrinks (-want +got):\n%s", diff)
	}
	second := h.Cycle()
	// The waiting job the shrink was for first (the shrunk job names it:
	// Job.YieldedFor, as the daemon and the simulator record it), then
	// the shrunk job, resumed ahead of ordinary work of its tier.
	if diff := cmp.Diff([]uint32{20, 10}, st.Started(second)); diff != "" {
		t.Errorf("second pass starts (-want +got):\n%s", diff)
	}
	if got := len(h.Job(10).Alloc.GPUs); got != 2 {
		t.Errorf("shrunk job runs on %d GPUs, want 2", got)
	}
}

// A job that cannot preempt its way in does not stop a later one of its
// tier that asks for fewer ports: the pass's memo of failed preemptions
// compares ports too (found by TestSearchMemosChangeNoAnswer: job 22
// needing 3 ports failed, and job 14 needing 2 was then never tried).
func TestAFailedPreemptionNeedingMorePortsSkipsNoOneNeedingFewer(t *testing.T) {
	now := st.Epoch
	snap := st.Anchor().Job(
		st.Job(10).User("root").GPUs(1).Running(now.Add(-time.Hour), "gpu01", 0).Ports(2).HoldsPorts(12000, 12001),
		st.Job(11).User("bob").Partition("scavenger").GPUs(3).Running(now.Add(-time.Hour), "gpu01", 1, 2, 3).Ports(1).HoldsPorts(12002),
		st.Job(20).User("alice").GPUs(1).Ports(3).Submitted(now.Add(-time.Minute)),
		st.Job(21).User("alice").GPUs(1).Ports(2),
	).Build()
	snap.Ports = sched.PortRange{Lo: 12000, Hi: 12003}
	plan := st.Cycle(t, snap)
	if diff := cmp.Diff([]sched.Preempt{{JobID: 11, For: 21}}, plan.Preempts); diff != "" {
		t.Errorf("preemptions (-want +got):\n%s", diff)
	}
}
