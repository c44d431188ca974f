package format

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

func msec(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

var testNow = time.Date(2026, 11, 29, 10, 0, 0, 0, time.Local)

// job builds a test job: pending in gpu, one CPU, 1000M per CPU.
func job(id uint32, mods ...func(*api.Job)) *api.Job {
	mem := uint64(1000)
	j := &api.Job{Job: jobrec.Job{ID: id, ArrayTaskID: jobrec.NoTask, Name: "j", User: "root",
		Partition: "gpu", State: slurm.Pending, Reason: slurm.ReasonPriority, TimeLimit: slurmsyntax.Infinite}}
	j.Request.MemPerCPU, j.Request.NTasks = &mem, 1
	for _, m := range mods {
		m(j)
	}
	return j
}

func runningFor(d time.Duration) func(*api.Job) {
	return func(j *api.Job) {
		j.State, j.Reason, j.Start = slurm.Running, slurm.ReasonNone, testNow.Add(-d)
		j.Alloc.Node = "gpu01"
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		name     string
		spec     string
		header   string
		warnings []string
	}{
		{"fields with widths and justification", "%.6i %.9P %8j|", " JOBID PARTITION NAME    |\n", nil},
		{"text before the first field is printed", "id=%i", "id=JOBID\n", nil},
		{"runs of percent signs separate like strtok", "%i%%%t", "JOBIDST\n", nil},
		{"an unknown letter prints as typed, with a warning", "%i %q5 %t", "JOBID QOS5 ST\n", nil},
		{"a letter squeue lacks", "%i %!x", "JOBID %!x\n", []string{"Invalid job format specification: !"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, warnings := ParseFormat(tt.spec)
			if diff := cmp.Diff(tt.header, f.Header()); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLongFormat(t *testing.T) {
	tests := []struct {
		name     string
		spec     string
		header   string
		warnings []string
	}{
		{"no width is 20 left-justified", "JobID", "JOBID               \n", nil},
		{"names in any case, widths and suffixes", "jobid:.6 ,STATE:4|", " JOBID STAT|\n", nil},
		{"a suffix without a width", "JobID:\x1f,State:\x1f", "JOBID\x1fSTATE\x1f\n", nil},
		{"an unknown name prints its suffix alone", "JobID:5,Bogus:3x", "JOBIDx\n", []string{"Invalid job format specification: Bogus"}},
		{"numtask matches by prefix", "numtasks:6", "TASKS \n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, warnings := ParseLongFormat(tt.spec)
			if diff := cmp.Diff(tt.header, f.Header()); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLine(t *testing.T) {
	env := &Env{Now: testNow}
	f, _ := ParseLongFormat(SqueueDefault)
	tests := []struct {
		name string
		row  Row
		want string
	}{
		{
			"a pending job shows its reason",
			FullRow(job(27, func(j *api.Job) { j.Name, j.User, j.Reason = "alicegpu", "alice", slurm.ReasonResources }), env),
			"                27       gpu alicegpu    alice PD       0:00      1 (Resources)\n",
		},
		{
			"a running job shows its time and node",
			FullRow(job(25, runningFor(9*time.Second+300*time.Millisecond)), env),
			"                25       gpu        j     root  R       0:09      1 gpu01\n",
		},
		{
			"an array's pending record shows its tasks and throttle",
			FullRow(job(31, func(j *api.Job) { j.ArrayJobID, j.ArrayPending, j.ArrayLimit = 31, []int{2, 3}, 2 }), env),
			"        31_[2-3%2]       gpu        j     root PD       0:00      1 (Priority)\n",
		},
		{
			"an array task shows A_T",
			FullRow(job(26385, runningFor(3*time.Second), func(j *api.Job) { j.ArrayJobID, j.ArrayTaskID = 26383, 1 }), env),
			"           26383_1       gpu        j     root  R       0:03      1 gpu01\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, f.Line(tt.row)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ids(rows []Row) []uint32 {
	var out []uint32
	for _, r := range rows {
		out = append(out, r.Job.ID)
	}
	return out
}

func TestSortRows(t *testing.T) {
	env := &Env{Now: testNow}
	prio := func(p uint32) func(*api.Job) { return func(j *api.Job) { j.Priority = p } }
	tests := []struct {
		name string
		jobs []*api.Job
		spec string
		want []uint32
	}{
		{
			"pending jobs of one priority come newest first, held (priority 0) last",
			[]*api.Job{job(27, prio(11000)), job(28, prio(11000)), job(29, prio(11000)), job(30, prio(0))},
			SqueueSort, []uint32{29, 28, 27, 30},
		},
		{
			"pending before running; running by latest start",
			[]*api.Job{job(25, runningFor(time.Minute)), job(26, runningFor(time.Second)), job(27)},
			SqueueSort, []uint32{27, 26, 25},
		},
		{
			"partition names first",
			[]*api.Job{job(1, func(j *api.Job) { j.Partition = "scavenger" }), job(2, runningFor(time.Second))},
			SqueueSort, []uint32{2, 1},
		},
		{
			"--start's S keeps id order for jobs without a start",
			[]*api.Job{job(27), job(28), job(29)},
			"S", []uint32{27, 28, 29},
		},
		{
			"a descending key",
			[]*api.Job{job(1, prio(5)), job(2, prio(9)), job(3, prio(7))},
			"-Q", []uint32{2, 3, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rows []Row
			for _, j := range tt.jobs {
				rows = append(rows, FullRow(j, env))
			}
			if err := SortRows(rows, tt.spec, testNow); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(rows)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if err := SortRows(nil, "P,q", testNow); err == nil || err.Error() != "Invalid sort specification: q" {
		t.Errorf("SortRows with an unknown key: got %v, want Slurm's error", err)
	}
}

func TestControllerOrder(t *testing.T) {
	task := func(id, array uint32, t int) api.Job {
		j := job(id, func(j *api.Job) { j.ArrayJobID, j.ArrayTaskID = array, t })
		return *j
	}
	// Array 26331: task 1 split first (26347), then task 2 (26348); the last
	// task kept the array's id. Jobs 26330 and 26332 came around it.
	jobs := []api.Job{*job(26330), task(26331, 26331, 3), *job(26332), task(26347, 26331, 1), task(26348, 26331, 2)}
	ControllerOrder(jobs)
	var got []uint32
	for _, j := range jobs {
		got = append(got, j.ID)
	}
	want := []uint32{26330, 26347, 26332, 26348, 26331}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestShowJobOneLiner(t *testing.T) {
	j := job(7, func(j *api.Job) { j.WorkDir, j.StdOut, j.StdErr, j.StdIn = "/w", "/w/o", "/w/o", "/dev/null" })
	got := ShowJob(j, jobrec.NoTask, 0, true, &Env{Now: testNow})
	for _, want := range []string{"JobId=7 JobName=j UserId=root(0) GroupId=nobody(0) ", " Command=(null) WorkDir=/w StdErr=/w/o StdIn=/dev/null StdOut=/w/o Power= \n"} {
		if !strings.Contains(got, want) {
			t.Errorf("ShowJob one-liner lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 1 {
		t.Errorf("ShowJob one-liner is not one line:\n%q", got)
	}
}

func TestShowJobDetailLevels(t *testing.T) {
	pending := job(8, func(j *api.Job) {
		j.Reason = slurm.ReasonResources
		j.ReasonDetail = "needs 24.0 GiB of GPU memory, the best GPU has 18.2 GiB free"
	})
	running := job(9, runningFor(time.Minute), func(j *api.Job) {
		j.Request.GPUs = []jobscript.Gres{{Name: "gpu", Count: 2}}
		j.Alloc.GPUs = []jobrec.GPUAlloc{{UUID: "GPU-aaaa", Index: 0}, {UUID: "GPU-bbbb", Index: 1}}
		j.Alloc.CPUs = []int{0}
	})
	tests := []struct {
		name    string
		j       *api.Job
		details int
		want    string // a line that -dd adds; "" for none
	}{
		{"a pending job's reason in numbers with -dd", pending, 2, "   ReasonDetail=needs 24.0 GiB of GPU memory, the best GPU has 18.2 GiB free\n"},
		{"a running job's GPU UUIDs with -dd", running, 2, "     GPU_UUIDs=0:GPU-aaaa,1:GPU-bbbb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &Env{Now: testNow}
			dd := ShowJob(tt.j, jobrec.NoTask, tt.details, false, env)
			if !strings.Contains(dd, tt.want) {
				t.Errorf("-dd lacks %q:\n%s", tt.want, dd)
			}
			// Without the second -d, the record is Slurm's: the added
			// line is the only difference.
			d := ShowJob(tt.j, jobrec.NoTask, 1, false, env)
			if diff := cmp.Diff(strings.Replace(dd, tt.want[3:]+"   ", "", 1), d); diff != "" {
				t.Errorf("-d differs from -dd by more than the line (-dd without it +d):\n%s", diff)
			}
		})
	}
}
