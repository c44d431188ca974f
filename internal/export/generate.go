package export

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// GPU is one GPU as the exported files name it.
type GPU struct {
	// Type is the Slurm type name, the same as slurm-lite's ("a100", or
	// AutoDetect's "nvidia_a100-sxm4-80gb").
	Type string
	// Memory in bytes; 0 when unknown (the GPU then gets no shards).
	Memory uint64
	// Minor is N of /dev/nvidiaN.
	Minor int
}

// Input is what Generate needs besides the configuration.
type Input struct {
	// ConfigPath is the file the configuration came from; "" for the
	// built-in defaults. Only named in comments.
	ConfigPath string
	// GPUs of one machine, in /dev/nvidiaN order.
	GPUs []GPU
	// GPUNote says where the GPUs came from, or why there are none.
	GPUNote string
	// Nodes is a hostlist ("gpu[01-04]") for a node template; "" is the
	// configured node alone.
	Nodes string
	// Controller is SlurmctldHost; "" is the first node.
	Controller string
	// AutoDetect writes AutoDetect=nvml in gres.conf instead of File= lines.
	AutoDetect bool
	// ImplicitUsers are the users who hold the implicit account's
	// association (no accounts configured, or AllowUnlistedUsers), as the
	// running daemon knows them (api.Config.ImplicitUsers): sacctmgr.sh
	// adds each, so that Slurm's association tree is slurm-lite's.
	// ImplicitKnown says the daemon answered; without it the script says
	// how to add them by hand.
	ImplicitUsers []string
	ImplicitKnown bool
	// Reservations are the running daemon's advance reservations
	// (api.PathReservations, as shown); reservations.sh creates them.
	Reservations []api.Reservation
}

// File is one generated file.
type File struct {
	Name string
	Data []byte
	Mode fs.FileMode
}

// Names of the generated files, in the order Generate returns them.
const (
	SlurmConf  = "slurm.conf"
	GresConf   = "gres.conf"
	CgroupConf = "cgroup.conf"
	Sacctmgr   = "sacctmgr.sh"
)

// Defaults of Debian's slurm packages, written out so the files work as
// they are on a Debian or Ubuntu machine.
const (
	slurmctldPort = 6817
	slurmdPort    = 6818
	slurmdbdPort  = 6819
)

// Generate returns slurm.conf, gres.conf, cgroup.conf and sacctmgr.sh for
// cfg (a parsed configuration with the host applied) and the machine's GPUs.
// It is pure: the same input gives the same bytes.
func Generate(cfg *config.Config, in Input) ([]File, error) {
	if cfg.Node.NodeName == "" {
		return nil, fmt.Errorf("the configuration names no node: set NodeName in [Node]")
	}
	nodes := in.Nodes
	if nodes == "" {
		nodes = cfg.Node.NodeName
	}
	hosts, err := slurmtime.ExpandHostlist(nodes)
	if err != nil || len(hosts) == 0 {
		return nil, fmt.Errorf("node template %q is not a hostlist: write names such as gpu01 or gpu[01-04]", nodes)
	}
	for _, h := range hosts {
		if !validName(h) {
			return nil, fmt.Errorf("node name %q in %q: use letters, digits, '-', '_' and '.' only", h, nodes)
		}
	}
	controller := in.Controller
	if controller == "" {
		controller = hosts[0]
	}
	if !validName(controller) {
		return nil, fmt.Errorf("controller %q is not a host name: use letters, digits, '-', '_' and '.' only", controller)
	}
	for _, g := range in.GPUs {
		if !validName(g.Type) {
			return nil, fmt.Errorf("GPU type %q cannot be a Slurm GPU type (no spaces, ':', ',' or '='): name it in [Node] TypeAliases", g.Type)
		}
		if g.Minor < 0 {
			return nil, fmt.Errorf("GPU of type %q has no device number", g.Type)
		}
	}
	if cfg.ShardSize <= 0 {
		return nil, fmt.Errorf("ShardSize must be more than 0 to export shards")
	}
	for _, r := range cfg.Routes {
		if !validName(r.Partition) {
			return nil, fmt.Errorf("route to partition %q: a partition name for job_submit.lua has letters, digits, '-', '_' and '.' only", r.Partition)
		}
	}
	g := gen{cfg: cfg, in: in, nodes: slurmtime.CompressHostlist(hosts), controller: controller}
	files := []File{
		{Name: SlurmConf, Data: []byte(g.slurmConf()), Mode: 0o644},
		{Name: GresConf, Data: []byte(g.gresConf()), Mode: 0o644},
		{Name: CgroupConf, Data: []byte(g.cgroupConf()), Mode: 0o644},
		{Name: Sacctmgr, Data: []byte(g.sacctmgr()), Mode: 0o755},
	}
	return append(files, g.extras()...), nil
}

// validName reports whether s can stand in slurm.conf and gres.conf as a
// node, host or GPU type name: no separators, no spaces.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)
		if !ok {
			return false
		}
	}
	return true
}

// gen holds one Generate call's inputs for the per-file writers.
type gen struct {
	cfg        *config.Config
	in         Input
	nodes      string // compressed hostlist
	controller string
}

// source names the configuration in comments.
func (g gen) source() string {
	if g.in.ConfigPath == "" {
		return "slurm-lite's built-in defaults (no configuration file)"
	}
	return g.in.ConfigPath
}

// header is the opening comment of every file, each line after the
// comment marker: "# ", or "-- " for Lua. (sh is 0 or 1 marker.)
func (g gen) header(b *strings.Builder, what string, marker ...string) {
	m := "# "
	if len(marker) > 0 {
		m = marker[0]
	}
	fmt.Fprintf(b, "%s%s, generated by slurmd-lite export from %s.\n", m, what, g.source())
	b.WriteString(m + "Change that file and export again rather than editing this one.\n")
}

// shards is how many gres/shard units a GPU gets: its memory in ShardSize
// units, so that --gres=shard:N asks for about N x ShardSize as here.
func (g gen) shards(gp GPU) int64 {
	return int64(gp.Memory / uint64(g.cfg.ShardSize))
}

// nodeGres is the node's Gres= value: "gpu:a100:4,shard:320" ("" without GPUs).
func (g gen) nodeGres() string {
	var order []string
	count := map[string]int{}
	var shards int64
	for _, gp := range g.in.GPUs {
		if count[gp.Type] == 0 {
			order = append(order, gp.Type)
		}
		count[gp.Type]++
		shards += g.shards(gp)
	}
	var parts []string
	for _, t := range order {
		parts = append(parts, "gpu:"+t+":"+strconv.Itoa(count[t]))
	}
	if shards > 0 {
		parts = append(parts, "shard:"+strconv.FormatInt(shards, 10))
	}
	return strings.Join(parts, ",")
}

// clock prints a duration as slurm.conf and sacctmgr read it: "2-00:00:00",
// "01:00:00", "UNLIMITED".
func clock(d time.Duration) string { return slurmtime.FormatClock(d) }

func seconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// weights prints TRES weights in Slurm's usual spelling ("CPU=0,Mem=0,
// GRES/gpu=1"); Slurm compares TRES types without regard to case, people
// read them better this way. Mem stays per megabyte, Slurm's base unit.
func weights(w config.TRESWeights) string {
	parts := strings.Split(w.String(), ",")
	for i, p := range parts {
		name, val, _ := strings.Cut(p, "=")
		typ, rest, slash := strings.Cut(name, "/")
		switch typ {
		case "cpu":
			typ = "CPU"
		case "mem":
			typ = "Mem"
		case "node":
			typ = "Node"
		case "billing":
			typ = "Billing"
		case "gres":
			typ = "GRES"
		}
		if slash {
			typ += "/" + rest
		}
		parts[i] = typ + "=" + val
	}
	return strings.Join(parts, ",")
}

// preemptible reports whether some partition's jobs can be preempted.
func (g gen) preemptible() bool {
	return g.cfg.PreemptType != config.PreemptNone &&
		slices.ContainsFunc(g.cfg.Partitions, func(p config.Partition) bool { return p.PreemptMode != config.PreemptModeOff })
}

// killWait is Slurm's KillWait: slurm-lite's, or the longest GraceTime of a
// preemptible partition (and that partition's name) when longer. In
// slurm-lite GraceTime is the time between a preempted job's SIGTERM and
// SIGKILL. In Slurm 22.05 a GraceTime delays the batch script's SIGTERM to
// its end and a job that exits within it is not requeued (seen in
// scripts/test-slurm's runs): a checkpointing filler would end COMPLETED and
// never resume. So partitions get GraceTime=0 (SIGTERM at once, requeued
// whatever the exit) and KillWait carries the grace.
func (g gen) killWait() (time.Duration, string) {
	kw, from := g.cfg.KillWait, ""
	if !g.preemptible() {
		return kw, from
	}
	for _, p := range g.cfg.Partitions {
		if p.PreemptMode != config.PreemptModeOff && p.GraceTime > kw {
			kw, from = p.GraceTime, p.PartitionName
		}
	}
	return kw, from
}

// usesPreemptMode reports whether some partition's PreemptMode is mode.
func (g gen) usesPreemptMode(mode string) bool {
	return slices.ContainsFunc(g.cfg.Partitions, func(p config.Partition) bool { return p.PreemptMode == mode })
}

func (g gen) slurmConf() string {
	c := g.cfg
	var b strings.Builder
	g.header(&b, "slurm.conf for real Slurm (22.05 or later)")
	b.WriteString("#\n")
	for _, l := range g.noEquivalent() {
		b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
	}
	kv := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	section := func(s string) { fmt.Fprintf(&b, "\n# %s\n", s) }

	section("The cluster. SlurmctldHost runs slurmctld (and slurmdbd, below); Debian's packages' paths.")
	kv("ClusterName", c.ClusterName)
	kv("SlurmctldHost", g.controller)
	kv("SlurmctldPort", strconv.Itoa(slurmctldPort))
	kv("SlurmdPort", strconv.Itoa(slurmdPort))
	kv("AuthType", "auth/munge")
	kv("CredType", "cred/munge")
	kv("SlurmUser", "slurm")
	kv("StateSaveLocation", "/var/spool/slurmctld")
	kv("SlurmdSpoolDir", "/var/spool/slurmd")
	kv("SlurmctldPidFile", "/run/slurmctld.pid")
	kv("SlurmdPidFile", "/run/slurmd.pid")
	kv("SlurmctldLogFile", "/var/log/slurm/slurmctld.log")
	kv("SlurmdLogFile", "/var/log/slurm/slurmd.log")
	kv("MpiDefault", "none")
	kv("ReturnToService", "2")
	b.WriteString("# cgroups confine each job to its CPUs, memory and GPUs (cgroup.conf: ConstrainDevices).\n")
	kv("ProctrackType", "proctrack/cgroup")
	kv("TaskPlugin", "task/cgroup,task/affinity")
	kv("JobAcctGatherType", "jobacct_gather/linux")
	kv("JobAcctGatherFrequency", "30")

	section("Jobs: slurm-lite's KillWait, MinJobAge, MaxArraySize and MaxJobCount.")
	if kw, p := g.killWait(); kw != c.KillWait {
		fmt.Fprintf(&b, "# slurm-lite's KillWait is %s s; %s's GraceTime (%s s) is how long a preempted job\n", seconds(c.KillWait), p, seconds(kw))
		b.WriteString("# has between SIGTERM and SIGKILL, which in Slurm is KillWait (see the partitions).\n")
		kv("KillWait", seconds(kw))
	} else {
		kv("KillWait", seconds(c.KillWait))
	}
	kv("MinJobAge", seconds(c.MinJobAge))
	if len(c.PrivateData) > 0 {
		kv("PrivateData", strings.Join(c.PrivateData, ","))
	}
	if c.MailProg != "" {
		kv("MailProg", c.MailProg)
	}
	if c.MpiParams != "" {
		kv("MpiParams", c.MpiParams)
		b.WriteString("# Slurm 22.05 gives these ports to srun's steps only (SLURM_STEP_RESV_PORTS, tasks + 1 each, or\n" +
			"# --resv-ports=N): batch scripts there see none, where slurm-lite gave each job a range of its own.\n")
	}
	if c.JWT() {
		b.WriteString("# scontrol token and slurmrestd (auth/jwt). Slurm's default key is StateSaveLocation/jwt_hs256.key;\n")
		b.WriteString("# slurmdbd.conf needs the same two lines with jwt_key set. The key is SlurmUser's alone (0600).\n")
		kv("AuthAltTypes", config.AuthJWT)
		if c.AuthAltParameters != "" {
			kv("AuthAltParameters", c.AuthAltParameters)
		}
	}
	if len(c.RequeueExit) > 0 {
		kv("RequeueExit", joinInts(c.RequeueExit))
	}
	if len(c.RequeueExitHold) > 0 {
		kv("RequeueExitHold", joinInts(c.RequeueExitHold))
	}
	if len(c.RequeueExit)+len(c.RequeueExitHold) > 0 {
		fmt.Fprintf(&b, "# max_batch_requeue (%d) has no Slurm 22.05 equivalent: there RequeueExit requeues without\n# limit (Slurm 23.02's MaxBatchRequeue holds the job after that many instead).\n", c.SchedulerParameters.MaxBatchRequeue)
	}
	if c.MessageTimeout != 10*time.Second { // Slurm's default
		kv("MessageTimeout", seconds(c.MessageTimeout))
	}
	kv("MaxArraySize", strconv.Itoa(c.MaxArraySize))
	kv("MaxJobCount", strconv.Itoa(c.MaxJobCount))
	if n := c.MaxJobCountPerUser.Of(c.MaxJobCount); n > 0 {
		fmt.Fprintf(&b, "# MaxJobCountPerUser (%d jobs a user) is the cluster association's MaxSubmitJobs: sacctmgr.sh.\n", n)
	}
	if c.PartLimitsEnforced() { // Slurm's default is NO
		kv("EnforcePartLimits", c.EnforcePartLimits)
	}
	kv("JobRequeue", "1")
	if len(c.Routes) > 0 {
		b.WriteString("# [[Route]]s: job_submit.lua, beside this file, sends a job that names no partition to one by its time limit.\n")
		kv("JobSubmitPlugins", "lua")
	}
	if c.JobMappingDir != "" {
		fmt.Fprintf(&b, "# JobMappingDir (%s): dcgm-exporter's job mapping, kept at each job's start and end (%s).\n", c.JobMappingDir, Prometheus)
		kv("Prolog", confDir+"/"+JobMapProlog)
		kv("Epilog", confDir+"/"+JobMapEpilog)
	}

	section("Scheduling.")
	kv("SchedulerType", c.SchedulerType)
	if c.SchedulerType == config.SchedBackfill {
		kv("SchedulerParameters", g.schedulerParameters())
	}
	kv("SelectType", "select/cons_tres")
	kv("SelectTypeParameters", "CR_Core_Memory")
	switch {
	case c.DefMemPerCPU > 0:
		kv("DefMemPerCPU", strconv.FormatInt(int64(c.DefMemPerCPU/slurmtime.MiB), 10))
	case c.DefMemPerNode > 0:
		kv("DefMemPerNode", strconv.FormatInt(int64(c.DefMemPerNode/slurmtime.MiB), 10))
	case c.Node.CPUs > 0 && c.Node.RealMemory > 0:
		// Without a default, Slurm would give such a job the whole node
		// (CR_Core_Memory), and every other job would wait.
		b.WriteString("# A job without --mem gets its CPUs' share of the node's memory (slurm-lite, without DefMemPerCPU, sets no limit).\n")
		kv("DefMemPerCPU", strconv.FormatInt(int64(c.Node.RealMemory/slurmtime.MiB)/int64(c.Node.CPUs), 10))
	}
	kv("GresTypes", "gpu,shard")

	section("Priority: slurm-lite's weights.")
	kv("PriorityType", c.PriorityType)
	if c.PriorityType == config.PriorityMultifactor {
		p := c.Priority
		kv("PriorityDecayHalfLife", clock(p.DecayHalfLife))
		kv("PriorityMaxAge", clock(p.MaxAge))
		kv("PriorityCalcPeriod", clock(p.CalcPeriod))
		kv("PriorityUsageResetPeriod", p.UsageResetPeriod)
		kv("PriorityFavorSmall", yesNo(p.FavorSmall))
		if len(p.Flags) > 0 {
			kv("PriorityFlags", strings.Join(p.Flags, ","))
		}
		kv("PriorityWeightAge", strconv.Itoa(p.WeightAge))
		kv("PriorityWeightFairshare", strconv.Itoa(p.WeightFairshare))
		kv("PriorityWeightPartition", strconv.Itoa(p.WeightPartition))
		kv("PriorityWeightQOS", strconv.Itoa(p.WeightQOS))
		kv("PriorityWeightJobSize", strconv.Itoa(p.WeightJobSize))
		kv("PriorityWeightAssoc", strconv.Itoa(p.WeightAssoc))
		switch {
		case p.WeightTRESText != "":
			// As written: sprio -w and scontrol show config print it so.
			kv("PriorityWeightTRES", p.WeightTRESText)
		case len(p.WeightTRES) > 0:
			kv("PriorityWeightTRES", weights(p.WeightTRES))
		}
	}

	section("Preemption: each partition's PreemptMode (below) says what happens to its jobs.")
	kv("PreemptType", c.PreemptType)
	switch {
	case c.PreemptType == config.PreemptNone:
		kv("PreemptMode", "OFF")
	case g.usesPreemptMode(config.PreemptModeRequeue):
		kv("PreemptMode", "REQUEUE")
	case g.usesPreemptMode(config.PreemptModeCancel):
		kv("PreemptMode", "CANCEL")
	default:
		kv("PreemptMode", "OFF")
	}

	section("Accounting through slurmdbd (on SlurmctldHost); sacctmgr.sh makes the associations.\n" +
		"# Without \"limits\" Slurm 22.05 never charges a finished job to fair share.")
	kv("AccountingStorageType", "accounting_storage/slurmdbd")
	kv("AccountingStorageHost", g.controller)
	kv("AccountingStoragePort", strconv.Itoa(slurmdbdPort))
	kv("AccountingStorageEnforce", c.AccountingStorageEnforce)
	b.WriteString("# gres/gpu must be tracked for the billing and priority weights that name it.\n")
	tracked := "gres/gpu,gres/shard"
	for _, n := range c.Priority.WeightTRES.Names() {
		if strings.HasPrefix(n, "gres/gpu:") {
			tracked += "," + n // a typed GPU TRES is tracked only when named
		}
	}
	kv("AccountingStorageTRES", tracked)
	kv("JobCompType", "jobcomp/none")

	section(g.nodeComment())
	node := fmt.Sprintf("NodeName=%s CPUs=%d RealMemory=%d", g.nodes, c.Node.CPUs, int64(c.Node.RealMemory/slurmtime.MiB))
	if gres := g.nodeGres(); gres != "" {
		node += " Gres=" + gres
	}
	b.WriteString(node + " State=UNKNOWN\n")

	section("Partitions: Nodes= is every node above.")
	if g.preemptible() {
		b.WriteString("# GraceTime=0 on preemptible partitions: with a GraceTime Slurm signals only job steps\n")
		b.WriteString("# at first (a batch script hears nothing until it is over), and a job that ends within\n")
		b.WriteString("# it is COMPLETED or FAILED, never requeued. With 0, Slurm sends SIGTERM at once, gives\n")
		b.WriteString("# KillWait, then SIGKILL, and requeues: slurm-lite's GraceTime, which KillWait carries.\n")
	}
	for _, p := range c.Partitions {
		b.WriteString(g.partition(p) + "\n")
	}
	return b.String()
}

func (g gen) schedulerParameters() string {
	s := g.cfg.SchedulerParameters
	parts := []string{
		"bf_window=" + strconv.FormatInt(int64(s.BFWindow/time.Minute), 10),
		"bf_max_job_test=" + strconv.Itoa(s.BFMaxJobTest),
		"bf_resolution=" + seconds(s.BFResolution),
		"bf_interval=" + seconds(s.BFInterval),
	}
	if s.BFContinue {
		parts = append(parts, "bf_continue")
	}
	parts = append(parts, "default_queue_depth="+strconv.Itoa(s.DefaultQueueDepth))
	if s.MaxScriptSize != 0 && s.MaxScriptSize != config.DefaultMaxScriptSize {
		parts = append(parts, "max_script_size="+strconv.Itoa(s.MaxScriptSize))
	}
	return strings.Join(parts, ",")
}

func (g gen) nodeComment() string {
	var b strings.Builder
	b.WriteString("The node")
	if g.nodes != g.cfg.Node.NodeName {
		fmt.Fprintf(&b, "s: a template of %s (every one with %s's CPUs, memory and GPUs;\n# run `slurmd -C` on each to check)", g.nodes, g.cfg.Node.NodeName)
	}
	b.WriteString(".")
	if g.in.GPUNote != "" {
		b.WriteString("\n# slurm-lite's GPU inventory: " + g.in.GPUNote + ".")
	}
	if len(g.in.GPUs) == 0 && g.cfg.Node.GPUs == config.GPUsNVML {
		b.WriteString("\n# No GPU was seen here: export again on the GPU machine, or add")
		b.WriteString("\n# Gres=gpu:TYPE:N,shard:M by hand (M = each GPU's memory / ShardSize, summed).")
	}
	if g.shardsOn() {
		fmt.Fprintf(&b, "\n# One shard stands for %s of GPU memory (ShardSize); Slurm does not check it.", slurmtime.FormatSize(g.cfg.ShardSize))
	}
	return b.String()
}

func (g gen) shardsOn() bool {
	return slices.ContainsFunc(g.in.GPUs, func(gp GPU) bool { return g.shards(gp) > 0 })
}

func (g gen) partition(p config.Partition) string {
	f := []string{"PartitionName=" + p.PartitionName, "Nodes=" + g.nodes}
	add := func(k, v string) { f = append(f, k+"="+v) }
	if p.Default {
		add("Default", "YES")
	}
	add("MaxTime", clock(p.MaxTime))
	if p.DefaultTime > 0 {
		add("DefaultTime", clock(p.DefaultTime))
	}
	add("PriorityTier", strconv.Itoa(p.PriorityTier))
	add("PriorityJobFactor", strconv.Itoa(p.PriorityJobFactor))
	add("PreemptMode", p.PreemptMode)
	if p.PreemptMode != config.PreemptModeOff {
		add("GraceTime", "0") // see killWait
	}
	add("State", p.State)
	if p.Hidden {
		add("Hidden", "YES")
	}
	if len(p.AllowAccounts) > 0 {
		add("AllowAccounts", strings.Join(p.AllowAccounts, ","))
	}
	if len(p.AllowGroups) > 0 {
		add("AllowGroups", strings.Join(p.AllowGroups, ","))
	}
	if p.QOS != "" {
		add("QOS", p.QOS)
	}
	if len(p.TRESBillingWeights) > 0 {
		add("TRESBillingWeights", weights(p.TRESBillingWeights))
	}
	return strings.Join(f, " ")
}

func (g gen) gresConf() string {
	var b strings.Builder
	g.header(&b, "gres.conf for real Slurm")
	b.WriteString("# GPUs with the type names slurm-lite uses, so --gres=gpu:TYPE:N means the same;\n")
	fmt.Fprintf(&b, "# shards per GPU: its memory / ShardSize (%s), so --gres=shard:N means about N x %s.\n",
		slurmtime.FormatSize(g.cfg.ShardSize), slurmtime.FormatSize(g.cfg.ShardSize))
	if g.in.GPUNote != "" {
		fmt.Fprintf(&b, "# slurm-lite's GPU inventory: %s.\n", g.in.GPUNote)
	}
	prefix := "NodeName=" + g.nodes + " "
	switch {
	case g.in.AutoDetect:
		b.WriteString("# Slurm reads type, file and links from NVML (needs a Slurm built with NVML;\n")
		b.WriteString("# Debian's is not, and its node would drain). Types it detects match\n")
		b.WriteString("# slurm.conf's short ones by substring (a100 in nvidia_a100-sxm4-80gb).\n")
		b.WriteString("AutoDetect=nvml\n")
	case len(g.in.GPUs) == 0 && g.cfg.Node.GPUs == config.GPUsNVML:
		b.WriteString("# No GPU was seen here: Slurm's own NVML detection is the closest to\n")
		b.WriteString("# GPUs = \"nvml\" (needs a Slurm built with NVML), or write one line per GPU:\n")
		b.WriteString("#   NodeName=NODE Name=gpu Type=TYPE File=/dev/nvidiaN\n")
		b.WriteString("AutoDetect=nvml\n")
		return b.String()
	default:
		b.WriteString("# The device files are numbered as NVML numbers the GPUs (nvidia-smi -q: Minor Number).\n")
		b.WriteString("AutoDetect=off\n")
	}
	for _, gp := range g.in.GPUs {
		if g.in.AutoDetect {
			break
		}
		fmt.Fprintf(&b, "%sName=gpu Type=%s File=/dev/nvidia%d\n", prefix, gp.Type, gp.Minor)
	}
	for _, gp := range g.in.GPUs {
		if n := g.shards(gp); n > 0 {
			fmt.Fprintf(&b, "%sName=shard Count=%d File=/dev/nvidia%d\n", prefix, n, gp.Minor)
		}
	}
	return b.String()
}

func (g gen) cgroupConf() string {
	var b strings.Builder
	g.header(&b, "cgroup.conf for real Slurm (with slurm.conf's task/cgroup)")
	b.WriteString("# ConstrainDevices keeps a job off the GPUs it was not given: slurm-lite's\n")
	b.WriteString("# GPUViolationPolicy notices that after the fact; Slurm prevents it. Memory\n")
	b.WriteString("# and cores are confined too; GPU memory within a shared GPU is not.\n")
	b.WriteString("ConstrainCores=yes\nConstrainDevices=yes\nConstrainRAMSpace=yes\n")
	return b.String()
}

// joinInts writes exit codes as slurm.conf's lists: "42,43".
func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
