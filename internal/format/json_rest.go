package format

import (
	"fmt"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// slurmrestd's answers (openapi/v0.0.38 and openapi/dbv0.0.38 of 22.05),
// printed as slurmrestd prints them: the same serializer as the commands'
// --json (slurmJSON), so the same indent, key order and "\/".

// RESTField is one top-level key of an answer after meta and errors: its
// value a string, an int, a bool, or an empty list (nil).
type RESTField struct {
	Key string
	Val any
}

// RESTError is one entry of an answer's errors list. slurmrestd writes two
// kinds: a call's failure (Description, Number, Error, Source: "error_number")
// and a parser's or the controller's note (Error, Code: "error_code"),
// each with its keys in the order recorded.
type RESTError struct {
	Description string
	Number      int
	Error       string
	Source      string
	// Code, when not 0, makes this a note: {"error": ..., "error_code": N},
	// or with CodeFirst {"error_code": N, "error": ...}.
	Code      int
	CodeFirst bool
}

// RESTDoc is one slurmrestd answer: meta (db: the dbv0.0.38 plugin's),
// errors, then fields.
func RESTDoc(db bool, errs []RESTError, fields ...RESTField) string {
	meta := jsonMeta()
	if db {
		meta[0].val = jsonObject{{"type", "openapi/dbv0.0.38"}, {"name", "Slurm OpenAPI DB v0.0.38"}}
	}
	list := []any{}
	for _, e := range errs {
		switch {
		case e.Code != 0 && e.CodeFirst:
			list = append(list, jsonObject{{"error_code", e.Code}, {"error", e.Error}})
		case e.Code != 0:
			list = append(list, jsonObject{{"error", e.Error}, {"error_code", e.Code}})
		case e.Description == "":
			list = append(list, jsonObject{{"error_number", e.Number}, {"error", e.Error}, {"source", e.Source}})
		default:
			list = append(list, jsonObject{{"description", e.Description}, {"error_number", e.Number},
				{"error", e.Error}, {"source", e.Source}})
		}
	}
	o := jsonObject{{"meta", meta}, {"errors", list}}
	for _, f := range fields {
		v := f.Val
		if v == nil {
			v = []any{}
		}
		o = append(o, jsonKV{f.Key, v})
	}
	return slurmJSON(o)
}

// RESTPings is /slurm/v0.0.38/ping's answer for the one controller.
func RESTPings(hostname string) string {
	return slurmJSON(jsonObject{{"meta", jsonMeta()}, {"errors", []any{}}, {"pings", []any{
		jsonObject{{"hostname", hostname}, {"ping", "UP"}, {"status", 0}, {"mode", "primary"}},
	}}})
}

// RESTPartitions is /slurm/v0.0.38/partitions: openapi/v0.0.38's dump of
// each partition (_dump_part), keys in its order, "min nodes per job"
// with its spaces as 22.05 wrote it.
func RESTPartitions(parts []*config.Partition, n PartitionNode) string {
	list := []any{}
	for _, p := range parts {
		flags := []any{}
		if p.Default {
			flags = append(flags, "default")
		}
		if p.Hidden {
			flags = append(flags, "hidden")
		}
		mode := strings.ToLower(preemptMode(p))
		if mode == "off" {
			mode = "disabled"
		}
		var defTime any
		switch p.DefaultTime {
		case 0:
		case slurmtime.Infinite:
			defTime = -1
		default:
			defTime = int64(p.DefaultTime / time.Minute)
		}
		maxTime := int64(-1)
		if p.MaxTime != slurmtime.Infinite && p.MaxTime > 0 {
			maxTime = int64(p.MaxTime / time.Minute)
		}
		weights := ""
		if len(p.TRESBillingWeights) > 0 {
			weights = billingWeights(p.TRESBillingWeights)
		}
		state := p.State
		if state == "" {
			state = config.StateUp
		}
		list = append(list, jsonObject{
			{"flags", flags},
			{"preemption_mode", []any{mode}},
			{"allowed_allocation_nodes", ""},
			{"allowed_accounts", strings.Join(p.AllowAccounts, ",")},
			{"allowed_groups", strings.Join(p.AllowGroups, ",")},
			{"allowed_qos", ""},
			{"alternative", ""},
			{"billing_weights", weights},
			{"default_memory_per_cpu", nil},
			{"default_memory_per_node", nil},
			{"default_time_limit", defTime},
			{"denied_accounts", ""},
			{"denied_qos", ""},
			{"preemption_grace_time", int64(p.GraceTime / time.Second)},
			{"maximum_cpus_per_node", -1},
			{"maximum_memory_per_cpu", nil},
			{"maximum_memory_per_node", nil},
			{"maximum_nodes_per_job", -1},
			{"max_time_limit", maxTime},
			{"min nodes per job", 0},
			{"name", p.PartitionName},
			{"nodes", n.Name},
			{"over_time_limit", nil},
			{"priority_job_factor", p.PriorityJobFactor},
			{"priority_tier", p.PriorityTier},
			{"qos", p.QOS},
			{"state", state},
			{"total_cpus", n.CPUs},
			{"total_nodes", 1},
			{"tres", partitionTRES(p, n)},
		})
	}
	return slurmJSON(jsonObject{{"meta", jsonMeta()}, {"errors", []any{}}, {"partitions", list}})
}

// RESTReservations is /slurm/v0.0.38/reservations: _dump_res of
// openapi/v0.0.38, from what scontrol show reservation prints.
func RESTReservations(list []api.Reservation) string {
	out := []any{}
	for i := range list {
		r := &list[i]
		core, tres := r.NodeCPUs, fmt.Sprintf("cpu=%d", r.NodeCPUs)
		if r.GPUs > 0 {
			core, tres = 0, fmt.Sprintf("gres/gpu=%d", r.GPUs)
			if r.GPUType != "" {
				tres = fmt.Sprintf("gres/gpu:%s=%d", r.GPUType, r.GPUs)
			}
		}
		flags := []any{}
		for _, f := range strings.Split(ResvFlags(r), ",") {
			if f != "" {
				flags = append(flags, f)
			}
		}
		users := strings.Join(r.Users, ",")
		if r.ExcludeUsers {
			users = "-" + strings.Join(r.Users, ",-")
		}
		out = append(out, jsonObject{
			{"flags", flags},
			{"accounts", strings.Join(r.Accounts, ",")},
			{"burst_buffer", ""},
			{"core_count", core},
			{"core_spec_cnt", 0},
			{"end_time", unix(r.ShowEnd)},
			{"features", ""},
			{"groups", ""},
			{"licenses", ""},
			{"max_start_delay", 0},
			{"name", r.Name},
			{"node_count", 1},
			{"node_list", r.NodeName},
			{"partition", r.ShowPartition},
			{"start_time", unix(r.ShowStart)},
			// NO_VAL, as 22.05 prints Watts=n/a.
			{"watts", int64(4294967294)},
			{"tres", tres},
			{"users", users},
		})
	}
	return slurmJSON(jsonObject{{"meta", jsonMeta()}, {"errors", []any{}}, {"reservations", out}})
}

// RESTDiag is /slurm/v0.0.38/diag: sdiag's statistics (_dump_diag) as
// slurm-lite has them: the time asked, and the jobs pending and running
// that the caller sees; the controller's RPC and scheduler-cycle counters,
// which slurm-lite does not keep, print as a freshly started slurmctld's
// (0, empty lists, false).
func RESTDiag(now time.Time, pending, running int) string {
	st := jsonObject{
		{"rpcs_by_message_type", []any{}},
		{"rpcs_by_user", []any{}},
		{"parts_packed", 1},
		{"req_time", now.Unix()},
		{"req_time_start", 0},
	}
	for _, k := range []string{"server_thread_count", "agent_queue_size", "agent_count", "agent_thread_count",
		"dbd_agent_queue_size", "gettimeofday_latency", "schedule_cycle_max", "schedule_cycle_last",
		"schedule_cycle_total", "schedule_cycle_mean", "schedule_cycle_mean_depth", "schedule_cycle_per_minute",
		"schedule_queue_length", "jobs_submitted", "jobs_started", "jobs_completed", "jobs_canceled", "jobs_failed"} {
		st = append(st, jsonKV{k, 0})
	}
	st = append(st, jsonKV{"jobs_pending", pending}, jsonKV{"jobs_running", running})
	for _, k := range []string{"job_states_ts", "bf_backfilled_jobs", "bf_last_backfilled_jobs", "bf_backfilled_het_jobs",
		"bf_cycle_counter", "bf_cycle_mean", "bf_depth_mean", "bf_depth_mean_try", "bf_cycle_last", "bf_cycle_max",
		"bf_queue_len", "bf_queue_len_mean", "bf_table_size", "bf_table_size_mean", "bf_when_last_cycle"} {
		st = append(st, jsonKV{k, 0})
	}
	st = append(st, jsonKV{"bf_active", false})
	return slurmJSON(jsonObject{{"meta", jsonMeta()}, {"errors", []any{}}, {"statistics", st}})
}
