package export

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The files beside slurm.conf for what slurm-lite does around the
// scheduler and real Slurm carries through a plugin, a script or another
// program: routes (job_submit.lua), the metrics (prometheus.yml, for
// prometheus-slurm-exporter and dcgm-exporter), dcgm-exporter's job
// mapping (a Prolog and an Epilog), and the webhooks' node events
// (strigger). Each is written only when the configuration uses what it
// carries.

// Names of the optional files.
const (
	JobSubmitLua = "job_submit.lua"
	Prometheus   = "prometheus.yml"
	JobMapProlog = "jobmap-prolog.sh"
	JobMapEpilog = "jobmap-epilog.sh"
	Strigger     = "strigger.sh"
	Webhook      = "webhook.sh"
)

// confDir is where Debian's Slurm reads slurm.conf; the Prolog, Epilog and
// trigger programs are named there, as docs/migrate.md copies the files.
const confDir = "/etc/slurm"

// The exporters' ports: prometheus-slurm-exporter's default (vpenso's
// -listen-address ":8080"), dcgm-exporter's (--address ":9400").
const (
	slurmExporterPort = 8080
	dcgmExporterPort  = 9400
)

// jobSubmitLua is slurm-lite's [[Route]]s as Slurm's job_submit/lua
// plugin runs them (slurm.conf: JobSubmitPlugins=lua; Slurm reads
// job_submit.lua from slurm.conf's directory). The rule is the daemon's
// routedPartition: a job that names no partition and gave a time limit
// of at most a route's MaxTime goes to the route's partition, the first
// that matches; a job without a limit is not routed. Slurm keeps limits
// in whole minutes (NO_VAL when none was given), slurm-lite to the
// second: a limit of N minutes matches a MaxTime of N×60 seconds or more.
func (g gen) jobSubmitLua() string {
	var b strings.Builder
	g.header(&b, "job_submit.lua for real Slurm's job_submit/lua plugin", "-- ")
	b.WriteString(`--
-- slurm-lite's [[Route]]s: a job that names no partition (-p, SBATCH_PARTITION)
-- and whose time limit is at most a route's MaxTime goes to that route's
-- partition; the first route that matches wins. A job that gives no time limit
-- is not routed: it goes to the default partition and gets its DefaultTime, as
-- in slurm-lite. slurm.conf's JobSubmitPlugins=lua loads this file from the
-- directory of slurm.conf. Slurm keeps time limits in whole minutes (sbatch
-- rounds seconds up), so a limit of N minutes takes a route whose MaxTime is at
-- least N x 60 seconds.

local routes = {
`)
	for _, r := range g.cfg.Routes {
		fmt.Fprintf(&b, "\t{ max_seconds = %d, partition = \"%s\" }, -- MaxTime = %q\n",
			int64(r.MaxTime/time.Second), r.Partition, slurmsyntax.FormatDuration(r.MaxTime))
	}
	b.WriteString(`}

function slurm_job_submit(job_desc, part_list, submit_uid)
	if job_desc.partition ~= nil then
		return slurm.SUCCESS
	end
	local limit = job_desc.time_limit
	if limit == nil or limit == slurm.NO_VAL or limit == slurm.INFINITE then
		return slurm.SUCCESS
	end
	for _, r in ipairs(routes) do
		if limit * 60 <= r.max_seconds then
			job_desc.partition = r.partition
			slurm.log_info("job_submit.lua: routed a job of %d minute(s) from uid %d to partition %s",
				limit, submit_uid, r.partition)
			return slurm.SUCCESS
		end
	end
	return slurm.SUCCESS
end

-- Routes apply when a job is submitted, not when it is changed (as in
-- slurm-lite); the plugin needs the function all the same.
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

return slurm.SUCCESS
`)
	return b.String()
}

// hosts are the nodes, one name each (g.nodes expanded).
func (g gen) hosts() []string {
	h, _ := slurmsyntax.ExpandHostlist(g.nodes)
	return h
}

// prometheusYML is what Prometheus scrapes on Slurm in place of [Web]'s
// /metrics: prometheus-slurm-exporter, whose slurm_* metrics slurm-lite
// serves under the same names and labels, and dcgm-exporter on every
// node for the GPUs, labelled with the jobs on them through the job
// mapping. Its comments say, one line each, which of slurm-lite's own
// metrics has no exporter.
func (g gen) prometheusYML() string {
	c := g.cfg
	var b strings.Builder
	g.header(&b, "Prometheus scrape configuration for real Slurm", "# ")
	b.WriteString("#\n")
	if c.Web.Listen != "" {
		fmt.Fprintf(&b, "# slurm-lite served /metrics (and the dashboard) at [Web] Listen = %q. On Slurm:\n", c.Web.Listen)
	} else {
		b.WriteString("# slurm-lite's [Web] listener was off; on Slurm the metrics come from:\n")
	}
	fmt.Fprintf(&b, `#   - prometheus-slurm-exporter (github.com/vpenso/prometheus-slurm-exporter) on
#     %[1]s, which runs squeue, sinfo, sdiag and sshare; -gpus-acct adds the slurm_gpus_* metrics:
#       prometheus-slurm-exporter -listen-address=:%[2]d -gpus-acct
#     slurm-lite's slurm_* metrics are this exporter's, with its names and labels.
#   - dcgm-exporter (NVIDIA DCGM) on every node, for each GPU's memory and utilization
#     (DCGM_FI_DEV_FB_USED, DCGM_FI_DEV_FB_FREE, DCGM_FI_DEV_GPU_UTIL), labelled hpc_job
#     with the jobs on it from the job mapping directory:
#       dcgm-exporter --address=:%[3]d --hpc-job-mapping-dir=%[4]s
`, g.controller, slurmExporterPort, dcgmExporterPort, cmpOr(c.JobMappingDir, "DIR"))
	if c.JobMappingDir != "" {
		fmt.Fprintf(&b, "#     slurm.conf's Prolog and Epilog (%s, %s) keep that directory as slurm-lite's\n#     JobMappingDir did.\n", JobMapProlog, JobMapEpilog)
	} else {
		b.WriteString("#     (JobMappingDir was off: set it and export again for a Prolog and Epilog that keep it.)\n")
	}
	b.WriteString(`#
# slurm-lite's own metrics, and what stands for each on Slurm:
#   slurm_lite_gpu_memory_used_bytes, _total_bytes  dcgm-exporter's DCGM_FI_DEV_FB_USED, FB_USED + FB_FREE (MiB)
#   slurm_lite_gpu_utilization_percent               dcgm-exporter's DCGM_FI_DEV_GPU_UTIL
#   slurm_lite_gpu_memory_reserved_bytes             none: Slurm gives no GPU memory, only whole GPUs or shards
#   slurm_lite_gpu_up                                none per GPU: slurm_nodes_drain counts drained nodes
#   slurm_lite_user_fairshare                        none: the exporter has slurm_account_fairshare per account
#   slurm_lite_yields_total                          none: Slurm has no yield
#   slurm_lite_preemptions_total                     none: count sacct -s PREEMPTED
#   slurm_lite_account_gpu_seconds_total             none: sreport cluster AccountUtilizationByUser -T gres/gpu
#   slurm_lite_up                                    Prometheus' own up{job="slurm"}
# The dashboard has no equivalent: Grafana over these two exporters is the usual one.

scrape_configs:
  - job_name: slurm
    scrape_interval: 30s
    static_configs:
`)
	fmt.Fprintf(&b, "      - targets: [\"%s:%d\"]\n", g.controller, slurmExporterPort)
	b.WriteString("  - job_name: dcgm\n    static_configs:\n      - targets: [")
	for i, h := range g.hosts() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "\"%s:%d\"", h, dcgmExporterPort)
	}
	b.WriteString("]\n")
	return b.String()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// jobMapProlog and jobMapEpilog keep JobMappingDir on Slurm as the daemon
// did (internal/jobmap): one file per GPU, named by its index, listing
// the ids of the jobs on it, one a line, for dcgm-exporter's
// --hpc-job-mapping-dir. slurmd runs them as root on the job's node, at
// its start and end, with SLURM_JOB_ID and the job's GPUs in
// CUDA_VISIBLE_DEVICES (a GPU or shard job's, by gres.conf's order, which
// export writes as NVML's: DCGM's numbering). A lock keeps two jobs of one
// shared GPU from writing its file at once.
func (g gen) jobMapScript(start bool) string {
	var b strings.Builder
	what := "Epilog"
	if start {
		what = "Prolog"
	}
	b.WriteString("#!/bin/sh\n")
	g.header(&b, what+" for real Slurm (slurm.conf: "+what+"=)", "# ")
	fmt.Fprintf(&b, `#
# Keeps JobMappingDir (%[1]s) as slurm-lite did, for dcgm-exporter's
# --hpc-job-mapping-dir: one file per GPU, named by its index, listing the ids of
# the jobs on it, one a line. slurmd runs it as root on the job's node with the
# job's GPUs in SLURM_JOB_GPUS, or for shards CUDA_VISIBLE_DEVICES (gres.conf's
# order, which export writes as NVML's, DCGM's numbering). It never fails the job.
dir=%[2]s
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}
[ -n "$gpus" ] && [ -n "${SLURM_JOB_ID:-}" ] || exit 0
# Root writes here: the directory and every one above it must be root's (or
# this script's user's), no link, and writable by no one else (a sticky one
# such as /tmp above it aside), as slurm-lite checks JobMappingDir. Else a
# user's link would have root overwrite, or copy out, a file of its choosing.
safe() {
	p=$dir
	while :; do
		if [ -L "$p" ]; then return 1; fi
		if [ -e "$p" ]; then
			owner=$(stat -c %%u "$p") || return 1
			[ "$owner" = 0 ] || [ "$owner" = "$(id -u)" ] || return 1
			if [ -n "$(find "$p" -maxdepth 0 -perm /022)" ]; then
				[ "$p" != "$dir" ] && [ -k "$p" ] || return 1
			fi
		fi
		[ "$p" = / ] && return 0
		p=$(dirname "$p")
	done
}
safe && mkdir -p "$dir" 2>/dev/null && safe || {
	echo "jobmap: $dir is not root's alone (or cannot be made): the job mapping is not kept" >&2
	exit 0
}
(
	flock 9
	for gpu in $(echo "$gpus" | tr ',' ' '); do
		case $gpu in *[!0-9]*) continue ;; esac
`, g.cfg.JobMappingDir, shellQuote(g.cfg.JobMappingDir))
	// Each file is rewritten whole and renamed into place: dcgm-exporter
	// never reads half of one. A GPU left without jobs has no file.
	if start {
		b.WriteString(`		grep -qx "$SLURM_JOB_ID" "$dir/$gpu" 2>/dev/null && continue
		{ cat "$dir/$gpu" 2>/dev/null; echo "$SLURM_JOB_ID"; } >"$dir/.$gpu.tmp"
		chmod 644 "$dir/.$gpu.tmp"
		mv -f "$dir/.$gpu.tmp" "$dir/$gpu"
`)
	} else {
		b.WriteString(`		[ -f "$dir/$gpu" ] || continue
		grep -vx "$SLURM_JOB_ID" "$dir/$gpu" >"$dir/.$gpu.tmp"
		if [ -s "$dir/.$gpu.tmp" ]; then
			chmod 644 "$dir/.$gpu.tmp"
			mv -f "$dir/.$gpu.tmp" "$dir/$gpu"
		else
			rm -f "$dir/.$gpu.tmp" "$dir/$gpu"
		fi
`)
	}
	b.WriteString(`	done
) 9>>"$dir/.lock"
exit 0
`)
	return b.String()
}

// triggered are the webhook events Slurm's strigger fires for the
// cluster as a whole, with the strigger option of each: a drain. The
// others are a job's (its user's --mail-type, through MailProg), or
// slurm-lite's own; RESUME has no trigger (--up is a node back from
// DOWN, not one leaving DRAIN).
var triggered = []struct{ event, option string }{
	{"DRAIN", "--drained"},
}

// hookEvents are the events of hook h that strigger carries.
func hookEvents(h config.NotifyHook) []string {
	var out []string
	for _, t := range triggered {
		if slices.Contains(h.Events, t.event) || slices.Contains(h.Events, "ALL") {
			out = append(out, t.event)
		}
	}
	return out
}

// triggers reports whether some webhook asks for an event strigger fires.
func (g gen) triggers() bool {
	return slices.ContainsFunc(g.cfg.Notify, func(h config.NotifyHook) bool { return len(hookEvents(h)) > 0 })
}

// striggerSh sets, once, the triggers that carry the webhooks' node
// events: each runs webhook.sh (beside it) with the event and the URL;
// slurmctld appends the node names. Triggers live in slurmctld's state;
// --flags=PERM keeps one after it fires. Run again, it sets only those
// missing (strigger --get lists them by program).
func (g gen) striggerSh() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	g.header(&b, "strigger lines for real Slurm", "# ")
	b.WriteString(`#
# slurm-lite's [[Notify]] webhooks, as far as Slurm's triggers carry them: a node
# drained (DRAIN) runs webhook.sh, beside this file, which POSTs the event to the
# webhook's URL. Run it once on SlurmctldHost as SlurmUser, after slurmctld starts
# (triggers live in slurmctld's state; --flags=PERM keeps each after it fires);
# running it again sets only what is missing. strigger --get lists the triggers,
# strigger --clear --id=N removes one. The webhooks' job events are not triggers:
# see the top of slurm.conf.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
set_trigger() { # OPTION EVENT URL
	prog="$here/` + Webhook + ` $2 $3"
	if strigger --get --node $1 --noheader 2>/dev/null | grep -qF "$prog"; then
		echo "already set: strigger --node $1 --program=\"$prog\""
		return
	fi
	strigger --set --node $1 --flags=PERM --program="$prog"
	echo "set: strigger --node $1 --program=\"$prog\""
}
`)
	for _, h := range g.cfg.Notify {
		for _, e := range hookEvents(h) {
			for _, t := range triggered {
				if t.event == e {
					fmt.Fprintf(&b, "set_trigger %s %s %s\n", t.option, e, shellQuote(h.URL))
				}
			}
		}
	}
	return b.String()
}

// webhookSh is the trigger program: it POSTs slurm-lite's webhook body
// for a node event (event, time, cluster, node) to the URL.
func (g gen) webhookSh() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	g.header(&b, "webhook.sh, the program of strigger.sh's triggers", "# ")
	fmt.Fprintf(&b, `#
# webhook.sh EVENT URL NODES: POSTs what slurm-lite's [[Notify]] sent for a node
# event, {"event", "time", "cluster", "node"}, to URL (slurmctld appends NODES).
# Slurm gives a trigger no reason, user or GPU: the body has none.
set -eu
event=$1 url=$2 nodes=${3:-}
now=$(date -u +%%Y-%%m-%%dT%%H:%%M:%%SZ)
body=$(printf '{"event":"%%s","time":"%%s","cluster":"%%s","node":"%%s"}' "$event" "$now" %s "$nodes")
exec curl -fsS --max-time 30 --retry 3 -H 'Content-Type: application/json' --data "$body" "$url"
`, shellQuote(g.cfg.ClusterName))
	return b.String()
}

// extras are the optional files Generate adds, in order.
func (g gen) extras() []File {
	c := g.cfg
	var out []File
	if len(c.Routes) > 0 {
		out = append(out, File{Name: JobSubmitLua, Data: []byte(g.jobSubmitLua()), Mode: 0o644})
	}
	if c.Web.Listen != "" || c.JobMappingDir != "" {
		out = append(out, File{Name: Prometheus, Data: []byte(g.prometheusYML()), Mode: 0o644})
	}
	if c.JobMappingDir != "" {
		out = append(out,
			File{Name: JobMapProlog, Data: []byte(g.jobMapScript(true)), Mode: 0o755},
			File{Name: JobMapEpilog, Data: []byte(g.jobMapScript(false)), Mode: 0o755})
	}
	if len(g.in.Reservations) > 0 {
		out = append(out, File{Name: Reservations, Data: []byte(g.reservationsSh()), Mode: 0o755})
	}
	if g.triggers() {
		out = append(out,
			File{Name: Strigger, Data: []byte(g.striggerSh()), Mode: 0o755},
			File{Name: Webhook, Data: []byte(g.webhookSh()), Mode: 0o755})
	}
	return out
}
