package export

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// noEquivalent is the top of slurm.conf: every slurm-lite setting and
// behaviour that real Slurm lacks, with this configuration's value and what
// Slurm does instead. Everything else in the file is the configuration's own
// value under Slurm's own key.
func (g gen) noEquivalent() []string {
	c := g.cfg
	q := strconv.Quote
	shard := slurmtime.FormatSize(c.ShardSize)
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
		"- GPU memory held outside jobs (processes started by hand) counts as used here; Slurm does",
		"  not look, and offers such a GPU as free.",
		fmt.Sprintf("- Yield (scontrol yield, #SLITE --yieldable, --batch-size, YieldGroup = %s): none.", q(c.YieldGroup)),
		"  The owner or an operator can `scontrol requeue JOBID`: the job is stopped and pends",
		"  again (about two minutes, reason BeginTime) with SLURM_RESTART_COUNT incremented;",
		"  its batch size and GPU count cannot change, and YieldGroup gives no rights.",
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
	if len(c.Notify) > 0 {
		lines = append(lines,
			fmt.Sprintf("- [[Notify]] webhooks (%d): none; Slurm sends only --mail-type's mail, through", len(c.Notify)),
			"  MailProg (a MailProg wrapper may post the subject line to a URL). slurm-lite's own",
			"  events (YIELD, DRAIN, GPU_MEM_LOW, ...) do not exist there.")
	}
	if c.Node.GPUs == config.GPUsSimulated {
		lines = append(lines,
			"- GPUs = \"simulated\": these GPUs are the configuration's, not a machine's; gres.conf",
			"  names /dev/nvidia0... for them.")
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}
