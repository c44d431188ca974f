package sched_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

func TestBilling(t *testing.T) {
	now := st.Epoch
	tests := []struct {
		name string
		snap *st.SnapBuilder
		job  *st.JobBuilder
		want float64
	}{
		{
			name: "by default a GPU counts 1, so four GPUs bill four",
			snap: fourGPUs(), job: st.Job(1).GPUs(4).CPUs(8).Running(now, "gpu01", 0, 1, 2, 3),
			want: 4,
		},
		{
			name: "a shared GPU bills the fraction of its memory reserved",
			snap: fourGPUs(), job: st.Job(1).GPUMem(20*st.GiB).Running(now, "gpu01").Sharing(0, 20*st.GiB, 0),
			want: 0.25,
		},
		{
			name: "a pending memory job bills by the largest matching GPU",
			snap: fourGPUs(), job: st.Job(1).GPUMem(40 * st.GiB),
			want: 0.5,
		},
		{
			name: "a CPU-only job is free by default",
			snap: fourGPUs(), job: st.Job(1).CPUs(8),
			want: 0,
		},
		{
			name: "TRESBillingWeights sum CPU, memory and GPU",
			snap: fourGPUs().Part(st.Part("gpu").Default().Billing(sched.TRESWeights{CPU: 1, MemGiB: 0.25, GPU: 10})),
			job:  st.Job(1).CPUs(2).Mem(8 * st.GiB).GPUs(1),
			want: 2 + 2 + 10,
		},
		{
			name: "MAX_TRES takes the largest weighted TRES",
			snap: fourGPUs().Configure(func(c *sched.Config) { c.Flags |= sched.FlagMaxTRES }).
				Part(st.Part("gpu").Default().Billing(sched.TRESWeights{CPU: 1, MemGiB: 0.25, GPU: 10})),
			job:  st.Job(1).CPUs(2).Mem(8 * st.GiB).GPUs(1),
			want: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sched.Billing(tt.job.Build(), tt.snap.Build()); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Billing = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChargeAppliesUsageFactor(t *testing.T) {
	snap := fourGPUs().QOS(st.QOS("normal"), sched.QOS{Name: "filler", UsageFactor: 0}, sched.QOS{Name: "half", UsageFactor: 0.5}).Build()
	job := st.Job(1).GPUs(4).Running(st.Epoch, "gpu01", 0, 1, 2, 3)
	for _, tc := range []struct {
		qos  string
		want float64
	}{{"normal", 4 * 3600}, {"filler", 0}, {"half", 2 * 3600}} {
		if got := sched.Charge(job.QOS(tc.qos).Build(), snap, time.Hour); got != tc.want {
			t.Errorf("Charge in QOS %s = %v, want %v", tc.qos, got, tc.want)
		}
	}
}

func TestAdvanceUsage(t *testing.T) {
	now := st.Epoch
	// carol's filler work accrues nothing, so she gets no record.
	snap := fourGPUs().
		Configure(func(c *sched.Config) { c.DecayHalfLife = 0 }).
		QOS(st.QOS("normal"), sched.QOS{Name: "filler", UsageFactor: 0}).
		Usage("root", "alice", 100).
		Job(
			st.Job(1).User("alice").QOS("normal").GPUs(2).Running(now.Add(-time.Hour), "gpu01", 0, 1),
			st.Job(2).User("bob").QOS("normal").GPUs(1).Running(now.Add(30*time.Minute), "gpu01", 2),
			st.Job(3).User("carol").QOS("filler").GPUs(1).Running(now, "gpu01", 3),
		).Build()
	before := st.Clone(snap)
	got := sched.AdvanceUsage(snap, now.Add(time.Hour))
	if diff := cmp.Diff(before, snap); diff != "" {
		t.Errorf("AdvanceUsage modified its input (-before +after):\n%s", diff)
	}
	want := []sched.Usage{
		{Account: "root", User: "alice", Raw: 100 + 2*3600, AsOf: now.Add(time.Hour)},
		{Account: "root", User: "bob", Raw: 1800, AsOf: now.Add(time.Hour)},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("AdvanceUsage (-want +got):\n%s", diff)
	}
}

func TestAdvanceUsageDecaysWhatItCharges(t *testing.T) {
	// With a one-hour half-life, an hour of one GPU accrues
	// ∫ 2^(-s/1h) ds over the hour = 3600/ln 2 × (1 - 1/2) seconds.
	now := st.Epoch
	snap := fourGPUs().Configure(func(c *sched.Config) { c.DecayHalfLife = time.Hour }).
		Usage("root", "alice", 1000).
		Job(st.Job(1).User("alice").GPUs(1).Running(now, "gpu01", 0)).Build()
	got := sched.AdvanceUsage(snap, now.Add(time.Hour))
	want := 500 + 3600/math.Ln2*0.5
	if len(got) != 1 || math.Abs(got[0].Raw-want) > 1e-6 {
		t.Errorf("AdvanceUsage = %+v, want alice at %v", got, want)
	}
}

func TestFairShareOrdersUsersByDecayedUsage(t *testing.T) {
	now := st.Epoch
	week := 7 * 24 * time.Hour
	// ann used 1000 GPU-seconds two weeks ago (250 left after decay), ben
	// used 400 just now: ann has used less and goes first.
	snap := fourGPUs().Account("lab", "", 1, st.U("ann", 1), st.U("ben", 1)).
		UsageAsOf("lab", "ann", 1000, now.Add(-2*week)).Usage("lab", "ben", 400).
		Job(st.Job(1).User("ben").GPUs(4), st.Job(2).User("ann").GPUs(4)).Build()
	plan := st.Cycle(t, snap)
	if diff := cmp.Diff([]uint32{2}, st.Started(plan)); diff != "" {
		t.Errorf("started (-want +got):\n%s", diff)
	}
}

func TestFillerWorkDoesNotPushAUserBack(t *testing.T) {
	// Both users run one job for a day; cid's runs in a UsageFactor-0 QOS.
	// Then both submit: cid, whose only usage was filler, comes first
	// against dan, who paid for his day.
	h := st.NewHarness(t, fourGPUs().
		QOS(st.QOS("normal"), sched.QOS{Name: "filler", UsageFactor: 0}).
		Account("lab", "", 1, st.U("cid", 1), st.U("dan", 1)).
		Job(
			st.Job(1).User("cid").QOS("filler").GPUs(2).Time(48*time.Hour),
			st.Job(2).User("dan").QOS("normal").GPUs(2).Time(48*time.Hour),
		).Build())
	h.Runtime(1, 24*time.Hour)
	h.Runtime(2, 24*time.Hour)
	h.Cycle()
	h.Advance(25 * time.Hour)
	rows := map[string]sched.ShareRow{}
	for _, r := range sched.FairShareTree(h.Snap) {
		rows[r.User] = r
	}
	if rows["cid"].RawUsage != 0 || rows["dan"].RawUsage < 2*24*3600*0.9 {
		t.Errorf("usage: cid %v, dan %v; want 0 and about two GPU-days", rows["cid"].RawUsage, rows["dan"].RawUsage)
	}
	if rows["cid"].FairShare <= rows["dan"].FairShare {
		t.Errorf("FairShare cid %v <= dan %v", rows["cid"].FairShare, rows["dan"].FairShare)
	}
	h.Submit(st.Job(3).User("dan").GPUs(4).Time(time.Hour), st.Job(4).User("cid").GPUs(4).Time(time.Hour))
	if diff := cmp.Diff([]uint32{4}, st.Started(h.Cycle())); diff != "" {
		t.Errorf("started (-want +got):\n%s", diff)
	}
}

// NextUsageReset follows priority_multifactor.c's _next_reset: the next
// midnight, Sunday, first of the month, of the quarter, of the year.
func TestNextUsageReset(t *testing.T) {
	loc := time.FixedZone("lab", 2*3600)
	last := time.Date(2030, time.November, 13, 15, 4, 5, 0, loc) // a Wednesday
	for _, tt := range []struct {
		period string
		want   time.Time
	}{
		{"DAILY", time.Date(2030, time.November, 14, 0, 0, 0, 0, loc)},
		{"WEEKLY", time.Date(2030, time.November, 17, 0, 0, 0, 0, loc)},
		{"MONTHLY", time.Date(2030, time.December, 1, 0, 0, 0, 0, loc)},
		{"QUARTERLY", time.Date(2031, time.January, 1, 0, 0, 0, 0, loc)},
		{"YEARLY", time.Date(2031, time.January, 1, 0, 0, 0, 0, loc)},
		{"NONE", time.Time{}},
		{"NOW", time.Time{}},
	} {
		if got := sched.NextUsageReset(tt.period, last, loc); !got.Equal(tt.want) {
			t.Errorf("%s after %v: %v, want %v", tt.period, last, got, tt.want)
		}
	}
	if got, want := sched.NextUsageReset("QUARTERLY", time.Date(2030, time.May, 2, 0, 0, 0, 0, loc), loc), time.Date(2030, time.July, 1, 0, 0, 0, 0, loc); !got.Equal(want) {
		t.Errorf("QUARTERLY after May 2: %v, want %v", got, want)
	}
}
