package sched_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// recordedWeights are scripts/record-priority's: PriorityWeightAssoc=1000,
// PriorityWeightTRES=CPU=1000,Mem=2000,billing=1000,GRES/gpu=4000.
func recordedWeights(c *sched.Config) {
	c.Weights = sched.Weights{Assoc: 1000, TRES: []sched.TRESWeight{
		{Name: "cpu", Weight: 1000}, {Name: "mem", Weight: 2000}, {Name: "billing", Weight: 1000}, {Name: "gres/gpu", Weight: 4000},
	}}
}

// recorded is the recording's cluster: 16 CPUs, 64000 MB, four GPUs, the
// partition billing GPUs; lab's Priority 100, alice's 300.
func recorded() *st.SnapBuilder {
	return st.Snap().Configure(recordedWeights).
		Node(st.Node("gpu01").CPUs(16).Mem(64000*mib).GPUs(4, "a100", 80*st.GiB)).
		Part(st.Part("gpu").Default().Tier(1)).
		Account("lab", "root", 1, sched.UserShare{Name: "alice", Shares: 2, Priority: 300}, st.U("bob", 1)).
		AccountPriority("lab", 100)
}

const mib = 1 << 20

func tres(name string, w, v float64) sched.TRESFactor {
	return sched.TRESFactor{Name: name, Weight: w, Value: v}
}

// TestTRESAndAssocFactors: the association factor is the association's
// Priority (its own or inherited) over the largest; each TRES factor is
// the job's count over the partition's total, weighted. The first rows
// are testdata/golden/prio_sprio_l.txt's jobs 3, 4 and 6.
func TestTRESAndAssocFactors(t *testing.T) {
	tests := []struct {
		name string
		snap *st.SnapBuilder
		want sched.PriorityRow // JobID 1's row; Partition and User filled in
	}{
		{
			name: "a1: 2 of 16 CPUs, 4000 of 64000 MB, 1 of 4 GPUs and of the billing; alice's 300 is the largest",
			snap: recorded().Job(st.Job(1).User("alice").CPUs(2).Mem(4000 * mib).GPUs(1)),
			want: sched.PriorityRow{Priority: 2500, Assoc: 1000, TRES: []sched.TRESFactor{
				tres("cpu", 1000, 125), tres("mem", 2000, 125), tres("billing", 1000, 250), tres("gres/gpu", 4000, 1000)}},
		},
		{
			name: "b1: bob inherits lab's 100",
			snap: recorded().Job(st.Job(1).User("bob").CPUs(4).Mem(8000 * mib).GPUs(2)),
			want: sched.PriorityRow{Priority: 3333, Assoc: 1000.0 / 3, TRES: []sched.TRESFactor{
				tres("cpu", 1000, 250), tres("mem", 2000, 250), tres("billing", 1000, 500), tres("gres/gpu", 4000, 2000)}},
		},
		{
			name: "b2: nice is subtracted from the sum; a TRES the job has none of is left out",
			snap: recorded().Job(st.Job(1).User("bob").CPUs(1).Mem(500 * mib).Nice(100)),
			want: sched.PriorityRow{Priority: 311, Assoc: 1000.0 / 3, Nice: 100, TRES: []sched.TRESFactor{
				tres("cpu", 1000, 62.5), tres("mem", 2000, 15.625)}},
		},
		{
			name: "NO_NORMAL_TRES weighs the counts as they are",
			snap: recorded().Configure(func(c *sched.Config) { c.Flags |= sched.FlagNoNormalTRES }).
				Job(st.Job(1).User("alice").CPUs(2).GPUs(1)),
			want: sched.PriorityRow{Priority: 8000, Assoc: 1000, TRES: []sched.TRESFactor{
				tres("cpu", 1000, 2000), tres("billing", 1000, 1000), tres("gres/gpu", 4000, 4000)}},
		},
		{
			name: "NO_NORMAL_ASSOC weighs the association's Priority as it is",
			snap: recorded().Configure(func(c *sched.Config) {
				c.Flags |= sched.FlagNoNormalAssoc
				c.Weights.TRES = nil
				c.Weights.Assoc = 2
			}).Job(st.Job(1).User("bob")),
			want: sched.PriorityRow{Priority: 200, Assoc: 200},
		},
		{
			name: "gres/gpu:TYPE counts a request that names the type",
			snap: recorded().Configure(func(c *sched.Config) {
				c.Weights = sched.Weights{TRES: []sched.TRESWeight{{Name: "gres/gpu:a100", Weight: 400}}}
			}).Job(st.Job(1).User("alice").GPUs(2).GPUType("a100")),
			want: sched.PriorityRow{Priority: 200, TRES: []sched.TRESFactor{tres("gres/gpu:a100", 400, 200)}},
		},
		{
			name: "gres/gpu:TYPE does not count a request of any type",
			snap: recorded().Configure(func(c *sched.Config) {
				c.Weights = sched.Weights{TRES: []sched.TRESWeight{{Name: "gres/gpu:a100", Weight: 400}}}
			}).Job(st.Job(1).User("alice").GPUs(2)),
			want: sched.PriorityRow{Priority: 1},
		},
		{
			name: "gres/shard: GPU memory in shards over every GPU's",
			snap: recorded().Configure(func(c *sched.Config) {
				c.Weights = sched.Weights{TRES: []sched.TRESWeight{{Name: "gres/shard", Weight: 3200}}}
				c.ShardSize = st.GiB
			}).Job(st.Job(1).User("alice").GPUMem(10 * st.GiB)),
			want: sched.PriorityRow{Priority: 100, TRES: []sched.TRESFactor{tres("gres/shard", 3200, 100)}},
		},
		{
			name: "negative weights lower the priority",
			snap: recorded().Configure(func(c *sched.Config) {
				c.Weights = sched.Weights{FairShare: 1000, TRES: []sched.TRESWeight{{Name: "gres/gpu", Weight: -400}}}
			}).Job(st.Job(1).User("alice").GPUs(4)),
			want: sched.PriorityRow{Priority: 600, FairShare: 1000, TRES: []sched.TRESFactor{tres("gres/gpu", -400, -400)}},
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
			want.JobID, want.User, want.Partition = 1, rows[0].User, rows[0].Partition
			if diff := cmp.Diff(want, rows[0], sixDecimals); diff != "" {
				t.Errorf("priority row (-want +got):\n%s", diff)
			}
		})
	}
}

// A running job's TRES are its allocation: the pass orders running jobs
// (preemption, yields) by the same priority.
func TestTRESFactorOfARunningJobIsItsAllocation(t *testing.T) {
	snap := recorded().Configure(func(c *sched.Config) {
		c.Weights = sched.Weights{TRES: []sched.TRESWeight{{Name: "cpu", Weight: 1600}}}
	}).Job(
		st.Job(1).User("alice").CPUs(1).GPUs(1).CPUIDs(0, 1, 2, 3).Running(st.Epoch, "gpu01", 0),
		st.Job(2).User("bob").CPUs(4).GPUs(1),
	).Build()
	rows := sched.Priorities(snap)
	if len(rows) != 1 || rows[0].JobID != 2 || rows[0].Priority != 400 {
		t.Errorf("pending bob's 4 of 16 CPUs under 1600: want priority 400, got %+v", rows)
	}
}

func TestParsePriorityFlagsNoNormalAll(t *testing.T) {
	f, err := sched.ParsePriorityFlags([]string{"no_normal_all"})
	if err != nil {
		t.Fatal(err)
	}
	want := sched.FlagNoNormalAssoc | sched.FlagNoNormalPart | sched.FlagNoNormalQOS | sched.FlagNoNormalTRES
	if f != want {
		t.Errorf("NO_NORMAL_ALL = %b, want %b", f, want)
	}
}

// Associations inherit Priority from the nearest ancestor that has one
// (as_mysql_assoc.c); the largest of all is the denominator.
func TestAssocPriorityInherited(t *testing.T) {
	snap := st.Snap().Configure(func(c *sched.Config) { c.Weights = sched.Weights{Assoc: 1000} }).
		Account("dept", "root", 1).
		Account("grp", "dept", 1, st.U("carol", 1), sched.UserShare{Name: "dave", Shares: 1, Priority: 40}).
		AccountPriority("dept", 10).
		Job(st.Job(1).User("carol"), st.Job(2).User("dave")).Build()
	got := map[uint32]float64{}
	for _, r := range sched.Priorities(snap) {
		got[r.JobID] = r.Assoc
	}
	want := map[uint32]float64{1: 250, 2: 1000}
	if diff := cmp.Diff(want, got, sixDecimals); diff != "" {
		t.Errorf("association factors (-want +got):\n%s", diff)
	}
}

// SMALL_RELATIVE_TO_TIME: the job's CPUs (at least a node's share of the
// cluster's) per minute of its limit, over the cluster's CPUs.
func TestJobSizeRelativeToTime(t *testing.T) {
	for _, tt := range []struct {
		name  string
		favor bool
		want  float64
	}{
		{"favouring large jobs", false, 1000.0 / 60},
		{"favouring small jobs", true, 1000 - 1000.0/60},
	} {
		t.Run(tt.name, func(t *testing.T) {
			snap := st.Snap().Configure(func(c *sched.Config) {
				c.Weights = sched.Weights{JobSize: 1000}
				c.Flags |= sched.FlagSmallRelativeToTime
				c.FavorSmall = tt.favor
			}).Node(st.Node("n").CPUs(16)).Job(st.Job(1).CPUs(4).Time(time.Hour)).Build()
			rows := sched.Priorities(snap)
			if len(rows) != 1 {
				t.Fatalf("rows: %+v", rows)
			}
			if diff := cmp.Diff(tt.want, rows[0].JobSize, sixDecimals); diff != "" {
				t.Errorf("job size (-want +got):\n%s", diff)
			}
		})
	}
}

// The plan reports the jobs that became eligible and have no Eligible
// time yet, with the time slurmctld would record: the pass's for a
// dependency met, the begin time for a job that waited on it alone.
func TestPlanReportsNewlyEligibleJobs(t *testing.T) {
	begin := st.Epoch.Add(-time.Minute)
	snap := st.Snap().Node(st.Node("n").CPUs(1)).Job(
		st.Job(1).State(slurm.Completed, 0),
		st.Job(2).CPUs(2).AfterOK(1),                                       // met now
		st.Job(3).CPUs(2).Submitted(st.Epoch.Add(-time.Hour)).Begin(begin), // begin passed
		st.Job(4).CPUs(2).Hold(),                                           // held
		st.Job(5).CPUs(2).AfterOK(6),                                       // 6 still pending
		st.Job(6).CPUs(2).Eligible(st.Epoch.Add(-time.Hour)),               // already eligible
		st.Job(7).CPUs(2).Begin(st.Epoch.Add(time.Minute)),                 // not yet
	).Build()
	plan := sched.Cycle(snap)
	want := []sched.Eligibility{{JobID: 3, At: begin}, {JobID: 2, At: st.Epoch}} // in scheduling order
	if diff := cmp.Diff(want, plan.Eligible); diff != "" {
		t.Errorf("Plan.Eligible (-want +got):\n%s", diff)
	}
}

// A job whose dependency was just met, not yet given its Eligible time,
// has waited nothing: its age is 0, not its time since submission.
func TestAgeOfAJobWhoseDependencyWasJustMet(t *testing.T) {
	snap := st.Snap().Configure(func(c *sched.Config) { c.Weights = sched.Weights{Age: 1000} }).Job(
		st.Job(1).State(slurm.Completed, 0),
		st.Job(2).Submitted(st.Epoch.Add(-84*time.Hour)).AfterOK(1),
		st.Job(3).Submitted(st.Epoch.Add(-84*time.Hour)).AfterOK(1).Eligible(st.Epoch.Add(-42*time.Hour)),
	).Build()
	got := map[uint32]float64{}
	for _, r := range sched.Priorities(snap) {
		got[r.JobID] = r.Age
	}
	if diff := cmp.Diff(map[uint32]float64{2: 0, 3: 250}, got, sixDecimals); diff != "" {
		t.Errorf("ages (-want +got):\n%s", diff)
	}
}

// RootAssoc: root/root is in the tree with no accounts configured too,
// and counts among the users Fair Tree ranks
// (testdata/golden/implicit_sshare_al.txt).
func TestRootAssocWithoutAccounts(t *testing.T) {
	snap := st.Snap().Configure(func(c *sched.Config) {
		c.RootAssoc = true
		c.DefaultAccount = "anchor"
	}).Usage("anchor", "alice", 79).Build()
	snap.Users = []string{"alice", "bob", "root"}
	var got []string
	for _, r := range sched.FairShareTree(snap) {
		if r.User != "" {
			got = append(got, fmt.Sprintf("%s/%s %.6f", r.Account, r.User, r.FairShare))
		}
	}
	want := []string{"root/root 1.000000", "anchor/alice 0.250000", "anchor/bob 0.750000", "anchor/root 0.750000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user rows (-want +got):\n%s", diff)
	}
}

// A job that gives no time limit gets its QOS's MaxWall when the
// partition's limit is longer (acct_policy.c, _set_time_limit): it is the
// limit it starts with.
func TestQOSMaxWallIsTheDefaultLimit(t *testing.T) {
	snap := st.Snap().Node(st.Node("n").GPUs(1, "a100", 80*st.GiB)).
		QOS(sched.QOS{Name: "short", UsageFactor: 1, MaxWall: 30 * time.Minute}).
		Job(st.Job(1).QOS("short")).Build()
	plan := sched.Cycle(snap)
	if len(plan.Starts) != 1 || plan.Starts[0].TimeLimit != 30*time.Minute {
		t.Errorf("starts = %+v, want job 1 with the QOS's MaxWall of 30 minutes", plan.Starts)
	}
}

// The PriorityFlags that change the factors: NO_NORMAL_PART and
// NO_NORMAL_QOS weigh PriorityJobFactor and the QOS Priority as they are;
// ACCRUE_ALWAYS counts age from submission despite a dependency.
func TestPriorityFlagsOfTheFactors(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name  string
		flags sched.PriorityFlags
		snap  *st.SnapBuilder
		want  sched.PriorityRow
	}{
		{
			name: "NO_NORMAL_PART: the partition factor is PriorityJobFactor as is", flags: sched.FlagNoNormalPart,
			snap: st.Snap().Part(st.Part("low").Default().JobFactor(3), st.Part("high").JobFactor(4)).
				Configure(func(c *sched.Config) { c.Weights = sched.Weights{Partition: 10} }).Job(st.Job(1)),
			want: sched.PriorityRow{Priority: 30, PartitionPrio: 30},
		},
		{
			name: "NO_NORMAL_QOS: the QOS factor is the QOS Priority as is", flags: sched.FlagNoNormalQOS,
			snap: st.Snap().QOS(sched.QOS{Name: "normal", Priority: 7, UsageFactor: 1}, sched.QOS{Name: "high", Priority: 40, UsageFactor: 1}).
				Configure(func(c *sched.Config) { c.Weights = sched.Weights{QOS: 10} }).Job(st.Job(1).QOS("normal")),
			want: sched.PriorityRow{Priority: 70, QOSPrio: 70},
		},
		{
			name: "ACCRUE_ALWAYS: a job behind a dependency ages from its submission", flags: sched.FlagAccrueAlways,
			snap: st.Snap().Configure(func(c *sched.Config) { c.Weights = sched.Weights{Age: 700}; c.MaxAge = 7 * day }).
				Job(st.Job(9).Running(st.Epoch, ""), st.Job(1).Submitted(st.Epoch.Add(-day)).AfterOK(9)),
			want: sched.PriorityRow{Priority: 100, Age: 100},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := tt.snap.Configure(func(c *sched.Config) { c.Flags |= tt.flags }).Build()
			var got *sched.PriorityRow
			rows := sched.Priorities(snap)
			for i := range rows {
				if rows[i].JobID == 1 {
					got = &rows[i]
				}
			}
			if got == nil {
				t.Fatalf("no row for job 1: %+v", rows)
			}
			want := tt.want
			want.JobID, want.User, want.Partition = 1, got.User, got.Partition
			if diff := cmp.Diff(want, *got, sixDecimals); diff != "" {
				t.Errorf("priority row (-want +got):\n%s", diff)
			}
		})
	}
}
