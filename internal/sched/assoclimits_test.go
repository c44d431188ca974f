package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// An association's limits besides its budget, with Slurm's reasons:
// MaxJobs (the account's, inherited by its users, or a user's own),
// GrpTRES, GrpTRESRunMins and MaxTRESMinsPerJob (on an account above
// too); jobs started in the pass count.
func TestAssocLimits(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	tests := []struct {
		name string
		set  func(lab, group *sched.Account)
		jobs []*st.JobBuilder
		want map[uint32]slurm.Reason
	}{
		{
			name: "MaxJobs=1 on the account holds a user's second job with AssocMaxJobsLimit, not another user's",
			set:  func(lab, _ *sched.Account) { lab.MaxJobs = 1 },
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab"), st.Job(2).User("alice").Account("lab"), st.Job(3).User("carol").Account("lab")},
			want: map[uint32]slurm.Reason{1: "started", 2: slurm.ReasonAssocMaxJobsLimit, 3: "started"},
		},
		{
			name: "a user's own MaxJobs goes before the account's",
			set:  func(lab, _ *sched.Account) { lab.MaxJobs = 1; lab.Users[0].MaxJobs = 2 },
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab"), st.Job(2).User("alice").Account("lab"), st.Job(3).User("alice").Account("lab")},
			want: map[uint32]slurm.Reason{1: "started", 2: "started", 3: slurm.ReasonAssocMaxJobsLimit},
		},
		{
			name: "GrpTRES=gres/gpu=2 counts the account's running jobs and those started in the pass: AssocGrpGRES",
			set:  func(lab, _ *sched.Account) { lab.GrpTRES = sched.TRESMins{GPU: 2} },
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Running(now, "gpu01", 0),
				st.Job(2).User("carol").Account("lab").GPUs(1), st.Job(3).User("alice").Account("lab").GPUs(1)},
			want: map[uint32]slurm.Reason{2: "started", 3: slurm.ReasonAssocGrpGRES},
		},
		{
			name: "GrpTRES=cpu on the parent account holds the child's jobs: AssocGrpCpuLimit",
			set:  func(_, group *sched.Account) { group.GrpTRES = sched.TRESMins{CPU: 2} },
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").CPUs(2), st.Job(2).User("alice").Account("lab").CPUs(1)},
			want: map[uint32]slurm.Reason{1: "started", 2: slurm.ReasonAssocGrpCpuLimit},
		},
		{
			name: "GrpTRESRunMins=gres/gpu=90: a running job's 50 minutes left and a 1-hour job are over: AssocGrpGRESRunMinutes",
			set:  func(lab, _ *sched.Account) { lab.GrpTRESRunMins = sched.TRESMins{GPU: 90} },
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(1).Time(h).Running(now.Add(-10*time.Minute), "gpu01", 0),
				st.Job(2).User("alice").Account("lab").GPUs(1).Time(h), st.Job(3).User("alice").Account("lab").GPUs(1).Time(30 * time.Minute)},
			want: map[uint32]slurm.Reason{2: slurm.ReasonAssocGrpGRESRunMinutes, 3: "started"},
		},
		{
			name: "MaxTRESMinsPerJob=gres/gpu=60 on the parent: a 2-GPU hour is AssocMaxGRESMinutesPerJob, a 1-GPU hour starts",
			set:  func(_, group *sched.Account) { group.MaxTRESMinsPerJob = sched.TRESMins{GPU: 60} },
			jobs: []*st.JobBuilder{st.Job(1).User("alice").Account("lab").GPUs(2).Time(h), st.Job(2).User("alice").Account("lab").GPUs(1).Time(h)},
			want: map[uint32]slurm.Reason{1: slurm.ReasonAssocMaxGRESMinutesPerJob, 2: "started"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := fourGPUs().Account("group", "", 1).Account("lab", "group", 1, st.U("alice", 1), st.U("carol", 1)).Job(tt.jobs...).Build()
			tt.set(&snap.Accounts[1], &snap.Accounts[0])
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
}

// Under DenyOnLimit a job over MaxTRESMinsPerJob, or alone over a
// GrpTRES, is refused at submission with the numbers.
func TestAssocLimitsAtSubmission(t *testing.T) {
	snap := st.Anchor().QOS(sched.QOS{Name: "strict", UsageFactor: 1, DenyOnLimit: true}).Build()
	for i := range snap.Accounts {
		if snap.Accounts[i].Name == "lab" {
			snap.Accounts[i].GrpTRES = sched.TRESMins{GPU: 2}
			snap.Accounts[i].MaxTRESMinsPerJob = sched.TRESMins{GPU: 60}
		}
	}
	msg := "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
	for _, tt := range []struct {
		job  *st.JobBuilder
		want *sched.SubmitError
	}{
		{st.Job(1).User("alice").QOS("strict").GPUs(3).Time(10 * time.Minute), &sched.SubmitError{Code: slurm.ErrAccountingPolicy, Msg: msg,
			Detail: "asks for 3 gres/gpu, more than account lab's GrpTRES gres/gpu=2 (AssocGrpGRES; the QOS has DenyOnLimit)"}},
		{st.Job(1).User("alice").QOS("strict").GPUs(2).Time(time.Hour), &sched.SubmitError{Code: slurm.ErrAccountingPolicy, Msg: msg,
			Detail: "asks for 120 gres/gpu-minutes (its time limit), account lab's MaxTRESMinsPerJob is gres/gpu=60 (AssocMaxGRESMinutesPerJob; the QOS has DenyOnLimit)"}},
		{st.Job(1).User("alice").QOS("strict").GPUs(1).Time(time.Hour), nil},
	} {
		err := sched.CheckSubmit(tt.job.Build(), snap)
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
	}
}
