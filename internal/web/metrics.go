package web

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics: first those of prometheus-slurm-exporter (vpenso's), with
// its names, labels and units, so that the dashboards built on it work
// unchanged (the help texts are ours); then slurm-lite's own, prefixed
// slurm_lite_.
var (
	// squeue's states, as the exporter counts squeue --states=all.
	queueStates = []struct{ metric, state, help string }{
		{"slurm_queue_pending", "PENDING", "Jobs PENDING (squeue --states=all)."},
		{"slurm_queue_running", "RUNNING", "Jobs RUNNING."},
		{"slurm_queue_suspended", "SUSPENDED", "Jobs SUSPENDED."},
		{"slurm_queue_cancelled", "CANCELLED", "Jobs CANCELLED within MinJobAge."},
		{"slurm_queue_completing", "COMPLETING", "Jobs COMPLETING."},
		{"slurm_queue_completed", "COMPLETED", "Jobs COMPLETED within MinJobAge."},
		{"slurm_queue_configuring", "CONFIGURING", "Jobs CONFIGURING (none here: jobs start at once)."},
		{"slurm_queue_failed", "FAILED", "Jobs FAILED within MinJobAge."},
		{"slurm_queue_timeout", "TIMEOUT", "Jobs ended by their time limit (TIMEOUT) within MinJobAge."},
		{"slurm_queue_preempted", "PREEMPTED", "Jobs PREEMPTED within MinJobAge."},
		{"slurm_queue_node_fail", "NODE_FAIL", "Jobs ended by a lost GPU (NODE_FAIL) within MinJobAge."},
	}
	descQueuePendingDep = prometheus.NewDesc("slurm_queue_pending_dependency", "Jobs PENDING with reason Dependency.", nil, nil)

	descCPUsAlloc = prometheus.NewDesc("slurm_cpus_alloc", "CPUs held by jobs.", nil, nil)
	descCPUsIdle  = prometheus.NewDesc("slurm_cpus_idle", "CPUs no job holds.", nil, nil)
	descCPUsOther = prometheus.NewDesc("slurm_cpus_other", "CPUs neither held nor idle (always 0 here).", nil, nil)
	descCPUsTotal = prometheus.NewDesc("slurm_cpus_total", "CPUs of the node.", nil, nil)

	descGPUsAlloc = prometheus.NewDesc("slurm_gpus_alloc", "GPUs with at least one job on them.", nil, nil)
	descGPUsIdle  = prometheus.NewDesc("slurm_gpus_idle", "GPUs with no job (drained ones included).", nil, nil)
	descGPUsTotal = prometheus.NewDesc("slurm_gpus_total", "GPUs present (lost ones excluded).", nil, nil)
	descGPUsUtil  = prometheus.NewDesc("slurm_gpus_utilization", "Share of the GPUs with a job on them, 0 to 1.", nil, nil)

	// sinfo's node states, as the exporter groups them.
	nodeStates = []string{"alloc", "comp", "down", "drain", "err", "fail", "idle", "maint", "mix", "resv"}

	nodeLabels      = []string{"node", "status"}
	descNodeCPUAll  = prometheus.NewDesc("slurm_node_cpu_alloc", "CPUs held by jobs, per node.", nodeLabels, nil)
	descNodeCPUIdle = prometheus.NewDesc("slurm_node_cpu_idle", "CPUs no job holds, per node.", nodeLabels, nil)
	descNodeCPUOth  = prometheus.NewDesc("slurm_node_cpu_other", "CPUs neither held nor idle, per node (always 0 here).", nodeLabels, nil)
	descNodeCPUTot  = prometheus.NewDesc("slurm_node_cpu_total", "CPUs, per node.", nodeLabels, nil)
	descNodeMemAll  = prometheus.NewDesc("slurm_node_mem_alloc", "Memory held by jobs, per node, in megabytes.", nodeLabels, nil)
	descNodeMemTot  = prometheus.NewDesc("slurm_node_mem_total", "Memory, per node, in megabytes (RealMemory).", nodeLabels, nil)

	account            = []string{"account"}
	descAccountPending = prometheus.NewDesc("slurm_account_jobs_pending", "Jobs PENDING, per account.", account, nil)
	descAccountRunning = prometheus.NewDesc("slurm_account_jobs_running", "Jobs RUNNING, per account.", account, nil)
	descAccountCPUs    = prometheus.NewDesc("slurm_account_cpus_running", "CPUs held by RUNNING jobs, per account.", account, nil)
	descAccountSusp    = prometheus.NewDesc("slurm_account_jobs_suspended", "Jobs SUSPENDED, per account.", account, nil)
	descAccountFS      = prometheus.NewDesc("slurm_account_fairshare", "sshare's FairShare on the account's row (empty, so 0, under Fair Tree).", account, nil)

	user            = []string{"user"}
	descUserPending = prometheus.NewDesc("slurm_user_jobs_pending", "Jobs PENDING, per user.", user, nil)
	descUserRunning = prometheus.NewDesc("slurm_user_jobs_running", "Jobs RUNNING, per user.", user, nil)
	descUserCPUs    = prometheus.NewDesc("slurm_user_cpus_running", "CPUs held by RUNNING jobs, per user.", user, nil)
	descUserSusp    = prometheus.NewDesc("slurm_user_jobs_suspended", "Jobs SUSPENDED, per user.", user, nil)

	descPartitionPending = prometheus.NewDesc("slurm_partition_jobs_pending", "Jobs PENDING, per partition.", []string{"partition"}, nil)

	descSchedThreads   = prometheus.NewDesc("slurm_scheduler_threads", "Scheduling threads (the one loop).", nil, nil)
	descSchedQueue     = prometheus.NewDesc("slurm_scheduler_queue_size", "Jobs waiting to be scheduled.", nil, nil)
	descSchedLast      = prometheus.NewDesc("slurm_scheduler_last_cycle", "Planning time of the last scheduling pass, in microseconds.", nil, nil)
	descSchedMean      = prometheus.NewDesc("slurm_scheduler_mean_cycle", "Mean planning time of the scheduling passes since the start, in microseconds.", nil, nil)
	descSchedPerMinute = prometheus.NewDesc("slurm_scheduler_cycle_per_minute", "Scheduling passes per minute since the start.", nil, nil)
	descBackfillLast   = prometheus.NewDesc("slurm_scheduler_backfill_last_cycle", "Planning time of the last pass, backfill included (one pass plans both), in microseconds.", nil, nil)
	descBackfillMean   = prometheus.NewDesc("slurm_scheduler_backfill_mean_cycle", "Mean planning time of the passes, backfill included, in microseconds.", nil, nil)
	descBackfillDepth  = prometheus.NewDesc("slurm_scheduler_backfill_depth_mean", "Mean number of pending jobs a pass considered.", nil, nil)

	// slurm-lite's own. Per GPU, labelled as dcgm-exporter labels its
	// GPUs (gpu: the NVML index, UUID) plus the jobs on it and their users
	// (comma-separated, in job id order; "" when idle).
	gpuLabels          = []string{"gpu", "UUID", "type", "job", "user"}
	descGPUMemTotal    = prometheus.NewDesc("slurm_lite_gpu_memory_total_bytes", "GPU memory per GPU.", gpuLabels, nil)
	descGPUMemUsed     = prometheus.NewDesc("slurm_lite_gpu_memory_used_bytes", "GPU memory in use per GPU, as NVML counts it (every process's).", gpuLabels, nil)
	descGPUMemReserved = prometheus.NewDesc("slurm_lite_gpu_memory_reserved_bytes", "GPU memory given to jobs per GPU: the whole GPU for a whole-GPU job, --gpu-mem on a shared one.", gpuLabels, nil)
	descGPUUtil        = prometheus.NewDesc("slurm_lite_gpu_utilization_percent", "Percentage of the last sample period a kernel ran, per GPU (absent where NVML cannot say).", gpuLabels, nil)
	descGPUUp          = prometheus.NewDesc("slurm_lite_gpu_up", "1 when jobs may be placed on the GPU, 0 when it is drained or lost.", []string{"gpu", "UUID", "type", "state"}, nil)
	descUserFS         = prometheus.NewDesc("slurm_lite_user_fairshare", "Fair-share factor of a user in an account (sshare's FairShare).", []string{"account", "user"}, nil)
	descYields         = prometheus.NewDesc("slurm_lite_yields_total", "Jobs yielded (scontrol yield, and the scheduler's own shrinks and paybacks) since the daemon started.", nil, nil)
	descPreemptions    = prometheus.NewDesc("slurm_lite_preemptions_total", "Jobs preempted by higher-tier partitions since the daemon started.", nil, nil)
	descBudgetUsed     = prometheus.NewDesc("slurm_lite_account_gpu_minutes_used", "GPU-minutes an account with a GrpTRESMins gres/gpu budget has used, as the limit counts them (since the last PriorityUsageResetPeriod reset, decayed by PriorityDecayHalfLife).", account, nil)
	descBudgetLimit    = prometheus.NewDesc("slurm_lite_account_gpu_minutes_limit", "An account's GrpTRESMins gres/gpu budget, in GPU-minutes.", account, nil)
	descGPUSeconds     = prometheus.NewDesc("slurm_lite_account_gpu_seconds_total", "GPU-seconds held by each account's jobs, every recorded run (running ones up to the scrape).", account, nil)
	descResvGPUs       = prometheus.NewDesc("slurm_lite_reservation_gpus", "GPUs an advance reservation holds (the node's all for a whole-node one).", []string{"reservation", "state"}, nil)
	descResvActive     = prometheus.NewDesc("slurm_lite_reservation_active", "1 while an advance reservation's window is in force, else 0.", []string{"reservation"}, nil)
	descResvStart      = prometheus.NewDesc("slurm_lite_reservation_start_time_seconds", "Start of an advance reservation's window in force or next (a recurring one moves on), Unix time.", []string{"reservation"}, nil)
	descResvEnd        = prometheus.NewDesc("slurm_lite_reservation_end_time_seconds", "End of that window, Unix time.", []string{"reservation"}, nil)
	descScrapeOK       = prometheus.NewDesc("slurm_lite_up", "1 when the daemon's state could be read for this scrape.", nil, nil)
)

// collector turns the source's State into metrics at each scrape.
type collector struct {
	src     Source
	timeout time.Duration
}

// Describe sends every metric's description.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, q := range queueStates {
		ch <- queueDesc(q.metric, q.help)
	}
	for _, s := range nodeStates {
		ch <- nodesDesc(s)
	}
	for _, d := range []*prometheus.Desc{descQueuePendingDep, descCPUsAlloc, descCPUsIdle, descCPUsOther, descCPUsTotal,
		descGPUsAlloc, descGPUsIdle, descGPUsTotal, descGPUsUtil, descNodeCPUAll, descNodeCPUIdle, descNodeCPUOth,
		descNodeCPUTot, descNodeMemAll, descNodeMemTot, descAccountPending, descAccountRunning, descAccountCPUs,
		descAccountSusp, descAccountFS, descUserPending, descUserRunning, descUserCPUs, descUserSusp,
		descPartitionPending, descSchedThreads, descSchedQueue, descSchedLast, descSchedMean, descSchedPerMinute,
		descBackfillLast, descBackfillMean, descBackfillDepth, descGPUMemTotal, descGPUMemUsed, descGPUMemReserved,
		descGPUUtil, descGPUUp, descUserFS, descYields, descPreemptions, descGPUSeconds, descResvGPUs, descResvActive,
		descResvStart, descResvEnd, descBudgetUsed, descBudgetLimit, descScrapeOK} {
		ch <- d
	}
}

// Descriptions made once: the same *Desc for the same metric every scrape.
var (
	queueDescs = map[string]*prometheus.Desc{}
	nodesDescs = map[string]*prometheus.Desc{}
)

func init() {
	for _, q := range queueStates {
		queueDescs[q.metric] = prometheus.NewDesc(q.metric, q.help, nil, nil)
	}
	for _, s := range nodeStates {
		nodesDescs[s] = prometheus.NewDesc("slurm_nodes_"+s, nodesHelp(s), nil, nil)
	}
}

func queueDesc(metric, _ string) *prometheus.Desc { return queueDescs[metric] }
func nodesDesc(s string) *prometheus.Desc         { return nodesDescs[s] }

// nodesHelp is the help text of slurm_nodes_<s>.
func nodesHelp(s string) string {
	return "Nodes whose sinfo state is " + strings.ToUpper(s) + "* (1 or 0: this is one node)."
}

// Collect reads the state once and sends every metric from it.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.src.State(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descScrapeOK, prometheus.GaugeValue, 0)
		ch <- prometheus.NewInvalidMetric(descScrapeOK, fmt.Errorf("reading the daemon's state: %w", err))
		return
	}
	ch <- prometheus.MustNewConstMetric(descScrapeOK, prometheus.GaugeValue, 1)
	collectState(st, ch)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}

// collectState sends the metrics of one state.
func collectState(st *State, ch chan<- prometheus.Metric) {
	for _, r := range st.Reservations {
		state, active := "INACTIVE", 0.0
		if r.Active {
			state, active = "ACTIVE", 1
		}
		gauge(ch, descResvGPUs, float64(r.GPUs), r.Name, state)
		gauge(ch, descResvActive, active, r.Name)
		gauge(ch, descResvStart, float64(r.Start), r.Name)
		gauge(ch, descResvEnd, float64(r.End), r.Name)
	}
	pendingDep := 0
	type jobCounts struct{ pending, running, suspended, cpus int }
	byAccount, byUser := map[string]*jobCounts{}, map[string]*jobCounts{}
	byPartition := map[string]int{}
	count := func(m map[string]*jobCounts, k string) *jobCounts {
		if m[k] == nil {
			m[k] = &jobCounts{}
		}
		return m[k]
	}
	// Per account, user and partition: the jobs the viewer sees (none of
	// others' under PrivateData "jobs"); the totals count them all.
	for _, j := range st.Jobs {
		a, u := count(byAccount, j.Account), count(byUser, j.User)
		switch j.State {
		case "PENDING":
			a.pending++
			u.pending++
			byPartition[j.Partition]++
			if j.Reason == "Dependency" {
				pendingDep++
			}
		case "RUNNING":
			a.running++
			u.running++
			a.cpus += j.CPUs
			u.cpus += j.CPUs
		case "SUSPENDED":
			a.suspended++
			u.suspended++
		}
	}
	for _, q := range queueStates {
		gauge(ch, queueDesc(q.metric, ""), float64(st.States[q.state]))
	}
	gauge(ch, descQueuePendingDep, float64(pendingDep))

	gauge(ch, descCPUsAlloc, float64(st.CPUsAlloc))
	gauge(ch, descCPUsIdle, float64(max(st.CPUs-st.CPUsAlloc, 0)))
	gauge(ch, descCPUsOther, 0)
	gauge(ch, descCPUsTotal, float64(st.CPUs))

	total, alloc := 0, 0
	for _, g := range st.GPUs {
		if g.State == "LOST" {
			continue
		}
		total++
		if g.InUse {
			alloc++
		}
	}
	gauge(ch, descGPUsAlloc, float64(alloc))
	gauge(ch, descGPUsIdle, float64(total-alloc))
	gauge(ch, descGPUsTotal, float64(total))
	util := 0.0
	if total > 0 {
		util = float64(alloc) / float64(total)
	}
	gauge(ch, descGPUsUtil, util)

	state := nodeGroup(st.NodeState)
	for _, s := range nodeStates {
		v := 0.0
		if s == state {
			v = 1
		}
		gauge(ch, nodesDesc(s), v)
	}
	status := strings.ToLower(st.NodeState)
	const mib = 1 << 20
	gauge(ch, descNodeCPUAll, float64(st.CPUsAlloc), st.Node, status)
	gauge(ch, descNodeCPUIdle, float64(max(st.CPUs-st.CPUsAlloc, 0)), st.Node, status)
	gauge(ch, descNodeCPUOth, 0, st.Node, status)
	gauge(ch, descNodeCPUTot, float64(st.CPUs), st.Node, status)
	gauge(ch, descNodeMemAll, float64(st.MemAlloc/mib), st.Node, status)
	gauge(ch, descNodeMemTot, float64(st.Mem/mib), st.Node, status)

	for _, k := range sortedKeys(byAccount) {
		a := byAccount[k]
		gauge(ch, descAccountPending, float64(a.pending), k)
		gauge(ch, descAccountRunning, float64(a.running), k)
		gauge(ch, descAccountCPUs, float64(a.cpus), k)
		gauge(ch, descAccountSusp, float64(a.suspended), k)
	}
	for _, k := range sortedKeys(byUser) {
		u := byUser[k]
		gauge(ch, descUserPending, float64(u.pending), k)
		gauge(ch, descUserRunning, float64(u.running), k)
		gauge(ch, descUserCPUs, float64(u.cpus), k)
		gauge(ch, descUserSusp, float64(u.suspended), k)
	}
	for _, k := range sortedKeys(byPartition) {
		gauge(ch, descPartitionPending, float64(byPartition[k]), k)
	}
	for _, s := range st.Shares {
		if s.User == "" {
			gauge(ch, descAccountFS, s.FairShare, s.Account)
		} else {
			gauge(ch, descUserFS, s.FairShare, s.Account, s.User)
		}
	}

	gauge(ch, descSchedThreads, 1)
	gauge(ch, descSchedQueue, float64(st.States["PENDING"]))
	gauge(ch, descSchedLast, st.Sched.LastCycle)
	gauge(ch, descSchedMean, st.Sched.MeanCycle)
	gauge(ch, descSchedPerMinute, st.Sched.CyclesPerMinute)
	if st.Sched.Backfill {
		// One pass plans the queue and its backfill together.
		gauge(ch, descBackfillLast, st.Sched.LastCycle)
		gauge(ch, descBackfillMean, st.Sched.MeanCycle)
		gauge(ch, descBackfillDepth, float64(st.Sched.Depth))
	}

	for _, g := range st.GPUs {
		if g.State == "LOST" {
			gauge(ch, descGPUUp, 0, strconv.Itoa(g.NVMLIndex), g.UUID, g.Type, g.State)
			continue
		}
		up := 0.0
		if g.State == "UP" {
			up = 1
		}
		gauge(ch, descGPUUp, up, strconv.Itoa(g.NVMLIndex), g.UUID, g.Type, g.State)
		var jobs, users []string
		for _, j := range g.Jobs {
			jobs = append(jobs, j.ID)
			if j.User != "" && !slices.Contains(users, j.User) {
				users = append(users, j.User)
			}
		}
		labels := []string{strconv.Itoa(g.NVMLIndex), g.UUID, g.Type, strings.Join(jobs, ","), strings.Join(users, ",")}
		gauge(ch, descGPUMemTotal, float64(g.MemTotal), labels...)
		gauge(ch, descGPUMemUsed, float64(g.MemUsed), labels...)
		gauge(ch, descGPUMemReserved, float64(g.MemReserved), labels...)
		if g.Util >= 0 {
			gauge(ch, descGPUUtil, float64(g.Util), labels...)
		}
	}
	counter(ch, descYields, float64(st.Yields))
	counter(ch, descPreemptions, float64(st.Preemptions))
	for _, k := range sortedKeys(st.GPUSeconds) {
		counter(ch, descGPUSeconds, st.GPUSeconds[k], k)
	}
	for _, b := range st.Budgets {
		gauge(ch, descBudgetUsed, b.Used, b.Account)
		gauge(ch, descBudgetLimit, float64(b.Limit), b.Account)
	}
}

// nodeGroup is the exporter's group for a sinfo state (its nodes.go
// matches on the state's prefix).
func nodeGroup(state string) string {
	s := strings.ToLower(state)
	for _, g := range []struct{ prefix, group string }{
		{"alloc", "alloc"}, {"comp", "comp"}, {"down", "down"}, {"drain", "drain"}, {"fail", "fail"},
		{"err", "err"}, {"idle", "idle"}, {"maint", "maint"}, {"mix", "mix"}, {"resv", "resv"}, {"reserved", "resv"},
	} {
		if strings.HasPrefix(s, g.prefix) {
			return g.group
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
