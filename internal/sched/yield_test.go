package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

// yieldOn turns YieldPayback on with a YieldCost of 12 minutes (a stop and
// a restart of a minute each and a 10-minute checkpoint interval).
func yieldOn(own bool) func(*sched.Config) {
	return func(c *sched.Config) {
		c.YieldPayback, c.YieldOwn, c.YieldCost = true, own, 12*time.Minute
	}
}

// TestYieldPayback: hand-worked decisions of Config.YieldPayback on one
// node of four GPUs, all busy. The waiting job would otherwise start when
// the running jobs' limits end (W); each stopped job is delayed by the
// waiting job's limit plus 12 minutes; the yield is made only when W is
// larger than the sum.
func TestYieldPayback(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	tests := []struct {
		name string
		cfg  func(*sched.Config)
		jobs []*st.JobBuilder
		want []sched.Preempt
	}{
		{
			// W = 9 h; delay 30 m + 12 m = 42 m.
			name: "a short job stops a lower-priority yieldable job when its wait is longer than the delay",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
			want: []sched.Preempt{{JobID: 10, For: 20}},
		},
		{
			name: "without YieldPayback nothing is stopped",
			cfg:  func(*sched.Config) {},
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
		},
		{
			// W = 9 h is not longer than the 10 h limit.
			name: "a job whose limit is longer than its wait stops nobody",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(10 * h),
			},
		},
		{
			// The daemon passes after every event: a pass right after a
			// hand-over must not stop the job it just started.
			name: "a job that started this second is not stopped",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Yieldable().Priority(100).Time(10*h).Running(now, "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
		},
		{
			name: "a job that is not yieldable is not stopped",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Priority(100).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
		},
		{
			name: "a job of higher priority is not stopped",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Yieldable().Priority(300).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
		},
		{
			name: "with YieldOwn the same user's job of higher priority is stopped",
			cfg:  yieldOn(true),
			jobs: []*st.JobBuilder{
				st.Job(10).User("alice").GPUs(4).Yieldable().Priority(300).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
			want: []sched.Preempt{{JobID: 10, For: 20}},
		},
		{
			name: "with YieldOwn another user's job of higher priority is still not stopped",
			cfg:  yieldOn(true),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(4).Yieldable().Priority(300).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute),
			},
		},
		{
			// Both end in 1 h: W = 60 m; two stops cost 2 × (15 m + 12 m)
			// = 54 m.
			name: "a job that needs two victims stops both when the sum of their delays is below its wait",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(2).Yieldable().Priority(100).Time(2*h).Running(now.Add(-h), "gpu01", 0, 1),
				st.Job(11).User("bob").GPUs(2).Yieldable().Priority(100).Time(2*h).Running(now.Add(-h), "gpu01", 2, 3),
				st.Job(20).User("alice").GPUs(4).Priority(200).Time(15 * time.Minute),
			},
			want: []sched.Preempt{{JobID: 11, For: 20}, {JobID: 10, For: 20}},
		},
		{
			// W = 60 m; 2 × (20 m + 12 m) = 64 m.
			name: "and none when the sum is longer",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(2).Yieldable().Priority(100).Time(2*h).Running(now.Add(-h), "gpu01", 0, 1),
				st.Job(11).User("bob").GPUs(2).Yieldable().Priority(100).Time(2*h).Running(now.Add(-h), "gpu01", 2, 3),
				st.Job(20).User("alice").GPUs(4).Priority(200).Time(20 * time.Minute),
			},
		},
		{
			// Job 11 ends in 2 h, job 10 in 9 h: stopping 11 alone frees
			// two GPUs, enough; W = 2 h, the delay 42 m.
			name: "of several victims that would do, one is enough",
			cfg:  yieldOn(false),
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(2).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "gpu01", 0, 1),
				st.Job(11).User("bob").GPUs(2).Yieldable().Priority(100).Time(3*h).Running(now.Add(-h), "gpu01", 2, 3),
				st.Job(20).User("alice").GPUs(2).Priority(200).Time(30 * time.Minute),
			},
			want: []sched.Preempt{{JobID: 11, For: 20}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := fourGPUs().Configure(tc.cfg).Job(tc.jobs...).Build()
			plan := st.Cycle(t, snap)
			if diff := cmp.Diff(tc.want, plan.Preempts); diff != "" {
				t.Errorf("preempts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestYieldLowerTier: a job of a higher PriorityTier may stop a yieldable
// job of a lower tier that is not REQUEUE, whatever their priorities,
// when it pays back; with the tiers the other way round it may not.
func TestYieldLowerTier(t *testing.T) {
	now := st.Epoch
	for _, tc := range []struct {
		name          string
		running, wait string
		want          []sched.Preempt
	}{
		{"the short tier stops a main-tier job", "gpu", "short", []sched.Preempt{{JobID: 10, For: 20}}},
		{"the main tier does not stop a short-tier job", "short", "gpu", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := fourGPUs().Configure(yieldOn(false)).
				Part(st.Part("gpu").Default().Tier(1), st.Part("short").Tier(2)).Job(
				st.Job(10).User("bob").Partition(tc.running).GPUs(4).Yieldable().Priority(300).Time(10*time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1, 2, 3),
				st.Job(20).User("alice").Partition(tc.wait).GPUs(1).Priority(200).Time(30*time.Minute)).Build()
			plan := st.Cycle(t, snap)
			if diff := cmp.Diff(tc.want, plan.Preempts); diff != "" {
				t.Errorf("preempts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestYieldScavengerPeers: the jobs of a REQUEUE partition are stopped by
// higher tiers only. A waiting scavenger job of higher priority (it waited
// longer) does not stop its running peers under YieldPayback: with a full
// scavenger partition, every pass would otherwise stop and restart it.
func TestYieldScavengerPeers(t *testing.T) {
	now := st.Epoch
	for _, tc := range []struct {
		name, wait string
		want       []sched.Preempt
	}{
		{"a waiting scavenger job stops none of its peers", "scavenger", nil},
		{"a waiting job of the main tier preempts one", "gpu", []sched.Preempt{{JobID: 13, For: 20}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var jobs []*st.JobBuilder
			for g := range 4 {
				jobs = append(jobs, st.Job(uint32(10+g)).User("bob").Partition("scavenger").GPUs(1).Priority(100).
					Time(10*time.Hour).Running(now.Add(-time.Duration(40-g)*time.Minute), "gpu01", g))
			}
			jobs = append(jobs, st.Job(20).User("alice").Partition(tc.wait).GPUs(1).Priority(500).Time(30*time.Minute))
			snap := fourGPUs().Configure(yieldOn(false)).
				Part(st.Part("gpu").Default().Tier(1), st.Part("scavenger").Tier(0).Requeue()).Job(jobs...).Build()
			plan := st.Cycle(t, snap)
			if diff := cmp.Diff(tc.want, plan.Preempts); diff != "" {
				t.Errorf("preempts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestYieldGang: a job larger than a node stops the yieldable jobs of as
// many whole nodes as it needs, the nodes with the fewest costly victims
// first: n2 holds one job, n1 and n3 two each.
func TestYieldGang(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	node := func(name string) *st.NodeBuilder { return st.Node(name).CPUs(8).GPUs(2, "a100", 80*st.GiB) }
	snap := st.Snap().Node(node("n1"), node("n2"), node("n3")).Configure(yieldOn(false)).Job(
		st.Job(10).User("bob").GPUs(1).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "n1", 0),
		st.Job(11).User("bob").GPUs(1).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "n1", 1),
		st.Job(12).User("bob").GPUs(2).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "n2", 0, 1),
		st.Job(13).User("bob").GPUs(1).Yieldable().Priority(100).Time(10*h).Running(now.Add(-h), "n3", 0),
		st.Job(14).User("bob").GPUs(1).Yieldable().Priority(100).Time(11*h).Running(now.Add(-h), "n3", 1),
		st.Job(20).User("alice").GPUs(4).Priority(200).Time(30*time.Minute)).Build()
	plan := st.Cycle(t, snap)
	// Cost: n2 one victim, then n1 (first of the two with two victims):
	// 3 × 42 m, well below the 9 h wait. Per node in node order, victims
	// most recently started first, then by higher id.
	want := []sched.Preempt{{JobID: 11, For: 20}, {JobID: 10, For: 20}, {JobID: 12, For: 20}}
	if diff := cmp.Diff(want, plan.Preempts); diff != "" {
		t.Errorf("preempts (-want +got):\n%s", diff)
	}
}

// TestYieldedForGoesFirst: a job requeued by a yield does not take back
// the GPUs it gave up while the job it yielded for still waits; once
// that one has started (YieldedFor cleared), it is first again, as any
// resumed job.
func TestYieldedForGoesFirst(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yielded *st.JobBuilder
		want    uint32
	}{
		{"the job yielded for starts", st.Job(10).User("bob").GPUs(4).Priority(300).Time(10 * time.Hour).YieldedFor(20), 20},
		{"a resumed job without it starts", st.Job(10).User("bob").GPUs(4).Priority(300).Time(10 * time.Hour).Resumed(), 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := fourGPUs().Job(tc.yielded, st.Job(20).User("alice").GPUs(4).Priority(200).Time(30*time.Minute)).Build()
			plan := st.Cycle(t, snap)
			var got []uint32
			for _, s := range plan.Starts {
				got = append(got, s.JobID)
			}
			if diff := cmp.Diff([]uint32{tc.want}, got); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShrinkRegrow: job 10, shrunk from 4 GPUs to 2, runs on GPUs 0-1
// with a limit of 10 h, 1 h gone; GPUs 2-3 are free. At 4 GPUs its 9 h
// left take 4.5 h: it saves 4.5 h against a 12-minute YieldCost, and its
// limit at full size, 5 h, fits on the free GPUs: it grows back. Pending
// work is placed first.
func TestShrinkRegrow(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	regrow := func(c *sched.Config) { c.ShrinkRegrow, c.YieldCost = true, 12*time.Minute }
	tests := []struct {
		name  string
		cfg   func(*sched.Config)
		jobs  []*st.JobBuilder
		grows []sched.Shrink
		start []uint32
	}{
		{
			name: "a shrunk job gets its GPUs back when they are free",
			cfg:  regrow,
			jobs: []*st.JobBuilder{st.Job(10).User("bob").GPUs(2).Shrunk(4).Yieldable().Time(10*h).Running(now.Add(-h), "gpu01", 0, 1)},
			// Its 10-hour limit on 2 GPUs is 5 hours on 4.
			grows: []sched.Shrink{{JobID: 10, FromGPUs: 2, ToGPUs: 4, TimeLimit: 5 * time.Hour}},
		},
		{
			name: "not without ShrinkRegrow",
			cfg:  func(c *sched.Config) { c.YieldCost = 12 * time.Minute },
			jobs: []*st.JobBuilder{st.Job(10).User("bob").GPUs(2).Shrunk(4).Yieldable().Time(10*h).Running(now.Add(-h), "gpu01", 0, 1)},
		},
		{
			// 20 m left: 20 m × 2 ÷ 4 = 10 m saved, less than 12 m.
			name: "not when what it saves does not pay for the stop",
			cfg:  regrow,
			jobs: []*st.JobBuilder{st.Job(10).User("bob").GPUs(2).Shrunk(4).Yieldable().Time(h+20*time.Minute).Running(now.Add(-h), "gpu01", 0, 1)},
		},
		{
			name: "not when a pending job takes one of the free GPUs",
			cfg:  regrow,
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(2).Shrunk(4).Yieldable().Time(10*h).Running(now.Add(-h), "gpu01", 0, 1),
				st.Job(20).User("alice").GPUs(1).Time(h),
			},
			start: []uint32{20},
		},
		{
			// Job 20 needs 3 GPUs and is reserved from job 11's end in
			// 2 h on GPUs 2, 3 and 1... within job 10's 5 h at full size.
			name: "not when the free GPUs are promised to a waiting job within its limit",
			cfg:  regrow,
			jobs: []*st.JobBuilder{
				st.Job(10).User("bob").GPUs(1).Shrunk(2).Yieldable().Time(10*h).Running(now.Add(-h), "gpu01", 0),
				st.Job(11).User("carol").GPUs(1).Time(3*h).Running(now.Add(-h), "gpu01", 1),
				st.Job(20).User("alice").GPUs(3).Time(h),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := st.Cycle(t, fourGPUs().Configure(tc.cfg).Job(tc.jobs...).Build())
			if diff := cmp.Diff(tc.grows, plan.Grows); diff != "" {
				t.Errorf("grows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.start, st.Started(plan)); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
		})
	}
}
