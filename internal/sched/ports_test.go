package sched_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// portsSnap is the four-GPU node with MpiParams=ports=12000-12003.
func portsSnap(jobs ...*st.JobBuilder) sched.Snapshot {
	s := fourGPUs().Job(jobs...).Build()
	s.Ports = sched.PortRange{Lo: 12000, Hi: 12003}
	return s
}

func TestPortsAreAResource(t *testing.T) {
	now := st.Epoch
	tests := []struct {
		name string
		snap sched.Snapshot
		// want is each started job's ports; the jobs not in it must wait
		// with Resources.
		want    map[uint32][]int
		waiting []uint32
	}{
		{
			name: "two jobs started in one pass get disjoint ports, lowest first",
			snap: portsSnap(st.Job(1).Ports(2), st.Job(2).Ports(2)),
			want: map[uint32][]int{1: {12000, 12001}, 2: {12002, 12003}},
		},
		{
			name: "a job that needs more ports than are free waits though GPUs and CPUs are free",
			snap: portsSnap(st.Job(1).Ports(3), st.Job(2).Ports(2)),
			want: map[uint32][]int{1: {12000, 12001, 12002}}, waiting: []uint32{2},
		},
		{
			name: "the ports of running jobs (as a restarted daemon reads them) are not given again",
			snap: portsSnap(st.Job(1).Ports(2).Running(now.Add(-time.Minute), "gpu01").HoldsPorts(12000, 12002),
				st.Job(2).Ports(2)),
			want: map[uint32][]int{2: {12001, 12003}},
		},
		{
			name: "a job asking for no ports (srun --resv-ports=0) starts beside jobs holding them all; one of one task waits for 2",
			snap: portsSnap(st.Job(1).Ports(4).Running(now, "gpu01").HoldsPorts(12000, 12001, 12002, 12003),
				st.Job(2).Ports(0), st.Job(3)),
			want: map[uint32][]int{2: nil}, waiting: []uint32{3},
		},
		{
			name: "a port outside the range (the range since changed) holds nothing",
			snap: portsSnap(st.Job(1).Ports(1).Running(now, "gpu01").HoldsPorts(13000),
				st.Job(2).Ports(4)),
			want: map[uint32][]int{2: {12000, 12001, 12002, 12003}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := st.Cycle(t, tc.snap)
			got := map[uint32][]int{}
			for _, s := range plan.Starts {
				got[s.JobID] = s.Alloc.Ports
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
			for _, id := range tc.waiting {
				var d sched.Decision
				ok := false
				for _, p := range plan.Pending {
					if p.JobID == id {
						d, ok = p, true
					}
				}
				if !ok || d.Reason != slurm.ReasonResources || !strings.Contains(d.Detail, "ports of MpiParams' 12000-12003") {
					t.Errorf("job %d: %+v, want Resources with a detail naming the ports", id, d)
				}
			}
		})
	}
}

func TestAJobWaitingForPortsRunsWhenTheyAreFree(t *testing.T) {
	h := st.NewHarness(t, portsSnap(st.Job(1).Ports(3).Time(time.Hour), st.Job(2).Ports(2).Time(time.Hour)))
	h.Runtime(1, 10*time.Minute)
	h.Runtime(2, 10*time.Minute)
	h.Cycle()
	if got := h.Job(2).State; got != slurm.Pending {
		t.Fatalf("job 2 is %s while job 1 holds 3 of the 4 ports, want PENDING", got)
	}
	h.Advance(10 * time.Minute)
	h.Cycle()
	if j := h.Job(2); j.State != slurm.Running || !cmp.Equal(j.Alloc.Ports, []int{12000, 12001}) {
		t.Fatalf("job 2 after job 1 ended: %s with ports %v, want RUNNING with 12000-12001", j.State, j.Alloc.Ports)
	}
}

func TestMorePortsThanTheRangeIsRefused(t *testing.T) {
	snap := portsSnap()
	err := sched.CheckSubmit(st.Job(1).Ports(5).Build(), snap)
	var se *sched.SubmitError
	if !errors.As(err, &se) || se.Code != slurm.ErrPortsInvalid || se.Msg != "Requires more ports than can be reserved" ||
		!strings.Contains(se.Detail, `would hold 5 ports`) || !strings.Contains(se.Detail, `"ports=12000-12003" holds 4`) {
		t.Fatalf("CheckSubmit of 5 ports in a range of 4: %v (%+v)", err, se)
	}
	if err := sched.CheckSubmit(st.Job(2).Ports(4).Build(), snap); err != nil {
		t.Fatalf("CheckSubmit of 4 ports in a range of 4: %v", err)
	}
	j := st.Job(3).Build()
	j.Req.Tasks = 4
	if err := sched.CheckSubmit(j, snap); !errors.As(err, &se) || !strings.Contains(se.Detail, "would hold 5 ports") {
		t.Fatalf("CheckSubmit of 4 tasks (5 ports) in a range of 4: %v", err)
	}
}

func TestFormatPortsIsSlurms(t *testing.T) {
	for _, tc := range []struct {
		ports []int
		want  string
	}{
		{nil, ""},
		{[]int{12005}, "12005"},
		{[]int{12000, 12001, 12002, 12003}, "12000-12003"},
		{[]int{12000, 12001, 12005, 12007, 12008}, "12000-12001,12005,12007-12008"},
	} {
		if got := slurm.FormatPorts(tc.ports); got != tc.want {
			t.Errorf("FormatPorts(%v) = %q, want %q", tc.ports, got, tc.want)
		}
	}
	r := sched.PortRange{Lo: 12000, Hi: 12999}
	if got := sched.JobPorts(sched.PortRange{}, sched.Request{Tasks: 3}); got != 0 {
		t.Errorf("JobPorts without a range = %d, want 0", got)
	}
	if got := sched.JobPorts(r, sched.Request{Tasks: 3}); got != 4 {
		t.Errorf("JobPorts of 3 tasks = %d, want 4 (Slurm's tasks + 1)", got)
	}
	if got := sched.JobPorts(r, sched.Request{Tasks: 3, PortsAsked: true}); got != 0 {
		t.Errorf("JobPorts of --resv-ports=0 = %d, want 0", got)
	}
}

func TestStepPortsComeFromTheJobs(t *testing.T) {
	job := []int{12000, 12001, 12002}
	for _, tc := range []struct {
		name          string
		jobPorts      []int
		asked, ntasks int
		want          []int
		refused       bool
	}{
		{name: "no MpiParams: none, whatever is asked", jobPorts: nil, asked: 5, ntasks: 1},
		{name: "not asked: tasks + 1", jobPorts: job, asked: -1, ntasks: 1, want: []int{12000, 12001}},
		{name: "not asked, more tasks than the job holds ports: all of them", jobPorts: job, asked: -1, ntasks: 4, want: job},
		{name: "--resv-ports=1", jobPorts: job, asked: 1, ntasks: 2, want: []int{12000}},
		{name: "a bare --resv-ports (0): none", jobPorts: job, asked: 0, ntasks: 2},
		{name: "more than the job holds: refused", jobPorts: job, asked: 4, ntasks: 1, refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sched.StepPorts(tc.jobPorts, tc.asked, tc.ntasks)
			var se *sched.StepError
			if tc.refused != (errors.As(err, &se) && se.Code == slurm.ErrPortsInvalid) {
				t.Fatalf("StepPorts error %v, want refused=%v", err, tc.refused)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ports (-want +got):\n%s", diff)
			}
		})
	}
}
