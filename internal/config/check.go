package config

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// check finds what decoding cannot see: values out of range, names that
// must exist, duplicates, cycles. It also puts enumerated values into
// their canonical spelling (Slurm takes "requeue" for REQUEUE).
func (p *parser) check(c *Config) {
	p.checkTop(c)
	p.checkScheduler(c)
	p.checkNode(c)
	p.checkPriority(c)
	p.checkAccounts(c)
	p.checkQOS(c)
	p.checkPartitions(c)
	p.checkUsers(c)
	p.checkYield(c)
	p.checkNotify(c)
	p.checkRequeueExit(c)
	p.checkScron(c)
	p.checkMpiParams(c)
	p.checkWeb(c)
}

// checkYield checks the scheduler's own yields and the routes.
func (p *parser) checkYield(c *Config) {
	y := c.Yield
	p.notNegative(key("Yield", "ShrinkTries"), "Yield.ShrinkTries", y.ShrinkTries)
	if y.Cost < 0 {
		p.errorf(key("Yield", "Cost"), "Yield.Cost is negative; use a time such as \"3\" (minutes)")
	}
	if y.MinRun < 0 {
		p.errorf(key("Yield", "MinRun"), "Yield.MinRun is negative; use a time such as \"10\" (minutes), or \"0\" to spare a resumed job only its first second")
	}
	if (y.ShrinkTries > 0 || y.ShrinkPayback || y.ShrinkRegrow) && !y.Shrink {
		p.errorf(key("Yield", "Shrink"), "Yield.ShrinkTries, ShrinkPayback and ShrinkRegrow need Shrink = true")
	}
	if y.Own && !y.Payback {
		p.errorf(key("Yield", "Own"), "Yield.Own needs Payback = true")
	}
	for i, r := range c.Routes {
		if r.MaxTime <= 0 {
			p.errorf(elem("Route", i, "MaxTime"), "Route.MaxTime must be a time above 0, such as \"1:00:00\"")
		}
		if c.Partition(r.Partition) == nil {
			p.errorf(elem("Route", i, "Partition"), "Route.Partition %q is not a [[Partition]]; name one of them", r.Partition)
		}
	}
}

// key is the path of a top-level key or of a key in a plain table.
func key(parts ...string) keyPath { return keyPath(parts) }

// elem is the path of key in the i-th table of an array of tables.
func elem(array string, i int, k string) keyPath {
	return keyPath(strings.Split(array, ".")).index(i).child(k)
}

func (p *parser) inRange(at keyPath, name string, v, lo, hi int64) {
	if v < lo || v > hi {
		p.errorf(at, "%s %d is out of range; use %d to %d", name, v, lo, hi)
	}
}

func (p *parser) notNegative(at keyPath, name string, v int) {
	if v < 0 {
		p.errorf(at, "%s %d is negative; use 0 or more", name, v)
	}
}

// validName reports whether s can be a Slurm name (partition, account,
// QOS, user, group, GPU type): printable, with none of the characters that
// separate things in Slurm's strings.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || strings.ContainsRune(`,:="'\/`, r) {
			return false
		}
	}
	return true
}

const nameRule = `use letters, digits, "-", "_" or "."`

func (p *parser) name(at keyPath, what, s string) bool {
	if !validName(s) {
		if s == "" {
			p.errorf(at, "%s must not be empty", what)
		} else {
			p.errorf(at, "%s %q is not a valid name; %s", what, s, nameRule)
		}
		return false
	}
	return true
}

// canonical returns the member of allowed equal to s but for case.
func canonical(s string, allowed ...string) (string, bool) {
	for _, a := range allowed {
		if strings.EqualFold(s, a) {
			return a, true
		}
	}
	return s, false
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// enum puts *v into canonical spelling, or reports the values allowed.
func (p *parser) enum(at keyPath, name string, v *string, allowed ...string) bool {
	c, ok := canonical(*v, allowed...)
	if !ok {
		p.errorf(at, "%s %q is not one of %s", name, *v, quoteAll(allowed))
		return false
	}
	*v = c
	return true
}

// exact is enum for plugin names, which Slurm compares exactly.
func (p *parser) exact(at keyPath, name, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	p.errorf(at, "%s %q is not one of %s", name, v, quoteAll(allowed))
}

// lowerName checks an account, QOS or cluster name, which Slurm lowers
// silently: upper case here would name something Slurm does not have.
func (p *parser) lowerName(at keyPath, what, s string) bool {
	if !p.name(at, what, s) {
		return false
	}
	if l := strings.ToLower(s); l != s {
		p.errorf(at, "%s %q has upper case, which Slurm lowers silently; write %q", what, s, l)
		return false
	}
	return true
}

// The % escapes a CheckpointDir may use: slurmsyntax.ExpandPattern's.
const checkpointEscapes = "jxuAaNnst%"

func (p *parser) checkTop(c *Config) {
	if p.lowerName(key("ClusterName"), "ClusterName", c.ClusterName) && len(c.ClusterName) > 40 {
		p.errorf(key("ClusterName"), "ClusterName %q is longer than 40 characters (Slurm's limit); shorten it", c.ClusterName)
	}
	for _, k := range []struct {
		name string
		v    string
	}{{"SocketPath", c.SocketPath}, {"StateSaveLocation", c.StateSaveLocation}, {"CheckpointDir", c.CheckpointDir}} {
		if !filepath.IsAbs(k.v) {
			p.errorf(key(k.name), "%s %q is not an absolute path; write a path that starts with /", k.name, k.v)
		}
	}
	p.checkCheckpointDir(c.CheckpointDir)
	for i, u := range c.Operators {
		p.name(key("Operators").index(i), "Operators: user", u)
	}
	if c.YieldGroup != "" {
		p.name(key("YieldGroup"), "YieldGroup", c.YieldGroup)
	}
	p.checkPrivateData(c)
	p.checkAuthAlt(c)
	p.inRange(key("KillWait"), "KillWait", int64(c.KillWait/time.Second), 0, 65533)
	p.inRange(key("MessageTimeout"), "MessageTimeout", int64(c.MessageTimeout/time.Second), 1, 100)
	if c.MinJobAge < 0 {
		p.errorf(key("MinJobAge"), "MinJobAge %d is negative; use 0 (keep forever) or more seconds", c.MinJobAge/time.Second)
	}
	p.inRange(key("MaxArraySize"), "MaxArraySize", int64(c.MaxArraySize), 0, 4000001)
	if c.MaxJobCount < 1 {
		p.errorf(key("MaxJobCount"), "MaxJobCount %d is below 1; no job could be submitted", c.MaxJobCount)
	}
	if _, pct := c.MaxJobCountPerUser.Percent(); !pct && c.MaxJobCount >= 1 && c.MaxJobCountPerUser.Of(c.MaxJobCount) > c.MaxJobCount {
		p.errorf(key("MaxJobCountPerUser"), "MaxJobCountPerUser %s is more than MaxJobCount %d, so it would never refuse anything; write at most %d, a percentage such as \"50%%\", or 0 for no limit",
			c.MaxJobCountPerUser, c.MaxJobCount, c.MaxJobCount)
	}
	p.notNegative(key("CheckpointKeepDays"), "CheckpointKeepDays", c.CheckpointKeepDays)
	p.enum(key("GPUViolationPolicy"), "GPUViolationPolicy", &c.GPUViolationPolicy, ViolationWarn, ViolationYield, ViolationKill)
	p.enum(key("EnforcePartLimits"), "EnforcePartLimits", &c.EnforcePartLimits, EnforceNo, EnforceAny, EnforceAll, EnforceYes)
	p.checkEnforce(c)
	if c.GPUSampleInterval < time.Second {
		p.errorf(key("GPUSampleInterval"), "GPUSampleInterval %d is below 1 second; use 1 or more", c.GPUSampleInterval/time.Second)
	}
	p.checkDefMem(c)
	if c.ShardSize <= 0 {
		p.errorf(key("ShardSize"), "ShardSize must be above 0; write e.g. \"1G\"")
	}
	p.exact(key("SchedulerType"), "SchedulerType", c.SchedulerType, SchedBackfill, SchedBuiltin)
	p.exact(key("PriorityType"), "PriorityType", c.PriorityType, PriorityMultifactor, PriorityBasic)
	p.exact(key("PreemptType"), "PreemptType", c.PreemptType, PreemptPartitionPrio, PreemptNone)
	p.billingWeights(key("TRESBillingWeights"), "TRESBillingWeights", c.TRESBillingWeights)
}

// checkPrivateData checks PrivateData's values, lowers them as Slurm
// does, and drops repeats.
func (p *parser) checkPrivateData(c *Config) {
	var out []string
	for i, v := range c.PrivateData {
		at := key("PrivateData").index(i)
		if cv, ok := canonical(v, PrivateJobs, PrivateUsage, PrivateUsers); ok {
			if !slices.Contains(out, cv) {
				out = append(out, cv)
			}
			continue
		}
		if _, ok := canonical(v, "accounts", "cloud", "events", "nodes", "partitions", "reservations"); ok {
			p.errorf(at, "PrivateData %q is not supported: slurm-lite hides only %q, %q and %q; remove it", v, PrivateJobs, PrivateUsage, PrivateUsers)
			continue
		}
		p.errorf(at, "PrivateData %q is not one of %s", v, quoteAll([]string{PrivateJobs, PrivateUsage, PrivateUsers}))
	}
	slices.Sort(out) // Slurm prints them in this order
	c.PrivateData = out
}

func (p *parser) checkCheckpointDir(dir string) {
	at := key("CheckpointDir")
	for i := 0; i < len(dir); i++ {
		if dir[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(dir) && '0' <= dir[j] && dir[j] <= '9' {
			j++ // a width, as in %4a
		}
		if j >= len(dir) || !strings.ContainsRune(checkpointEscapes, rune(dir[j])) {
			p.errorf(at, "CheckpointDir %q has an unknown %% escape; use %%u (user), %%j (job id), %%x (job name), %%A and %%a (array job and task) or %%%% for %%", dir)
			return
		}
		i = j
	}
	if !strings.Contains(dir, "%j") {
		p.errorf(at, "CheckpointDir %q has no %%j, so all jobs would share one checkpoint directory; add %%j", dir)
		return
	}
	if filepath.IsAbs(dir) && CheckpointBase(dir) == "/" {
		p.errorf(at, "CheckpointDir %q makes the directories of users and jobs in /; begin it with a directory of its own, such as \"/var/lib/slurm-lite/ckpt/%%u/%%j\"", dir)
	}
}

// CheckpointBase is the directory of CheckpointDir that is the daemon's:
// the one that holds the part before the first % escape ("%%" is a
// literal %). Below it, every directory is the job's user's; it must be
// root's (or the daemon's user's) and writable by nobody else, as every
// directory above it, or one user could swap another's checkpoints.
func CheckpointBase(pattern string) string {
	var lit strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' {
			lit.WriteByte(pattern[i])
			continue
		}
		if i+1 < len(pattern) && pattern[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		break
	}
	prefix := lit.String()
	i := strings.LastIndexByte(prefix, '/')
	if i <= 0 {
		return "/"
	}
	return filepath.Clean(prefix[:i])
}

// billingWeights rejects negative billing: fair share decays usage by
// halving it, which goes wrong with negative usage. (Slurm allows it.)
func (p *parser) billingWeights(at keyPath, name string, w TRESWeights) {
	for _, n := range sortedTRES(w) {
		if w[n] < 0 {
			p.errorf(at, "%s: %s weight %g is negative; billing weights must be 0 or more", name, n, w[n])
		}
	}
}

func (p *parser) checkScheduler(c *Config) {
	s := c.SchedulerParameters
	at := func(k string) keyPath { return key("SchedulerParameters", k) }
	const n = "SchedulerParameters."
	p.inRange(at("bf_window"), n+"bf_window", int64(s.BFWindow/time.Minute), 1, 43200)
	p.inRange(at("bf_max_job_test"), n+"bf_max_job_test", int64(s.BFMaxJobTest), 1, 1000000)
	p.inRange(at("bf_resolution"), n+"bf_resolution", int64(s.BFResolution/time.Second), 1, 3600)
	// slurm-lite plans every pending job, backfill included, in one pass at
	// every submission, end and change: these three set nothing here, so
	// only Slurm's defaults (which export writes) are taken, and another
	// value is refused, saying why, rather than accepted and ignored.
	const everyPass = "slurm-lite runs its backfill over every pending job at each submission, job end and change"
	switch {
	case s.BFInterval == -time.Second:
		p.errorf(at("bf_interval"), `%sbf_interval -1 (no backfill) is written SchedulerType = "sched/builtin" here`, n)
	case s.BFInterval != 30*time.Second:
		p.errorf(at("bf_interval"), "%sbf_interval %d is not supported: %s, not every bf_interval; remove it (Slurm's default, 30, is what export writes)", n, int64(s.BFInterval/time.Second), everyPass)
	}
	if s.BFContinue {
		p.errorf(at("bf_continue"), "%sbf_continue is not supported: %s, never interrupted; remove it", n, everyPass)
	}
	if s.DefaultQueueDepth != 100 {
		p.errorf(at("default_queue_depth"), "%sdefault_queue_depth %d is not supported: %s, with no quick pass of a few jobs; remove it (Slurm's default, 100, is what export writes)", n, s.DefaultQueueDepth, everyPass)
	}
	// slurm.conf refuses more than 512 MB (read_config.c).
	p.inRange(at("max_script_size"), n+"max_script_size", int64(s.MaxScriptSize), 1, 512<<20)
	p.inRange(at("max_batch_requeue"), n+"max_batch_requeue", int64(s.MaxBatchRequeue), 0, 1000)
}

// checkRequeueExit checks RequeueExit and RequeueExitHold: exit codes a
// script can end with (0 to 255, as Slurm's MAX_EXIT_VAL), each in one
// list at most (Slurm would take RequeueExit's meaning and ignore the
// other).
func (p *parser) checkRequeueExit(c *Config) {
	seen := map[int]string{}
	for _, l := range []struct {
		name  string
		codes []int
	}{{"RequeueExit", c.RequeueExit}, {"RequeueExitHold", c.RequeueExitHold}} {
		for i, code := range l.codes {
			at := key(l.name).index(i)
			if code < 0 || code > 255 {
				p.errorf(at, "%s: exit code %d is not one a script can end with; write codes from 0 to 255, e.g. %s = [42]", l.name, code, l.name)
				continue
			}
			if other, dup := seen[code]; dup && other != l.name {
				p.errorf(at, "%s: exit code %d is also in %s; keep it in one of them (RequeueExit requeues, RequeueExitHold requeues held)", l.name, code, other)
				continue
			}
			seen[code] = l.name
		}
	}
}

// checkScron checks ScronParameters: Slurm 22.05 knows one option,
// "enable" (its later explicit_scancel is not 22.05's).
func (p *parser) checkScron(c *Config) {
	for opt := range strings.SplitSeq(c.ScronParameters, ",") {
		if o := strings.TrimSpace(opt); o != "" && !strings.EqualFold(o, "enable") {
			p.errorf(key("ScronParameters"), "ScronParameters: unknown option %q; the only one is \"enable\" (ScronParameters = \"enable\" lets users run scrontab), or leave it out to refuse scrontab", o)
		}
	}
}

// checkDefMem checks DefMemPerCPU and DefMemPerNode: one of them at most,
// as slurm.conf, and a DefMemPerNode that fits the node (a larger one
// would keep every job that asks for no memory pending). A size is
// rounded up to whole megabytes when read.
func (p *parser) checkDefMem(c *Config) {
	if c.DefMemPerCPU > 0 && c.DefMemPerNode > 0 {
		p.errorf(key("DefMemPerNode"), "DefMemPerCPU and DefMemPerNode are mutually exclusive, as in slurm.conf: keep one (DefMemPerCPU = %q is per allocated CPU, DefMemPerNode = %q per job)",
			slurmsyntax.FormatSize(c.DefMemPerCPU), slurmsyntax.FormatSize(c.DefMemPerNode))
	}
	if p.isGiven(key("Node", "RealMemory")) && c.Node.RealMemory > 0 && c.DefMemPerNode > c.Node.RealMemory {
		p.errorf(key("DefMemPerNode"), "DefMemPerNode %s is more than the node's RealMemory %s: every job that asks for no memory would wait forever; write at most %q",
			slurmsyntax.FormatSize(c.DefMemPerNode), slurmsyntax.FormatSize(c.Node.RealMemory), slurmsyntax.FormatSize(c.Node.RealMemory))
	}
}

func (p *parser) checkNode(c *Config) {
	n := &c.Node
	if p.isGiven(key("Node", "NodeName")) {
		p.name(key("Node", "NodeName"), "Node.NodeName", n.NodeName)
	}
	if p.isGiven(key("Node", "CPUs")) && n.CPUs < 1 {
		p.errorf(key("Node", "CPUs"), "Node.CPUs %d is below 1; leave CPUs out to use the detected count", n.CPUs)
	}
	if p.isGiven(key("Node", "RealMemory")) && n.RealMemory < slurmsyntax.MiB {
		p.errorf(key("Node", "RealMemory"), "Node.RealMemory must be at least 1M; leave RealMemory out to use the detected size")
	}
	p.enum(key("Node", "GPUs"), "Node.GPUs", &n.GPUs, GPUsNVML, GPUsNone, GPUsSimulated)
	if n.GPUs == GPUsSimulated && len(n.SimulatedGPUs) == 0 {
		p.errorf(key("Node", "GPUs"), `Node.GPUs = "simulated" needs at least one [[Node.SimulatedGPU]] with Type, Memory and Count`)
	}
	seen := map[string]int{}
	for i, g := range n.SimulatedGPUs {
		at := func(k string) keyPath { return elem("Node.SimulatedGPU", i, k) }
		label := fmt.Sprintf("SimulatedGPU %d", i+1)
		if p.name(at("Type"), label+": Type", g.Type) {
			label = fmt.Sprintf("SimulatedGPU %q", g.Type)
			if first, dup := seen[g.Type]; dup {
				p.errorf(at("Type"), "%s is given twice (also SimulatedGPU %d); use one with a larger Count", label, first+1)
			}
			seen[g.Type] = i
		}
		if g.Memory <= 0 {
			p.errorf(at("Memory"), `%s: Memory must be above 0; write the GPU's memory, e.g. Memory = "80G"`, label)
		}
		if g.Count < 1 {
			p.errorf(at("Count"), "%s: Count %d is below 1", label, g.Count)
		}
	}
	models := map[string]string{}
	for _, t := range sortedKeys(n.TypeAliases) {
		at := key("Node", "TypeAliases", t)
		p.name(at, "Node.TypeAliases type", t)
		m := GPUModelName(n.TypeAliases[t])
		if m == "" {
			p.errorf(at, "Node.TypeAliases.%s must name an NVML model such as \"NVIDIA A100-SXM4-80GB\"", t)
			continue
		}
		if other, dup := models[m]; dup {
			p.errorf(at, "Node.TypeAliases: types %q and %q name the same model %q; keep one", other, t, n.TypeAliases[t])
		}
		models[m] = t
	}
}

// Slurm's PriorityFlags (slurm.conf.5).
var priorityFlags = []string{"ACCRUE_ALWAYS", "CALCULATE_RUNNING", "DEPTH_OBLIVIOUS", "NO_FAIR_TREE",
	"INCR_ONLY", "MAX_TRES", "NO_NORMAL_ALL", "NO_NORMAL_ASSOC", "NO_NORMAL_PART", "NO_NORMAL_QOS",
	"NO_NORMAL_TRES", "SMALL_RELATIVE_TO_TIME"}

func (p *parser) checkPriority(c *Config) {
	pr := &c.Priority
	at := func(k string) keyPath { return key("Priority", k) }
	for _, w := range []struct {
		k string
		v int
	}{{"WeightAge", pr.WeightAge}, {"WeightFairshare", pr.WeightFairshare}, {"WeightPartition", pr.WeightPartition},
		{"WeightQOS", pr.WeightQOS}, {"WeightJobSize", pr.WeightJobSize}, {"WeightAssoc", pr.WeightAssoc}} {
		p.inRange(at(w.k), "Priority."+w.k, int64(w.v), 0, math.MaxUint32)
	}
	if pr.DecayHalfLife < 0 {
		p.errorf(at("DecayHalfLife"), "Priority.DecayHalfLife must not be negative")
	}
	if pr.MaxAge < 0 {
		p.errorf(at("MaxAge"), "Priority.MaxAge must not be negative")
	}
	// Slurm's PriorityCalcPeriod is at least a minute (read_config.c);
	// times here are read as Slurm reads them, whole minutes.
	if pr.CalcPeriod < time.Minute {
		p.errorf(at("CalcPeriod"), "Priority.CalcPeriod %s is under Slurm's minimum: set at least \"1\" (a minute)",
			slurmsyntax.FormatClock(pr.CalcPeriod))
	}
	p.enum(at("Recalc"), "Priority.Recalc", &pr.Recalc, RecalcPeriod, RecalcPass)
	p.enum(at("UsageResetPeriod"), "Priority.UsageResetPeriod", &pr.UsageResetPeriod,
		"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")
	if pr.DecayHalfLife == 0 && pr.UsageResetPeriod == "NONE" {
		p.errorf(at("DecayHalfLife"), "Priority.DecayHalfLife 0 (no decay) with UsageResetPeriod NONE lets usage grow forever; set a DecayHalfLife such as \"7-0\" or a UsageResetPeriod")
	}
	for i := range pr.Flags {
		if p.enum(at("Flags").index(i), "Priority.Flags", &pr.Flags[i], priorityFlags...) {
			if why := refusedWhy(unsupportedPriorityFlags, pr.Flags[i]); why != "" {
				p.errorf(at("Flags").index(i), "Priority.Flags %s is not supported: %s; remove it", pr.Flags[i], why)
			}
		}
	}
}

// refusal is a word slurm-lite refuses and why. The lists of them are
// slices, not maps: a slice of constants costs nothing at start, and every
// command that links this package starts (docs/bench.md, "The fast paths").
type refusal struct{ word, why string }

// refusedWhy is why list refuses w, "" when it does not.
func refusedWhy(list []refusal, w string) string {
	for _, r := range list {
		if r.word == w {
			return r.why
		}
	}
	return ""
}

// enforceRefused are AccountingStorageEnforce's words slurm-lite cannot
// obey, with why.
var enforceRefused = []refusal{
	{"nojobs", "slurm-lite always keeps job records (sacct, fair share and budgets count them)"},
	{"nosteps", "slurm-lite always keeps job step records"},
	{"wckeys", "slurm-lite has no WCKeys"},
	{"all", "it includes wckeys, and slurm-lite has no WCKeys"},
}

// checkEnforce checks AccountingStorageEnforce: Slurm's words, lower case,
// with limits (or safe, which sets it), since slurm-lite always enforces
// associations, limits and qos; safe is the one word that changes
// anything. The value is written back in Slurm's order.
func (p *parser) checkEnforce(c *Config) {
	at := key("AccountingStorageEnforce")
	words := map[string]bool{}
	for _, w := range strings.Split(c.AccountingStorageEnforce, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		switch {
		case w == "associations" || w == "limits" || w == "qos" || w == "safe":
			words[w] = true
		case refusedWhy(enforceRefused, w) != "":
			p.errorf(at, "AccountingStorageEnforce %s is not supported: %s; remove it", w, refusedWhy(enforceRefused, w))
			return
		default:
			p.errorf(at, "AccountingStorageEnforce %q is not one of associations, limits, qos, safe; write \"associations,limits,qos\" (the default) or add \",safe\"", w)
			return
		}
	}
	if !words["limits"] && !words["safe"] {
		p.errorf(at, "AccountingStorageEnforce %q leaves out limits, which slurm-lite always enforces (QOS and association limits); write \"associations,limits,qos\", with \",safe\" if jobs must fit what is left of a GrpTRESMins", c.AccountingStorageEnforce)
		return
	}
	c.AccountingStorageEnforce = "associations,limits,qos"
	if words["safe"] {
		c.AccountingStorageEnforce += ",safe"
	}
}

// unsupportedPriorityFlags are Slurm's PriorityFlags that slurm-lite would
// accept and not obey, refused with why: each is obeyed or refused.
var unsupportedPriorityFlags = []refusal{
	{"CALCULATE_RUNNING", "slurm-lite does not recompute the priority of running jobs"},
	{"DEPTH_OBLIVIOUS", "slurm-lite has Fair Tree and the classic formula (NO_FAIR_TREE), not the depth-oblivious one"},
	{"INCR_ONLY", "slurm-lite keeps no earlier priority of a job to hold the new one above"},
}

// unsupportedQOSFlags are sacctmgr's QOS flags that slurm-lite refuses,
// with why; DenyOnLimit and NoDecay are obeyed.
var unsupportedQOSFlags = []refusal{
	{"EnforceUsageThreshold", "slurm-lite has no UsageThreshold for it to enforce"},
	{"NoReserve", "slurm-lite's backfill reserves resources for every blocked job"},
	{"OverPartQOS", "slurm-lite checks the partition's QOS first, then the job's, always"},
	{"PartitionMaxNodes", "on one machine there is no partition node limit to ignore"},
	{"PartitionMinNodes", "on one machine there is no partition node limit to ignore"},
	{"PartitionTimeLimit", "slurm-lite always holds a job to its partition's MaxTime"},
	{"RequiresReservation", "slurm-lite's jobs may not name a reservation"},
	{"UsageFactorSafe", "slurm-lite has no AccountingStorageEnforce safe, whose estimate of a job's TRES-minutes UsageFactorSafe would scale"},
}

// enforcedQOSTRES are the TRES a QOS's MaxTRESPerUser and MaxTRESPerJob may
// limit: those the scheduler counts.
var enforcedQOSTRES = []string{"cpu", "mem", "node", "billing", "gres/gpu"}

// enforcedGrpTRESMins are the TRES an account's GrpTRESMins, GrpTRES,
// GrpTRESRunMins and MaxTRESMinsPerJob may limit: those the scheduler
// counts per account.
var enforcedGrpTRESMins = []string{"cpu", "billing", "gres/gpu"}

// sacctmgr's QOS flags.
var qosFlags = []string{"DenyOnLimit", "EnforceUsageThreshold", "NoDecay", "NoReserve", "OverPartQOS",
	"PartitionMaxNodes", "PartitionMinNodes", "PartitionTimeLimit", "RequiresReservation", "UsageFactorSafe"}

func (p *parser) checkQOS(c *Config) {
	seen := map[string]int{}
	for i := range c.QOS {
		q := &c.QOS[i]
		at := func(k string) keyPath { return elem("QOS", i, k) }
		label := fmt.Sprintf("QOS %d", i+1)
		if p.lowerName(at("Name"), label+": Name", q.Name) {
			label = fmt.Sprintf("QOS %q", q.Name)
			if first, dup := seen[q.Name]; dup {
				p.errorf(at("Name"), "%s is defined twice (first on line %d); rename or remove one", label, p.lines.line(elem("QOS", first, "Name")))
			}
			seen[q.Name] = i
		}
		p.inRange(at("Priority"), label+": Priority", int64(q.Priority), 0, math.MaxUint32)
		p.notNegative(at("MaxJobsPerUser"), label+": MaxJobsPerUser", q.MaxJobsPerUser)
		p.notNegative(at("MaxSubmitJobsPerUser"), label+": MaxSubmitJobsPerUser", q.MaxSubmitJobsPerUser)
		if q.MaxWall < 0 {
			p.errorf(at("MaxWall"), "%s: MaxWall must not be negative", label)
		}
		if q.UsageFactor < 0 {
			p.errorf(at("UsageFactor"), "%s: UsageFactor %g is negative; use 0 (free) or more", label, q.UsageFactor)
		}
		for j := range q.Flags {
			if p.enum(at("Flags").index(j), label+": Flags", &q.Flags[j], qosFlags...) {
				if why := refusedWhy(unsupportedQOSFlags, q.Flags[j]); why != "" {
					p.errorf(at("Flags").index(j), "%s: flag %s is not supported: %s; remove it", label, q.Flags[j], why)
				}
			}
		}
		for _, n := range sortedKeys(q.GrpTRESMins) {
			switch {
			case !slices.Contains(enforcedGrpTRESMins, n):
				p.errorf(at("GrpTRESMins"), "%s: GrpTRESMins limits %s, which slurm-lite does not count; limit %s instead", label, n, strings.Join(enforcedGrpTRESMins, ", "))
			case q.GrpTRESMins[n] < 1:
				p.errorf(at("GrpTRESMins"), "%s: GrpTRESMins %s=%d is below 1; give a positive number of minutes, or leave %s out for no limit", label, n, q.GrpTRESMins[n], n)
			}
		}
		for _, k := range []string{"MaxTRESPerUser", "MaxTRESPerJob"} {
			lim := q.MaxTRESPerUser
			if k == "MaxTRESPerJob" {
				lim = q.MaxTRESPerJob
			}
			for _, n := range sortedKeys(lim) {
				if !slices.Contains(enforcedQOSTRES, n) {
					p.errorf(at(k), "%s: %s limits %s, which slurm-lite does not enforce; limit %s instead", label, k, n, strings.Join(enforcedQOSTRES, ", "))
				}
			}
		}
	}
}

func (p *parser) checkPartitions(c *Config) {
	if len(c.Partitions) == 0 {
		p.errorf(key("Partition"), "no partitions; define at least one [[Partition]]")
		return
	}
	seen := map[string]int{}
	defaults := []int{}
	for i := range c.Partitions {
		pt := &c.Partitions[i]
		at := func(k string) keyPath { return elem("Partition", i, k) }
		label := fmt.Sprintf("Partition %d", i+1)
		if p.name(at("PartitionName"), label+": PartitionName", pt.PartitionName) {
			label = fmt.Sprintf("Partition %q", pt.PartitionName)
			if first, dup := seen[pt.PartitionName]; dup {
				p.errorf(at("PartitionName"), "%s is defined twice (first on line %d); rename or remove one", label, p.lines.line(elem("Partition", first, "PartitionName")))
			}
			seen[pt.PartitionName] = i
		}
		if pt.Default {
			if len(defaults) > 0 {
				first := c.Partitions[defaults[0]].PartitionName
				p.errorf(at("Default"), "%s: Default = true, but partition %q (line %d) is already the default; keep one", label, first, p.lines.line(elem("Partition", defaults[0], "Default")))
			}
			defaults = append(defaults, i)
		}
		if pt.MaxTime <= 0 {
			p.errorf(at("MaxTime"), `%s: MaxTime must be above 0; write a time such as "2-00:00:00" or "UNLIMITED"`, label)
		}
		if pt.DefaultTime < 0 {
			p.errorf(at("DefaultTime"), "%s: DefaultTime must not be negative", label)
		}
		if pt.MaxTime > 0 && pt.DefaultTime > pt.MaxTime {
			p.errorf(at("DefaultTime"), "%s: DefaultTime %s is above MaxTime %s; lower DefaultTime or raise MaxTime",
				label, slurmsyntax.FormatDuration(pt.DefaultTime), slurmsyntax.FormatDuration(pt.MaxTime))
		}
		p.inRange(at("PriorityTier"), label+": PriorityTier", int64(pt.PriorityTier), 0, 65533)
		p.inRange(at("PriorityJobFactor"), label+": PriorityJobFactor", int64(pt.PriorityJobFactor), 0, 65533)
		if m, ok := canonical(pt.PreemptMode, "SUSPEND", "GANG"); ok {
			p.errorf(at("PreemptMode"), "%s: PreemptMode %s is not supported (a GPU's memory cannot be suspended); use \"REQUEUE\" or \"CANCEL\"", label, m)
		} else if p.enum(at("PreemptMode"), label+": PreemptMode", &pt.PreemptMode, PreemptModeOff, PreemptModeRequeue, PreemptModeCancel) &&
			pt.PreemptMode != PreemptModeOff && c.PreemptType == PreemptNone {
			p.errorf(at("PreemptMode"), "%s: PreemptMode %s needs PreemptType = %q, not %q", label, pt.PreemptMode, PreemptPartitionPrio, PreemptNone)
		}
		if pt.GraceTime < 0 {
			p.errorf(at("GraceTime"), "%s: GraceTime must not be negative", label)
		}
		p.enum(at("State"), label+": State", &pt.State, StateUp, StateDown, StateDrain, StateInactive)
		pt.AllowAccounts = p.allowList(at("AllowAccounts"), label+": AllowAccounts", pt.AllowAccounts, func(a string) string {
			return p.accountMissing(c, a)
		})
		pt.AllowGroups = p.allowList(at("AllowGroups"), label+": AllowGroups", pt.AllowGroups, func(g string) string {
			if !validName(g) {
				return fmt.Sprintf("%q is not a valid group name", g)
			}
			return ""
		})
		if pt.QOS != "" && c.QOSByName(pt.QOS) == nil {
			p.errorf(at("QOS"), "%s: QOS %q is not defined; add it as a [[QOS]] or remove QOS%s", label, pt.QOS, didYouMean(pt.QOS, qosNames(c)))
		}
		p.billingWeights(at("TRESBillingWeights"), label+": TRESBillingWeights", pt.TRESBillingWeights)
	}
	if len(defaults) == 0 {
		if len(c.Partitions) > 1 {
			p.errorf(key("Partition"), "no partition has Default = true; set it on the one that jobs without --partition should use")
			return
		}
		// One partition is the default whether marked or not; Slurm would
		// have no default, and every sbatch would need --partition.
		c.Partitions[0].Default = true
	}
}

// allowList checks an Allow* list; ["ALL"] (Slurm's way of saying
// everyone) becomes the empty list.
func (p *parser) allowList(at keyPath, name string, list []string, problem func(string) string) []string {
	if len(list) == 1 && strings.EqualFold(list[0], "ALL") {
		return nil
	}
	for i, s := range list {
		if msg := problem(s); msg != "" {
			p.errorf(at.index(i), "%s: %s", name, msg)
		}
	}
	return list
}

func (p *parser) checkAccounts(c *Config) {
	seen := map[string]int{}
	for i := range c.Accounts {
		a := &c.Accounts[i]
		at := func(k string) keyPath { return elem("Account", i, k) }
		label := fmt.Sprintf("Account %d", i+1)
		if p.lowerName(at("Name"), label+": Name", a.Name) {
			label = fmt.Sprintf("Account %q", a.Name)
			switch first, dup := seen[a.Name]; {
			case a.Name == RootAccount:
				p.errorf(at("Name"), "account %q is built in (the top of the tree); remove this [[Account]]", RootAccount)
			case dup:
				p.errorf(at("Name"), "%s is defined twice (first on line %d); rename or remove one", label, p.lines.line(elem("Account", first, "Name")))
			}
			seen[a.Name] = i
		}
		if a.Parent != RootAccount && a.Parent != a.Name {
			if _, ok := seen[a.Parent]; !ok && !c.hasAccount(a.Parent) {
				p.errorf(at("Parent"), "%s: Parent %q is not an account; use %q or an [[Account]] Name%s", label, a.Parent, RootAccount, didYouMean(a.Parent, accountNames(c)))
			}
		}
		if a.Shares < 1 {
			p.errorf(at("Shares"), "%s: Shares %d is below 1", label, a.Shares)
		}
		p.inRange(at("Priority"), label+": Priority", int64(a.Priority), 0, math.MaxInt32)
		for _, l := range []struct {
			k    string
			t    TRES
			unit string
		}{{"GrpTRESMins", a.GrpTRESMins, "number of minutes"}, {"GrpTRES", a.GrpTRES, "number"},
			{"GrpTRESRunMins", a.GrpTRESRunMins, "number of minutes"}, {"MaxTRESMinsPerJob", a.MaxTRESMinsPerJob, "number of minutes"}} {
			for _, n := range sortedKeys(l.t) {
				switch {
				case !slices.Contains(enforcedGrpTRESMins, n):
					p.errorf(at(l.k), "%s: %s limits %s, which slurm-lite does not count; limit %s instead", label, l.k, n, strings.Join(enforcedGrpTRESMins, ", "))
				case l.t[n] < 1:
					p.errorf(at(l.k), "%s: %s %s=%d is below 1; give a positive %s, or leave %s out for no limit", label, l.k, n, l.t[n], l.unit, n)
				}
			}
		}
		p.notNegative(at("MaxJobs"), label+": MaxJobs", a.MaxJobs)
		users := map[string]bool{}
		for j, u := range a.Users {
			if p.name(at("Users").index(j), label+": Users: user", u) && users[u] {
				p.errorf(at("Users").index(j), "%s: user %q is listed twice", label, u)
			}
			users[u] = true
		}
	}
	// A cycle: following Parent from an account comes back to it.
	parent := map[string]string{}
	for _, a := range c.Accounts {
		parent[a.Name] = a.Parent
	}
	for i, a := range c.Accounts {
		cur := a.Parent
		for steps := 0; steps <= len(c.Accounts) && cur != RootAccount && cur != ""; steps++ {
			if cur == a.Name {
				p.errorf(elem("Account", i, "Parent"), "Account %q: Parent %q makes a cycle (%s); one account in it must have Parent = %q", a.Name, a.Parent, cycle(parent, a.Name), RootAccount)
				break
			}
			next, ok := parent[cur]
			if !ok {
				break
			}
			cur = next
		}
	}
}

// cycle prints the chain of parents from name back to name.
func cycle(parent map[string]string, name string) string {
	chain := []string{name}
	for cur := parent[name]; cur != name && len(chain) <= len(parent); cur = parent[cur] {
		chain = append(chain, cur)
	}
	return strings.Join(append(chain, name), " -> ")
}

func (c *Config) hasAccount(name string) bool {
	return slices.ContainsFunc(c.Accounts, func(a Account) bool { return a.Name == name })
}

// accountMissing says why name cannot be a job's account, or "" if it can.
func (p *parser) accountMissing(c *Config, name string) string {
	if name == RootAccount || c.hasAccount(name) || (name == c.ImplicitAccount() && c.implicitAccountUsed()) {
		return ""
	}
	return fmt.Sprintf("account %q is not defined; add it as an [[Account]]%s", name, didYouMean(name, accountNames(c)))
}

func (p *parser) checkUsers(c *Config) {
	byName := map[string][]int{}
	for i := range c.Users {
		u := &c.Users[i]
		at := func(k string) keyPath { return elem("User", i, k) }
		label := fmt.Sprintf("User %d", i+1)
		if p.name(at("Name"), label+": Name", u.Name) {
			label = fmt.Sprintf("User %q", u.Name)
		}
		if !p.isGiven(at("Account")) {
			p.errorf(at("Name"), "%s: Account is missing; add Account = \"...\" (one [[User]] per account the user may use)", label)
		} else if msg := p.accountMissing(c, u.Account); msg != "" {
			p.errorf(at("Account"), "%s: %s", label, msg)
		}
		for _, j := range byName[u.Name] {
			if c.Users[j].Account == u.Account {
				p.errorf(at("Account"), "%s is in account %q twice (first on line %d); remove one", label, u.Account, p.lines.line(elem("User", j, "Name")))
			}
		}
		byName[u.Name] = append(byName[u.Name], i)
		p.notNegative(at("MaxJobs"), label+": MaxJobs", u.MaxJobs)
		if u.Shares < 1 {
			p.errorf(at("Shares"), "%s: Shares %d is below 1", label, u.Shares)
		}
		p.inRange(at("Priority"), label+": Priority", int64(u.Priority), 0, math.MaxInt32)
		for j, q := range u.QOS {
			if c.QOSByName(q) == nil {
				p.errorf(at("QOS").index(j), "%s: QOS %q is not defined%s", label, q, didYouMean(q, qosNames(c)))
			}
		}
		if p.isGiven(at("AdminLevel")) {
			if strings.EqualFold(u.AdminLevel, "Admin") {
				u.AdminLevel = AdminAdministrator // sacctmgr's short form
			}
			p.enum(at("AdminLevel"), label+": AdminLevel", &u.AdminLevel, AdminNone, AdminOperator, AdminAdministrator)
		}
	}
	// DefaultAccount and AdminLevel belong to the user, not to one of its
	// accounts: entries that give them must agree.
	for _, name := range sortedKeys(byName) {
		idx := byName[name]
		accounts := c.accountsOf(name)
		var def, lvl string
		var defAt, lvlAt keyPath
		for _, i := range idx {
			u := c.Users[i]
			if p.isGiven(elem("User", i, "DefaultAccount")) {
				at := elem("User", i, "DefaultAccount")
				switch {
				case !slices.Contains(accounts, u.DefaultAccount):
					p.errorf(at, "User %q: DefaultAccount %q is not one of the user's accounts (%s)", name, u.DefaultAccount, strings.Join(accounts, ", "))
				case def != "" && def != u.DefaultAccount:
					p.errorf(at, "User %q: DefaultAccount %q contradicts %q on line %d; give it once", name, u.DefaultAccount, def, p.lines.line(defAt))
				default:
					def, defAt = u.DefaultAccount, at
				}
			}
			if p.isGiven(elem("User", i, "AdminLevel")) {
				at := elem("User", i, "AdminLevel")
				if lvl != "" && lvl != u.AdminLevel {
					p.errorf(at, "User %q: AdminLevel %q contradicts %q on line %d; give it once", name, u.AdminLevel, lvl, p.lines.line(lvlAt))
				} else {
					lvl, lvlAt = u.AdminLevel, at
				}
			}
		}
	}
}

func didYouMean(s string, candidates []string) string {
	if m, ok := suggest(s, candidates); ok {
		return fmt.Sprintf("; did you mean %q?", m)
	}
	return ""
}

func qosNames(c *Config) []string {
	var n []string
	for _, q := range c.QOS {
		n = append(n, q.Name)
	}
	return n
}

func accountNames(c *Config) []string {
	n := []string{RootAccount}
	for _, a := range c.Accounts {
		n = append(n, a.Name)
	}
	return n
}

// checkWeb checks the web listener's address and the job mapping
// directory. The address is only parsed here (the commands link this
// package and not net): the daemon's listen says whether it is free.
func (p *parser) checkWeb(c *Config) {
	if c.JobMappingDir != "" && !filepath.IsAbs(c.JobMappingDir) {
		p.errorf(key("JobMappingDir"), "JobMappingDir %q is not an absolute path; write a path that starts with /, such as \"/run/dcgm-job-map\"", c.JobMappingDir)
	}
	for i, h := range c.Web.AllowedHosts {
		if problem := allowedHostProblem(h); problem != "" {
			p.errorf(key("Web", "AllowedHosts").index(i), "Web.AllowedHosts %q %s; write a name or an address as a browser's address bar shows it, such as \"gpubox.lab.example\" or \"192.0.2.7\"", h, problem)
		}
	}
	if c.Web.Listen == "" {
		return
	}
	if problem := listenProblem(c.Web.Listen); problem != "" {
		p.errorf(key("Web", "Listen"), "Web.Listen %q %s; write HOST:PORT, such as \"127.0.0.1:9341\"", c.Web.Listen, problem)
	}
}

// allowedHostProblem says what is wrong with a name of AllowedHosts, ""
// if nothing. A name is compared with requests' Host headers without
// their port, so it has none; an IPv6 address may come with or without
// its brackets.
func allowedHostProblem(h string) string {
	switch {
	case h == "":
		return "is empty"
	case strings.Contains(h, "://"):
		return "is a URL (leave out the scheme)"
	case strings.ContainsAny(h, "/?#@ \t"):
		return "is not a host name (leave out paths, users and spaces)"
	case h == "*" || strings.Contains(h, "*"):
		return "is a pattern: name each host (a wildcard would let any site's page read the dashboard)"
	}
	bare := strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.Count(bare, ":") > 1 {
		return "" // an IPv6 address
	}
	if strings.Contains(h, ":") || strings.ContainsAny(h, "[]") {
		return "has a port (leave it out: every port of the name is allowed)"
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return fmt.Sprintf("has %q, which no host name has", r)
		}
	}
	return ""
}

// listenProblem says what is wrong with a HOST:PORT address, "" if
// nothing.
func listenProblem(addr string) string {
	if strings.Contains(addr, "://") {
		return "is a URL (leave out the scheme)"
	}
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "has no port"
	}
	host, port := addr[:i], addr[i+1:]
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || port[0] == '+' {
		return "has no port number from 0 to 65535"
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") || len(host) < 3 {
			return "has an IPv6 host without its closing ]"
		}
		return ""
	}
	if strings.ContainsAny(host, ":[]/ ") {
		return "has a host that is neither a name nor an address (an IPv6 address goes in brackets: \"[::1]:9341\")"
	}
	return ""
}

// checkMpiParams checks MpiParams: "ports=LO-HI", a range of two ports
// or more within 1-65535, as slurmctld takes it (it logs "invalid
// MpiParams" for anything else, ports=12000 included, and then refuses
// every step: golden/resv_ports_one_port.txt).
func (p *parser) checkMpiParams(c *Config) {
	if c.MpiParams == "" {
		return
	}
	if _, _, err := parseMpiPorts(c.MpiParams); err != nil {
		p.errorf(key("MpiParams"), "MpiParams %q: %v; write a range of ports for jobs, e.g. MpiParams = \"ports=12000-12999\", or leave MpiParams out", c.MpiParams, err)
	}
}

// Ports is MpiParams' range of ports: lo and hi, both 0 when it sets
// none (MpiParams is checked when the file is read).
func (c *Config) Ports() (lo, hi int) {
	lo, hi, err := parseMpiPorts(c.MpiParams)
	if err != nil {
		return 0, 0
	}
	return lo, hi
}

func parseMpiPorts(s string) (lo, hi int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	rest, ok := strings.CutPrefix(s, "ports=")
	if !ok {
		return 0, 0, errors.New(`only "ports=LO-HI" is known`)
	}
	a, b, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, 0, errors.New("ports must be a range LO-HI, as Slurm takes it (a single port is refused there too)")
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, errors.New("ports must be two numbers, LO-HI")
	case lo < 1 || hi > 65535 || lo >= hi:
		return 0, 0, fmt.Errorf("ports %d-%d is not a range of two or more ports within 1-65535", lo, hi)
	}
	return lo, hi, nil
}

// checkAuthAlt checks AuthAltTypes and AuthAltParameters: auth/jwt alone,
// jwt_key alone, and a listener to serve the API on.
func (p *parser) checkAuthAlt(c *Config) {
	for i, v := range c.AuthAltTypes {
		if v != AuthJWT {
			p.errorf(key("AuthAltTypes").index(i), "AuthAltTypes %q is not supported: slurm-lite has only %q; remove it", v, AuthJWT)
		}
	}
	if c.AuthAltParameters != "" {
		path, ok := strings.CutPrefix(c.AuthAltParameters, "jwt_key=")
		switch {
		case !ok || strings.Contains(path, ","):
			p.errorf(key("AuthAltParameters"), "AuthAltParameters %q is not supported: slurm-lite takes only \"jwt_key=PATH\" (no jwks); write e.g. \"jwt_key=/var/spool/slurm-lite/jwt_hs256.key\"", c.AuthAltParameters)
		case !filepath.IsAbs(path):
			p.errorf(key("AuthAltParameters"), "AuthAltParameters jwt_key %q is not an absolute path; write a path that starts with /", path)
		case !c.JWT():
			p.errorf(key("AuthAltParameters"), "AuthAltParameters is set but AuthAltTypes does not list %q, so no token would be read; add AuthAltTypes = [%q] or remove it", AuthJWT, AuthJWT)
		}
	}
	if c.JWT() && c.Web.Listen == "" {
		p.errorf(key("AuthAltTypes"), "AuthAltTypes = [%q] serves slurmrestd's API on the web listener, which is off; set [Web] Listen = \"127.0.0.1:6820\" (and put TLS in front of it to leave the machine)", AuthJWT)
	}
}
