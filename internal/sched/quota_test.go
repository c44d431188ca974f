package sched_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// budget is four GPUs, account lab (alice) under account group, account
// other (bob), and jobs.
func budget(jobs ...*st.JobBuilder) *st.SnapBuilder {
	return fourGPUs().Account("group", "", 1).Account("lab", "group", 1, st.U("alice", 1)).
		Account("other", "", 1, st.U("bob", 1)).Job(jobs...)
}

// withQuota is snap with GrpTRESMins lim on lab and the usage given.
func withQuota(snap sched.Snapshot, lim sched.TRESMins, usage ...sched.TRESUsage) sched.Snapshot {
	for i := range snap.Accounts {
		if snap.Accounts[i].Name == "lab" {
			snap.Accounts[i].GrpTRESMins = lim
		}
	}
	snap.TRESUsage = usage
	return snap
}

func TestGrpTRESMinsReasons(t *testing.T) {
	h := time.Hour
	tests := []struct {
		name  string
		lim   sched.TRESMins
		usage []sched.TRESUsage
		jobs  []*st.JobBuilder
		want  map[uint32]slurm.Reason
	}{
		{
			name:  "60 GPU-minutes used of gres/gpu=60: a GPU job waits with AssocGrpGRESMinutes, a CPU-only job starts",
			lim:   sched.TRESMins{GPU: 60},
			usage: []sched.TRESUsage{{Account: "lab", GPU: 3600}},
			jobs:  []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(h), st.Job(2).User("alice").Account("lab").CPUs(1)},
			want:  map[uint32]slurm.Reason{1: slurm.ReasonAssocGrpGRESMinutes, 2: "started"},
		},
		{
			name:  "59.9 minutes used is 59 whole minutes: the job starts (acct_policy.c rounds down)",
			lim:   sched.TRESMins{GPU: 60},
			usage: []sched.TRESUsage{{Account: "lab", GPU: 3599}},
			jobs:  []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(h)},
			want:  map[uint32]slurm.Reason{1: "started"},
		},
		{
			name:  "another account's jobs are not held by lab's budget",
			lim:   sched.TRESMins{GPU: 60},
			usage: []sched.TRESUsage{{Account: "lab", GPU: 7200}},
			jobs:  []*st.JobBuilder{st.Job(1).User("bob").Account("other").GPUs(1)},
			want:  map[uint32]slurm.Reason{1: "started"},
		},
		{
			name:  "cpu minutes spent is AssocGrpCPUMinutesLimit, for every job (each wants a CPU)",
			lim:   sched.TRESMins{CPU: 10},
			usage: []sched.TRESUsage{{Account: "lab", CPU: 600}},
			jobs:  []*st.JobBuilder{st.Job(1).User("alice").Account("lab")},
			want:  map[uint32]slurm.Reason{1: slurm.ReasonAssocGrpCPUMinutes},
		},
		{
			name:  "billing minutes spent is AssocGrpBillingMinutes",
			lim:   sched.TRESMins{Billing: 10},
			usage: []sched.TRESUsage{{Account: "lab", Billing: 601}},
			jobs:  []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1)},
			want:  map[uint32]slurm.Reason{1: slurm.ReasonAssocGrpBillingMinutes},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := st.Cycle(t, withQuota(budget(tt.jobs...).Build(), tt.lim, tt.usage...))
			all := st.Reasons(plan)
			for _, id := range st.Started(plan) {
				all[id] = "started"
			}
			got := map[uint32]slurm.Reason{}
			for id := range tt.want {
				got[id] = all[id]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

// A parent account's budget holds the jobs of the accounts under it.
func TestGrpTRESMinsOnParentAccount(t *testing.T) {
	snap := budget(st.Job(1).User("alice").Account("lab").GPUs(1)).Build()
	snap.Accounts[0].GrpTRESMins = sched.TRESMins{GPU: 30}
	snap.TRESUsage = []sched.TRESUsage{{Account: "group", GPU: 1800}, {Account: "lab", GPU: 1800}}
	plan := st.Cycle(t, snap)
	if got := st.Reasons(plan)[1]; got != slurm.ReasonAssocGrpGRESMinutes {
		t.Fatalf("job 1's reason %q, want %q", got, slurm.ReasonAssocGrpGRESMinutes)
	}
}

// The reason's detail says how much is used, how much is left and when the
// budget comes back; the expected start is the reset.
func TestGrpTRESMinsDetailNamesTheReset(t *testing.T) {
	reset := st.Epoch.Add(15 * time.Hour)
	snap := withQuota(budget(st.Job(1).User("alice").Account("lab").GPUs(1)).
		Configure(func(c *sched.Config) { c.NextUsageReset = reset }).Build(),
		sched.TRESMins{GPU: 60}, sched.TRESUsage{Account: "lab", GPU: 3660})
	plan := st.Cycle(t, snap)
	if len(plan.Pending) != 1 {
		t.Fatalf("pending %+v, want job 1", plan.Pending)
	}
	d := plan.Pending[0]
	got := sched.Decision{JobID: d.JobID, Reason: d.Reason, ExpectedStart: d.ExpectedStart, Detail: d.Detail}
	want := sched.Decision{JobID: 1, Reason: slurm.ReasonAssocGrpGRESMinutes, ExpectedStart: reset,
		Detail: "account lab has used 61 of its GrpTRESMins gres/gpu=60 minutes, 0 left; usage resets at 2026-11-30T00:00:00"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
}

// AccountTRESUsage counts GPU, CPU and billing seconds of ended and running
// runs since the last reset, up the account tree, times UsageFactor.
func TestAccountTRESUsage(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	snap := fourGPUs().Account("group", "", 1).Account("lab", "group", 1, st.U("alice", 1)).
		QOS(sched.QOS{Name: "normal", UsageFactor: 1}, sched.QOS{Name: "half", UsageFactor: 0.5}).
		Configure(func(c *sched.Config) { c.DecayHalfLife = 0 }).Build()
	run := func(b *st.JobBuilder, end time.Time) sched.Run { return sched.Run{Job: b.Build(), End: end} }
	runs := []sched.Run{
		// 2 GPUs from 2 hours ago to an hour ago; the reset 90 minutes ago
		// leaves half an hour: 3600 GPU-seconds.
		run(st.Job(1).User("alice").Account("lab").QOS("normal").GPUs(2).CPUIDs(0, 1).Running(now.Add(-2*h), "gpu01", 0, 1), now.Add(-h)),
		// 1 GPU running for 30 minutes at half price: 900.
		run(st.Job(2).User("alice").Account("lab").QOS("half").GPUs(1).CPUIDs(2).Running(now.Add(-h/2), "gpu01", 2), time.Time{}),
		// 1 GPU from 3 hours ago to an hour ago: 1800 after the reset.
		run(st.Job(3).User("alice").Account("lab").QOS("normal").GPUs(1).CPUIDs(3).Running(now.Add(-3*h), "gpu01", 3), now.Add(-h)),
	}
	got := sched.AccountTRESUsage(snap, runs, now.Add(-90*time.Minute))
	// GPU and CPU (one per GPU here): 3600 + 900 + 1800; billing (GPUs,
	// the default weights) the same.
	lab := sched.TRESUsage{Account: "lab", GPU: 6300, CPU: 6300, Billing: 6300}
	group, root := lab, lab
	group.Account, root.Account = "group", "root"
	want := []sched.TRESUsage{group, lab, root}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}

	// With PriorityDecayHalfLife, the hour ended an hour ago counts half
	// of what it would now.
	snap.Config.DecayHalfLife = h
	got = sched.AccountTRESUsage(snap, runs[:1], time.Time{})
	// ∫ 2^(-(now-s)/h) ds over [now-2h, now-h] = h/ln2 × (1/2 - 1/4).
	wantGPU := 2 * 3600 / 0.6931471805599453 * 0.25
	if d := got[1].GPU - wantGPU; d > 1e-6 || d < -1e-6 {
		t.Errorf("decayed GPU usage %v, want %v", got[1].GPU, wantGPU)
	}
}

// PrevUsageReset is the boundary before, NextUsageReset the one after.
func TestPrevUsageReset(t *testing.T) {
	at := time.Date(2030, time.May, 15, 13, 30, 0, 0, time.UTC) // a Wednesday
	for period, want := range map[string]time.Time{
		"DAILY":     time.Date(2030, time.May, 15, 0, 0, 0, 0, time.UTC),
		"WEEKLY":    time.Date(2030, time.May, 12, 0, 0, 0, 0, time.UTC),
		"MONTHLY":   time.Date(2030, time.May, 1, 0, 0, 0, 0, time.UTC),
		"QUARTERLY": time.Date(2030, time.April, 1, 0, 0, 0, 0, time.UTC),
		"YEARLY":    time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC),
		"NONE":      {},
		"NOW":       {},
	} {
		got := sched.PrevUsageReset(period, at, time.UTC)
		if !got.Equal(want) {
			t.Errorf("%s: PrevUsageReset %v, want %v", period, got, want)
		}
		if !want.IsZero() {
			if next := sched.NextUsageReset(period, want.Add(-time.Second), time.UTC); !next.Equal(want) {
				t.Errorf("%s: NextUsageReset from just before %v is %v", period, want, next)
			}
		}
	}
}

// Under DenyOnLimit a job whose time limit × TRES is over its account's
// GrpTRESMins can never fit the budget: it is refused at submission with
// the numbers; without DenyOnLimit, or with no time limit given, it is
// accepted.
func TestGrpTRESMinsAtSubmission(t *testing.T) {
	snap := func(deny bool) sched.Snapshot {
		s := st.Anchor().QOS(sched.QOS{Name: "strict", UsageFactor: 1, DenyOnLimit: deny}).Build()
		for i := range s.Accounts {
			if s.Accounts[i].Name == "lab" {
				s.Accounts[i].GrpTRESMins = sched.TRESMins{GPU: 60}
			}
		}
		return s
	}
	tests := []struct {
		name string
		deny bool
		job  *st.JobBuilder
		want *sched.SubmitError
	}{
		{
			name: "2 GPUs for an hour is 120 GPU-minutes, over gres/gpu=60: refused",
			deny: true, job: st.Job(1).User("alice").QOS("strict").GPUs(2).Time(time.Hour),
			want: &sched.SubmitError{Code: slurm.ErrAccountingPolicy, Msg: "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
				Detail: "asks for 120 GPU-minutes (2 × 01:00:00), more than account lab's GrpTRESMins gres/gpu=60 (AssocGrpGRESMinutes; the QOS has DenyOnLimit)"},
		},
		{
			name: "1 GPU for an hour fits exactly",
			deny: true, job: st.Job(1).User("alice").QOS("strict").GPUs(1).Time(time.Hour),
		},
		{
			name: "no time limit given: accepted (Slurm cuts the limit to the budget)",
			deny: true, job: st.Job(1).User("alice").QOS("strict").GPUs(2),
		},
		{
			name: "without DenyOnLimit: accepted, to run while the budget lasts",
			deny: false, job: st.Job(1).User("alice").QOS("strict").GPUs(2).Time(time.Hour),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := sched.CheckSubmit(tt.job.Build(), snap(tt.deny))
			var got *sched.SubmitError
			if err != nil {
				got, _ = err.(*sched.SubmitError)
				if got == nil {
					t.Fatalf("CheckSubmit: %v", err)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckSubmit (-want +got):\n%s", diff)
			}
		})
	}
}

// With AccountingStorageEnforce safe a job starts only if its time limit ×
// TRES fits what is left of the budget beside what the running jobs may
// still use; without safe only a spent budget holds a job.
func TestGrpTRESMinsSafe(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	tests := []struct {
		name string
		safe bool
		used float64 // GPU-seconds
		jobs []*st.JobBuilder
		want map[uint32]slurm.Reason
	}{
		{
			name: "safe: 30 GPU-minutes used of 60, a 1-GPU 1-hour job does not fit, a 30-minute one does",
			safe: true, used: 1800,
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(h), st.Job(2).User("alice").Account("lab").GPUs(1).Time(h / 2)},
			want: map[uint32]slurm.Reason{1: slurm.ReasonAssocGrpGRESMinutes, 2: "started"},
		},
		{
			name: "safe: a running job's time left counts against what is left",
			safe: true, used: 0,
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(h).Running(now.Add(-10*time.Minute), "gpu01", 0),
				st.Job(2).User("alice").Account("lab").GPUs(1).Time(20 * time.Minute)},
			want: map[uint32]slurm.Reason{2: slurm.ReasonAssocGrpGRESMinutes},
		},
		{
			name: "safe: jobs started in the pass count too",
			safe: true, used: 0,
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(40 * time.Minute),
				st.Job(2).User("alice").Account("lab").GPUs(1).Time(40 * time.Minute)},
			want: map[uint32]slurm.Reason{1: "started", 2: slurm.ReasonAssocGrpGRESMinutes},
		},
		{
			name: "without safe the same jobs start while the budget is not spent",
			safe: false, used: 1800,
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(h)},
			want: map[uint32]slurm.Reason{1: "started"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := withQuota(budget(tt.jobs...).Configure(func(c *sched.Config) { c.SafeLimits = tt.safe }).Build(),
				sched.TRESMins{GPU: 60}, sched.TRESUsage{Account: "lab", GPU: tt.used})
			plan := st.Cycle(t, snap)
			all := st.Reasons(plan)
			for _, id := range st.Started(plan) {
				all[id] = "started"
			}
			got := map[uint32]slurm.Reason{}
			for id := range tt.want {
				got[id] = all[id]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
	// The detail says what is asked, left and held by the running jobs.
	snap := withQuota(budget(st.Job(1).User("alice").Account("lab").GPUs(1).Time(time.Hour)).
		Configure(func(c *sched.Config) { c.SafeLimits = true }).Build(),
		sched.TRESMins{GPU: 60}, sched.TRESUsage{Account: "lab", GPU: 1800})
	plan := st.Cycle(t, snap)
	want := "asks for 60 GPU-minutes (its time limit), account lab has 30 of its GrpTRESMins gres/gpu=60 left and its running jobs may use 0 of them (AccountingStorageEnforce safe); usage decays by half every 7-00:00:00 (PriorityDecayHalfLife)"
	if len(plan.Pending) != 1 || plan.Pending[0].Detail != want {
		t.Errorf("pending %+v\nwant the detail %q", plan.Pending, want)
	}
}

// A QOS's GrpTRESMins counts the usage of all its jobs (and its
// partition's jobs), decayed unless the QOS has NoDecay; a job wanting a
// spent TRES waits with QOSGrpGRESMinutes.
func TestQOSGrpTRESMins(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	snap := fourGPUs().QOS(sched.QOS{Name: "normal", UsageFactor: 1, GrpTRESMins: sched.TRESMins{GPU: 60}},
		sched.QOS{Name: "keep", UsageFactor: 1, NoDecay: true, GrpTRESMins: sched.TRESMins{GPU: 60}}).
		Configure(func(c *sched.Config) { c.DecayHalfLife = h }).Build()
	run := func(b *st.JobBuilder, end time.Time) sched.Run { return sched.Run{Job: b.Build(), End: end} }
	// An hour on a GPU in each QOS, ended an hour ago.
	runs := []sched.Run{
		run(st.Job(1).User("alice").QOS("normal").GPUs(1).Running(now.Add(-2*h), "gpu01", 0), now.Add(-h)),
		run(st.Job(2).User("bob").QOS("keep").GPUs(1).Running(now.Add(-2*h), "gpu01", 1), now.Add(-h)),
	}
	got := sched.QOSTRESUsage(snap, runs, time.Time{})
	if len(got) != 2 || got[0].Account != "keep" || got[0].GPU != 3600 {
		t.Fatalf("NoDecay: QOS keep's usage %+v, want 3600 GPU-seconds undecayed", got)
	}
	// Decayed: h/ln2 × (1/2 − 1/4) GPU-seconds, under 60 minutes.
	if want := 3600 / 0.6931471805599453 * 0.25; math.Abs(got[1].GPU-want) > 1e-6 {
		t.Errorf("QOS normal's usage %v, want %v", got[1].GPU, want)
	}
	// A reset clears NoDecay's usage too (Slurm 22.05's _reset_usage).
	if after := sched.QOSTRESUsage(snap, runs, now.Add(-h/2)); len(after) != 0 {
		t.Errorf("usage since a reset after the runs: %+v, want none", after)
	}

	snap.QOSUsage = got
	snap.Jobs = []sched.Job{st.Job(3).User("alice").QOS("keep").GPUs(1).Build(), st.Job(4).User("alice").QOS("normal").GPUs(1).Build()}
	plan := st.Cycle(t, snap)
	reasons := st.Reasons(plan)
	if reasons[3] != slurm.ReasonQOSGrpGRESMinutes || !slices.Contains(st.Started(plan), 4) {
		t.Fatalf("reasons %v, started %v: want job 3 QOSGrpGRESMinutes, job 4 started", reasons, st.Started(plan))
	}
	want := "QOS keep has used 60 of its GrpTRESMins gres/gpu=60 minutes, 0 left; usage never decays (NoDecay) nor resets (PriorityUsageResetPeriod NONE)"
	for _, d := range plan.Pending {
		if d.JobID == 3 && d.Detail != want {
			t.Errorf("detail %q\nwant %q", d.Detail, want)
		}
	}
}

// A QOS's GrpTRESMins of a TRES goes before its association's: with the
// QOS's far from spent, the account's spent budget of that TRES holds
// nothing (recorded: golden quota_squeue_qos_budget_first.txt); a QOS's
// MaxJobsPerUser likewise goes before the association's MaxJobs.
func TestQOSLimitsGoBeforeTheAssociations(t *testing.T) {
	snap := withQuota(budget(st.Job(1).User("alice").Account("lab").QOS("normal").GPUs(1)).
		QOS(sched.QOS{Name: "normal", UsageFactor: 1, GrpTRESMins: sched.TRESMins{GPU: 100000}}).Build(),
		sched.TRESMins{GPU: 1}, sched.TRESUsage{Account: "lab", GPU: 3600})
	if plan := st.Cycle(t, snap); !slices.Contains(st.Started(plan), 1) {
		t.Errorf("job 1 waits (%v) though its QOS's GrpTRESMins goes before lab's", st.Reasons(plan))
	}
	snap = budget(st.Job(1).User("alice").Account("lab").QOS("normal"), st.Job(2).User("alice").Account("lab").QOS("normal")).
		QOS(sched.QOS{Name: "normal", UsageFactor: 1, MaxJobsPerUser: 5}).Build()
	snap.Accounts[1].MaxJobs = 1
	if plan := st.Cycle(t, snap); len(st.Started(plan)) != 2 {
		t.Errorf("started %v (reasons %v): the QOS's MaxJobsPerUser goes before lab's MaxJobs", st.Started(plan), st.Reasons(plan))
	}
}
