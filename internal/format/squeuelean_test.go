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
)

// leanTestJobs are jobs in every state squeue shows, with arrays, holds,
// the scheduler's reasons and expected starts, and requests that set what
// the compact list leaves out (so that a field reading it would differ).
func leanTestJobs() []api.Job {
	nice := 50
	ptr := func(j *api.Job) *api.Job { return j }
	request := func(j *api.Job) {
		j.Request.Comment, j.Request.Licenses, j.Request.Reservation = "c", "lic:2", "resv"
		j.Request.CPUsPerTask, j.Request.NTasks, j.Request.Nice = 2, 3, &nice
		j.Request.GPUs = []jobscript.Gres{{Name: "gpu", Count: 2}}
		j.Command, j.WorkDir, j.StdOut = "/w/run.sh", "/w", "/w/out"
		j.NumCPUs, j.NumTasks = 6, 3
	}
	jobs := []*api.Job{
		job(10, request, func(j *api.Job) { j.Priority, j.Account, j.QOS, j.UID, j.GID = 900, "lab", "normal", 1000, 1000 }),
		job(11, runningFor(90*time.Minute), func(j *api.Job) { j.Limit, j.Priority, j.Partition = 2*time.Hour, 500, "cpu" }),
		job(12, func(j *api.Job) {
			j.Hold, j.Reason, j.Priority = jobrec.HoldUser, slurm.ReasonJobHeldUser, 0
			j.Submit, j.Eligible = testNow.Add(-time.Hour), testNow.Add(-time.Hour)
		}),
		job(13, func(j *api.Job) {
			j.Reason, j.StateDesc, j.ExpectedStart = slurm.ReasonResources, "", testNow.Add(20*time.Minute)
			j.Priority, j.User = 700, "alice"
		}),
		job(14, func(j *api.Job) { // an array's pending record, two tasks split off
			j.ArrayJobID, j.ArrayPending, j.ArrayLimit = 14, []int{2, 3, 4, 7}, 2
			j.ArrayTasks, j.Priority, j.Name = "2-4,7%2", 600, "arr"
		}),
		job(15, runningFor(time.Minute), func(j *api.Job) { j.ArrayJobID, j.ArrayTaskID, j.Name = 14, 0, "arr" }),
		job(16, func(j *api.Job) { // a requeued task, pending on its own
			j.ArrayJobID, j.ArrayTaskID, j.Name, j.Reason = 14, 1, "arr", slurm.ReasonBeginTime
		}),
		job(17, func(j *api.Job) {
			j.State, j.Reason, j.Start, j.End = slurm.Completed, slurm.ReasonNone, testNow.Add(-time.Hour), testNow.Add(-time.Minute)
			j.Alloc.Node, j.ExitCode.Status = "gpu01", 1
		}),
		job(18, func(j *api.Job) {
			j.State, j.End, j.Reason = slurm.Cancelled, testNow.Add(-2*time.Minute), slurm.ReasonNone
		}),
		job(19, func(j *api.Job) { j.State, j.Reason, j.StateDesc = slurm.Timeout, slurm.ReasonTimeLimit, "" }),
		ptr(job(20, runningFor(3*time.Hour), request, func(j *api.Job) { j.State, j.TimeLimit = slurm.Completing, time.Hour })),
	}
	out := make([]api.Job, len(jobs))
	for i, j := range jobs {
		j.Submit = testNow.Add(-time.Duration(len(jobs)-i) * time.Minute)
		out[i] = *j
	}
	return out
}

// squeueEnv is the environment of squeueText.
var squeueEnv = &Env{Now: testNow, GroupName: func(gid uint32) string { return map[uint32]string{1000: "lab"}[gid] }}

// squeueText prints full records as squeue's show does: controller
// order, rows, sort, lines.
func squeueText(t *testing.T, jobs []api.Job, f Format, sortSpec string) string {
	t.Helper()
	ControllerOrder(jobs)
	return rowsText(t, Rows(jobs, squeueEnv), f, sortSpec)
}

// leanText prints jobs as squeue's show does from the compact list: the
// jobs through api.SqueueJobs, rows, controller order, sort, lines.
func leanText(t *testing.T, jobs []api.Job, f Format, sortSpec string) string {
	t.Helper()
	c := api.CompactJobs(jobs)
	lean := c.Jobs()
	rows := make([]Row, len(lean))
	for i := range lean {
		rows[i] = NewRow(&lean[i], squeueEnv)
	}
	ControllerOrderRows(rows)
	return rowsText(t, rows, f, sortSpec)
}

// rowsText sorts rows and prints them with a header.
func rowsText(t *testing.T, rows []Row, f Format, sortSpec string) string {
	t.Helper()
	if err := SortRows(rows, sortSpec, testNow); err != nil {
		t.Fatal(err)
	}
	var b []byte
	b = append(b, f.Header()...)
	for i := range rows {
		b = f.AppendLine(b, &rows[i])
	}
	return string(b)
}

// TestLeanPrintsAsFull checks that a format and sort the compact list
// claims to serve print the same from it (NewRow of api.SqueueJobs'
// Jobs) as from full records (Rows).
func TestLeanPrintsAsFull(t *testing.T) {
	var every strings.Builder
	for i := range len(leanLetters) {
		every.WriteString("%" + leanLetters[i:i+1] + "|")
	}
	tests := []struct {
		name, format, long, sort string
	}{
		{name: "the default format and sort", long: SqueueDefault, sort: SqueueSort},
		{name: "the long format", long: SqueueLong, sort: SqueueSort},
		{name: "--start", format: SqueueStart, sort: "S"},
		{name: "every lean letter, sorted by submit time descending", format: every.String(), sort: "-V"},
		{name: "every lean letter, sorted by user, time left and id", format: every.String(), sort: "u,L,-i"},
		{name: "sorted by start time between other keys", format: "%i %S %u", sort: "P,-S,p"},
		{name: "every lean sort letter", format: "%i", sort: "B,C,d,D,e,G,g,H,i,I,j,J,l,L,M,N,p,P,Q,S,t,T,u,U,V,z,c,f,h,n,O,cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Format
			if tt.format != "" {
				f, _ = ParseFormat(tt.format)
			} else {
				f, _ = ParseLongFormat(tt.long)
			}
			if !f.Lean() || !LeanSort(tt.sort) {
				t.Fatalf("format %q sort %q: not lean", tt.format+tt.long, tt.sort)
			}
			want := squeueText(t, leanTestJobs(), f, tt.sort)
			if diff := cmp.Diff(want, leanText(t, leanTestJobs(), f, tt.sort)); diff != "" {
				t.Errorf("(-full +lean):\n%s", diff)
			}
		})
	}
}

func TestLeanRefusesRequestFields(t *testing.T) {
	tests := []struct {
		name, format, sort string
		want               bool
	}{
		{"the default", "%i %P %j %u %t %M %D %R", SqueueSort, true},
		{"a comment", "%i %k", SqueueSort, false},
		{"the nice value, which may come from the request", "%i %y", SqueueSort, false},
		{"%all", "%all", SqueueSort, false},
		{"sorted by reservation", "%i", "v", false},
		{"sorted by memory", "%i", "-m", false},
		{"sorted by submit time", "%i", "V", true},
		{"an unknown sort letter goes to the full path, which reports it", "%i", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := ParseFormat(tt.format)
			if got := f.Lean() && LeanSort(tt.sort); got != tt.want {
				t.Errorf("Lean(%q) && LeanSort(%q) = %v, want %v", tt.format, tt.sort, got, tt.want)
			}
		})
	}
}
