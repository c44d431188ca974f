package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

func TestShrinkPayback(t *testing.T) {
	now := st.Epoch
	// Job 10 holds all four GPUs with `left` of its limit to go; job 20
	// needs one GPU for an hour and would otherwise start when job 10
	// ends. Shrinking 10 to 3 GPUs costs it left/3 and saves job 20 left:
	// it pays back, so the shrink is made with or without the check. At 3
	// of its 4 GPUs its 3-hour limit becomes 4 hours.
	tests := []struct {
		name    string
		left    time.Duration
		payback bool
		want    []sched.Shrink
	}{
		{"without payback a shrink is made", 2 * time.Hour, false, []sched.Shrink{{JobID: 10, FromGPUs: 4, ToGPUs: 3, For: 20, TimeLimit: 4 * time.Hour}}},
		{"with payback, a shrink that saves more than it costs is made", 2 * time.Hour, true, []sched.Shrink{{JobID: 10, FromGPUs: 4, ToGPUs: 3, For: 20, TimeLimit: 4 * time.Hour}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := fourGPUs().Configure(func(c *sched.Config) { c.Shrink, c.ShrinkPayback = true, tc.payback }).Job(
				st.Job(10).User("bob").GPUs(4).Yieldable().Nice(100).Time(tc.left+time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Time(time.Hour)).Build()
			plan := st.Cycle(t, snap)
			if diff := cmp.Diff(tc.want, plan.Shrinks); diff != "" {
				t.Errorf("shrinks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShrinkPaybackRefuses: job 10 (4 GPUs, 10 h left) could keep 2 GPUs
// for job 20 (2 GPUs), at a cost of 10 h × 2 / 2 = 10 h to itself; job 20
// would otherwise start in 1 h, when job 11 ends. Without payback the
// shrink is made, with it not.
func TestShrinkPaybackRefuses(t *testing.T) {
	now := st.Epoch
	for _, payback := range []bool{false, true} {
		snap := st.Snap().Node(st.Node("gpu01").GPUs(6, "a100", 80*st.GiB)).
			Configure(func(c *sched.Config) { c.Shrink, c.ShrinkPayback = true, payback }).Job(
			st.Job(10).User("bob").GPUs(4).Yieldable().Nice(100).Time(11*time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1, 2, 3),
			st.Job(11).User("carol").GPUs(2).Time(2*time.Hour).Running(now.Add(-time.Hour), "gpu01", 4, 5),
			st.Job(20).User("alice").GPUs(2).Time(time.Hour)).Build()
		plan := st.Cycle(t, snap)
		if got := len(plan.Shrinks) > 0; got == payback {
			t.Errorf("payback %v: shrinks %+v", payback, plan.Shrinks)
		}
	}
}

// TestShrinkTries: by default only the first blocked job of a pass may
// shrink; with ShrinkTries 2 the second may too.
func TestShrinkTries(t *testing.T) {
	now := st.Epoch
	for _, tc := range []struct {
		tries int
		want  []sched.Shrink
	}{
		{0, []sched.Shrink{{JobID: 10, FromGPUs: 4, ToGPUs: 3, For: 20, TimeLimit: 4 * time.Hour}}},
		{2, []sched.Shrink{{JobID: 10, FromGPUs: 4, ToGPUs: 3, For: 20, TimeLimit: 4 * time.Hour}, {JobID: 11, FromGPUs: 4, ToGPUs: 3, For: 21, TimeLimit: 4 * time.Hour}}},
	} {
		snap := st.Snap().Node(st.Node("gpu01").GPUs(8, "a100", 80*st.GiB)).
			Configure(func(c *sched.Config) { c.Shrink, c.ShrinkTries = true, tc.tries }).Job(
			st.Job(10).User("bob").GPUs(4).Yieldable().Nice(100).Time(3*time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1, 2, 3),
			st.Job(11).User("bob").GPUs(4).Yieldable().Nice(100).Time(3*time.Hour).Running(now.Add(-2*time.Hour), "gpu01", 4, 5, 6, 7),
			st.Job(20).User("alice").GPUs(1).Time(time.Hour).Submitted(now.Add(-time.Minute)),
			st.Job(21).User("alice").GPUs(1).Time(time.Hour)).Build()
		plan := st.Cycle(t, snap)
		if diff := cmp.Diff(tc.want, plan.Shrinks); diff != "" {
			t.Errorf("ShrinkTries %d: shrinks (-want +got):\n%s", tc.tries, diff)
		}
	}
}

// TestAShrunkJobsLimitStretches: a shrunk job works FromGPUs/ToGPUs as
// long, so its limit grows by that (rounded up to the second), as far as
// its partition's MaxTime (a longer one would leave it pending with
// PartitionTimeLimit); a job without a limit keeps none.
func TestAShrunkJobsLimitStretches(t *testing.T) {
	now := st.Epoch
	for _, tc := range []struct {
		name    string
		maxTime time.Duration
		limit   time.Duration
		want    time.Duration
	}{
		{"4 GPUs to 3: a third longer, to the second", 0, 100*time.Minute + 1*time.Second, 133*time.Minute + 22*time.Second},
		{"as far as the partition's MaxTime", 2 * time.Hour, 100 * time.Minute, 2 * time.Hour},
		{"no limit stays none", 0, sched.Unlimited, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := fourGPUs().Part(st.Part("gpu").Default().MaxTime(tc.maxTime)).
				Configure(func(c *sched.Config) { c.Shrink = true }).Job(
				st.Job(10).User("bob").GPUs(4).Yieldable().Nice(100).Time(tc.limit).Running(now.Add(-time.Minute), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Time(time.Hour)).Build()
			plan := st.Cycle(t, snap)
			if len(plan.Shrinks) != 1 || plan.Shrinks[0].TimeLimit != tc.want {
				t.Errorf("shrinks %+v, want one to 3 GPUs with TimeLimit %s", plan.Shrinks, tc.want)
			}
		})
	}
}
