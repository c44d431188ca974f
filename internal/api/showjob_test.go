package api

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

func req(set func(*jobscript.Request)) jobscript.Request {
	var r jobscript.Request
	set(&r)
	return r
}

// What real Slurm 22.05 printed for the same submissions (testdata/showjob),
// the submission directory being /w.
func TestShowFiles(t *testing.T) {
	for _, tt := range []struct {
		name                     string
		job                      jobrec.Job
		workDir, out, err, input string
	}{
		{name: "defaults", job: jobrec.Job{ID: 7},
			workDir: "/w", out: "/w/slurm-7.out", err: "/w/slurm-7.out", input: "/dev/null"},
		{name: "-D sub", job: jobrec.Job{ID: 7, Request: req(func(r *jobscript.Request) { r.Chdir = "sub" })},
			workDir: "/w/sub", out: "/w/sub/slurm-7.out", err: "/w/sub/slurm-7.out", input: "/dev/null"},
		{name: "-D ./sub -o o-%j.txt -e e-%j.txt -i ../in.txt", job: jobrec.Job{ID: 7, Request: req(func(r *jobscript.Request) {
			r.Chdir, r.Output, r.Error, r.Input = "./sub", "o-%j.txt", "e-%j.txt", "../in.txt"
		})}, workDir: "/w/./sub", out: "/w/./sub/o-7.txt", err: "/w/./sub/e-7.txt", input: "/w/./sub/../in.txt"},
		{name: "-o sub/%N-%j.out", job: jobrec.Job{ID: 7, Request: req(func(r *jobscript.Request) { r.Output = "sub/%N-%j.out" })},
			workDir: "/w", out: "/w/sub/%N-7.out", err: "/w/sub/%N-7.out", input: "/dev/null"},
		{name: "-o o_%u_%A_%a.txt", job: jobrec.Job{ID: 7, User: "root", Request: req(func(r *jobscript.Request) { r.Output = "o_%u_%A_%a.txt" })},
			workDir: "/w", out: "/w/o_root_7_4294967294.txt", err: "/w/o_root_7_4294967294.txt", input: "/dev/null"},
		{name: "an array's pending record", job: jobrec.Job{ID: 7, ArrayJobID: 7, ArrayTaskID: jobrec.NoTask},
			workDir: "/w", out: "/w/slurm-7_4294967294.out", err: "/w/slurm-7_4294967294.out", input: "/dev/null"},
		{name: "an array task", job: jobrec.Job{ID: 9, ArrayJobID: 7, ArrayTaskID: 2, Request: req(func(r *jobscript.Request) { r.Output = "a_%A_%a.out" })},
			workDir: "/w", out: "/w/a_7_2.out", err: "/w/a_7_2.out", input: "/dev/null"},
		{name: "-o /dev/null", job: jobrec.Job{ID: 7, Request: req(func(r *jobscript.Request) { r.Output = "/dev/null" })},
			workDir: "/w", out: "/dev/null", err: "/dev/null", input: "/dev/null"},
	} {
		tt.job.SubmitDir = "/w"
		if got := ShowWorkDir(&tt.job); got != tt.workDir {
			t.Errorf("%s: WorkDir=%s, want %s", tt.name, got, tt.workDir)
		}
		out, err, in := ShowFiles(&tt.job)
		if out != tt.out || err != tt.err || in != tt.input {
			t.Errorf("%s: StdOut=%s StdErr=%s StdIn=%s, want %s %s %s", tt.name, out, err, in, tt.out, tt.err, tt.input)
		}
	}
}
