package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

func TestPrioritiesMatchGoldenSprio(t *testing.T) {
	// sprio_l.txt: jobs 27, 28 and 31 of alice, bob and root, no usage yet:
	// FAIRSHARE 10000 + PARTITION 1000, AGE 0, PRIORITY 11000. Jobs 29
	// (dependency) and 30 (held) are not listed.
	snap := st.Anchor().Job(
		st.Job(26).User("root").GPUs(4).Running(st.Epoch, "gpu01", 0, 1, 2, 3),
		st.Job(27).User("alice").GPUs(1),
		st.Job(28).User("bob").GPUs(1),
		st.Job(29).User("root").AfterOK(26),
		st.Job(30).User("root").Hold(),
		st.Job(31).User("root").Task(31, 0, 0),
	).Build()
	want := []sched.PriorityRow{
		{JobID: 27, Partition: "gpu", User: "alice", Priority: 11000, FairShare: 10000, PartitionPrio: 1000},
		{JobID: 28, Partition: "gpu", User: "bob", Priority: 11000, FairShare: 10000, PartitionPrio: 1000},
		{JobID: 31, Partition: "gpu", User: "root", Priority: 11000, FairShare: 10000, PartitionPrio: 1000},
	}
	if diff := cmp.Diff(want, sched.Priorities(snap)); diff != "" {
		t.Errorf("Priorities (-want +got):\n%s", diff)
	}
}

func TestPriorityFactors(t *testing.T) {
	day := 24 * time.Hour
	weights := func(w sched.Weights) func(*sched.Config) {
		return func(c *sched.Config) { c.Weights = w }
	}
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want sched.PriorityRow // JobID 1's row; Partition and User filled in
	}{
		{
			name: "age is wait over PriorityMaxAge, counted from eligibility",
			snap: st.Snap().Configure(weights(sched.Weights{Age: 1000})).
				Job(st.Job(1).Submitted(st.Epoch.Add(-7 * day)).Eligible(st.Epoch.Add(-3*day - 12*time.Hour))),
			want: sched.PriorityRow{Priority: 500, Age: 500},
		},
		{
			name: "age stops at 1 after PriorityMaxAge",
			snap: st.Snap().Configure(weights(sched.Weights{Age: 1000})).
				Job(st.Job(1).Submitted(st.Epoch.Add(-30 * day))),
			want: sched.PriorityRow{Priority: 1000, Age: 1000},
		},
		{
			name: "age counts from --begin when that came later",
			snap: st.Snap().Configure(weights(sched.Weights{Age: 700})).
				Job(st.Job(1).Submitted(st.Epoch.Add(-6 * day)).Begin(st.Epoch.Add(-day))),
			want: sched.PriorityRow{Priority: 100, Age: 100},
		},
		{
			name: "the partition factor is normalised by the largest PriorityJobFactor",
			snap: st.Snap().Configure(weights(sched.Weights{Partition: 1000})).
				Part(st.Part("low").Default().JobFactor(1), st.Part("high").JobFactor(4)).
				Job(st.Job(1)),
			want: sched.PriorityRow{Priority: 250, PartitionPrio: 250},
		},
		{
			name: "the QOS factor is normalised by the largest QOS priority",
			snap: st.Snap().Configure(weights(sched.Weights{QOS: 1000})).
				QOS(sched.QOS{Name: "normal", Priority: 10, UsageFactor: 1}, sched.QOS{Name: "high", Priority: 40, UsageFactor: 1}).
				Job(st.Job(1).QOS("normal")),
			want: sched.PriorityRow{Priority: 250, QOSPrio: 250},
		},
		{
			name: "job size favours large jobs: the mean of node and CPU fractions",
			snap: st.Snap().Configure(weights(sched.Weights{JobSize: 1000})).
				Node(st.Node("n").CPUs(16)).Job(st.Job(1).CPUs(8)),
			want: sched.PriorityRow{Priority: 750, JobSize: 750},
		},
		{
			name: "job size with PriorityFavorSmall favours what a job leaves free",
			snap: st.Snap().Configure(func(c *sched.Config) {
				c.Weights = sched.Weights{JobSize: 1000}
				c.FavorSmall = true
			}).Node(st.Node("n").CPUs(16)).Job(st.Job(1).CPUs(4)),
			want: sched.PriorityRow{Priority: 375, JobSize: 375},
		},
		{
			name: "nice is subtracted",
			snap: st.Snap().Configure(weights(sched.Weights{FairShare: 1000})).Job(st.Job(1).Nice(100)),
			want: sched.PriorityRow{Priority: 900, FairShare: 1000, Nice: 100},
		},
		{
			name: "priority never drops below 1 (0 is for held jobs)",
			snap: st.Snap().Configure(weights(sched.Weights{FairShare: 1000})).Job(st.Job(1).Nice(5000)),
			want: sched.PriorityRow{Priority: 1, FairShare: 1000, Nice: 5000},
		},
		{
			name: "fair share weighs the user's Fair Tree factor",
			snap: st.Snap().Configure(weights(sched.Weights{FairShare: 10000})).
				Account("a", "", 1, st.U("user", 1), st.U("other", 1)).Usage("a", "user", 10).
				Job(st.Job(1)),
			want: sched.PriorityRow{Priority: 5000, FairShare: 5000},
		},
		{
			name: "priority/basic orders by submission: the lower id, the higher",
			snap: st.Snap().Configure(func(c *sched.Config) { c.PriorityType = sched.PriorityBasic }).Job(st.Job(1)),
			want: sched.PriorityRow{Priority: 0xffff0000 - 1},
		},
		{
			name: "a fixed priority replaces the computed one",
			snap: st.Snap().Job(st.Job(1).Priority(42)),
			want: sched.PriorityRow{Priority: 42},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.snap.Build()
			before := st.Clone(snap)
			rows := sched.Priorities(snap)
			if diff := cmp.Diff(before, snap); diff != "" {
				t.Errorf("Priorities modified its input (-before +after):\n%s", diff)
			}
			if len(rows) != 1 {
				t.Fatalf("Priorities returned %d rows, want 1: %+v", len(rows), rows)
			}
			want := tt.want
			want.JobID, want.User = 1, "user"
			want.Partition = rows[0].Partition
			if diff := cmp.Diff(want, rows[0], sixDecimals); diff != "" {
				t.Errorf("priority row (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchedulingOrder(t *testing.T) {
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want []uint32 // order of the plan's pending decisions
	}{
		{
			name: "a higher PriorityTier goes first whatever the priority",
			snap: st.Snap().Part(st.Part("low").Default().Tier(1), st.Part("high").Tier(2)).
				Job(st.Job(1).Priority(1000), st.Job(2).Partition("high").Priority(10)),
			want: []uint32{2, 1},
		},
		{
			name: "a job resuming after a yield goes before ordinary work of its tier",
			snap: st.Snap().Job(st.Job(1).Priority(1000), st.Job(2).Priority(10).Resumed()),
			want: []uint32{2, 1},
		},
		{
			name: "then priority, higher first",
			snap: st.Snap().Job(st.Job(1).Priority(10), st.Job(2).Priority(1000)),
			want: []uint32{2, 1},
		},
		{
			name: "then submit time, earlier first",
			snap: st.Snap().Job(st.Job(1).Priority(10).Submitted(st.Epoch), st.Job(2).Priority(10).Submitted(st.Epoch.Add(-time.Minute))),
			want: []uint32{2, 1},
		},
		{
			name: "then job id",
			snap: st.Snap().Job(st.Job(3).Priority(10), st.Job(2).Priority(10)),
			want: []uint32{2, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No node: every job waits, in order.
			plan := st.Cycle(t, tt.snap.Build())
			var got []uint32
			for _, d := range plan.Pending {
				got = append(got, d.JobID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeldJobsShowPriorityZero(t *testing.T) {
	plan := st.Cycle(t, st.Anchor().Job(st.Job(30).User("root").Hold()).Build())
	d, _ := st.Decision(plan, 30)
	if d.Priority != 0 {
		t.Errorf("held job priority = %d, want 0 (scontrol_show_job_held.txt)", d.Priority)
	}
}
