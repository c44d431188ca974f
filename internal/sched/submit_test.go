package sched_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// maxTime2d is the anchor with gpu's MaxTime at two days, EnforcePartLimits
// on or off.
func maxTime2d(enforce bool) *st.SnapBuilder {
	return st.Snap().Configure(func(c *sched.Config) { c.EnforcePartLimits = enforce }).
		Node(st.Node("gpu01").GPUs(4, "a100", 80*st.GiB)).
		Part(st.Part("gpu").Default().Tier(1).MaxTime(48*time.Hour), st.Part("scavenger").Tier(0).Requeue())
}

func TestCheckSubmit(t *testing.T) {
	full := func(n int) *st.SnapBuilder {
		b := st.Anchor().Configure(func(c *sched.Config) { c.MaxJobCount = n })
		for i := range n - 1 {
			b.Job(st.Job(uint32(100+i)).User("alice").State(slurm.Completed, 0))
		}
		return b
	}
	// alice holds 3 jobs of 10 (one ended, still kept), bob 1; one user may
	// hold 4.
	shared := func() *st.SnapBuilder {
		return st.Anchor().Configure(func(c *sched.Config) { c.MaxJobCount, c.MaxJobCountPerUser = 10, 4 }).
			Job(st.Job(1).User("alice"), st.Job(2).User("alice").State(slurm.Running, 0),
				st.Job(3).User("alice").State(slurm.Completed, 0), st.Job(4).User("bob"))
	}
	limitedQOS := st.Anchor().QOS(sched.QOS{Name: "short", UsageFactor: 1, MaxSubmitJobsPerUser: 2}).
		Job(st.Job(1).User("alice").QOS("short"), st.Job(2).User("alice").QOS("short").State(slurm.Completed, 0))
	tests := []struct {
		name string
		snap *st.SnapBuilder
		job  *st.JobBuilder
		want *sched.SubmitError // nil: accepted
	}{
		{
			name: "an ordinary job is accepted",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUs(2),
		},
		{
			name: "DenyOnLimit refuses a time limit over the QOS's MaxWall",
			snap: st.Anchor().QOS(sched.QOS{Name: "short", UsageFactor: 1, MaxWall: time.Hour, DenyOnLimit: true}),
			job:  st.Job(1).User("alice").QOS("short").Time(2 * time.Hour),
			want: &sched.SubmitError{Code: slurm.ErrAccountingPolicy, Msg: "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
				Detail: "asks for 02:00:00 of time limit, QOS short's MaxWall is 01:00:00 (QOSMaxWallDurationPerJobLimit; the QOS has DenyOnLimit)"},
		},
		{
			name: "DenyOnLimit refuses a job over MaxTRESPerUser on its own",
			snap: st.Anchor().QOS(sched.QOS{Name: "short", UsageFactor: 1, MaxGPUsPerUser: 2, DenyOnLimit: true}),
			job:  st.Job(1).User("alice").QOS("short").GPUs(3),
			want: &sched.SubmitError{Code: slurm.ErrAccountingPolicy, Msg: "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
				Detail: "asks for 3 GPUs, QOS short's MaxTRESPerUser is gres/gpu=2 (QOSMaxGRESPerUser; the QOS has DenyOnLimit)"},
		},
		{
			name: "without DenyOnLimit a job over a QOS limit is accepted, to wait with the limit as its reason",
			snap: st.Anchor().QOS(sched.QOS{Name: "short", UsageFactor: 1, MaxWall: time.Hour}),
			job:  st.Job(1).User("alice").QOS("short").Time(2 * time.Hour),
		},
		{
			name: "MaxJobCount counts finished jobs still kept, and sbatch retries (sbatch_maxjobcount_reached.txt)",
			snap: full(5), job: st.Job(1).User("alice"),
			want: &sched.SubmitError{Code: slurm.EAGAIN, Msg: "Resource temporarily unavailable", Retry: true,
				Detail: "MaxJobCount limit (5) reached"},
		},
		{
			name: "an unknown partition is refused (sbatch_bad_partition.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").Partition("nope"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidPartitionName, Msg: "Invalid partition name specified",
				Notes: []string{"invalid partition specified: nope"}, Detail: `asked for partition "nope"; the partitions here are gpu*, scavenger`},
		},
		{
			name: "a user no account lists is refused (sbatch_no_association.txt)",
			snap: st.Anchor(), job: st.Job(1).User("nobody"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidAccount, Msg: "Invalid account or account/partition combination specified",
				Detail: `user nobody is in no account; an operator adds them with a [[User]] entry (Name = "nobody", Account = ...) in the configuration, or sets AllowUnlistedUsers = true`},
		},
		{
			name: "an account the user is not in is refused",
			snap: st.Anchor().Account("other", "", 1, st.U("carol", 1)), job: st.Job(1).User("alice").Account("other"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidAccount, Msg: "Invalid account or account/partition combination specified",
				Detail: `asked for account "other"; alice's accounts are lab: name one of them with --account, or leave --account out`},
		},
		{
			name: "AllowUnlistedUsers admits an unlisted user",
			snap: st.Anchor().Configure(func(c *sched.Config) { c.AllowUnlistedUsers = true }), job: st.Job(1).User("nobody"),
		},
		{
			name: "without accounts everyone is admitted",
			snap: fourGPUs(), job: st.Job(1).User("nobody"),
		},
		{
			name: "an unknown QOS is refused",
			snap: st.Anchor(), job: st.Job(1).User("alice").QOS("gold"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidQOS, Msg: "Invalid qos specification", Detail: `asked for QOS "gold"; the QOS here are normal`},
		},
		{
			name: "MaxSubmitJobsPerUser counts live jobs",
			snap: limitedQOS, job: st.Job(3).User("alice").QOS("short"),
		},
		{
			name: "MaxSubmitJobsPerUser refuses past the limit, counting array tasks",
			snap: limitedQOS, job: st.Job(3).User("alice").QOS("short").ArrayTasks(0, 1),
			want: &sched.SubmitError{Code: slurm.ErrAccountingPolicy,
				Msg:    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
				Detail: "asked for 2 more jobs in QOS short, where alice has 1 pending or running; its MaxSubmitJobsPerUser is 2: wait for some to end"},
		},
		{
			name: "MaxJobCountPerUser takes a job up to the user's share",
			snap: shared(), job: st.Job(5).User("alice"),
		},
		{
			name: "MaxJobCountPerUser counts ended jobs still kept and each array task, as MaxJobCount does",
			snap: shared(), job: st.Job(5).User("alice").ArrayTasks(0, 1),
			want: &sched.SubmitError{Code: slurm.ErrAccountingPolicy,
				Msg:    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
				Detail: "alice holds 3 jobs (pending, running, or ended less than MinJobAge ago) and asked for 2 more; one user may hold 4 of MaxJobCount's 10 (MaxJobCountPerUser), so that others can still submit: cancel what is not needed (scancel) and submit again once those have left the queue (MinJobAge after their end), or ask the administrator to raise MaxJobCountPerUser"},
		},
		{
			name: "MaxJobCountPerUser leaves room for others: bob submits beside alice's share",
			snap: shared(), job: st.Job(5).User("bob").ArrayTasks(0, 1, 2),
		},
		{
			name: "MaxJobCountPerUser 0 is no limit",
			snap: shared().Configure(func(c *sched.Config) { c.MaxJobCountPerUser = 0 }), job: st.Job(5).User("alice").ArrayTasks(0, 1, 2, 3, 4),
		},
		{
			name: "array task ids must stay below MaxArraySize",
			snap: st.Anchor().Configure(func(c *sched.Config) { c.MaxArraySize = 100 }), job: st.Job(1).User("alice").ArrayTasks(0, 50, 100),
			want: &sched.SubmitError{Code: slurm.ErrInvalidArray, Msg: "Invalid job array specification",
				Detail: "asked for array task ids up to 100; MaxArraySize is 100, so task ids go from 0 to 99"},
		},
		{
			name: "more GPUs than the node has (sbatch_gpus_16.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUs(16),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: "asked for 16 GPUs; the largest node here has 4"},
		},
		{
			name: "more memory than the node has (sbatch_mem_too_much.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").Mem(200 * st.GiB),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Notes:  []string{"Memory specification can not be satisfied"},
				Detail: "asked for 200G of memory; the largest node here has 64000M (its RealMemory): ask for 64000M or less"},
		},
		{
			name: "more GPU memory than the largest GPU",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUMem(100 * st.GiB),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: "asked for 100G of GPU memory per GPU; the largest GPU here has 80G"},
		},
		{
			name: "a GPU type no node has, as real Slurm refuses --gpus=abc (sbatch_gpus_bad.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUs(1).GPUType("h100"),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: `asked for GPU type "h100"; the GPUs here are 4 x a100`},
		},
		{
			name: "five GPUs with 40G each on four",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUs(5).GPUMem(40 * st.GiB),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: "asked for 5 GPUs with 40G of memory each; the largest node here has 4 with that much"},
		},
		{
			name: "more CPUs than the node has",
			snap: st.Anchor(), job: st.Job(1).User("alice").CPUs(64),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: "asked for 64 CPUs; the largest node here has 16"},
		},
		{
			name: "EnforcePartLimits refuses a time limit over MaxTime, naming a partition that takes it",
			snap: maxTime2d(true), job: st.Job(1).User("alice").Time(72 * time.Hour),
			want: &sched.SubmitError{Code: slurm.ErrInvalidTimeLimit, Msg: "Requested time limit is invalid (missing or exceeds some limit)",
				Detail: "asked for a time limit of 3-00:00:00; partition gpu's MaxTime is 2-00:00:00: ask for 2-00:00:00 or less, or use partition scavenger (MaxTime UNLIMITED)"},
		},
		{
			name: "EnforcePartLimits takes a limit equal to MaxTime",
			snap: maxTime2d(true), job: st.Job(1).User("alice").Time(48 * time.Hour),
		},
		{
			name: "without EnforcePartLimits a limit over MaxTime is taken (it pends: PartitionTimeLimit)",
			snap: maxTime2d(false), job: st.Job(1).User("alice").Time(72 * time.Hour),
		},
		{
			name: "no partition asked for and none is the default (ESLURM_DEFAULT_PARTITION_NOT_SET)",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(4, "a100", 80*st.GiB)).Part(st.Part("gpu"), st.Part("long")),
			job:  st.Job(1).User("alice"),
			want: &sched.SubmitError{Code: slurm.ErrDefaultPartitionNotSet, Msg: "No partition specified or system default partition",
				Detail: "no partition was asked for and none is the default; the partitions here are gpu, long: name one with --partition"},
		},
		{
			name: "AllowAccounts leaves the job's account out",
			snap: st.Anchor().Account("physics", "root", 1, st.U("alice", 1)).Part(st.Part("phys").Accounts("physics")),
			job:  st.Job(1).User("bob").Partition("phys"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidAccount, Msg: "Invalid account or account/partition combination specified",
				Detail: "the job's account is lab; partition phys takes jobs of account physics only (AllowAccounts): use another partition, or an account it allows with --account"},
		},
		{
			name: "AllowAccounts admits the accounts it lists",
			snap: st.Anchor().Account("physics", "root", 1, st.U("alice", 1)).Part(st.Part("phys").Accounts("physics")),
			job:  st.Job(1).User("alice").Account("physics").Partition("phys"),
		},
		{
			name: "a DRAIN partition takes no new jobs, naming those that do",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(4, "a100", 80*st.GiB)).
				Part(st.Part("gpu").Default().Drain(), st.Part("scavenger").Tier(0).Requeue()),
			job: st.Job(1).User("alice"),
			want: &sched.SubmitError{Code: slurm.ErrPartitionNotAvail, Msg: "Required partition not available (inactive or drain)",
				Detail: "partition gpu is DRAIN: it takes no new jobs; the partitions that do are scavenger"},
		},
		{
			name: "drained GPUs still count: they may come back",
			snap: st.Snap().Node(st.Node("gpu01").GPUs(2, "a100", 80*st.GiB).Drain(0).Drain(1)), job: st.Job(1).GPUs(2),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.snap.Build()
			before := st.Clone(snap)
			err := sched.CheckSubmit(tt.job.Build(), snap)
			var got *sched.SubmitError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("CheckSubmit returned %T %v, want *sched.SubmitError", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckSubmit (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, snap); diff != "" {
				t.Errorf("CheckSubmit modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSubmitErrorPrintsSlurmsText(t *testing.T) {
	err := sched.CheckSubmit(st.Job(1).User("alice").GPUs(16).Build(), st.Anchor().Build())
	if got, want := err.Error(), "Requested node configuration is not available"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestWillRun(t *testing.T) {
	now := st.Epoch
	snap := fourGPUs().Job(st.Job(1).GPUs(4).Time(time.Hour).Running(now.Add(-30*time.Minute), "gpu01", 0, 1, 2, 3)).Build()
	tests := []struct {
		name string
		job  *st.JobBuilder
		want sched.Estimate
	}{
		{
			name: "a job that must wait is told when it would start",
			job:  st.Job(2).GPUs(2).CPUs(4),
			want: sched.Estimate{Start: now.Add(30 * time.Minute), Node: "gpu01", CPUs: 4, Partition: "gpu", Reason: slurm.ReasonResources, Detail: "needs 2 GPUs, 0 free"},
		},
		{
			name: "a CPU job starts now",
			job:  st.Job(2).CPUs(2),
			want: sched.Estimate{Start: now, Node: "gpu01", CPUs: 2, Partition: "gpu"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := st.Clone(snap)
			if diff := cmp.Diff(tt.want, sched.WillRun(snap, tt.job.Build())); diff != "" {
				t.Errorf("WillRun (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, snap); diff != "" {
				t.Errorf("WillRun modified its input (-before +after):\n%s", diff)
			}
		})
	}
}
