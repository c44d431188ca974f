package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// outcome is what the backfill tests compare: who starts, and for each
// pending job its reason and expected start (as an offset from now, -1 when
// unknown).
type outcome struct {
	Started []uint32
	Pending map[uint32]waitFor
}

type waitFor struct {
	Reason slurm.Reason
	In     time.Duration
}

func outcomeOf(p sched.Plan, now time.Time) outcome {
	o := outcome{Started: st.Started(p), Pending: map[uint32]waitFor{}}
	for _, d := range p.Pending {
		in := time.Duration(-1)
		if !d.ExpectedStart.IsZero() {
			in = d.ExpectedStart.Sub(now)
		}
		o.Pending[d.JobID] = waitFor{d.Reason, in}
	}
	return o
}

func fourGPUs() *st.SnapBuilder {
	return st.Snap().Node(st.Node("gpu01").GPUs(4, "a100", 80*st.GiB))
}

func TestBackfill(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	// running2 is a 2-GPU job with one hour left.
	running2 := func() *st.JobBuilder {
		return st.Job(1).User("root").GPUs(2).Time(2*h).Running(now.Add(-h), "gpu01", 0, 1)
	}
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want outcome
	}{
		{
			// The example: the 4-GPU job is reserved for when the
			// running job ends; a 30-minute job fits before that on a free
			// GPU, a 2-hour job would delay it.
			name: "a short job backfills before the top reservation, a long one does not",
			snap: fourGPUs().Job(running2(),
				st.Job(2).User("alice").GPUs(4).Time(h).Submitted(now.Add(-3*time.Minute)),
				st.Job(3).User("bob").GPUs(1).Time(30*time.Minute).Submitted(now.Add(-2*time.Minute)),
				st.Job(4).User("bob").GPUs(1).Time(2*h).Submitted(now.Add(-time.Minute))),
			want: outcome{Started: []uint32{3}, Pending: map[uint32]waitFor{
				2: {slurm.ReasonResources, h},
				4: {slurm.ReasonPriority, 2 * h},
			}},
		},
		{
			name: "FIFO (sched/builtin) starts nothing behind a blocked job",
			snap: fourGPUs().Configure(func(c *sched.Config) { c.SchedulerType = sched.SchedBuiltin }).Job(running2(),
				st.Job(2).User("alice").GPUs(4).Time(h).Submitted(now.Add(-3*time.Minute)),
				st.Job(3).User("bob").GPUs(1).Time(30*time.Minute).Submitted(now.Add(-2*time.Minute))),
			want: outcome{Pending: map[uint32]waitFor{
				2: {slurm.ReasonResources, h},
				3: {slurm.ReasonPriority, 2 * h}, // after job 2, which takes all four GPUs
			}},
		},
		{
			name: "a job that fits starts at once, whatever is pending behind it",
			snap: fourGPUs().Job(running2(), st.Job(2).GPUs(2).Time(h), st.Job(3).GPUs(2).Time(h)),
			want: outcome{Started: []uint32{2}, Pending: map[uint32]waitFor{3: {slurm.ReasonResources, h}}},
		},
		{
			name: "a reserved job may be backfilled on GPUs it does not need",
			snap: fourGPUs().Job(running2(),
				st.Job(2).GPUs(3).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1).Time(5*h)),
			// Job 2 takes GPUs 0, 1 and 2 at +1h, so job 3 runs on GPU 3.
			want: outcome{Started: []uint32{3}, Pending: map[uint32]waitFor{2: {slurm.ReasonResources, h}}},
		},
		{
			name: "a job without a time limit gets its partition's DefaultTime",
			snap: fourGPUs().Part(st.Part("gpu").Default().DefaultTime(20*time.Minute).MaxTime(10*h)).Job(running2(),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1)),
			want: outcome{Started: []uint32{3}, Pending: map[uint32]waitFor{2: {slurm.ReasonResources, h}}},
		},
		{
			name: "without DefaultTime the partition's MaxTime applies",
			snap: fourGPUs().Part(st.Part("gpu").Default().MaxTime(3*h)).Job(running2(),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1)),
			want: outcome{Pending: map[uint32]waitFor{2: {slurm.ReasonResources, h}, 3: {slurm.ReasonPriority, 2 * h}}},
		},
		{
			name: "with neither, an unlimited job never backfills before a reservation",
			snap: fourGPUs().Job(running2(),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1)),
			want: outcome{Pending: map[uint32]waitFor{2: {slurm.ReasonResources, h}, 3: {slurm.ReasonPriority, 2 * h}}},
		},
		{
			name: "behind a running job without a limit no start time is known",
			snap: fourGPUs().Job(
				st.Job(1).GPUs(4).Time(sched.Unlimited).Running(now.Add(-h), "gpu01", 0, 1, 2, 3),
				st.Job(2).GPUs(1).Time(h)),
			want: outcome{Pending: map[uint32]waitFor{2: {slurm.ReasonResources, -1}}},
		},
		{
			name: "a job expected beyond bf_window gets a start time but no reservation",
			snap: fourGPUs().Configure(func(c *sched.Config) { c.Backfill.Window = 30 * time.Minute }).Job(running2(),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1).Time(5*h)),
			want: outcome{Started: []uint32{3}, Pending: map[uint32]waitFor{2: {slurm.ReasonResources, h}}},
		},
		{
			name: "jobs past bf_max_job_test are not evaluated and wait with Priority",
			snap: fourGPUs().Configure(func(c *sched.Config) { c.Backfill.MaxJobTest = 2 }).Job(running2(),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-2*time.Minute)),
				st.Job(3).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(4).GPUs(1).Time(time.Minute)),
			want: outcome{Pending: map[uint32]waitFor{
				2: {slurm.ReasonResources, h},
				3: {slurm.ReasonPriority, 2 * h},
				4: {slurm.ReasonPriority, -1},
			}},
		},
		{
			name: "with 60 s bf_resolution a job ending 2 minutes before a reservation backfills",
			snap: fourGPUs().Job(
				st.Job(1).GPUs(2).Time(65*time.Minute).Running(now, "gpu01", 0, 1),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1).Time(63*time.Minute)),
			want: outcome{Started: []uint32{3}, Pending: map[uint32]waitFor{2: {slurm.ReasonResources, 65 * time.Minute}}},
		},
		{
			name: "a coarser bf_resolution widens the reservation and stops it",
			snap: fourGPUs().Configure(func(c *sched.Config) { c.Backfill.Resolution = 10 * time.Minute }).Job(
				st.Job(1).GPUs(2).Time(65*time.Minute).Running(now, "gpu01", 0, 1),
				st.Job(2).GPUs(4).Time(h).Submitted(now.Add(-time.Minute)),
				st.Job(3).GPUs(1).Time(63*time.Minute)),
			want: outcome{Pending: map[uint32]waitFor{2: {slurm.ReasonResources, 65 * time.Minute}, 3: {slurm.ReasonPriority, 130 * time.Minute}}},
		},
		{
			name: "a running job past its limit is expected to free its GPUs at once",
			snap: fourGPUs().Job(
				st.Job(1).GPUs(4).Time(h).Running(now.Add(-2*h), "gpu01", 0, 1, 2, 3),
				st.Job(2).GPUs(1).Time(h)),
			want: outcome{Pending: map[uint32]waitFor{2: {slurm.ReasonResources, time.Second}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(st.Cycle(t, tt.snap.Build()), now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackfilledStartsAreMarked(t *testing.T) {
	now := st.Epoch
	plan := st.Cycle(t, fourGPUs().Job(
		st.Job(1).GPUs(2).Time(2*time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1),
		st.Job(2).GPUs(1).Time(time.Hour).Submitted(now.Add(-2*time.Minute)),
		st.Job(3).GPUs(4).Time(time.Hour).Submitted(now.Add(-time.Minute)),
		st.Job(4).GPUs(1).Time(10*time.Minute)).Build())
	got := map[uint32]bool{}
	for _, s := range plan.Starts {
		got[s.JobID] = s.Backfilled
	}
	if diff := cmp.Diff(map[uint32]bool{2: false, 4: true}, got); diff != "" {
		t.Errorf("Backfilled by job (-want +got):\n%s", diff)
	}
}

func TestHarnessRunsTheReservedJobOnTime(t *testing.T) {
	now := st.Epoch
	h := st.NewHarness(t, fourGPUs().Job(
		st.Job(1).GPUs(2).Time(2*time.Hour).Running(now.Add(-time.Hour), "gpu01", 0, 1),
		st.Job(2).GPUs(4).Time(time.Hour).Submitted(now.Add(-3*time.Minute)),
		st.Job(3).GPUs(1).Time(30*time.Minute).Submitted(now.Add(-2*time.Minute)),
		st.Job(4).GPUs(1).Time(2*time.Hour).Submitted(now.Add(-time.Minute)),
	).Build())
	first := h.Cycle()
	d, _ := st.Decision(first, 2)
	h.Advance(time.Hour)
	second := h.Cycle()
	if diff := cmp.Diff([]uint32{2}, st.Started(second)); diff != "" {
		t.Errorf("at the reserved time (-want +got):\n%s", diff)
	}
	if !d.ExpectedStart.Equal(h.Snap.Now) {
		t.Errorf("job 2 expected at %v, started at %v", d.ExpectedStart, h.Snap.Now)
	}
	h.Advance(time.Hour)
	if diff := cmp.Diff([]uint32{4}, st.Started(h.Cycle())); diff != "" {
		t.Errorf("after job 2 (-want +got):\n%s", diff)
	}
}
