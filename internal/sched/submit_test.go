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

func TestCheckSubmit(t *testing.T) {
	full := func(n int) *st.SnapBuilder {
		b := st.Anchor().Configure(func(c *sched.Config) { c.MaxJobCount = n })
		for i := range n - 1 {
			b.Job(st.Job(uint32(100+i)).User("alice").State(slurm.Completed, 0))
		}
		return b
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
			name: "MaxJobCount counts finished jobs still kept, and sbatch retries (sbatch_maxjobcount_reached.txt)",
			snap: full(5), job: st.Job(1).User("alice"),
			want: &sched.SubmitError{Code: slurm.EAGAIN, Msg: "Resource temporarily unavailable", Retry: true,
				Detail: "MaxJobCount limit (5) reached"},
		},
		{
			name: "an unknown partition is refused (sbatch_bad_partition.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").Partition("nope"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidPartitionName, Msg: "Invalid partition name specified",
				Notes: []string{"invalid partition specified: nope"}, Detail: "invalid partition specified: nope"},
		},
		{
			name: "a user no account lists is refused (sbatch_no_association.txt)",
			snap: st.Anchor(), job: st.Job(1).User("nobody"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidAccount, Msg: "Invalid account or account/partition combination specified",
				Detail: `user nobody has no association with account ""`},
		},
		{
			name: "an account the user is not in is refused",
			snap: st.Anchor().Account("other", "", 1, st.U("carol", 1)), job: st.Job(1).User("alice").Account("other"),
			want: &sched.SubmitError{Code: slurm.ErrInvalidAccount, Msg: "Invalid account or account/partition combination specified",
				Detail: `user alice has no association with account "other"`},
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
			want: &sched.SubmitError{Code: slurm.ErrInvalidQOS, Msg: "Invalid qos specification", Detail: `QOS "gold" does not exist`},
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
				Detail: "alice has 1 jobs in QOS short, MaxSubmitJobsPerUser is 2"},
		},
		{
			name: "array task ids must stay below MaxArraySize",
			snap: st.Anchor().Configure(func(c *sched.Config) { c.MaxArraySize = 100 }), job: st.Job(1).User("alice").ArrayTasks(0, 50, 100),
			want: &sched.SubmitError{Code: slurm.ErrInvalidArray, Msg: "Invalid job array specification",
				Detail: "task ids must be below MaxArraySize=100"},
		},
		{
			name: "more GPUs than the node has (sbatch_gpus_16.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUs(16),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: "needs 16 GPUs, the largest node has 4"},
		},
		{
			name: "more memory than the node has (sbatch_mem_too_much.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").Mem(200 * st.GiB),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Notes: []string{"Memory specification can not be satisfied"}, Detail: "Memory specification can not be satisfied"},
		},
		{
			name: "more GPU memory than the largest GPU",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUMem(100 * st.GiB),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: "needs 100.0 GiB of GPU memory, the largest GPU has 80.0 GiB"},
		},
		{
			name: "a GPU type no node has, as real Slurm refuses --gpus=abc (sbatch_gpus_bad.txt)",
			snap: st.Anchor(), job: st.Job(1).User("alice").GPUs(1).GPUType("h100"),
			want: &sched.SubmitError{Code: slurm.ErrRequestedNodeConfigUnavailable, Msg: "Requested node configuration is not available",
				Detail: `no GPU of type "h100" on this machine`},
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
