package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestPendingReasons(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	limited := func(q sched.QOS) *st.SnapBuilder { return fourGPUs().QOS(q) }
	tests := []struct {
		name string
		snap *st.SnapBuilder
		// want maps the job ids of interest to their reason; jobs that
		// start map to "started".
		want map[uint32]slurm.Reason
	}{
		{
			name: "an owner's hold is JobHeldUser, an operator's JobHeldAdmin",
			snap: fourGPUs().Job(st.Job(1).Hold(), st.Job(2).HoldAdmin()),
			want: map[uint32]slurm.Reason{1: slurm.ReasonJobHeldUser, 2: slurm.ReasonJobHeldAdmin},
		},
		{
			name: "afterok waits while the job runs",
			snap: fourGPUs().Job(st.Job(1).Running(now, "gpu01"), st.Job(2).AfterOK(1)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependency},
		},
		{
			name: "after:ID+MIN waits MIN minutes after the job started; +5 has passed, +10 has not",
			snap: fourGPUs().Job(st.Job(1).Running(now.Add(-5*time.Minute), "gpu01"),
				st.Job(2).AfterPlus(1, 10*time.Minute), st.Job(3).AfterPlus(1, 5*time.Minute)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependency, 3: "started"},
		},
		{
			name: "after:ID+MIN on a job still pending waits for its start",
			snap: fourGPUs().Job(st.Job(1).Hold(), st.Job(2).AfterPlus(1, time.Minute)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependency},
		},
		{
			name: "after:ID+MIN on a job cancelled before it started holds at once",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Cancelled, 0), st.Job(2).AfterPlus(1, time.Hour)),
			want: map[uint32]slurm.Reason{2: "started"},
		},
		{
			name: "afterok on a job that failed can never be met",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Failed, 3), st.Job(2).AfterOK(1)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependencyNeverSatisfied},
		},
		{
			name: "afterok on a job that completed starts",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Completed, 0), st.Job(2).AfterOK(1)),
			want: map[uint32]slurm.Reason{2: "started"},
		},
		{
			name: "afternotok on a job that completed can never be met",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Completed, 0), st.Job(2).AfterNotOK(1)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependencyNeverSatisfied},
		},
		{
			name: "afternotok on a job that timed out starts",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Timeout, 0), st.Job(2).AfterNotOK(1)),
			want: map[uint32]slurm.Reason{2: "started"},
		},
		{
			name: "afterany starts after any end",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Cancelled, 0), st.Job(2).AfterAny(1)),
			want: map[uint32]slurm.Reason{2: "started"},
		},
		{
			name: "after waits while the job is pending and not once it runs",
			snap: fourGPUs().Job(st.Job(1).Hold(), st.Job(2).After(1), st.Job(3).Running(now, "gpu01"), st.Job(4).After(3)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependency, 4: "started"},
		},
		{
			name: "a dependency on a job that never existed is lifted (sbatch_dependency_unknown.txt)",
			snap: fourGPUs().Job(st.Job(2).AfterOK(999999)),
			want: map[uint32]slurm.Reason{2: "started"},
		},
		{
			name: "'?' dependencies need one satisfied item",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Failed, 1), st.Job(2).Running(now, "gpu01"),
				st.Job(3).AfterOK(1).AfterAny(2).AnyDep(), st.Job(4).AfterOK(1).AfterOK(5).AnyDep(), st.Job(5).Hold()),
			want: map[uint32]slurm.Reason{3: slurm.ReasonDependency, 4: slurm.ReasonDependency},
		},
		{
			name: "',' dependencies fail as soon as one can never be met",
			snap: fourGPUs().Job(st.Job(1).State(slurm.Failed, 1), st.Job(2).Running(now, "gpu01"), st.Job(3).AfterOK(1).AfterAny(2)),
			want: map[uint32]slurm.Reason{3: slurm.ReasonDependencyNeverSatisfied},
		},
		{
			name: "a whole array completes when all its tasks have",
			snap: fourGPUs().Job(
				st.Job(10).Task(10, 0, 0).State(slurm.Completed, 0), st.Job(11).Task(10, 1, 0).Running(now, "gpu01"),
				st.Job(12).AfterOK(10),
				st.Job(20).Task(20, 0, 0).State(slurm.Completed, 0), st.Job(21).Task(20, 1, 0).State(slurm.Completed, 0),
				st.Job(22).AfterOK(20)),
			want: map[uint32]slurm.Reason{12: slurm.ReasonDependency, 22: "started"},
		},
		{
			name: "singleton waits for the user's other job of that name",
			snap: fourGPUs().Job(
				st.Job(1).Name("train").User("alice").Running(now, "gpu01"),
				st.Job(2).Name("train").User("alice").Singleton(),
				st.Job(3).Name("train").User("bob").Singleton(),
				st.Job(4).Name("eval").User("alice").Singleton(),
				st.Job(5).Name("eval").User("alice").Singleton()),
			want: map[uint32]slurm.Reason{2: slurm.ReasonDependency, 3: "started", 4: "started", 5: slurm.ReasonDependency},
		},
		{
			name: "--begin in the future is BeginTime",
			snap: fourGPUs().Job(st.Job(1).Begin(now.Add(h)), st.Job(2).Begin(now.Add(-h))),
			want: map[uint32]slurm.Reason{1: slurm.ReasonBeginTime, 2: "started"},
		},
		{
			name: "a time limit above the partition's MaxTime is PartitionTimeLimit",
			snap: fourGPUs().Part(st.Part("gpu").Default().MaxTime(h)).Job(st.Job(1).Time(2*h), st.Job(2).Time(h)),
			want: map[uint32]slurm.Reason{1: slurm.ReasonPartitionTimeLimit, 2: "started"},
		},
		{
			name: "a down partition is PartitionDown",
			snap: fourGPUs().Part(st.Part("gpu").Default().Down()).Job(st.Job(1)),
			want: map[uint32]slurm.Reason{1: slurm.ReasonPartitionDown},
		},
		{
			name: "the %N throttle holds array tasks back with JobArrayTaskLimit",
			snap: fourGPUs().Job(
				st.Job(1).Task(1, 0, 2).GPUs(1), st.Job(2).Task(1, 1, 2).GPUs(1),
				st.Job(3).Task(1, 2, 2).GPUs(1), st.Job(4).Task(1, 3, 2).GPUs(1)),
			want: map[uint32]slurm.Reason{1: "started", 2: "started", 3: slurm.ReasonJobArrayTaskLimit, 4: slurm.ReasonJobArrayTaskLimit},
		},
		{
			name: "the throttle counts tasks already running",
			snap: fourGPUs().Job(st.Job(1).Task(1, 0, 1).Running(now, "gpu01"), st.Job(2).Task(1, 1, 1)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonJobArrayTaskLimit},
		},
		{
			name: "QOS MaxTRESPerUser=gres/gpu is QOSMaxGRESPerUser",
			snap: limited(sched.QOS{Name: "normal", UsageFactor: 1, MaxGPUsPerUser: 2}).Job(
				st.Job(1).QOS("normal").User("alice").GPUs(1).Running(now, "gpu01", 0),
				st.Job(2).QOS("normal").User("alice").GPUs(2),
				st.Job(3).QOS("normal").User("alice").GPUs(1),
				st.Job(4).QOS("normal").User("bob").GPUs(2)),
			want: map[uint32]slurm.Reason{2: slurm.ReasonQOSMaxGRESPerUser, 3: "started", 4: "started"},
		},
		{
			name: "QOS MaxJobsPerUser is QOSMaxJobsPerUserLimit, counting jobs started in the pass",
			snap: limited(sched.QOS{Name: "normal", UsageFactor: 1, MaxJobsPerUser: 2}).Job(
				st.Job(1).QOS("normal").User("alice").Running(now, "gpu01"),
				st.Job(2).QOS("normal").User("alice"),
				st.Job(3).QOS("normal").User("alice")),
			want: map[uint32]slurm.Reason{2: "started", 3: slurm.ReasonQOSMaxJobsPerUserLimit},
		},
		{
			name: "QOS MaxWall is QOSMaxWallDurationPerJobLimit",
			snap: limited(sched.QOS{Name: "normal", UsageFactor: 1, MaxWall: h}).Job(
				st.Job(1).QOS("normal").Time(2*h), st.Job(2).QOS("normal").Time(h)),
			want: map[uint32]slurm.Reason{1: slurm.ReasonQOSMaxWallDurationPerJobLimit, 2: "started"},
		},
		{
			name: "QOS MaxTRESPerJob: CPUs, GPUs, memory and billing, each with its reason",
			snap: limited(sched.QOS{Name: "normal", UsageFactor: 1, PerJob: sched.TRESLimits{CPUs: 4, GPUs: 2, Mem: 8 * st.GiB, Billing: 1}}).Job(
				st.Job(1).QOS("normal").CPUs(5), st.Job(2).QOS("normal").GPUs(3), st.Job(3).QOS("normal").Mem(9*st.GiB),
				st.Job(4).QOS("normal").CPUs(4).GPUs(1).Mem(8*st.GiB)),
			want: map[uint32]slurm.Reason{1: slurm.ReasonQOSMaxCpuPerJobLimit, 2: slurm.ReasonQOSMaxGRESPerJob,
				3: slurm.ReasonQOSMaxMemoryPerJob, 4: "started"},
		},
		{
			name: "QOS MaxTRESPerJob=billing counts the partition's billing weights",
			snap: limited(sched.QOS{Name: "normal", UsageFactor: 1, PerJob: sched.TRESLimits{Billing: 1}}).Job(
				st.Job(1).QOS("normal").GPUs(2)),
			want: map[uint32]slurm.Reason{1: slurm.ReasonQOSMaxBillingPerJob},
		},
		{
			name: "QOS MaxTRESPerUser=cpu and mem count the user's running jobs and those started in the pass",
			snap: limited(sched.QOS{Name: "normal", UsageFactor: 1, PerUser: sched.TRESLimits{CPUs: 4, Mem: 4 * st.GiB}}).Job(
				st.Job(1).QOS("normal").User("alice").CPUs(2).Running(now, "gpu01"),
				st.Job(2).QOS("normal").User("alice").CPUs(2),
				st.Job(3).QOS("normal").User("alice").CPUs(1),
				st.Job(4).QOS("normal").User("bob").CPUs(1).Mem(3*st.GiB),
				st.Job(5).QOS("normal").User("bob").CPUs(1).Mem(2*st.GiB)),
			want: map[uint32]slurm.Reason{2: "started", 3: slurm.ReasonQOSMaxCpuPerUserLimit, 4: "started", 5: slurm.ReasonQOSMaxMemoryPerUser},
		},
		{
			name: "a partition's QOS limits its jobs too, counted with the jobs of that QOS",
			snap: fourGPUs().QOS(sched.QOS{Name: "normal", UsageFactor: 1}, sched.QOS{Name: "part", UsageFactor: 1, MaxJobsPerUser: 1}).
				Part(st.Part("gpu").Default().QOS("part")).Job(
				st.Job(1).QOS("normal").User("alice"), st.Job(2).QOS("normal").User("alice"), st.Job(3).QOS("normal").User("bob")),
			want: map[uint32]slurm.Reason{1: "started", 2: slurm.ReasonQOSMaxJobsPerUserLimit, 3: "started"},
		},
		{
			name: "a user no account admits is InvalidAccount",
			snap: fourGPUs().Account("lab", "", 1, st.U("alice", 1)).Job(st.Job(1).User("mallory")),
			want: map[uint32]slurm.Reason{1: slurm.ReasonInvalidAccount},
		},
		{
			name: "the first job blocked in a partition is Resources, the rest Priority",
			snap: fourGPUs().Job(st.Job(1).GPUs(4).Running(now, "gpu01", 0, 1, 2, 3),
				st.Job(2).GPUs(1).Submitted(now.Add(-2*time.Minute)), st.Job(3).GPUs(1).Submitted(now.Add(-time.Minute))),
			want: map[uint32]slurm.Reason{2: slurm.ReasonResources, 3: slurm.ReasonPriority},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := st.Cycle(t, tt.snap.Build())
			got := map[uint32]slurm.Reason{}
			all := st.Reasons(plan)
			for _, id := range st.Started(plan) {
				all[id] = "started"
			}
			for id := range tt.want {
				got[id] = all[id]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReasonsCarryExpectedStartsAndDetails(t *testing.T) {
	now := st.Epoch
	plan := st.Cycle(t, fourGPUs().
		Part(st.Part("gpu").Default().MaxTime(time.Hour)).
		Job(st.Job(1).Begin(now.Add(90*time.Minute)), st.Job(2).Time(3*time.Hour), st.Job(3).State(slurm.Failed, 1), st.Job(4).AfterOK(3)).
		Build())
	want := []sched.Decision{
		{JobID: 1, Reason: slurm.ReasonBeginTime, Priority: 11000, ExpectedStart: now.Add(90 * time.Minute),
			Detail: "may start from 2026-11-29T10:30:00"},
		{JobID: 2, Reason: slurm.ReasonPartitionTimeLimit, Priority: 11000,
			Detail: "time limit 03:00:00 exceeds partition gpu's MaxTime 01:00:00"},
		{JobID: 4, Reason: slurm.ReasonDependencyNeverSatisfied, Priority: 11000,
			Detail: "afterok:3 can never be met: the job ended FAILED", DepReason: slurm.ReasonDependencyNeverSatisfied},
	}
	if diff := cmp.Diff(want, plan.Pending); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// A decision carries the state of the job's dependencies whatever its
// reason: scontrol show job prints a held job's as Slurm does
// ("afterok:1(unfulfilled)"); met ones leave it empty.
func TestDecisionsCarryDependencyState(t *testing.T) {
	now := st.Epoch
	plan := st.Cycle(t, fourGPUs().Job(
		st.Job(1).Running(now, "gpu01"),
		st.Job(2).State(slurm.Failed, 3),
		st.Job(3).State(slurm.Completed, 0),
		st.Job(4).Hold().AfterOK(1),
		st.Job(5).Hold().AfterOK(2),
		st.Job(6).Hold().AfterOK(3),
		st.Job(7).Hold().Begin(now.Add(time.Hour)),
	).Build())
	got := map[uint32]slurm.Reason{}
	for _, d := range plan.Pending {
		got[d.JobID] = d.DepReason
		if d.Reason != slurm.ReasonJobHeldUser {
			t.Errorf("job %d: reason %s, want JobHeldUser", d.JobID, d.Reason)
		}
	}
	want := map[uint32]slurm.Reason{4: slurm.ReasonDependency, 5: slurm.ReasonDependencyNeverSatisfied, 6: "", 7: ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependency states (-want +got):\n%s", diff)
	}
}
