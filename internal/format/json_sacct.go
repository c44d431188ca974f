package format

import (
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// SacctJSON is sacct --json: openapi/dbv0.0.38's dump of the runs sacct
// selected (src/plugins/openapi/dbv0.0.38/parse.c, parse_job and
// parse_job_step of 22.05), every run of a requeued job included, keys in
// the order the parser creates them. userName names a uid (for the user
// who cancelled a job); nil prints the job's own user for its own uid and
// "root" for 0.
//
// Where 22.05's dump departs from what it means, slurm-lite prints what
// 22.05 printed: a job's exit code is "SUCCESS" with return code 0 whenever
// the script exited (whatever its status; the steps' codes are right), and
// a job's own CPU times are 0 (its steps have them).
func SacctJSON(recs []jobrec.Record, env *Env, userName func(uid uint32) string) string {
	list := []any{}
	for i := range recs {
		list = append(list, recordJSON(&recs[i], env, userName))
	}
	meta := jsonMeta()
	meta[0].val = jsonObject{{"type", "openapi/dbv0.0.38"}, {"name", "Slurm OpenAPI DB v0.0.38"}}
	return slurmJSON(jsonObject{
		{"meta", meta},
		{"errors", []any{}},
		{"jobs", list},
	})
}

// recordJSON is one run, as parse_job dumps a slurmdb_job_rec_t.
func recordJSON(rec *jobrec.Record, env *Env, userName func(uint32) string) jsonObject {
	j := &rec.Job
	aj := &api.Job{Job: *j}
	row := &AcctRow{Rec: rec, Env: env}
	ran := row.started()
	cluster := ""
	if env.View != nil {
		cluster = env.View.ClusterName
	}
	var taskID, taskStr any
	if j.ArrayJobID != 0 && j.ArrayTaskID != jobrec.NoTask && !j.ArrayRecord() {
		taskID = j.ArrayTaskID
	}
	if j.ArrayRecord() {
		taskStr = slurmsyntax.FormatTasks(j.ArrayPending, j.ArrayLimit)
	}
	maxTasks := 0
	if j.ArrayJobID != 0 && j.ID == j.ArrayJobID {
		maxTasks = throttle(aj)
	}
	allocNodes := 0
	if ran || j.Restarts > 0 {
		allocNodes = 1
	}
	flags := []any{}
	if ran {
		flags = []any{"CLEAR_SCHEDULING", "STARTED_ON_SCHEDULE"}
	}
	nodeList := "None assigned"
	if ran && j.Alloc.Node != "" {
		nodeList = j.Alloc.Node
	}
	var killer any
	if j.CancelledBy != nil {
		killer = acctUser(*j.CancelledBy, j, userName)
	}
	mib, _ := memory(aj)
	steps := []any{}
	for i := range rec.Steps {
		steps = append(steps, stepJSON(rec, &rec.Steps[i], env))
	}
	// A run that never started: slurmdbd keeps its end as its start, but
	// no start at all for a requeued job cancelled before it ran again.
	var start any = unix(j.Start)
	if !ran {
		start = unix(j.End)
		if j.Restarts > 0 {
			start = nil
		}
	}
	zeroCPU := jsonObject{{"seconds", 0}, {"microseconds", 0}}
	return jsonObject{
		{"account", j.Account},
		{"comment", jsonObject{{"administrator", nil}, {"job", nil}, {"system", nil}}},
		{"allocation_nodes", allocNodes},
		{"array", jsonObject{
			{"job_id", int64(j.ArrayJobID)},
			{"limits", jsonObject{{"max", jsonObject{{"running", jsonObject{{"tasks", maxTasks}}}}}}},
			{"task", taskStr},
			{"task_id", taskID},
		}},
		{"association", jsonObject{{"account", j.Account}, {"cluster", cluster}, {"partition", nil}, {"user", j.User}}},
		{"cluster", cluster},
		{"constraints", j.Request.Constraint},
		{"container", nil},
		{"derived_exit_code", exitJSON(jobrec.ExitCode{})},
		{"time", jsonObject{
			{"elapsed", int64(row.elapsed() / time.Second)},
			{"eligible", unix(j.Eligible)},
			{"end", unix(j.End)},
			{"start", start},
			{"submission", unix(j.Submit)},
			{"suspended", 0},
			{"system", zeroCPU},
			{"limit", minutesJSON(acctLimit(j, env))},
			{"total", zeroCPU},
			{"user", zeroCPU},
		}},
		{"exit_code", exitJSON(j.ExitCode)},
		{"flags", flags},
		{"group", env.group(j.GID)},
		{"het", jsonObject{{"job_id", 0}, {"job_offset", nil}}},
		{"job_id", int64(j.ID)},
		{"name", j.Name},
		{"mcs", jsonObject{{"label", ""}}},
		{"nodes", nodeList},
		{"partition", j.Partition},
		{"priority", int64(j.Priority)},
		{"qos", j.QOS},
		{"required", jsonObject{{"CPUs", row.reqCPUs()}, {"memory", int64(mib)}}},
		{"kill_request_user", killer},
		{"reservation", jsonObject{{"id", 0}, {"name", 0}}},
		{"state", jsonObject{{"current", string(j.State)}, {"reason", string(prevReason(j.Reason))}}},
		{"steps", steps},
		{"tres", jsonObject{
			{"allocated", jsTRES(row.allocTRESItems(), true)},
			{"requested", jsTRES(row.reqTRESItems(), false)},
		}},
		{"user", j.User},
		{"wckey", jsonObject{{"wckey", j.Request.WCKey}, {"flags", []any{}}}},
		{"working_directory", acctWorkDir(j)},
	}
}

// stepJSON is one step, as parse_job_step dumps a slurmdb_step_rec_t.
func stepJSON(rec *jobrec.Record, s *jobrec.Step, env *Env) jsonObject {
	j := &rec.Job
	row := &AcctRow{Rec: rec, Step: s, Env: env}
	node := j.Alloc.Node
	total := s.UserCPU + s.SystemCPU
	var id any = s.ID
	if n, err := strconv.Atoi(s.ID); err == nil {
		id = n
	}
	var alloc []tresCount
	if row.started() {
		alloc = []tresCount{{"cpu", "", 1, int64(row.cpus())}}
		if m := memTotal(&api.Job{Job: *j}); m > 0 {
			alloc = append(alloc, tresCount{"mem", "", 2, int64(m)})
		}
		alloc = append(alloc, tresCount{"node", "", 4, 1})
		alloc = append(alloc, gresTRES(&api.Job{Job: *j})...)
	}
	return jsonObject{
		{"nodes", jsonObject{{"list", []any{node}}, {"count", 1}, {"range", node}}},
		{"tres", stepUsageJSON(s, node, alloc)},
		{"time", jsonObject{
			{"elapsed", int64(row.elapsed() / time.Second)},
			{"end", unix(s.End)},
			{"start", unix(s.Start)},
			{"suspended", 0},
			{"system", cpuJSON(s.SystemCPU)},
			{"total", cpuJSON(total)},
			{"user", cpuJSON(s.UserCPU)},
		}},
		{"exit_code", exitJSON(s.ExitCode)},
		{"tasks", jsonObject{{"count", max(1, s.NTasks)}}},
		{"pid", nil},
		{"CPU", jsonObject{
			{"requested_frequency", jsonObject{{"min", 0}, {"max", 0}}},
			{"governor", []any{}},
		}},
		{"kill_request_user", nil},
		{"state", string(s.State)},
		{"statistics", jsonObject{
			{"CPU", jsonObject{{"actual_frequency", 0}}},
			{"energy", jsonObject{{"consumed", 0}}},
		}},
		{"step", jsonObject{
			{"job_id", int64(j.ID)},
			{"het", jsonObject{{"component", nil}}},
			{"id", id},
			{"name", s.Name},
		}},
		{"task", jsonObject{{"distribution", "Unknown"}}},
	}
}

// stepUsageJSON is a step's tres: what its processes used (requested
// holds Slurm's usage "in": CPU time in ms, memory), what was allocated.
// A step that was never sampled (it ended within the first sampling
// period) has the energy counter alone, as in Slurm.
func stepUsageJSON(s *jobrec.Step, node string, alloc []tresCount) jsonObject {
	energy := []tresCount{{"energy", "", 3, 0}}
	in := energy
	if s.MaxRSS > 0 {
		cpu := int64((s.UserCPU + s.SystemCPU) / time.Millisecond)
		in = []tresCount{{"cpu", "", 1, cpu}, {"mem", "", 2, s.MaxRSS}, {"energy", "", 3, 0}}
	}
	withTask := func(list []tresCount) []any {
		out := []any{}
		for _, t := range list {
			out = append(out, jsonObject{{"type", t.typ}, {"name", nameOrNil(t.name)}, {"id", t.id}, {"count", t.count},
				{"task", 0}, {"node", node}})
		}
		return out
	}
	usage := func(list []tresCount) jsonObject {
		var mx, mn []any
		if s.MaxRSS > 0 {
			mx, mn = withTask(list), withTask(list)
		} else {
			mx, mn = []any{}, []any{}
		}
		return jsonObject{{"max", mx}, {"min", mn}, {"average", jsTRES(list, false)}, {"total", jsTRES(list, false)}}
	}
	return jsonObject{
		{"requested", usage(in)},
		{"consumed", usage(energy)},
		{"allocated", jsTRES(alloc, false)},
	}
}

// tresCount is one TRES of a list, with Slurm's TRES id (cpu 1, mem 2,
// energy 3, node 4, billing 5, the first GRES 1001).
type tresCount struct {
	typ, name string
	id        int
	count     int64
}

func nameOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsTRES prints a TRES list; energy's count is null in a job's
// allocation (accounting has no figure for it).
func jsTRES(list []tresCount, nullEnergy bool) []any {
	out := []any{}
	for _, t := range list {
		var count any = t.count
		if nullEnergy && t.typ == "energy" {
			count = nil
		}
		out = append(out, jsonObject{{"type", t.typ}, {"name", nameOrNil(t.name)}, {"id", t.id}, {"count", count}})
	}
	return out
}

// gresTRES are a job's GRES as TRES: gres/gpu, gres/shard.
func gresTRES(j *api.Job) []tresCount {
	var out []tresCount
	if n := gpus(j); n > 0 {
		out = append(out, tresCount{"gres", "gpu", 1001, int64(n)})
	}
	if n := gresCount(j, "shard"); n > 0 {
		out = append(out, tresCount{"gres", "shard", 1002, int64(n)})
	}
	return out
}

// reqCPUs is the CPUs the job asked for.
func (r *AcctRow) reqCPUs() int {
	j := r.job()
	return max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks)
}

// reqTRESItems is the job's requested TRES in the dump's order.
func (r *AcctRow) reqTRESItems() []tresCount {
	j := r.job()
	out := []tresCount{{"cpu", "", 1, int64(r.reqCPUs())}}
	mib, perCPU := memory(j)
	if perCPU {
		mib *= uint64(r.reqCPUs())
	}
	if mib > 0 {
		out = append(out, tresCount{"mem", "", 2, int64(mib)})
	}
	out = append(out, tresCount{"node", "", 4, 1}, tresCount{"billing", "", 5, int64(billing(j, r.Env.View))})
	p := *j
	p.State = slurm.Pending // what was asked, not what was given
	return append(out, gresTRES(&p)...)
}

// allocTRESItems is what the job held; none for a run that never started.
func (r *AcctRow) allocTRESItems() []tresCount {
	if !r.started() {
		return nil
	}
	j := r.job()
	out := []tresCount{{"cpu", "", 1, int64(r.cpus())}}
	if m := memTotal(j); m > 0 {
		out = append(out, tresCount{"mem", "", 2, int64(m)})
	}
	out = append(out, tresCount{"energy", "", 3, 0}, tresCount{"node", "", 4, 1},
		tresCount{"billing", "", 5, int64(billing(j, r.Env.View))})
	return append(out, gresTRES(j)...)
}

func cpuJSON(d time.Duration) jsonObject {
	return jsonObject{{"seconds", int64(d / time.Second)}, {"microseconds", int64(d%time.Second) / int64(time.Microsecond)}}
}

// exitJSON is _dump_job_exit_code over the wait status: an exit is
// "SUCCESS" with return code 0 whatever its status (22.05 drops it), a
// signal "SIGNALED" with glibc's name for it.
func exitJSON(e jobrec.ExitCode) jsonObject {
	if e.Signal != 0 {
		return jsonObject{
			{"status", "SIGNALED"},
			{"return_code", nil},
			{"signal", jsonObject{{"signal_id", e.Signal}, {"name", strsignal(e.Signal)}}},
		}
	}
	return jsonObject{{"status", "SUCCESS"}, {"return_code", 0}}
}

// strsignal is glibc's description of a signal.
func strsignal(sig int) string {
	names := [...]string{"", "Hangup", "Interrupt", "Quit", "Illegal instruction", "Trace/breakpoint trap",
		"Aborted", "Bus error", "Floating point exception", "Killed", "User defined signal 1",
		"Segmentation fault", "User defined signal 2", "Broken pipe", "Alarm clock", "Terminated",
		"Stack fault", "Child exited", "Continued", "Stopped (signal)", "Stopped", "Stopped (tty input)",
		"Stopped (tty output)", "Urgent I/O condition", "CPU time limit exceeded", "File size limit exceeded",
		"Virtual timer expired", "Profiling timer expired", "Window changed", "I/O possible",
		"Power failure", "Bad system call"}
	switch {
	case sig > 0 && sig < len(names):
		return names[sig]
	case sig >= 34 && sig <= 64:
		return "Real-time signal " + strconv.Itoa(sig-34)
	}
	return "Unknown signal " + strconv.Itoa(sig)
}

// prevReason is state_reason_prev: the last reason the job waited for,
// None for one that did not wait, or whose reason says how it ended.
func prevReason(r slurm.Reason) slurm.Reason {
	switch r {
	case slurm.ReasonTimeLimit, slurm.ReasonNonZeroExitCode, slurm.ReasonBadConstraints,
		slurm.ReasonJobLaunchFailure, slurm.ReasonNodeDown, slurm.ReasonInactiveLimit, "":
		return slurm.ReasonNone
	}
	return r
}

// acctLimit is the run's time limit: its own, else its partition's
// default.
func acctLimit(j *jobrec.Job, env *Env) time.Duration {
	if j.TimeLimit != 0 {
		return j.TimeLimit
	}
	if env.View != nil {
		if p := env.View.Partition(j.Partition); p != nil {
			return p.DefaultLimit
		}
	}
	return slurmsyntax.Infinite
}

// acctWorkDir is the directory the job ran in.
func acctWorkDir(j *jobrec.Job) string {
	d := j.Request.Chdir
	switch {
	case d == "":
		return j.SubmitDir
	case d[0] != '/' && j.SubmitDir != "":
		return j.SubmitDir + "/" + d
	}
	return d
}

// acctUser names the uid that cancelled a job.
func acctUser(uid uint32, j *jobrec.Job, userName func(uint32) string) string {
	if userName != nil {
		if n := userName(uid); n != "" {
			return n
		}
	}
	switch {
	case uid == j.UID:
		return j.User
	case uid == 0:
		return "root"
	}
	return strconv.FormatUint(uint64(uid), 10)
}
