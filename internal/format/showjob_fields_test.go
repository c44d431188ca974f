package format

import (
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The values below are what real Slurm 22.05 printed for the same
// requests on a 16-CPU node (testdata/showjob).

func TestNumNodes(t *testing.T) {
	cfg := &config.Config{}
	cfg.Node.CPUs = 16
	nodes := func(lo, hi int) func(*jobscript.Request) {
		return func(r *jobscript.Request) { r.Nodes, r.NodesSet = jobscript.NodeRange{Min: lo, Max: hi}, true }
	}
	tasks := func(n int) func(*jobscript.Request) {
		return func(r *jobscript.Request) { r.NTasks, r.NTasksSet = n, true }
	}
	cpt := func(n int) func(*jobscript.Request) { return func(r *jobscript.Request) { r.CPUsPerTask = n } }
	perNode := func(n int) func(*jobscript.Request) { return func(r *jobscript.Request) { r.NTasksPerNode = n } }
	perCore := func(v string) func(*jobscript.Request) {
		return func(r *jobscript.Request) {
			r.Other = append(r.Other, jobscript.Setting{Name: "ntasks-per-core", Value: v})
		}
	}
	for _, tt := range []struct {
		name    string
		running bool
		set     []func(*jobscript.Request)
		want    string
	}{
		{name: "plain", want: "1"},
		{name: "-N1", set: []func(*jobscript.Request){nodes(1, 1)}, want: "1-1"},
		{name: "-N1-3", set: []func(*jobscript.Request){nodes(1, 3)}, want: "1-3"},
		{name: "-N1 running", running: true, set: []func(*jobscript.Request){nodes(1, 1)}, want: "1"},
		{name: "-c4", set: []func(*jobscript.Request){cpt(4)}, want: "1"},
		{name: "-n2 -c3", set: []func(*jobscript.Request){tasks(2), cpt(3)}, want: "2"},
		{name: "-n4 -c3", set: []func(*jobscript.Request){tasks(4), cpt(3)}, want: "2"},
		{name: "-n2 -c8", set: []func(*jobscript.Request){tasks(2), cpt(8)}, want: "1"},
		{name: "-N1 -n2 -c3", set: []func(*jobscript.Request){nodes(1, 1), tasks(2), cpt(3)}, want: "1-1"},
		{name: "-n4 --ntasks-per-node=4", set: []func(*jobscript.Request){tasks(4), perNode(4)}, want: "1"},
		{name: "-n4 --ntasks-per-core=2", set: []func(*jobscript.Request){tasks(4), perCore("2")}, want: "1"},
		{name: "-n4", set: []func(*jobscript.Request){tasks(4)}, want: "1"},
	} {
		j := &api.Job{}
		j.State = slurm.Pending
		if tt.running {
			j.State = slurm.Running
		}
		j.Request.CPUsPerTask = 1
		for _, f := range tt.set {
			f(&j.Request)
		}
		if got := numNodes(j, &cfg.Node); got != tt.want {
			t.Errorf("%s: NumNodes=%s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestEligibleAndStartTimes(t *testing.T) {
	now := time.Date(2026, 12, 2, 2, 43, 51, 0, time.UTC)
	later := now.Add(time.Hour)
	pending := func(mod func(*api.Job)) *api.Job {
		j := &api.Job{}
		j.State, j.Reason, j.Submit = slurm.Pending, slurm.ReasonPriority, now
		mod(j)
		return j
	}
	for _, tt := range []struct {
		name                  string
		job                   *api.Job
		eligible, accrue, beg time.Time
	}{
		{name: "eligible", job: pending(func(*api.Job) {}), eligible: now, accrue: now},
		{name: "held", job: pending(func(j *api.Job) { j.Hold, j.Reason = jobrec.HoldUser, slurm.ReasonJobHeldUser })},
		{name: "held with --begin", job: pending(func(j *api.Job) {
			j.Hold, j.Reason, j.Request.Begin = jobrec.HoldUser, slurm.ReasonJobHeldUser, later
		}), eligible: later, beg: later},
		{name: "--begin", job: pending(func(j *api.Job) { j.Reason, j.Request.Begin = slurm.ReasonBeginTime, later }),
			eligible: later, beg: later},
		{name: "held, dependency", job: pending(func(j *api.Job) {
			j.Hold, j.Reason, j.DepReason = jobrec.HoldUser, slurm.ReasonJobHeldUser, slurm.ReasonDependency
		})},
		{name: "dependency and --begin", job: pending(func(j *api.Job) {
			j.Reason, j.DepReason, j.Request.Begin = slurm.ReasonDependency, slurm.ReasonDependency, later
		}), eligible: later, beg: later},
		{name: "--begin=now is no begin", job: pending(func(j *api.Job) { j.Request.Begin = now }),
			eligible: now, accrue: now},
	} {
		if got := eligibleTime(tt.job, now); !got.Equal(tt.eligible) {
			t.Errorf("%s: EligibleTime %v, want %v", tt.name, got, tt.eligible)
		}
		if got := showAccrueTime(tt.job, now); !got.Equal(tt.accrue) {
			t.Errorf("%s: AccrueTime %v, want %v", tt.name, got, tt.accrue)
		}
		if got := showStartTime(tt.job, now); !got.Equal(tt.beg) {
			t.Errorf("%s: StartTime %v, want %v", tt.name, got, tt.beg)
		}
	}
}

// slurmctld tests no dependency of a held job: held before it ever became
// eligible, it shows every clause unfulfilled whatever the clauses' jobs
// did since (golden/squeue_h_n_o_t_r_E_held_singleton.txt; a held
// afterok on a job that completed showed afterok:N(unfulfilled) too), and
// held after its dependencies were met, none.
func TestDependencyShowsForHeldJobs(t *testing.T) {
	dep, err := slurmsyntax.ParseDependency("afterok:2,singleton")
	if err != nil {
		t.Fatal(err)
	}
	j := &api.Job{}
	j.State, j.Reason, j.Hold = slurm.Pending, slurm.ReasonJobHeldUser, jobrec.HoldUser
	j.Request.Dependency = &jobscript.Dependency{Spec: "afterok:2,singleton", Parsed: dep}
	const want = "afterok:2(unfulfilled),singleton(unfulfilled)"
	for _, r := range []slurm.Reason{"", slurm.ReasonDependency, slurm.ReasonDependencyNeverSatisfied} {
		j.DepReason = r
		if got := dependency(j); got != want {
			t.Errorf("held, the scheduler's view %q: %s, want %s", r, got, want)
		}
	}
	j.Hold, j.Reason = jobrec.HoldAdmin, slurm.ReasonJobHeldAdmin
	if got := dependency(j); got != want {
		t.Errorf("held by an operator: %s, want %s", got, want)
	}
	j.Eligible = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	if got := dependency(j); got != Null {
		t.Errorf("held once eligible: %s, want %s", got, Null)
	}
}

func TestCPUFreq(t *testing.T) {
	for arg, want := range map[string]string{
		"high":                 "CPU_max_freq=High ",
		"low-high:performance": "CPU_min_freq=Low CPU_max_freq=High Governor=Performance",
		"2400000":              "CPU_max_freq=2400000 ",
		"performance":          "Governor=Performance",
		"medium-highm1":        "CPU_min_freq=Medium CPU_max_freq=Highm1 ",
		"bogus":                "",
		"performance:ondemand": "",
	} {
		j := &api.Job{}
		j.Request.Other = []jobscript.Setting{{Name: "cpu-freq", Value: arg, HasValue: true}}
		if got := cpuFreq(j); got != want {
			t.Errorf("--cpu-freq=%s: %q, want %q", arg, got, want)
		}
	}
}
