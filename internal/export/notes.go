package export

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// noEquivalent is the top of slurm.conf: every slurm-lite setting and
// behaviour that real Slurm lacks, with this configuration's value and what
// Slurm does instead. Everything else in the file is the configuration's own
// value under Slurm's own key.
func (g gen) noEquivalent() []string {
	c := g.cfg
	q := strconv.Quote
	shard := slurmsyntax.FormatSize(c.ShardSize)
	idle := "0, off"
	if c.IdleGPUTimeout > 0 {
		idle = q(clock(c.IdleGPUTimeout))
	}
	lines := []string{
		"slurm-lite settings and behaviour with no Slurm equivalent, and what real Slurm does instead:",
		"",
		fmt.Sprintf("- VRAM-aware packing (--gpu-mem, #SLITE --gpu-mem, ShardSize = %s): Slurm counts", q(shard)),
		fmt.Sprintf("  gres/shard as plain units: each GPU gets its memory / %s shards (gres.conf), so", shard),
		"  --gres=shard:N keeps its meaning, but Slurm never checks free or used GPU memory.",
		"  #SLITE lines are comments to Slurm. A GPU serves shards or one whole-GPU job, never both.",
		"  A lab loses: small jobs packed by the memory they use, and a job past its share noticed.",
		"- GPU memory held outside jobs (processes started by hand) counts as used here; Slurm does",
		"  not look, and offers such a GPU as free.",
		fmt.Sprintf("- Yield (scontrol yield, #SLITE --yieldable, --batch-size, YieldGroup = %s): none.", q(c.YieldGroup)),
		"  The owner or an operator can `scontrol requeue JOBID`: the job is stopped and pends",
		"  again (about two minutes, reason BeginTime) with SLURM_RESTART_COUNT incremented;",
		"  its batch size and GPU count cannot change, and YieldGroup gives no rights.",
		"  A lab loses: a long job making room for a short one without losing its place.",
		fmt.Sprintf("- Idle-GPU reclaim (IdleGPUTimeout = %s): none; a job keeps its GPUs until it ends.", idle),
		"  Filler partitions work as here through PreemptType/PreemptMode=REQUEUE: a higher",
		"  PriorityTier job preempts them (SIGTERM, KillWait, SIGKILL, requeue), without",
		"  waiting for NVML to show the GPU memory back.",
		fmt.Sprintf("- GPUViolationPolicy = %s (jobs over their GPU memory, or on GPUs not given): none.", q(c.GPUViolationPolicy)),
		"  cgroup.conf's ConstrainDevices=yes keeps jobs off other GPUs; memory over-use on a",
		"  shared GPU goes unnoticed.",
		"- GPU health (failed NVML calls, Xid errors, memory not back after a job): Slurm drains",
		"  no GPU by itself; a HealthCheckProgram (such as LBNL NHC) can drain the node.",
		fmt.Sprintf("- CheckpointDir = %s,", q(c.CheckpointDir)),
		fmt.Sprintf("  CheckpointKeepDays = %d: none; $SLITE_CHECKPOINT_DIR and $SLITE_BATCH_SIZE are", c.CheckpointKeepDays),
		"  unset, the examples fall back to ./checkpoint: keep it on a filesystem every node sees.",
		fmt.Sprintf("- GPUSampleInterval = %s s, sacct's GPUMemPeak and GPUUtilAve: Slurm built without NVML",
			seconds(c.GPUSampleInterval)),
		"  (Debian's) records no GPU memory or utilisation; sacct's other fields are the same.",
		fmt.Sprintf("- SocketPath = %s,", q(c.SocketPath)),
		fmt.Sprintf("  StateSaveLocation = %s: Slurm's daemons talk TCP with munge and keep", q(c.StateSaveLocation)),
		"  their own state (below); slurm-lite's job history is not imported (docs/migrate.md",
		"  says how to keep it).",
		"- A missing --output directory is created here; Slurm fails the job (exit 0:53).",
		"- A requeued or yielded job may start again at once here; Slurm holds it ~2 minutes.",
	}
	if g.preemptible() {
		lines = append(lines,
			"- GraceTime: here the time between a preempted job's SIGTERM and SIGKILL. Slurm's",
			"  GraceTime holds the batch script's SIGTERM back and does not requeue a job that",
			"  ends within it, so preemptible partitions get GraceTime=0 and KillWait the grace.")
	}
	if c.Priority.Recalc == config.RecalcPass {
		lines = append(lines,
			"- [Priority] Recalc = \"pass\" (fair share and priorities recomputed at every scheduling",
			fmt.Sprintf("  pass): none. Slurm recomputes them every PriorityCalcPeriod (%s, below): a job", clock(c.Priority.CalcPeriod)),
			"  keeps its priority until then, and an account drops only then when its jobs run.")
	}
	if !c.HasAccounts() {
		lines = append(lines,
			"- No accounts configured: here every user runs jobs with equal shares. Slurm refuses",
			fmt.Sprintf("  users without an association: add each with `sacctmgr add user NAME Account=%s`.", c.ImplicitAccount()))
	}
	if c.AllowUnlistedUsers {
		lines = append(lines,
			"- AllowUnlistedUsers = true: Slurm refuses jobs from users without an association:",
			fmt.Sprintf("  add each with `sacctmgr add user NAME Account=%s`.", c.ImplicitAccount()))
	}
	if y := c.Yield; y.Shrink || y.Payback {
		lines = append(lines,
			fmt.Sprintf("- [Yield] Shrink = %t, Payback = %t, Own = %t (the scheduler's own shrinks and stops): none;",
				y.Shrink, y.Payback, y.Own),
			"  Slurm stops a running job for a waiting one only by partition preemption (PriorityTier,",
			"  PreemptMode). A lab loses: short jobs started at once on a box that long jobs fill.")
	}
	if slices.ContainsFunc(c.QOS, func(qos config.QOS) bool { return qos.UsageFactor == 0 }) {
		lines = append(lines,
			"- Fillers' free fair share (a QOS with UsageFactor = 0): sacctmgr.sh sets it, and Slurm, as",
			"  here, charges nothing to jobs that ask for that QOS (--qos), but ignores a partition's QOS",
			"  UsageFactor. A lab loses nothing if every filler job names the QOS.")
	}
	if c.Web.Listen != "" {
		lines = append(lines,
			fmt.Sprintf("- The dashboard ([Web] Listen = %s): none; Grafana over prometheus.yml's exporters is", q(c.Web.Listen)),
			"  the usual one. A lab loses: the page that says why each job waits and when it starts.",
			"- /metrics: prometheus.yml says which exporters serve the slurm_* metrics under the same",
			"  names; slurm-lite's own (yields, GPU memory reserved, users' fair share) have none.")
	}
	if len(c.Notify) > 0 {
		lines = append(lines,
			fmt.Sprintf("- [[Notify]] webhooks (%d): a drain runs strigger.sh's trigger (webhook.sh POSTs it); a", len(c.Notify)),
			"  job's events reach only its owner's --mail-type mail (MailProg), and YIELD, PREEMPT,",
			"  CANCEL, HOLD, RELEASE, RESUME, GPU_MEM_LOW and BUDGET_* have no trigger. A lab loses: a message",
			"  for every job's end, and the GPU events.")
	}
	if c.Node.GPUs == config.GPUsSimulated {
		lines = append(lines,
			"- GPUs = \"simulated\": these GPUs are the configuration's, not a machine's; gres.conf",
			"  names /dev/nvidia0... for them.")
	}
	lines = append(lines, "", "Carried by this file and the files beside it:", "")
	lines = append(lines, g.carried()...)
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// carried are the notes on what slurm-lite does around the scheduler
// that real Slurm carries through a key, a plugin or a program: one line
// each, naming the file.
func (g gen) carried() []string {
	c := g.cfg
	var lines []string
	if n := len(c.Routes); n > 0 {
		lines = append(lines, fmt.Sprintf("- [[Route]] (%d): %s routes a job without -p by its time limit, as here (JobSubmitPlugins=lua).", n, JobSubmitLua))
	}
	mail := "MailProg = " + strconv.Quote(c.MailProg)
	if c.MailProg == "" {
		mail = "no mail program here: Slurm's MailProg default is /bin/mail"
	}
	lines = append(lines, fmt.Sprintf("- --mail-type: %s; Slurm mails as here, with the same subject lines.", mail))
	if c.Web.Listen != "" || c.JobMappingDir != "" {
		lines = append(lines, fmt.Sprintf("- Metrics: %s scrapes prometheus-slurm-exporter and dcgm-exporter in place of /metrics.", Prometheus))
	}
	if c.JobMappingDir != "" {
		lines = append(lines, fmt.Sprintf("- JobMappingDir = %s: %s and %s (Prolog=, Epilog=) keep it for dcgm-exporter.",
			strconv.Quote(c.JobMappingDir), JobMapProlog, JobMapEpilog))
	}
	if g.triggers() {
		lines = append(lines, fmt.Sprintf("- [[Notify]] DRAIN: %s sets strigger --drained triggers that run %s (run it once).", Strigger, Webhook))
	}
	if n := len(g.in.Reservations); n > 0 {
		gpus := 0
		for _, r := range g.in.Reservations {
			if r.GPUs > 0 {
				gpus++
			}
		}
		lines = append(lines, fmt.Sprintf("- Reservations (%d): %s creates them with scontrol create reservation (run it once).", n, Reservations))
		if gpus > 0 {
			lines = append(lines, fmt.Sprintf("  %d of them hold GPUs, which Slurm 22.05 cannot reserve (TRES=gres/gpu is 23.02's): commented out there.", gpus))
		}
	}
	return lines
}
