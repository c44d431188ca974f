package format

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// ConfigView is what scontrol show config prints: the configuration in
// force and what the daemon and the machine add to it.
type ConfigView struct {
	Config *config.Config
	// Path is the configuration file ("" for the built-in defaults).
	Path string
	// Now is "Configuration data as of"; Boot is the daemon's start.
	Now, Boot time.Time
	// Host is the machine's short name (the controller's host).
	Host string
	// DaemonUser is who the daemon runs as: "root(0)".
	DaemonUser string
	// NextJobID is the id the next submission gets, as far as the
	// command can tell.
	NextJobID uint32
	// Cgroups is what the daemon said of job cgroups (nil: nothing).
	Cgroups *api.Cgroups
}

// configSkip marks a line Slurm leaves out (the priority block under
// priority/basic).
const configSkip = "\x00skip"

type configLine struct {
	key   string
	value func(c *ConfigView) string
}

func fixed(v string) func(*ConfigView) string { return func(*ConfigView) string { return v } }

// prio is a line of the multifactor block, which priority/basic omits.
func prio(fn func(c *ConfigView) string) func(*ConfigView) string {
	return func(c *ConfigView) string {
		if c.Config.PriorityType == config.PriorityBasic {
			return configSkip
		}
		return fn(c)
	}
}

// ShowConfig is scontrol show config (slurm_print_ctl_conf and the ping
// line): every line Slurm 22.05 prints, in its order, "%-23s = %s". The
// values slurm-lite has come from the configuration; the others are the
// recorded cluster's (golden/scontrol_show_config.txt) or Slurm's defaults
// where the recorded value was a path of that machine.
func ShowConfig(c *ConfigView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Configuration data as of %s\n", Time(c.Now))
	for _, l := range configLines {
		key, val := l.key, ""
		if key == "" {
			key, val = c.defMem()
		} else {
			val = l.value(c)
		}
		if val == configSkip {
			continue
		}
		fmt.Fprintf(&b, "%-23s = %s\n", key, val)
	}
	writeCgroupWarning(&b, c.Cgroups)
	fmt.Fprintf(&b, "\nSlurmctld(primary) at %s is UP\n", c.Host)
	return b.String()
}

// CgroupBlock heads the lines scontrol show config adds where the daemon
// cannot enforce --mem. Slurm has no such keys: the block says they are
// slurm-lite's, in the form of Slurm's own blocks (cgroup.conf's "Cgroup
// Support Configuration:"), after Slurm's lines, so that a script that
// reads Slurm's keys finds them as they were.
const CgroupBlock = "Cgroup Support Configuration (slurm-lite's own keys, not Slurm's):"

// writeCgroupWarning adds the block when job cgroups cannot enforce
// --mem; nothing when they can, or when the daemon did not say: the output
// is then Slurm's alone.
func writeCgroupWarning(b *strings.Builder, cg *api.Cgroups) {
	if cg == nil || cg.Memory {
		return
	}
	fmt.Fprintf(b, "\n%s\n", CgroupBlock)
	fmt.Fprintf(b, "%-23s = %s\n", "JobCgroupParent", orDefault(cg.Base, "(none: jobs get no cgroup)"))
	fmt.Fprintf(b, "%-23s = no: --mem, --mem-per-cpu and --mem-per-gpu are not enforced: %s\n", "MemoryEnforced", cg.Problem)
	fmt.Fprintf(b, "%-23s = %s\n", "MemoryEnforcedFix", cg.Fix)
}

func secsOf(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) + " sec" }

func yesNoCap(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// enforcePartLimits is EnforcePartLimits as slurmctld prints it: YES is
// ANY; unset (a configuration built by hand) is slurm-lite's default.
func enforcePartLimits(v string) string {
	switch v {
	case config.EnforceYes:
		return config.EnforceAny
	case "":
		return config.EnforceAll
	}
	return v
}

// defMem is the default memory line: DefMemPerCPU or DefMemPerNode in
// megabytes where one is set, else DefMemPerNode = UNLIMITED (a job that
// asks for no memory has no limit).
func (c *ConfigView) defMem() (string, string) {
	mb := func(b slurmtime.Bytes) string { return strconv.FormatInt(int64(b/slurmtime.MiB), 10) }
	switch {
	case c.Config.DefMemPerCPU > 0:
		return "DefMemPerCPU", mb(c.Config.DefMemPerCPU)
	case c.Config.DefMemPerNode > 0:
		return "DefMemPerNode", mb(c.Config.DefMemPerNode)
	}
	return "DefMemPerNode", "UNLIMITED"
}

// enforce is AccountingStorageEnforce: associations unless users outside
// every account may run jobs.
func (c *ConfigView) enforce() string {
	e := "associations,limits,qos"
	if c.Config.AllowUnlistedUsers {
		e = "limits,qos"
	}
	if c.Config.SafeLimits() {
		e += ",safe"
	}
	return e
}

// preemptMode is the cluster's PreemptMode. slurm-lite has none: each
// partition has its own, OFF by default. Printed is the one mode the
// partitions that preempt at all share (what export writes as the
// cluster's), else OFF.
func (c *ConfigView) preemptMode() string {
	mode := ""
	for i := range c.Config.Partitions {
		m := preemptMode(&c.Config.Partitions[i])
		switch {
		case m == config.PreemptModeOff:
		case mode == "":
			mode = m
		case mode != m:
			return config.PreemptModeOff
		}
	}
	return orDefault(mode, config.PreemptModeOff)
}

// schedulerParameters prints the backfill settings that differ from
// Slurm's defaults, as slurm.conf would write them; (null) for none.
func (c *ConfigView) schedulerParameters() string {
	sp := c.Config.SchedulerParameters
	var parts []string
	if sp.BFWindow != 0 && sp.BFWindow != 1440*time.Minute {
		parts = append(parts, fmt.Sprintf("bf_window=%d", int64(sp.BFWindow/time.Minute)))
	}
	if sp.BFMaxJobTest != 0 && sp.BFMaxJobTest != 500 {
		parts = append(parts, fmt.Sprintf("bf_max_job_test=%d", sp.BFMaxJobTest))
	}
	if sp.BFResolution != 0 && sp.BFResolution != time.Minute {
		parts = append(parts, fmt.Sprintf("bf_resolution=%d", int64(sp.BFResolution/time.Second)))
	}
	if sp.BFInterval != 0 && sp.BFInterval != 30*time.Second {
		parts = append(parts, fmt.Sprintf("bf_interval=%d", int64(sp.BFInterval/time.Second)))
	}
	if sp.BFContinue {
		parts = append(parts, "bf_continue")
	}
	if sp.DefaultQueueDepth != 0 && sp.DefaultQueueDepth != 100 {
		parts = append(parts, fmt.Sprintf("default_queue_depth=%d", sp.DefaultQueueDepth))
	}
	if sp.MaxScriptSize != 0 && sp.MaxScriptSize != config.DefaultMaxScriptSize {
		parts = append(parts, fmt.Sprintf("max_script_size=%d", sp.MaxScriptSize))
	}
	if len(parts) == 0 {
		return "(null)"
	}
	return strings.Join(parts, ",")
}

// priorityFlagOrder is priority_flags_string's order.
var priorityFlagOrder = []string{"ACCRUE_ALWAYS", "SMALL_RELATIVE_TO_TIME", "CALCULATE_RUNNING",
	"DEPTH_OBLIVIOUS", "NO_FAIR_TREE", "INCR_ONLY", "MAX_TRES",
	"NO_NORMAL_ALL", "NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS", "NO_NORMAL_TRES"}

// priorityFlags is PriorityFlags in priority_flags_string's order; any
// NO_NORMAL_* prints as NO_NORMAL_ALL there, which is kept.
func (c *ConfigView) priorityFlags() string {
	p := c.Config.Priority
	var out []string
	noNormal := false
	for _, f := range priorityFlagOrder {
		if strings.HasPrefix(f, "NO_NORMAL_") {
			if p.HasFlag(f) {
				noNormal = true
			}
			continue
		}
		if p.HasFlag(f) {
			out = append(out, f)
		}
	}
	if noNormal {
		out = append(out, "NO_NORMAL_ALL")
	}
	for _, f := range p.Flags {
		if !slices.Contains(priorityFlagOrder, strings.ToUpper(f)) {
			out = append(out, strings.ToUpper(f))
		}
	}
	return strings.Join(out, ",")
}

// weightTRES is PriorityWeightTRES as slurm.conf writes it, (null) unset.
func (c *ConfigView) weightTRES() string {
	if len(c.Config.Priority.WeightTRES) == 0 {
		return "(null)"
	}
	if t := c.Config.Priority.WeightTRESText; t != "" {
		return t // as written: slurmctld keeps the line's text
	}
	return billingWeights(c.Config.Priority.WeightTRES)
}

var configLines = []configLine{
	{"AccountingStorageBackupHost", fixed("(null)")},
	{"AccountingStorageEnforce", func(c *ConfigView) string { return c.enforce() }},
	{"AccountingStorageHost", fixed("127.0.0.1")},
	{"AccountingStorageExternalHost", fixed("(null)")},
	{"AccountingStorageParameters", fixed("(null)")},
	{"AccountingStoragePort", fixed("6819")},
	{"AccountingStorageTRES", fixed("cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu")},
	{"AccountingStorageType", fixed("accounting_storage/slurmdbd")},
	{"AccountingStorageUser", fixed("N/A")},
	{"AccountingStoreFlags", fixed("(null)")},
	{"AcctGatherEnergyType", fixed("acct_gather_energy/none")},
	{"AcctGatherFilesystemType", fixed("acct_gather_filesystem/none")},
	{"AcctGatherInterconnectType", fixed("acct_gather_interconnect/none")},
	{"AcctGatherNodeFreq", fixed("0 sec")},
	{"AcctGatherProfileType", fixed("acct_gather_profile/none")},
	{"AllowSpecResourcesUsage", fixed("No")},
	{"AuthAltTypes", fixed("(null)")},
	{"AuthAltParameters", fixed("(null)")},
	{"AuthInfo", fixed("(null)")},
	{"AuthType", fixed("auth/munge")},
	{"BatchStartTimeout", fixed("10 sec")},
	{"BcastExclude", fixed("/lib,/usr/lib,/lib64,/usr/lib64")},
	{"BcastParameters", fixed("(null)")},
	{"BOOT_TIME", func(c *ConfigView) string { return Time(c.Boot) }},
	{"BurstBufferType", fixed("(null)")},
	{"CliFilterPlugins", fixed("(null)")},
	{"ClusterName", func(c *ConfigView) string { return c.Config.ClusterName }},
	{"CommunicationParameters", fixed("(null)")},
	{"CompleteWait", fixed("0 sec")},
	{"CoreSpecPlugin", fixed("core_spec/none")},
	{"CpuFreqDef", fixed("Unknown")},
	{"CpuFreqGovernors", fixed("OnDemand,Performance,UserSpace")},
	{"CredType", fixed("cred/munge")},
	{"DebugFlags", fixed("(null)")},
	{"", nil}, // DefMemPerCPU or DefMemPerNode: see defMem
	{"DependencyParameters", fixed("(null)")},
	{"DisableRootJobs", fixed("No")},
	{"EioTimeout", fixed("60")},
	{"EnforcePartLimits", func(c *ConfigView) string { return enforcePartLimits(c.Config.EnforcePartLimits) }},
	{"Epilog", fixed("(null)")},
	{"EpilogMsgTime", fixed("2000 usec")},
	{"EpilogSlurmctld", fixed("(null)")},
	{"ExtSensorsType", fixed("ext_sensors/none")},
	{"ExtSensorsFreq", fixed("0 sec")},
	{"FairShareDampeningFactor", fixed("1")},
	{"FederationParameters", fixed("(null)")},
	{"FirstJobId", fixed("1")},
	{"GetEnvTimeout", fixed("2 sec")},
	{"GresTypes", fixed("gpu,shard")},
	{"GpuFreqDef", fixed("high,memory=high")},
	{"GroupUpdateForce", fixed("1")},
	{"GroupUpdateTime", fixed("600 sec")},
	{"HASH_VAL", fixed("Match")},
	{"HealthCheckInterval", fixed("0 sec")},
	{"HealthCheckNodeState", fixed("ANY")},
	{"HealthCheckProgram", fixed("(null)")},
	{"InactiveLimit", fixed("0 sec")},
	{"InteractiveStepOptions", fixed("--interactive --preserve-env --pty $SHELL")},
	{"JobAcctGatherFrequency", fixed("30")},
	{"JobAcctGatherType", fixed("jobacct_gather/linux")},
	{"JobAcctGatherParams", fixed("(null)")},
	{"JobCompHost", fixed("localhost")},
	{"JobCompLoc", fixed("/var/log/slurm_jobcomp.log")},
	{"JobCompPort", fixed("0")},
	{"JobCompType", fixed("jobcomp/none")},
	{"JobCompUser", fixed("root")},
	{"JobContainerType", fixed("job_container/none")},
	{"JobCredentialPrivateKey", fixed("(null)")},
	{"JobCredentialPublicCertificate", fixed("(null)")},
	{"JobDefaults", fixed("(null)")},
	{"JobFileAppend", fixed("0")},
	{"JobRequeue", fixed("1")},
	{"JobSubmitPlugins", fixed("(null)")},
	{"KillOnBadExit", fixed("0")},
	{"KillWait", func(c *ConfigView) string { return secsOf(c.Config.KillWait) }},
	{"LaunchParameters", fixed("(null)")},
	{"LaunchType", fixed("launch/slurm")},
	{"Licenses", fixed("(null)")},
	{"LogTimeFormat", fixed("iso8601_ms")},
	{"MailDomain", fixed("(null)")},
	{"MailProg", fixed("/bin/true")},
	{"MaxArraySize", func(c *ConfigView) string { return strconv.Itoa(c.Config.MaxArraySize) }},
	{"MaxDBDMsgs", fixed("20004")},
	{"MaxJobCount", func(c *ConfigView) string { return strconv.Itoa(c.Config.MaxJobCount) }},
	{"MaxJobId", fixed("67043328")},
	{"MaxMemPerNode", fixed("UNLIMITED")},
	{"MaxNodeCount", fixed("1")},
	{"MaxStepCount", fixed("40000")},
	{"MaxTasksPerNode", fixed("512")},
	{"MCSPlugin", fixed("mcs/none")},
	{"MCSParameters", fixed("(null)")},
	{"MessageTimeout", func(c *ConfigView) string { return secsOf(c.Config.MessageTimeout) }},
	{"MinJobAge", func(c *ConfigView) string { return secsOf(c.Config.MinJobAge) }},
	{"MpiDefault", fixed("none")},
	{"MpiParams", func(c *ConfigView) string { return cmp.Or(c.Config.MpiParams, "(null)") }},
	{"MULTIPLE_SLURMD", fixed("Yes")},
	{"NEXT_JOB_ID", func(c *ConfigView) string { return strconv.FormatUint(uint64(c.NextJobID), 10) }},
	{"NodeFeaturesPlugins", fixed("(null)")},
	{"OverTimeLimit", fixed("0 min")},
	{"PluginDir", fixed("/usr/lib/x86_64-linux-gnu/slurm-wlm")},
	{"PlugStackConfig", fixed("(null)")},
	{"PowerParameters", fixed("(null)")},
	{"PowerPlugin", fixed("")},
	{"PreemptMode", func(c *ConfigView) string { return c.preemptMode() }},
	{"PreemptType", func(c *ConfigView) string { return c.Config.PreemptType }},
	{"PreemptExemptTime", fixed("00:00:00")},
	{"PrEpParameters", fixed("(null)")},
	{"PrEpPlugins", fixed("prep/script")},
	{"PriorityParameters", fixed("(null)")},
	{"PrioritySiteFactorParameters", fixed("(null)")},
	{"PrioritySiteFactorPlugin", fixed("(null)")},
	{"PriorityDecayHalfLife", prio(func(c *ConfigView) string { return slurmtime.FormatClock(c.Config.Priority.DecayHalfLife) })},
	{"PriorityCalcPeriod", prio(func(c *ConfigView) string { return slurmtime.FormatClock(c.Config.Priority.CalcPeriod) })},
	{"PriorityFavorSmall", prio(func(c *ConfigView) string { return yesNoCap(c.Config.Priority.FavorSmall) })},
	{"PriorityFlags", prio(func(c *ConfigView) string { return c.priorityFlags() })},
	{"PriorityMaxAge", prio(func(c *ConfigView) string { return slurmtime.FormatClock(c.Config.Priority.MaxAge) })},
	{"PriorityUsageResetPeriod", prio(func(c *ConfigView) string { return orDefault(c.Config.Priority.UsageResetPeriod, "NONE") })},
	{"PriorityType", func(c *ConfigView) string { return c.Config.PriorityType }},
	{"PriorityWeightAge", prio(func(c *ConfigView) string { return strconv.Itoa(c.Config.Priority.WeightAge) })},
	{"PriorityWeightAssoc", prio(func(c *ConfigView) string { return strconv.Itoa(c.Config.Priority.WeightAssoc) })},
	{"PriorityWeightFairShare", prio(func(c *ConfigView) string { return strconv.Itoa(c.Config.Priority.WeightFairshare) })},
	{"PriorityWeightJobSize", prio(func(c *ConfigView) string { return strconv.Itoa(c.Config.Priority.WeightJobSize) })},
	{"PriorityWeightPartition", prio(func(c *ConfigView) string { return strconv.Itoa(c.Config.Priority.WeightPartition) })},
	{"PriorityWeightQOS", prio(func(c *ConfigView) string { return strconv.Itoa(c.Config.Priority.WeightQOS) })},
	{"PriorityWeightTRES", prio(func(c *ConfigView) string { return c.weightTRES() })},
	{"PrivateData", func(c *ConfigView) string { return orDefault(strings.Join(c.Config.PrivateData, ","), "none") }},
	{"ProctrackType", fixed("proctrack/linuxproc")},
	{"Prolog", fixed("(null)")},
	{"PrologEpilogTimeout", fixed("65534")},
	{"PrologSlurmctld", fixed("(null)")},
	{"PrologFlags", fixed("(null)")},
	{"PropagatePrioProcess", fixed("0")},
	{"PropagateResourceLimits", fixed("ALL")},
	{"PropagateResourceLimitsExcept", fixed("(null)")},
	{"RebootProgram", fixed("(null)")},
	{"ReconfigFlags", fixed("(null)")},
	{"RequeueExit", func(c *ConfigView) string { return exitCodes(c.Config.RequeueExit) }},
	{"RequeueExitHold", func(c *ConfigView) string { return exitCodes(c.Config.RequeueExitHold) }},
	{"ResumeFailProgram", fixed("(null)")},
	{"ResumeProgram", fixed("(null)")},
	{"ResumeRate", fixed("300 nodes/min")},
	{"ResumeTimeout", fixed("60 sec")},
	{"ResvEpilog", fixed("(null)")},
	{"ResvOverRun", fixed("0 min")},
	{"ResvProlog", fixed("(null)")},
	{"ReturnToService", fixed("2")},
	{"RoutePlugin", fixed("route/default")},
	{"SchedulerParameters", func(c *ConfigView) string { return c.schedulerParameters() }},
	{"SchedulerTimeSlice", fixed("30 sec")},
	{"SchedulerType", func(c *ConfigView) string { return c.Config.SchedulerType }},
	{"ScronParameters", fixed("(null)")},
	{"SelectType", fixed("select/cons_tres")},
	{"SelectTypeParameters", fixed("CR_CORE_MEMORY")},
	{"SlurmUser", func(c *ConfigView) string { return c.DaemonUser }},
	{"SlurmctldAddr", fixed("(null)")},
	{"SlurmctldDebug", fixed("info")},
	{"SlurmctldHost[0]", func(c *ConfigView) string { return c.Host + "(" + NodeAddr + ")" }},
	{"SlurmctldLogFile", fixed("(null)")},
	{"SlurmctldPort", fixed("6817")},
	{"SlurmctldSyslogDebug", fixed("(null)")},
	{"SlurmctldPrimaryOffProg", fixed("(null)")},
	{"SlurmctldPrimaryOnProg", fixed("(null)")},
	{"SlurmctldTimeout", fixed("120 sec")},
	{"SlurmctldParameters", fixed("(null)")},
	{"SlurmdDebug", fixed("info")},
	{"SlurmdLogFile", fixed("(null)")},
	{"SlurmdParameters", fixed("config_overrides")},
	{"SlurmdPidFile", fixed("/var/run/slurmd.pid")},
	{"SlurmdPort", fixed("6818")},
	{"SlurmdSpoolDir", func(c *ConfigView) string { return c.Config.StateSaveLocation + "/jobs" }},
	{"SlurmdSyslogDebug", fixed("(null)")},
	{"SlurmdTimeout", fixed("300 sec")},
	{"SlurmdUser", func(c *ConfigView) string { return c.DaemonUser }},
	{"SlurmSchedLogFile", fixed("(null)")},
	{"SlurmSchedLogLevel", fixed("0")},
	{"SlurmctldPidFile", fixed("/var/run/slurmctld.pid")},
	{"SlurmctldPlugstack", fixed("(null)")},
	{"SLURM_CONF", func(c *ConfigView) string { return orNullStr(c.Path) }},
	{"SLURM_VERSION", fixed("22.05.8")},
	{"SrunEpilog", fixed("(null)")},
	{"SrunPortRange", fixed("0-0")},
	{"SrunProlog", fixed("(null)")},
	{"StateSaveLocation", func(c *ConfigView) string { return c.Config.StateSaveLocation }},
	{"SuspendExcNodes", fixed("(null)")},
	{"SuspendExcParts", fixed("(null)")},
	{"SuspendProgram", fixed("(null)")},
	{"SuspendRate", fixed("60 nodes/min")},
	{"SuspendTime", fixed("INFINITE")},
	{"SuspendTimeout", fixed("30 sec")},
	{"SwitchParameters", fixed("(null)")},
	{"SwitchType", fixed("switch/none")},
	{"TaskEpilog", fixed("(null)")},
	{"TaskPlugin", fixed("task/none")},
	{"TaskPluginParam", fixed("(null type)")},
	{"TaskProlog", fixed("(null)")},
	{"TCPTimeout", fixed("2 sec")},
	{"TmpFS", fixed("/tmp")},
	{"TopologyParam", fixed("(null)")},
	{"TopologyPlugin", fixed("topology/none")},
	{"TrackWCKey", fixed("No")},
	{"TreeWidth", fixed("50")},
	{"UsePam", fixed("No")},
	{"UnkillableStepProgram", fixed("(null)")},
	{"UnkillableStepTimeout", fixed("60 sec")},
	{"VSizeFactor", fixed("0 percent")},
	{"WaitTime", fixed("0 sec")},
	{"X11Parameters", fixed("(null)")},
}

// exitCodes is RequeueExit as scontrol show config prints it: the codes,
// comma-separated, or (null) for none.
func exitCodes(ns []int) string {
	if len(ns) == 0 {
		return "(null)"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
