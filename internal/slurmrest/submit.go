package slurmrest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// submission is v0.0.38_job_submission: the script and the job's
// properties (a heterogeneous job's "jobs" is refused: one node, one job).
type submission struct {
	Script string                     `json:"script"`
	Job    map[string]json.RawMessage `json:"job"`
	Jobs   []json.RawMessage          `json:"jobs"`
}

// options maps v0.0.38_job_properties keys to the sbatch option they are
// (job_desc_msg_t's fields set by the same name): a property is given to
// sbatch's own parser as that option, so that it is checked and obeyed as
// on sbatch's command line. Keys not here are refused by name.
var options = map[string]string{
	"account": "--account", "array": "--array", "begin_time": "--begin", "comment": "--comment",
	"constraints": "--constraint", "cpus_per_gpu": "--cpus-per-gpu", "cpus_per_task": "--cpus-per-task",
	"current_working_directory": "--chdir", "deadline": "--deadline", "dependency": "--dependency",
	"exclusive": "--exclusive", "gpus": "--gpus", "gpus_per_node": "--gpus-per-node",
	"gpus_per_task": "--gpus-per-task", "gres": "--gres", "hold": "--hold", "licenses": "--licenses",
	"mail_type": "--mail-type", "mail_user": "--mail-user", "memory_per_cpu": "--mem-per-cpu",
	"memory_per_gpu": "--mem-per-gpu", "memory_per_node": "--mem", "name": "--job-name", "nice": "--nice",
	"nodes": "--nodes", "open_mode": "--open-mode", "partition": "--partition", "qos": "--qos",
	"requeue": "--requeue", "reservation": "--reservation", "signal": "--signal",
	"standard_error": "--error", "standard_input": "--input", "standard_output": "--output",
	"tasks": "--ntasks", "tasks_per_node": "--ntasks-per-node", "time_limit": "--time",
	"time_minimum": "--time-min", "wckey": "--wckey",
}

func (s *server) submit(w http.ResponseWriter, r *http.Request, id localapi.Identity) {
	var sub submission
	if err := decodeJSON(r, &sub); err != nil {
		text(w, http.StatusBadRequest, "Unable to parse query.")
		return
	}
	refuse := func(status int, errs ...format.RESTError) {
		errs = append(errs, format.RESTError{Code: 9001, Error: "Failure during parsing", CodeFirst: true})
		doc(w, status, format.RESTDoc(false, errs))
	}
	if len(sub.Jobs) > 0 {
		refuse(http.StatusBadRequest, format.RESTError{Code: 2127, Error: "heterogeneous jobs (jobs) are not supported on one node: submit one job"})
		return
	}
	env, args, err := jobArgs(sub.Job)
	if err != nil {
		refuse(http.StatusBadRequest, format.RESTError{Code: 2127, Error: err.Error()})
		return
	}
	if env == nil {
		// Recorded: slurmrestd refuses a job without an environment.
		refuse(http.StatusBadRequest, format.RESTError{Code: 2127, Error: "environment must be set"})
		return
	}
	if _, ok := sub.Job["current_working_directory"]; !ok {
		// slurmrestd has no directory of the caller's to default to; the
		// job's output goes there.
		refuse(http.StatusBadRequest, format.RESTError{Code: 2127, Error: "current_working_directory must be set: the job's directory, an absolute path"})
		return
	}
	cl, err := jobscript.ParseCommandLine(append(args, "/dev/stdin"))
	if err == nil {
		cl.Stdin = true
	}
	var req *jobscript.Request
	if err == nil {
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		cfg := s.b.Env().View
		maxArray := 0
		if cfg != nil {
			maxArray = cfg.MaxArraySize
		}
		req, err = jobscript.Parse(jobscript.Input{Script: []byte(sub.Script), Command: cl, Env: lookup,
			Now: s.b.Now(), MaxArraySize: maxArray})
	}
	if err == nil && id.UID != 0 {
		err = req.RequireRoot()
	}
	if err != nil {
		doc(w, http.StatusInternalServerError, format.RESTDoc(false, []format.RESTError{{
			Description: err.Error(), Number: errNo, Error: "Unspecified error", Source: "slurm_submit_batch_job"}}))
		return
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	slices.Sort(list)
	cwd := req.Chdir
	var out api.Submitted
	err = s.b.Call(r.Context(), id, "POST", api.PathJobs, api.Submit{Request: *req, Env: list, Cwd: cwd}, &out)
	if err != nil {
		code, words := errnoOf(err)
		doc(w, http.StatusInternalServerError, format.RESTDoc(false, []format.RESTError{{
			Description: err.Error(), Number: code, Error: words, Source: "slurm_submit_batch_job"}}))
		return
	}
	var errs []format.RESTError
	if req.Hold {
		// Recorded: slurmctld's note on a held job comes back as an error
		// entry beside the job id.
		errs = append(errs, format.RESTError{Code: 2042, Error: "Job is in held state, pending scheduler release", CodeFirst: true})
	}
	doc(w, http.StatusOK, format.RESTDoc(false, errs,
		format.RESTField{Key: "job_id", Val: int(out.JobID)},
		format.RESTField{Key: "step_id", Val: "BATCH"},
		format.RESTField{Key: "job_submit_user_msg", Val: ""}))
}

// jobArgs turns job properties into sbatch's options, and the environment
// (nil when the job has none).
func jobArgs(job map[string]json.RawMessage) (map[string]string, []string, error) {
	var env map[string]string
	var args []string
	keys := make([]string, 0, len(job))
	for k := range job {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := job[k]
		if k == "environment" {
			if err := json.Unmarshal(raw, &env); err != nil {
				return nil, nil, fmt.Errorf("environment must be an object of strings: %v", err)
			}
			if env == nil {
				env = map[string]string{}
			}
			continue
		}
		opt, ok := options[k]
		if !ok {
			return nil, nil, fmt.Errorf("job property %q is not supported by slurm-lite; remove it (supported: %s)", k, strings.Join(supported(), ", "))
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, nil, fmt.Errorf("job property %q: %v", k, err)
		}
		switch x := v.(type) {
		case bool:
			switch {
			case k == "requeue" && !x:
				args = append(args, "--no-requeue")
			case x:
				args = append(args, opt)
			}
		case float64:
			if k == "begin_time" || k == "deadline" {
				args = append(args, opt+"="+time.Unix(int64(x), 0).Format("2006-01-02T15:04:05"))
			} else {
				args = append(args, fmt.Sprintf("%s=%d", opt, int64(x)))
			}
		case string:
			args = append(args, opt+"="+x)
		default:
			return nil, nil, fmt.Errorf("job property %q must be a string, number or boolean", k)
		}
	}
	return env, args, nil
}

func supported() []string {
	var out []string
	for k := range options {
		out = append(out, k)
	}
	out = append(out, "environment")
	slices.Sort(out)
	return out
}
