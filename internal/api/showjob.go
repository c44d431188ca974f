package api

import (
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// ShowWorkDir is the job's WorkDir= as scontrol show job prints it: the
// --chdir that sbatch made absolute (make_full_path: the submission
// directory, "/", the path as given, nothing cleaned), else the submission
// directory.
func ShowWorkDir(j *jobrec.Job) string {
	d := j.Request.Chdir
	switch {
	case d == "":
		return j.SubmitDir
	case strings.HasPrefix(d, "/"):
		return d
	}
	return j.SubmitDir + "/" + d
}

// ShowFiles are the job's StdOut=, StdErr= and StdIn= as scontrol show job
// prints them (slurm_get_job_stdout and its siblings in src/api/job_info.c),
// which are not always the files the job writes: sbatch makes a relative
// name absolute under the working directory without cleaning it, and
// scontrol expands only %A, %a, %j, %u and %x (slurmsyntax.ShowPattern), so
// "%N" stays as written. Without --output, "slurm-%j.out" (an array's
// "slurm-%A_%a.out") under the working directory; without --error, the
// output; without --input, /dev/null.
func ShowFiles(j *jobrec.Job) (stdout, stderr, stdin string) {
	r := &j.Request
	dir := ShowWorkDir(j)
	v := slurmsyntax.PatternVars{JobID: j.ID, ArrayJobID: j.ArrayJobID, ArrayTaskID: -1,
		JobName: j.Name, User: j.User}
	if j.ArrayJobID != 0 && j.ArrayTaskID != jobrec.NoTask {
		v.ArrayTaskID = j.ArrayTaskID
	}
	show := func(pattern string) string {
		if !strings.HasPrefix(pattern, "/") {
			pattern = dir + "/" + pattern
		}
		return slurmsyntax.ShowPattern(pattern, v)
	}
	out := r.Output
	switch {
	case out != "":
		stdout = show(out)
	case j.ArrayJobID != 0:
		stdout = dir + "/slurm-" + strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_" +
			strconv.FormatUint(arrayTask(v.ArrayTaskID), 10) + ".out"
	default:
		stdout = dir + "/slurm-" + strconv.FormatUint(uint64(j.ID), 10) + ".out"
	}
	stderr = stdout
	if r.Error != "" {
		stderr = show(r.Error)
	}
	stdin = "/dev/null"
	if r.Input != "" {
		stdin = show(r.Input)
	}
	return stdout, stderr, stdin
}

// arrayTask is %a: the task, or Slurm's NO_VAL (4294967294) for an
// array's pending record.
func arrayTask(task int) uint64 {
	if task < 0 {
		return 4294967294
	}
	return uint64(task)
}
