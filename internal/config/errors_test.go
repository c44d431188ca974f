package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lines joins TOML lines, so that a case's line numbers can be counted.
func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

// msgs joins expected error messages as Errors prints them.
func msgs(l ...string) string { return strings.Join(l, "\n") }

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want string
	}{
		{
			"an exit code no script can end with",
			lines(`RequeueExit = [42, 256]`),
			`slurm-lite.toml:1: RequeueExit: exit code 256 is not one a script can end with; write codes from 0 to 255, e.g. RequeueExit = [42]`,
		},
		{
			"an exit code in both RequeueExit and RequeueExitHold",
			lines(`RequeueExit = [42]`, `RequeueExitHold = [43, 42]`),
			`slurm-lite.toml:2: RequeueExitHold: exit code 42 is also in RequeueExit; keep it in one of them (RequeueExit requeues, RequeueExitHold requeues held)`,
		},
		{
			"slurm.conf's string of codes",
			lines(`RequeueExit = "1-9,18"`),
			`slurm-lite.toml:1: RequeueExit must be a list of whole numbers such as [42, 43], not the string "1-9,18"; write [1, 2, 3, 4, 5, 6, 7, 8, 9, 18]`,
		},
		{
			"MpiParams with one port, as slurmctld refuses it",
			lines(`MpiParams = "ports=12000"`),
			`slurm-lite.toml:1: MpiParams "ports=12000": ports must be a range LO-HI, as Slurm takes it (a single port is refused there too); write a range of ports for jobs, e.g. MpiParams = "ports=12000-12999", or leave MpiParams out`,
		},
		{
			"MpiParams other than ports",
			lines(`MpiParams = "12000-12999"`),
			`slurm-lite.toml:1: MpiParams "12000-12999": only "ports=LO-HI" is known; write a range of ports for jobs, e.g. MpiParams = "ports=12000-12999", or leave MpiParams out`,
		},
		{
			"MpiParams backwards",
			lines(`MpiParams = "ports=13000-12000"`),
			`slurm-lite.toml:1: MpiParams "ports=13000-12000": ports 13000-12000 is not a range of two or more ports within 1-65535; write a range of ports for jobs, e.g. MpiParams = "ports=12000-12999", or leave MpiParams out`,
		},
		{
			"max_batch_requeue out of range",
			lines(`[SchedulerParameters]`, `max_batch_requeue = -1`),
			`slurm-lite.toml:2: SchedulerParameters.max_batch_requeue -1 is out of range; use 0 to 1000`,
		},
		{
			"a PriorityFlag slurm-lite cannot obey is refused, saying why",
			lines(`[Priority]`, `Flags = ["MAX_TRES", "incr_only"]`),
			`slurm-lite.toml:2: Priority.Flags INCR_ONLY is not supported: slurm-lite keeps no earlier priority of a job to hold the new one above; remove it`,
		},
		{
			"CALCULATE_RUNNING is refused, saying why",
			lines(`[Priority]`, `Flags = ["CALCULATE_RUNNING"]`),
			`slurm-lite.toml:2: Priority.Flags CALCULATE_RUNNING is not supported: slurm-lite does not recompute the priority of running jobs; remove it`,
		},
		{
			"DEPTH_OBLIVIOUS is refused, saying why",
			lines(`[Priority]`, `Flags = ["DEPTH_OBLIVIOUS"]`),
			`slurm-lite.toml:2: Priority.Flags DEPTH_OBLIVIOUS is not supported: slurm-lite has Fair Tree and the classic formula (NO_FAIR_TREE), not the depth-oblivious one; remove it`,
		},
		{
			"a QOS flag slurm-lite cannot obey is refused, saying why",
			lines(`[[QOS]]`, `Name = "normal"`, `Flags = ["DenyOnLimit", "NoReserve"]`),
			`slurm-lite.toml:3: QOS "normal": flag NoReserve is not supported: slurm-lite's backfill reserves resources for every blocked job; remove it`,
		},
		{
			"a QOS limit on a TRES the scheduler does not count is refused",
			lines(`[[QOS]]`, `Name = "normal"`, `MaxTRESPerJob = "gres/gpu:a100=2"`),
			`slurm-lite.toml:3: QOS "normal": MaxTRESPerJob limits gres/gpu:a100, which slurm-lite does not enforce; limit cpu, mem, node, billing, gres/gpu instead`,
		},
		{
			"a Recalc that is neither period nor pass",
			lines(`[Priority]`, `Recalc = "always"`),
			`slurm-lite.toml:2: Priority.Recalc "always" is not one of "period", "pass"`,
		},
		{
			"a GrpTRESMins on a TRES whose usage slurm-lite does not count is refused",
			lines(`[[Account]]`, `Name = "lab"`, `GrpTRESMins = "gres/gpu=60,mem=100"`),
			`slurm-lite.toml:3: Account "lab": GrpTRESMins limits mem, which slurm-lite does not count; limit cpu, billing, gres/gpu instead`,
		},
		{
			"AccountingStorageEnforce without limits is refused: slurm-lite always enforces them",
			lines(`AccountingStorageEnforce = "associations,qos"`),
			`slurm-lite.toml:1: AccountingStorageEnforce "associations,qos" leaves out limits, which slurm-lite always enforces (QOS and association limits); write "associations,limits,qos", with ",safe" if jobs must fit what is left of a GrpTRESMins`,
		},
		{
			"AccountingStorageEnforce nojobs is refused, saying why",
			lines(`AccountingStorageEnforce = "limits,nojobs"`),
			`slurm-lite.toml:1: AccountingStorageEnforce nojobs is not supported: slurm-lite always keeps job records (sacct, fair share and budgets count them); remove it`,
		},
		{
			"a GrpTRES on a TRES slurm-lite does not count per account is refused",
			lines(`[[Account]]`, `Name = "lab"`, `GrpTRES = "mem=100"`),
			`slurm-lite.toml:3: Account "lab": GrpTRES limits mem, which slurm-lite does not count; limit cpu, billing, gres/gpu instead`,
		},
		{
			"a GrpTRESMins of 0 minutes is refused",
			lines(`[[Account]]`, `Name = "lab"`, `GrpTRESMins = "gres/gpu=0"`),
			`slurm-lite.toml:3: Account "lab": GrpTRESMins gres/gpu=0 is below 1; give a positive number of minutes, or leave gres/gpu out for no limit`,
		},
		{
			"bf_interval other than Slurm's default is refused, saying why",
			lines(`[SchedulerParameters]`, `bf_interval = 60`),
			`slurm-lite.toml:2: SchedulerParameters.bf_interval 60 is not supported: slurm-lite runs its backfill over every pending job at each submission, job end and change, not every bf_interval; remove it (Slurm's default, 30, is what export writes)`,
		},
		{
			"bf_continue is refused, saying why",
			lines(`[SchedulerParameters]`, `bf_continue = true`),
			`slurm-lite.toml:2: SchedulerParameters.bf_continue is not supported: slurm-lite runs its backfill over every pending job at each submission, job end and change, never interrupted; remove it`,
		},
		{
			"default_queue_depth other than Slurm's default is refused, saying why",
			lines(`[SchedulerParameters]`, `default_queue_depth = 10`),
			`slurm-lite.toml:2: SchedulerParameters.default_queue_depth 10 is not supported: slurm-lite runs its backfill over every pending job at each submission, job end and change, with no quick pass of a few jobs; remove it (Slurm's default, 100, is what export writes)`,
		},
		{
			"an association Priority below 0 is refused",
			lines(`[[Account]]`, `Name = "lab"`, `Priority = -1`),
			`slurm-lite.toml:3: Account "lab": Priority -1 is out of range; use 0 to 2147483647`,
		},
		{
			"a misspelled key in a partition names the key it resembles",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `MaxTim = "1:00:00"`),
			`slurm-lite.toml:3: unknown key "MaxTim" in [[Partition]]; did you mean "MaxTime"?`,
		},
		{
			"a key in the wrong case says keys are case-sensitive",
			lines(`killwait = 30`),
			`slurm-lite.toml:1: unknown key "killwait"; did you mean "KillWait"? (keys are case-sensitive)`,
		},
		{
			"slurm.conf's PriorityWeightAge at the top points to [Priority]",
			lines(`ClusterName = "lab"`, `PriorityWeightAge = 1000`),
			`slurm-lite.toml:2: unknown key "PriorityWeightAge"; write WeightAge in [Priority]`,
		},
		{
			"an unknown key with no near match lists the table's keys",
			lines(`[Node]`, `Foo = 1`),
			`slurm-lite.toml:2: unknown key "Foo" in [Node]; known keys: NodeName, CPUs, RealMemory, GPUs, SimulatedGPU, TypeAliases`,
		},
		{
			"a misspelled table is suggested as an array of tables",
			lines(`KillWait = 30`, `[[Partitions]]`, `PartitionName = "gpu"`),
			`slurm-lite.toml:2: unknown table [[Partitions]]; did you mean [[Partition]]?`,
		},
		{
			"a misspelled plain table is suggested as a table",
			lines(`[Nodes]`, `CPUs = 4`),
			`slurm-lite.toml:1: unknown table [Nodes]; did you mean [Node]?`,
		},
		{
			"a misspelled key in a nested array of tables names its section",
			lines(`[Node]`, `GPUs = "simulated"`, `[[Node.SimulatedGPU]]`, `Type = "a100"`, `Memory = "80G"`, `Cout = 2`),
			`slurm-lite.toml:6: unknown key "Cout" in [[Node.SimulatedGPU]]; did you mean "Count"?`,
		},
		{
			"a partition written as a single table says to double the brackets",
			lines(`[Partition]`, `PartitionName = "gpu"`),
			`slurm-lite.toml:1: Partition is a list of tables: write [[Partition]], not [Partition]`,
		},
		{
			"seconds written as a string",
			lines(`KillWait = "30s"`),
			`slurm-lite.toml:1: KillWait must be a whole number of seconds, not the string "30s"`,
		},
		{
			"a slurm.conf YES for a boolean",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `Default = "YES"`),
			`slurm-lite.toml:3: Partition "gpu": Default must be true or false, not the string "YES"`,
		},
		{
			"a comma-separated string for a list is rewritten as a list",
			lines(`Operators = "root, alice"`),
			`slurm-lite.toml:1: Operators must be a list of strings such as ["a", "b"], not the string "root, alice"; write ["root", "alice"]`,
		},
		{
			"a list holding a number",
			lines(`Operators = [`, `  "root",`, `  7,`, `]`),
			`slurm-lite.toml:3: Operators must be a list of strings, but item 2 is the number 7`,
		},
		{
			"a whole number where a string belongs",
			lines(`[Node]`, `NodeName = 1`),
			`slurm-lite.toml:2: Node.NodeName must be a quoted string, not the number 1`,
		},
		{
			"a fraction where a whole number belongs",
			lines(`MaxJobCount = 1.5`),
			`slurm-lite.toml:1: MaxJobCount must be a whole number, not the number 1.5`,
		},
		{
			"a time that is not a Slurm time",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `MaxTime = "2 days"`),
			`slurm-lite.toml:3: Partition "gpu": MaxTime "2 days" is not a Slurm time; write minutes ("90"), hours:minutes:seconds ("1:30:00"), days-hours ("7-0"), days-hours:minutes:seconds ("2-00:00:00") or "UNLIMITED"`,
		},
		{
			"a time of the wrong type",
			lines(`[Priority]`, `MaxAge = true`),
			`slurm-lite.toml:2: Priority.MaxAge must be a Slurm time such as "2-00:00:00", "1:30:00", "90" (minutes) or "UNLIMITED", not true`,
		},
		{
			"a size that is not a size",
			lines(`[Node]`, `RealMemory = "lots"`),
			`slurm-lite.toml:2: Node.RealMemory "lots" is not a size; write e.g. "256G", "500M" or "2T"`,
		},
		{
			"a size of the wrong type",
			lines(`ShardSize = [1]`),
			`slurm-lite.toml:1: ShardSize must be a size such as "16G" or "500M" (a bare number is megabytes), not a list`,
		},
		{
			"DefMemPerCPU and DefMemPerNode together",
			lines(`DefMemPerCPU = 1000`, `DefMemPerNode = "8G"`),
			`slurm-lite.toml:2: DefMemPerCPU and DefMemPerNode are mutually exclusive, as in slurm.conf: keep one (DefMemPerCPU = "1000M" is per allocated CPU, DefMemPerNode = "8G" per job)`,
		},
		{
			"a DefMemPerNode larger than the node",
			lines(`DefMemPerNode = "300G"`, `[Node]`, `RealMemory = "256G"`),
			`slurm-lite.toml:1: DefMemPerNode 300G is more than the node's RealMemory 256G: every job that asks for no memory would wait forever; write at most "256G"`,
		},
		{
			"TRES limits naming an unknown TRES",
			lines(`[[QOS]]`, `Name = "normal"`, `MaxTRESPerUser = "gpu=4"`),
			`slurm-lite.toml:3: QOS "normal": MaxTRESPerUser "gpu=4": unknown TRES "gpu" (slurm-lite counts cpu, mem, node, billing, gres/gpu, gres/gpu:TYPE and gres/shard)`,
		},
		{
			"TRES limits as a number",
			lines(`[[QOS]]`, `Name = "normal"`, `MaxTRESPerJob = 4`),
			`slurm-lite.toml:3: QOS "normal": MaxTRESPerJob must be TRES counts such as "gres/gpu=4,cpu=16", not the number 4`,
		},
		{
			"DefaultTime above MaxTime",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `MaxTime = "2-0"`, `DefaultTime = "3-0"`),
			`slurm-lite.toml:4: Partition "gpu": DefaultTime 3-00:00:00 is above MaxTime 2-00:00:00; lower DefaultTime or raise MaxTime`,
		},
		{
			"two default partitions",
			lines(`[[Partition]]`, `PartitionName = "a"`, `Default = true`, `[[Partition]]`, `PartitionName = "b"`, `Default = true`),
			`slurm-lite.toml:6: Partition "b": Default = true, but partition "a" (line 3) is already the default; keep one`,
		},
		{
			"several partitions and no default",
			lines(`[[Partition]]`, `PartitionName = "a"`, `[[Partition]]`, `PartitionName = "b"`),
			`slurm-lite.toml:1: no partition has Default = true; set it on the one that jobs without --partition should use`,
		},
		{
			"an empty list of partitions",
			lines(`Partition = []`),
			`slurm-lite.toml:1: no partitions; define at least one [[Partition]]`,
		},
		{
			"a partition defined twice",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `Default = true`, `[[Partition]]`, `PartitionName = "gpu"`),
			`slurm-lite.toml:5: Partition "gpu" is defined twice (first on line 2); rename or remove one`,
		},
		{
			"a partition name with a comma",
			lines(`[[Partition]]`, `PartitionName = "a,b"`),
			`slurm-lite.toml:2: Partition 1: PartitionName "a,b" is not a valid name; use letters, digits, "-", "_" or "."`,
		},
		{
			"an unknown GPUViolationPolicy",
			lines(`GPUViolationPolicy = "shout"`),
			`slurm-lite.toml:1: GPUViolationPolicy "shout" is not one of "warn", "yield", "kill"`,
		},
		{
			"an unknown PreemptMode",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `PreemptMode = "KILL"`),
			`slurm-lite.toml:3: Partition "gpu": PreemptMode "KILL" is not one of "OFF", "REQUEUE", "CANCEL"`,
		},
		{
			"PreemptMode SUSPEND, which a GPU cannot do",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `PreemptMode = "suspend"`),
			`slurm-lite.toml:3: Partition "gpu": PreemptMode SUSPEND is not supported (a GPU's memory cannot be suspended); use "REQUEUE" or "CANCEL"`,
		},
		{
			"PreemptMode REQUEUE without preemption",
			lines(`PreemptType = "preempt/none"`, `[[Partition]]`, `PartitionName = "gpu"`, `PreemptMode = "REQUEUE"`),
			`slurm-lite.toml:4: Partition "gpu": PreemptMode REQUEUE needs PreemptType = "preempt/partition_prio", not "preempt/none"`,
		},
		{
			"a PriorityTier above Slurm's limit",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `PriorityTier = 70000`),
			`slurm-lite.toml:3: Partition "gpu": PriorityTier 70000 is out of range; use 0 to 65533`,
		},
		{
			"an unknown partition State",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `State = "OPEN"`),
			`slurm-lite.toml:3: Partition "gpu": State "OPEN" is not one of "UP", "DOWN", "DRAIN", "INACTIVE"`,
		},
		{
			"a partition QOS that is not defined",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `QOS = "normall"`),
			`slurm-lite.toml:3: Partition "gpu": QOS "normall" is not defined; add it as a [[QOS]] or remove QOS; did you mean "normal"?`,
		},
		{
			"AllowAccounts naming an account that does not exist",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `AllowAccounts = ["lab", "phys"]`, `[[Account]]`, `Name = "lab"`),
			`slurm-lite.toml:3: Partition "gpu": AllowAccounts: account "phys" is not defined; add it as an [[Account]]`,
		},
		{
			"negative billing weights",
			lines(`TRESBillingWeights = "GRES/gpu=-1"`),
			`slurm-lite.toml:1: TRESBillingWeights: gres/gpu weight -1 is negative; billing weights must be 0 or more`,
		},
		{
			"an unknown GPUs source",
			lines(`[Node]`, `GPUs = "cuda"`),
			`slurm-lite.toml:2: Node.GPUs "cuda" is not one of "nvml", "none", "simulated"`,
		},
		{
			"simulated GPUs without any",
			lines(`[Node]`, `GPUs = "simulated"`),
			`slurm-lite.toml:2: Node.GPUs = "simulated" needs at least one [[Node.SimulatedGPU]] with Type, Memory and Count`,
		},
		{
			"a simulated GPU without memory and with no count",
			lines(`[Node]`, `GPUs = "simulated"`, `[[Node.SimulatedGPU]]`, `Type = "a100"`, `Count = 0`),
			msgs(
				`slurm-lite.toml:3: SimulatedGPU "a100": Memory must be above 0; write the GPU's memory, e.g. Memory = "80G"`,
				`slurm-lite.toml:5: SimulatedGPU "a100": Count 0 is below 1`),
		},
		{
			"an explicit zero CPU count",
			lines(`[Node]`, `CPUs = 0`),
			`slurm-lite.toml:2: Node.CPUs 0 is below 1; leave CPUs out to use the detected count`,
		},
		{
			"two aliases for one GPU model",
			lines(`[Node]`, `TypeAliases = { a100 = "NVIDIA A100-SXM4-80GB", big = "nvidia_a100-sxm4-80gb" }`),
			`slurm-lite.toml:2: Node.TypeAliases: types "a100" and "big" name the same model "nvidia_a100-sxm4-80gb"; keep one`,
		},
		{
			"a negative priority weight",
			lines(`[Priority]`, `WeightAge = -1`),
			`slurm-lite.toml:2: Priority.WeightAge -1 is out of range; use 0 to 4294967295`,
		},
		{
			"an unknown priority flag",
			lines(`[Priority]`, `Flags = ["FAIR_TREE"]`),
			`slurm-lite.toml:2: Priority.Flags "FAIR_TREE" is not one of "ACCRUE_ALWAYS", "CALCULATE_RUNNING", "DEPTH_OBLIVIOUS", "NO_FAIR_TREE", "INCR_ONLY", "MAX_TRES", "NO_NORMAL_ALL", "NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES", "SMALL_RELATIVE_TO_TIME"`,
		},
		{
			"no decay and no reset",
			lines(`[Priority]`, `DecayHalfLife = 0`),
			`slurm-lite.toml:2: Priority.DecayHalfLife 0 (no decay) with UsageResetPeriod NONE lets usage grow forever; set a DecayHalfLife such as "7-0" or a UsageResetPeriod`,
		},
		{
			"a CalcPeriod under a minute",
			lines(`[Priority]`, `CalcPeriod = 0`),
			`slurm-lite.toml:2: Priority.CalcPeriod 00:00:00 is under Slurm's minimum: set at least "1" (a minute)`,
		},
		{
			"bf_interval -1 points to sched/builtin",
			lines(`[SchedulerParameters]`, `bf_interval = -1`),
			`slurm-lite.toml:2: SchedulerParameters.bf_interval -1 (no backfill) is written SchedulerType = "sched/builtin" here`,
		},
		{
			"bf_window beyond Slurm's limit",
			lines(`[SchedulerParameters]`, `bf_window = 50000`),
			`slurm-lite.toml:2: SchedulerParameters.bf_window 50000 is out of range; use 1 to 43200`,
		},
		{
			"an unknown SchedulerType",
			lines(`SchedulerType = "backfill"`),
			`slurm-lite.toml:1: SchedulerType "backfill" is not one of "sched/backfill", "sched/builtin"`,
		},
		{
			"KillWait beyond Slurm's limit",
			lines(`KillWait = 70000`),
			`slurm-lite.toml:1: KillWait 70000 is out of range; use 0 to 65533`,
		},
		{
			"MaxArraySize beyond Slurm's limit",
			lines(`MaxArraySize = 5000000`),
			`slurm-lite.toml:1: MaxArraySize 5000000 is out of range; use 0 to 4000001`,
		},
		{
			"MaxJobCountPerUser over 100%",
			lines(`MaxJobCountPerUser = "150%"`),
			`slurm-lite.toml:1: MaxJobCountPerUser "150%" is not a percentage from 1% to 100%; write a count such as 5000, a percentage such as "50%", or 0 for no limit`,
		},
		{
			"MaxJobCountPerUser that is neither a count nor a percentage",
			lines(`MaxJobCountPerUser = "half"`),
			`slurm-lite.toml:1: MaxJobCountPerUser "half" is neither a count (0 or more) nor a percentage such as "50%"; write a count such as 5000, a percentage such as "50%", or 0 for no limit`,
		},
		{
			"MaxJobCountPerUser as a list",
			lines(`MaxJobCountPerUser = [50]`),
			`slurm-lite.toml:1: MaxJobCountPerUser must be a count such as 5000 or a percentage such as "50%", not a list`,
		},
		{
			"MaxJobCountPerUser over MaxJobCount",
			lines(`MaxJobCount = 100`, `MaxJobCountPerUser = 200`),
			`slurm-lite.toml:2: MaxJobCountPerUser 200 is more than MaxJobCount 100, so it would never refuse anything; write at most 100, a percentage such as "50%", or 0 for no limit`,
		},
		{
			"a cluster name in upper case",
			lines(`ClusterName = "Lab"`),
			`slurm-lite.toml:1: ClusterName "Lab" has upper case, which Slurm lowers silently; write "lab"`,
		},
		{
			"a relative socket path",
			lines(`SocketPath = "slurmd.sock"`),
			`slurm-lite.toml:1: SocketPath "slurmd.sock" is not an absolute path; write a path that starts with /`,
		},
		{
			"a checkpoint directory shared by all jobs",
			lines(`CheckpointDir = "/ckpt/%u"`),
			`slurm-lite.toml:1: CheckpointDir "/ckpt/%u" has no %j, so all jobs would share one checkpoint directory; add %j`,
		},
		{
			"a checkpoint directory with an unknown escape",
			lines(`CheckpointDir = "/ckpt/%q/%j"`),
			`slurm-lite.toml:1: CheckpointDir "/ckpt/%q/%j" has an unknown % escape; use %u (user), %j (job id), %x (job name), %A and %a (array job and task) or %% for %`,
		},
		{
			"a checkpoint directory whose users' directories would be in /",
			lines(`CheckpointDir = "/%u/%j"`),
			`slurm-lite.toml:1: CheckpointDir "/%u/%j" makes the directories of users and jobs in /; begin it with a directory of its own, such as "/var/lib/slurm-lite/ckpt/%u/%j"`,
		},
		{
			"a GPU sample interval of zero",
			lines(`GPUSampleInterval = 0`),
			`slurm-lite.toml:1: GPUSampleInterval 0 is below 1 second; use 1 or more`,
		},
		{
			"a QOS defined twice",
			lines(`[[QOS]]`, `Name = "normal"`, `[[QOS]]`, `Name = "normal"`),
			`slurm-lite.toml:4: QOS "normal" is defined twice (first on line 2); rename or remove one`,
		},
		{
			"a negative usage factor",
			lines(`[[QOS]]`, `Name = "low"`, `UsageFactor = -0.5`),
			`slurm-lite.toml:3: QOS "low": UsageFactor -0.5 is negative; use 0 (free) or more`,
		},
		{
			"an unknown QOS flag",
			lines(`[[QOS]]`, `Name = "low"`, `Flags = ["NoPreempt"]`),
			`slurm-lite.toml:3: QOS "low": Flags "NoPreempt" is not one of "DenyOnLimit", "EnforceUsageThreshold", "NoDecay", "NoReserve", "OverPartQOS", "PartitionMaxNodes", "PartitionMinNodes", "PartitionTimeLimit", "RequiresReservation", "UsageFactorSafe"`,
		},
		{
			"an account whose parent does not exist",
			lines(`[[Account]]`, `Name = "lab"`, `Parent = "phsy"`, `[[Account]]`, `Name = "phys"`),
			`slurm-lite.toml:3: Account "lab": Parent "phsy" is not an account; use "root" or an [[Account]] Name; did you mean "phys"?`,
		},
		{
			"accounts whose parents make a cycle",
			lines(`[[Account]]`, `Name = "a"`, `Parent = "b"`, `[[Account]]`, `Name = "b"`, `Parent = "a"`),
			msgs(
				`slurm-lite.toml:3: Account "a": Parent "b" makes a cycle (a -> b -> a); one account in it must have Parent = "root"`,
				`slurm-lite.toml:6: Account "b": Parent "a" makes a cycle (b -> a -> b); one account in it must have Parent = "root"`),
		},
		{
			"an account that is its own parent",
			lines(`[[Account]]`, `Name = "a"`, `Parent = "a"`),
			`slurm-lite.toml:3: Account "a": Parent "a" makes a cycle (a -> a); one account in it must have Parent = "root"`,
		},
		{
			"the root account defined",
			lines(`[[Account]]`, `Name = "root"`),
			`slurm-lite.toml:2: account "root" is built in (the top of the tree); remove this [[Account]]`,
		},
		{
			"an account defined twice",
			lines(`[[Account]]`, `Name = "lab"`, `[[Account]]`, `Name = "lab"`),
			`slurm-lite.toml:4: Account "lab" is defined twice (first on line 2); rename or remove one`,
		},
		{
			"an account with no shares",
			lines(`[[Account]]`, `Name = "lab"`, `Shares = 0`),
			`slurm-lite.toml:3: Account "lab": Shares 0 is below 1`,
		},
		{
			"an account listing a user twice",
			lines(`[[Account]]`, `Name = "lab"`, `Users = ["alice", "alice"]`),
			`slurm-lite.toml:3: Account "lab": user "alice" is listed twice`,
		},
		{
			"a user in an account that does not exist",
			lines(`[[Account]]`, `Name = "lab"`, `[[User]]`, `Name = "alice"`, `Account = "labb"`),
			`slurm-lite.toml:5: User "alice": account "labb" is not defined; add it as an [[Account]]; did you mean "lab"?`,
		},
		{
			"a user without an account",
			lines(`[[User]]`, `Name = "alice"`),
			`slurm-lite.toml:2: User "alice": Account is missing; add Account = "..." (one [[User]] per account the user may use)`,
		},
		{
			"a user in one account twice",
			lines(`[[Account]]`, `Name = "lab"`, `[[User]]`, `Name = "alice"`, `Account = "lab"`, `[[User]]`, `Name = "alice"`, `Account = "lab"`),
			`slurm-lite.toml:8: User "alice" is in account "lab" twice (first on line 4); remove one`,
		},
		{
			"a default account the user is not in",
			lines(`[[Account]]`, `Name = "lab"`, `[[Account]]`, `Name = "phys"`, `[[User]]`, `Name = "alice"`, `Account = "lab"`, `DefaultAccount = "phys"`),
			`slurm-lite.toml:8: User "alice": DefaultAccount "phys" is not one of the user's accounts (lab)`,
		},
		{
			"two different default accounts for one user",
			lines(`[[Account]]`, `Name = "lab"`, `Users = ["alice"]`, `[[Account]]`, `Name = "phys"`,
				`[[User]]`, `Name = "alice"`, `Account = "phys"`, `DefaultAccount = "phys"`,
				`[[User]]`, `Name = "alice"`, `Account = "lab"`, `DefaultAccount = "lab"`),
			`slurm-lite.toml:13: User "alice": DefaultAccount "lab" contradicts "phys" on line 9; give it once`,
		},
		{
			"a user QOS that is not defined",
			lines(`[[Account]]`, `Name = "lab"`, `[[User]]`, `Name = "alice"`, `Account = "lab"`, `QOS = ["hihg"]`),
			`slurm-lite.toml:6: User "alice": QOS "hihg" is not defined`,
		},
		{
			"an unknown admin level",
			lines(`[[User]]`, `Name = "alice"`, `Account = "root"`, `AdminLevel = "Boss"`),
			`slurm-lite.toml:4: User "alice": AdminLevel "Boss" is not one of "None", "Operator", "Administrator"`,
		},
		{
			"TOML syntax",
			lines(`ClusterName = "lab"`, `KillWait = `),
			`slurm-lite.toml:2: TOML syntax: expected value but found '\n' instead`,
		},
		{
			"every problem is reported, in line order",
			lines(`[[Partition]]`, `PartitionName = "gpu"`, `PriorityTier = -1`, `[Node]`, `CPUs = "many"`, `[Priority]`, `WeightAge = -5`),
			msgs(
				`slurm-lite.toml:3: Partition "gpu": PriorityTier -1 is out of range; use 0 to 65533`,
				`slurm-lite.toml:5: Node.CPUs must be a whole number, not the string "many"`,
				`slurm-lite.toml:7: Priority.WeightAge -5 is out of range; use 0 to 4294967295`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("slurm-lite.toml", []byte(tt.file))
			if err == nil {
				t.Fatalf("Parse succeeded, want error %q; got config %+v", tt.want, c)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Errorf("error is %T, want a non-empty Errors", err)
			}
		})
	}
}
