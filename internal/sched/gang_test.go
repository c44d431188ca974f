package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

// lab is three nodes of two GPUs each, with the anchor's partitions.
func lab() *st.SnapBuilder {
	return st.Snap().
		Node(st.Node("n1").CPUs(8).GPUs(2, "a100", 80*st.GiB),
			st.Node("n2").CPUs(8).GPUs(2, "a100", 80*st.GiB),
			st.Node("n3").CPUs(8).GPUs(2, "a100", 80*st.GiB)).
		Part(st.Part("gpu").Default().Tier(1), st.Part("scavenger").Tier(0).Requeue())
}

// nodesOf lists the nodes of an allocation, first node first.
func nodesOf(a sched.Alloc) []string {
	out := []string{a.Node}
	for _, m := range a.More {
		out = append(out, m.Node)
	}
	return out
}

func TestGangJobs(t *testing.T) {
	now := st.Epoch
	tests := []struct {
		name      string
		snap      *st.SnapBuilder
		wantStart map[uint32][]string
		wantPre   []sched.Preempt
		// wantExpected is the expected start of job 20 when it waits.
		wantExpected time.Time
	}{
		{
			name:      "a job larger than a node takes whole nodes, the first ones free",
			snap:      lab().Job(st.Job(20).User("a").GPUs(4).Time(time.Hour)),
			wantStart: map[uint32][]string{20: {"n1", "n2"}},
		},
		{
			name: "a busy node is skipped",
			snap: lab().Job(
				st.Job(10).User("a").GPUs(1).Time(time.Hour).Running(now, "n1", 0),
				st.Job(20).User("a").GPUs(3).Time(time.Hour)),
			wantStart: map[uint32][]string{20: {"n2", "n3"}},
		},
		{
			name: "without enough whole nodes it waits for the earliest time enough are free",
			snap: lab().Job(
				st.Job(10).User("a").GPUs(1).Time(time.Hour).Running(now, "n1", 0),
				st.Job(11).User("a").GPUs(1).Time(2*time.Hour).Running(now, "n2", 0),
				st.Job(20).User("a").GPUs(6).Time(time.Hour)),
			wantStart:    map[uint32][]string{},
			wantExpected: now.Add(2 * time.Hour),
		},
		{
			name: "backfill starts a short job beside the reservation but not a long one",
			snap: lab().Job(
				st.Job(10).User("a").GPUs(1).Time(time.Hour).Running(now, "n1", 0),
				st.Job(20).User("a").GPUs(6).Time(time.Hour).Submitted(now.Add(-time.Hour)),
				st.Job(21).User("b").GPUs(1).Time(3*time.Hour).Submitted(now.Add(-time.Minute)),
				st.Job(22).User("b").GPUs(1).Time(30*time.Minute)),
			wantStart:    map[uint32][]string{22: {"n1"}},
			wantExpected: now.Add(time.Hour),
		},
		{
			name: "a gang preempts lower-tier jobs on the nodes with the fewest of them",
			snap: lab().Job(
				st.Job(10).User("s").Partition("scavenger").GPUs(1).Time(time.Hour).Running(now, "n1", 0),
				st.Job(11).User("s").Partition("scavenger").GPUs(1).Time(time.Hour).Running(now, "n1", 1),
				st.Job(12).User("s").Partition("scavenger").GPUs(1).Time(time.Hour).Running(now, "n2", 0),
				st.Job(20).User("a").GPUs(4).Time(time.Hour)),
			wantStart: map[uint32][]string{},
			wantPre:   []sched.Preempt{{JobID: 12, For: 20}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := st.Cycle(t, tc.snap.Build())
			got := map[uint32][]string{}
			for _, s := range plan.Starts {
				got[s.JobID] = nodesOf(s.Alloc)
				if n := len(s.Alloc.GPUs); len(s.Alloc.More) > 0 && n != 2 {
					t.Errorf("job %d holds %d GPUs on its first node, want the whole node", s.JobID, n)
				}
			}
			want := tc.wantStart
			if want == nil {
				want = map[uint32][]string{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("starts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPre, plan.Preempts); diff != "" {
				t.Errorf("preemptions (-want +got):\n%s", diff)
			}
			for _, d := range plan.Pending {
				if d.JobID == 20 && !tc.wantExpected.IsZero() && !d.ExpectedStart.Equal(tc.wantExpected) {
					t.Errorf("job 20 expected at %v, want %v", d.ExpectedStart, tc.wantExpected)
				}
			}
		})
	}
}

// TestGangRunningHoldsEveryNode: a running gang holds all its nodes, so a
// job that needs a whole node waits until the gang ends.
func TestGangRunningHoldsEveryNode(t *testing.T) {
	now := st.Epoch
	gang := st.Job(10).User("a").GPUs(4).Time(time.Hour).Running(now, "n1", 0, 1).Build()
	gang.Alloc.More = []sched.Alloc{{Node: "n2", GPUs: []sched.GPUAlloc{{UUID: st.UUID("n2", 0)}, {UUID: st.UUID("n2", 1), Index: 1}}}}
	snap := lab().Job(st.Job(20).User("b").GPUs(2).Time(time.Hour), st.Job(21).User("b").GPUs(2).Time(time.Hour)).Build()
	snap.Jobs = append(snap.Jobs, gang)
	plan := st.Cycle(t, snap)
	var started []string
	for _, s := range plan.Starts {
		started = append(started, s.Alloc.Node)
	}
	if diff := cmp.Diff([]string{"n3"}, started); diff != "" {
		t.Errorf("nodes of started jobs (-want +got):\n%s", diff)
	}
}
