package format

import (
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// SqueueJSON is squeue --json: openapi/v0.0.38's dump of every job the
// controller holds (dump_job_info in src/plugins/openapi/v0.0.38/jobs.c of
// 22.05), whatever squeue's other options say, in the controller's list
// order (call ControllerOrder first). Values Slurm keeps and slurm-lite
// does not (association ids, sockets) are what the recorded single-node
// cluster showed.
func SqueueJSON(jobs []api.Job, env *Env) string {
	list := []any{}
	for i := range jobs {
		list = append(list, jobJSON(&jobs[i], env))
	}
	return slurmJSON(jsonObject{
		{"meta", jsonMeta()},
		{"errors", []any{}},
		{"jobs", list},
	})
}

// jobJSON is one job of squeue --json, its keys in dump_job_info's order.
func jobJSON(j *api.Job, env *Env) jsonObject {
	ran := started(sq(j))
	// A job that ended without ever starting (cancelled while pending, or
	// refused) has no task and CPU counts any more, as in slurmctld.
	gone := j.State.Finished() && !ran
	cluster := ""
	if env.View != nil {
		cluster = env.View.ClusterName
	}
	o := jsonObject{
		{"account", j.Account},
		{"accrue_time", unix(jsonAccrue(j))},
		{"admin_comment", ""},
		{"array_job_id", int64(j.ArrayJobID)},
		{"array_task_id", arrayTaskJSON(j)},
		{"array_max_tasks", throttle(j)},
		{"array_task_string", arrayTasksJSON(j)},
		{"association_id", associationID(j, env)},
		{"batch_features", ""},
		{"batch_flag", true},
		{"batch_host", nodes(sq(j))},
		{"flags", jobFlagsJSON(j)},
		{"burst_buffer", ""},
		{"burst_buffer_state", ""},
		{"cluster", cluster},
		{"cluster_features", ""},
		{"command", jsNullEmpty(j.Command)},
		{"comment", j.Request.Comment},
		{"container", ""},
		{"contiguous", false},
		{"core_spec", nil},
		{"thread_spec", nil},
		{"cores_per_socket", nil},
		{"billable_tres", jsNil(ran, float64(billing(j, env.View)))},
		// Slurm 22.05 tests cpu_freq_min here, never set: always null.
		{"cpus_per_task", nil},
		{"cpu_frequency_minimum", nil},
		{"cpu_frequency_maximum", nil},
		{"cpu_frequency_governor", nil},
		{"cpus_per_tres", cpusPerTres(j)},
		{"deadline", unix(j.Request.Deadline)},
		{"delay_boot", 0},
		{"dependency", dependencyJSON(j)},
		{"derived_exit_code", 0},
		{"eligible_time", unix(jsonEligible(j))},
		{"end_time", unix(endTime(sq(j)))},
		{"excluded_nodes", j.Request.Exclude},
		{"exit_code", waitStatus(j.ExitCode)},
		{"features", j.Request.Constraint},
		{"federation_origin", ""},
		{"federation_siblings_active", ""},
		{"federation_siblings_viable", ""},
		{"gres_detail", gresDetailJSON(j, env)},
		{"group_id", int64(j.GID)},
		{"group_name", env.group(j.GID)},
		{"job_id", int64(j.ID)},
	}
	if ran && j.Alloc.Node != "" {
		o = append(o, jsonKV{"job_resources", jobResourcesJSON(j)})
	}
	memNode, memCPU := memoryJSON(j)
	o = append(o, jsonObject{
		{"job_state", string(sq(j).ShownState())},
		{"last_sched_evaluation", unix(lastSchedEval(j))},
		{"licenses", j.Request.Licenses},
		{"max_cpus", 0},
		{"max_nodes", 0},
		{"mcs_label", ""},
		{"memory_per_tres", memPerTres(j)},
		{"name", j.Name},
		{"nodes", nodes(sq(j))},
		{"nice", jsNil(nice(j) != 0, nice(j))},
		{"tasks_per_core", nil},
		{"tasks_per_node", j.Request.NTasksPerNode},
		{"tasks_per_socket", nil},
		{"tasks_per_board", 0},
		{"cpus", jsNil(!gone, cpus(j))},
		{"node_count", 1},
		{"tasks", jsNil(!gone, tasks(j))},
		{"het_job_id", 0},
		{"het_job_id_set", ""},
		{"het_job_offset", 0},
		{"partition", j.Partition},
		{"prefer", ""},
		{"memory_per_node", memNode},
		{"memory_per_cpu", memCPU},
		{"minimum_cpus_per_node", minCPUsNode(j)},
		{"minimum_tmp_disk_per_node", 0},
		{"preempt_time", 0},
		{"pre_sus_time", 0},
		{"priority", int64(j.Priority)},
		{"profile", nil},
		{"qos", j.QOS},
		{"reboot", false},
		{"required_nodes", j.Request.NodeList},
		{"requeue", j.Requeue},
		{"resize_time", 0},
		{"restart_cnt", j.Restarts},
		{"resv_name", j.Request.Reservation},
		{"shared", sharedJSON(j)},
		{"show_flags", []any{"SHOW_ALL", "SHOW_DETAIL", "SHOW_LOCAL"}},
		{"sockets_per_board", 0},
		{"sockets_per_node", nil},
		{"start_time", unix(startTime(sq(j)))},
		{"state_description", j.StateDesc},
		{"state_reason", string(jsReason(j.Reason))},
		// The job's files as given to sbatch: the controller fills in
		// the defaults only when scontrol prints them.
		{"standard_error", j.Request.Error},
		{"standard_input", jsDefault(j.Request.Input, "/dev/null")},
		{"standard_output", j.Request.Output},
		{"submit_time", unix(j.Submit)},
		{"suspend_time", 0},
		{"system_comment", ""},
		{"time_limit", minutesJSON(limit(sq(j)))},
		{"time_minimum", int64(j.Request.TimeMin.Duration() / time.Minute)},
		{"threads_per_core", nil},
		{"tres_bind", ""},
		{"tres_freq", ""},
		{"tres_per_job", tresPerJob(j)},
		{"tres_per_node", tresPerNode(j)},
		{"tres_per_socket", ""},
		{"tres_per_task", tresPerTask(j)},
		{"tres_req_str", reqTRESJSON(j, env)},
		{"tres_alloc_str", jsEmpty(ran, tres(j, env.View))},
		{"user_id", int64(j.UID)},
		{"user_name", j.User},
		{"wckey", ""},
		{"current_working_directory", j.WorkDir},
	}...)
	return o
}

func jsNil(ok bool, v any) any {
	if !ok {
		return nil
	}
	return v
}

func jsEmpty(ok bool, s string) string {
	if !ok {
		return ""
	}
	return s
}

func jsDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// jsNullEmpty is a string that may be Slurm's NULL, which the dump prints
// as "".
func jsNullEmpty(s string) string {
	if s == "(null)" || s == Null {
		return ""
	}
	return s
}

func jsReason(r slurm.Reason) slurm.Reason {
	if r == "" {
		return slurm.ReasonNone
	}
	return r
}

// jsonEligible is eligible_time: 0 for a job that never became eligible
// (held, or waiting on a dependency or a begin time).
func jsonEligible(j *api.Job) time.Time {
	if !started(sq(j)) && neverEligible(j) {
		return time.Time{}
	}
	return j.Eligible
}

func neverEligible(j *api.Job) bool {
	if j.Hold != jobrec.HoldNone {
		return true
	}
	switch j.Reason {
	case slurm.ReasonJobHeldUser, slurm.ReasonJobHeldAdmin, slurm.ReasonDependency,
		slurm.ReasonDependencyNeverSatisfied, slurm.ReasonBeginTime:
		return true
	}
	return false
}

// jsonAccrue is accrue_time: as squeue's, and 0 for a job that ended
// without starting.
func jsonAccrue(j *api.Job) time.Time {
	if j.State.Finished() && !started(sq(j)) {
		return time.Time{}
	}
	if !started(sq(j)) && neverEligible(j) {
		return time.Time{}
	}
	return accrueTime(sq(j))
}

func arrayTaskJSON(j *api.Job) any {
	if j.ArrayJobID == 0 || j.ArrayRecord() || j.ArrayTaskID == jobrec.NoTask {
		return nil
	}
	return j.ArrayTaskID
}

// arrayTasksJSON is array_task_str: the pending record's tasks ("0-3",
// "1-3%2"), "" on other rows.
func arrayTasksJSON(j *api.Job) string {
	if !j.ArrayRecord() {
		return ""
	}
	if j.ArrayTasks != "" {
		return j.ArrayTasks
	}
	return slurmsyntax.FormatTasks(j.ArrayPending, j.ArrayLimit)
}

// associationID stands for slurmdbd's association id, which slurm-lite
// does not keep: the user's place among the configured users of the
// job's account, after the 3 associations slurmdbd makes first (the
// cluster's root, root's own, the account).
func associationID(j *api.Job, env *Env) int {
	if env.View == nil {
		return 0
	}
	n := 3
	for _, a := range env.View.Accounts {
		for _, u := range a.Users {
			n++
			if a.Name == j.Account && u == j.User {
				return n
			}
		}
		n++
	}
	return 0
}

// jobFlagsJSON are the bit flags dump_job_info names, in its order.
func jobFlagsJSON(j *api.Job) []any {
	flags := []any{}
	if isRunning(j) {
		flags = append(flags, "JOB_WAS_RUNNING")
	}
	if j.Request.MemPerNode != nil {
		flags = append(flags, "JOB_MEM_SET")
	}
	return flags
}

// dependencyJSON is the dependency as the controller keeps it: still shown
// on a job that ended while it waited on it.
func dependencyJSON(j *api.Job) string {
	if j.Request.Dependency == nil {
		return ""
	}
	if isPending(j) {
		return jsNullEmpty(dependency(j))
	}
	switch j.Reason {
	case slurm.ReasonDependency, slurm.ReasonDependencyNeverSatisfied:
		p := *j
		p.State = slurm.Pending
		return jsNullEmpty(dependency(&p))
	}
	return ""
}

// waitStatus is exit_code as the controller keeps it: a wait(2) status.
func waitStatus(e jobrec.ExitCode) int {
	return e.Status<<8 | e.Signal
}

func gresDetailJSON(j *api.Job, env *Env) []any {
	out := []any{}
	if started(sq(j)) {
		if g := gresDetail(j, env); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// jobResourcesJSON is job_resources for a job that holds (or held) an
// allocation: the node's cores, one socket (the node is configured by its
// CPU count alone), each CPU a core.
func jobResourcesJSON(j *api.Job) jsonObject {
	cores := jsonObject{}
	for _, c := range j.Alloc.CPUs {
		cores = append(cores, jsonKV{strconv.Itoa(c), "allocated"})
	}
	node := jsonObject{
		{"sockets", jsonObject{{"0", jsonObject{{"cores", cores}}}}},
		{"nodename", j.Alloc.Node},
		{"cpus_used", 0},
		{"memory_used", 0},
		{"memory_allocated", j.Alloc.Mem >> 20},
	}
	return jsonObject{
		{"nodes", j.Alloc.Node},
		{"allocated_cores", len(j.Alloc.CPUs)},
		{"allocated_hosts", 1},
		{"allocated_nodes", []any{node}},
	}
}

// memoryJSON is memory_per_node and memory_per_cpu: the one the job has,
// the other null.
func memoryJSON(j *api.Job) (node, cpu any) {
	mib, perCPU := memory(j)
	switch {
	case mib == 0:
		return nil, nil
	case perCPU:
		return nil, int64(mib)
	}
	return int64(mib), nil
}

func sharedJSON(j *api.Job) any {
	switch overSubscribe(j) {
	case "NO":
		return "none"
	case "YES":
		return "shared"
	case "USER":
		return "user"
	case "MCS":
		return "mcs"
	}
	return nil
}

// minutesJSON is a time limit in minutes, null for UNLIMITED.
func minutesJSON(d time.Duration) any {
	if d == slurmsyntax.Infinite {
		return nil
	}
	return int64(d / time.Minute)
}

// reqTRESJSON is tres_req_str: what the job asks for.
func reqTRESJSON(j *api.Job, env *Env) string {
	if started(sq(j)) {
		return tres(j, env.View)
	}
	p := *j
	p.Alloc = jobrec.Alloc{}
	return tres(&p, env.View)
}
