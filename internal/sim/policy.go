package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
)

// Policy is one scheduling policy to compare. Each is a configuration of
// the one scheduling core, nothing else: the plugins and flags of
// sched.Config, a preemptible filler partition, and whether multi-GPU jobs
// are yieldable with Config.Shrink on.
type Policy struct {
	Name        string
	Description string
	Priority    sched.PriorityType
	Scheduler   sched.SchedulerType
	NoFairTree  bool
	// Fillers keeps a preemptible partition of lower PriorityTier full of
	// 1-GPU work (PreemptMode=REQUEUE, QOS UsageFactor=0).
	Fillers bool
	// Yield marks every multi-GPU job yieldable and turns Config.Shrink on,
	// so a blocked job may shrink a running one.
	Yield bool
	// ShrinkTries and ShrinkPayback are the core's shrink settings
	// (sched.Config).
	ShrinkTries   int
	ShrinkPayback bool
	// YieldPayback and YieldOwn are the core's yield settings
	// (sched.Config); YieldCost is then the assumptions' stop, restart
	// and checkpoint interval together.
	YieldPayback bool
	YieldOwn     bool
	// ShrinkRegrow is the core's setting that gives shrunk jobs their
	// GPUs back (sched.Config).
	ShrinkRegrow bool
	// ShortRoute, when not 0, sends every job whose time limit is at most
	// this long to a partition of higher PriorityTier (shortPartition), as
	// a lab's submit filter or its users' `-p short` would: its jobs are
	// considered before all others and may yield yieldable jobs of the
	// main partition under YieldPayback.
	ShortRoute time.Duration
}

// Policies are the policies of `--policy all`, in order.
var Policies = []Policy{
	{Name: "P0", Description: "FIFO: priority/basic + sched/builtin", Priority: sched.PriorityBasic, Scheduler: sched.SchedBuiltin},
	{Name: "P1", Description: "FIFO + backfill: priority/basic + sched/backfill", Priority: sched.PriorityBasic, Scheduler: sched.SchedBackfill},
	{Name: "P2", Description: "multifactor (Fair Tree) + backfill, the default", Priority: sched.PriorityMultifactor, Scheduler: sched.SchedBackfill},
	{Name: "P2-classic", Description: "P2 with PriorityFlags=NO_FAIR_TREE", Priority: sched.PriorityMultifactor, Scheduler: sched.SchedBackfill, NoFairTree: true},
	{Name: "P3", Description: "P2 + a preemptible filler partition kept full of 1-GPU work", Priority: sched.PriorityMultifactor, Scheduler: sched.SchedBackfill, Fillers: true},
	{Name: "P4", Description: "P3 + yield + short route: limits <= 1h go to a PriorityTier 2 partition; blocked jobs shrink or stop running multi-GPU jobs when it pays back", Priority: sched.PriorityMultifactor, Scheduler: sched.SchedBackfill, Fillers: true, Yield: true,
		ShrinkTries: 500, ShrinkPayback: true, ShrinkRegrow: true, YieldPayback: true, YieldOwn: true, ShortRoute: time.Hour},
}

// PolicyNames lists the names --policy takes.
func PolicyNames() []string {
	names := make([]string, 0, len(Policies)+1)
	for _, p := range Policies {
		names = append(names, p.Name)
	}
	return append(names, "all")
}

// LookupPolicies resolves --policy: one name (any case), a comma-separated
// list, or "all".
func LookupPolicies(spec string) ([]Policy, error) {
	if strings.EqualFold(spec, "all") {
		return Policies, nil
	}
	var out []Policy
	for _, name := range strings.Split(spec, ",") {
		i := slices.IndexFunc(Policies, func(p Policy) bool { return strings.EqualFold(p.Name, strings.TrimSpace(name)) })
		if i < 0 {
			return nil, fmt.Errorf("unknown policy %q: use one of %s", name, strings.Join(PolicyNames(), ", "))
		}
		out = append(out, Policies[i])
	}
	return out, nil
}

// Assumptions are the modelling choices of preemption and yield.
type Assumptions struct {
	// Checkpoint is how often a job saves its state: work since its last
	// checkpoint is lost when it is stopped.
	Checkpoint time.Duration
	// Stop is how long a stopped job holds its GPUs before they are free.
	Stop time.Duration
	// Restart is how long a resumed job runs before it makes progress.
	Restart time.Duration
	// FillerLimit is the time limit of each filler job (they run to it).
	FillerLimit time.Duration
}

// MinRun is P4's [Yield] MinRun under these assumptions: a job resumed
// after a yield has saved a checkpoint once it has run this long (its
// restart, then a checkpoint interval of progress).
func MinRun(as Assumptions) time.Duration { return as.Restart + as.Checkpoint }

// DefaultAssumptions are the issue's: checkpoints every 10 minutes, 60 s to
// stop and 60 s to restart; fillers of 30 minutes.
func DefaultAssumptions() Assumptions {
	return Assumptions{Checkpoint: 10 * time.Minute, Stop: time.Minute, Restart: time.Minute, FillerLimit: 30 * time.Minute}
}

// Lab is the simulated machines.
type Lab struct {
	Nodes       int
	GPUsPerNode int
	// GPUMem is each GPU's memory in bytes.
	GPUMem int64
	// CPUsPerNode and MemPerNode are generous: the traces say nothing of
	// CPUs or host memory, so only GPUs constrain.
	CPUsPerNode int
}

// Names of the simulated partitions, QOS and filler association.
const (
	primaryPartition = "gpu"
	shortPartition   = "short"
	fillerPartition  = "filler"
	fillerQOS        = "filler"
	fillerAccount    = "filler"
)

// Setup is what every policy shares: the base configuration (Slurm's
// defaults, or the priority settings of a slurm-lite config file) and the
// accounts.
type Setup struct {
	Config sched.Config
	// CalcPeriod is Priority.CalcPeriod: fair share and pending jobs'
	// priorities are recomputed every CalcPeriod of trace time from the
	// first submission, as the daemon does from its start (Priority.Recalc
	// "period"); 0 recomputes them at every pass (Recalc "pass").
	CalcPeriod time.Duration
	// Shares of accounts by name; accounts of the trace not listed get 1.
	Shares map[string]int
	// Budgets are accounts' GrpTRESMins by name (gres/gpu and cpu: the
	// trace's jobs carry no billing), checked as the daemon checks them
	// against usage counted from the runs since the last
	// UsageResetPeriod reset (sched.AccountTRESUsage).
	Budgets          map[string]sched.TRESMins
	UsageResetPeriod string
}

// DefaultSetup is slurm-lite's defaults with equal shares.
func DefaultSetup() Setup {
	return Setup{Config: sched.DefaultConfig(), CalcPeriod: config.Default().Priority.CalcPeriod}
}

// SetupFromConfig takes the priority weights, decay, age, PriorityFlags,
// backfill parameters, account shares and budgets (GrpTRESMins, with
// UsageResetPeriod and AccountingStorageEnforce safe) of a slurm-lite configuration
// file; the policies then set the plugins and flags they compare.
func SetupFromConfig(c *config.Config) (Setup, error) {
	s := DefaultSetup()
	p := c.Priority
	s.Config.Weights = sched.Weights{
		Age: uint32(max(p.WeightAge, 0)), FairShare: uint32(max(p.WeightFairshare, 0)),
		JobSize: uint32(max(p.WeightJobSize, 0)), Partition: uint32(max(p.WeightPartition, 0)),
		QOS: uint32(max(p.WeightQOS, 0)), Assoc: uint32(max(p.WeightAssoc, 0)),
	}
	for _, n := range p.WeightTRES.Names() {
		s.Config.Weights.TRES = append(s.Config.Weights.TRES, sched.TRESWeight{Name: n, Weight: p.WeightTRES[n]})
	}
	s.Config.ShardSize = int64(c.ShardSize)
	s.Config.MaxAge = p.MaxAge
	s.Config.DecayHalfLife = p.DecayHalfLife
	s.CalcPeriod = p.CalcPeriod
	if p.Recalc == config.RecalcPass {
		s.CalcPeriod = 0
	}
	s.Config.FavorSmall = p.FavorSmall
	flags, err := sched.ParsePriorityFlags(p.Flags)
	if err != nil {
		return s, err
	}
	s.Config.Flags = flags
	sp := c.SchedulerParameters
	s.Config.Backfill = sched.Backfill{Window: sp.BFWindow, MaxJobTest: sp.BFMaxJobTest, Resolution: sp.BFResolution}
	s.Config.SafeLimits = c.SafeLimits()
	s.UsageResetPeriod = c.Priority.UsageResetPeriod
	for _, q := range c.QOS {
		if len(q.GrpTRESMins) > 0 {
			// The replay's jobs all run under one QOS of its own.
			return s, fmt.Errorf("QOS %s has a GrpTRESMins budget, which the simulator does not replay (its jobs run under a QOS of its own); put the budget on the accounts ([[Account]] GrpTRESMins)", q.Name)
		}
	}
	for _, a := range c.Accounts {
		if len(a.GrpTRESMins) == 0 {
			continue
		}
		if _, ok := a.GrpTRESMins["billing"]; ok {
			return s, fmt.Errorf("account %s: a GrpTRESMins of billing, which the simulator does not replay (a trace's jobs carry no TRESBillingWeights); give it in gres/gpu or cpu", a.Name)
		}
		if s.Budgets == nil {
			s.Budgets = map[string]sched.TRESMins{}
		}
		s.Budgets[a.Name] = sched.TRESMins{GPU: a.GrpTRESMins["gres/gpu"], CPU: a.GrpTRESMins["cpu"]}
	}
	for _, a := range c.Accounts {
		if s.Shares == nil {
			s.Shares = map[string]int{}
		}
		s.Shares[a.Name] = max(1, a.Shares)
	}
	return s, nil
}

// world is the static part of every snapshot of one run.
type world struct {
	cfg        sched.Config
	nodes      []sched.Node
	partitions []sched.Partition
	qos        []sched.QOS
	accounts   []sched.Account
}

func buildWorld(lab Lab, setup Setup, pol Policy, tr *Trace, as Assumptions) world {
	w := world{cfg: setup.Config}
	w.cfg.PriorityType = pol.Priority
	w.cfg.SchedulerType = pol.Scheduler
	if pol.NoFairTree {
		w.cfg.Flags |= sched.FlagNoFairTree
	} else {
		w.cfg.Flags &^= sched.FlagNoFairTree
	}
	w.cfg.Shrink = pol.Yield
	w.cfg.ShrinkTries, w.cfg.ShrinkPayback = pol.ShrinkTries, pol.ShrinkPayback
	w.cfg.YieldPayback, w.cfg.YieldOwn = pol.Yield && pol.YieldPayback, pol.Yield && pol.YieldOwn
	w.cfg.ShrinkRegrow = pol.Yield && pol.ShrinkRegrow
	if w.cfg.YieldPayback || w.cfg.ShrinkRegrow {
		w.cfg.YieldCost = as.Stop + as.Restart + as.Checkpoint
	}
	if pol.Yield {
		// A resumed job reaches its first checkpoint a restart and a
		// checkpoint interval after its start: until then no stop of
		// the scheduler's own may reach it again, or it would make no
		// progress (the thrash of issue 24).
		w.cfg.YieldMinRun = MinRun(as)
	}
	// Every job of the trace is a record the core keeps while it lives; the
	// trace decides how many there are, not MaxJobCount.
	w.cfg.MaxJobCount = len(tr.Jobs) + lab.Nodes*lab.GPUsPerNode + 1000
	cpus := max(lab.CPUsPerNode, 4*lab.GPUsPerNode, 8)
	for n := range lab.Nodes {
		node := sched.Node{Name: fmt.Sprintf("node%02d", n+1), CPUs: cpus, Mem: 1 << 50}
		for g := range lab.GPUsPerNode {
			node.GPUs = append(node.GPUs, sched.GPU{
				UUID: fmt.Sprintf("GPU-%d-%d", n+1, g), Index: g, Type: "gpu",
				TotalMem: lab.GPUMem, FreeMem: lab.GPUMem,
			})
		}
		w.nodes = append(w.nodes, node)
	}
	w.partitions = []sched.Partition{{Name: primaryPartition, Default: true, PriorityTier: 1, PriorityJobFactor: 1, MaxTime: sched.Unlimited, PreemptMode: sched.PreemptOff}}
	if pol.ShortRoute > 0 {
		// No MaxTime: jobs are routed by the limit they were submitted
		// with; a shrunk one's stretched limit must not strand it.
		w.partitions = append(w.partitions, sched.Partition{Name: shortPartition, PriorityTier: 2, PriorityJobFactor: 1, MaxTime: sched.Unlimited, PreemptMode: sched.PreemptOff})
	}
	w.qos = []sched.QOS{{Name: "normal", UsageFactor: 1}}
	if pol.Fillers {
		w.partitions = append(w.partitions, sched.Partition{Name: fillerPartition, PriorityTier: 0, PriorityJobFactor: 1, MaxTime: sched.Unlimited, PreemptMode: sched.PreemptRequeue})
		w.qos = append(w.qos, sched.QOS{Name: fillerQOS, UsageFactor: 0})
	}
	users := map[string][]string{}
	var accts []string
	for _, j := range tr.Jobs {
		if _, ok := users[j.Account]; !ok {
			accts = append(accts, j.Account)
		}
		if !slices.Contains(users[j.Account], j.User) {
			users[j.Account] = append(users[j.Account], j.User)
		}
	}
	slices.Sort(accts)
	for _, a := range accts {
		acct := sched.Account{Name: a, Parent: "root", Shares: 1}
		if s, ok := setup.Shares[a]; ok {
			acct.Shares = s
		}
		acct.GrpTRESMins = setup.Budgets[a]
		us := slices.Sorted(slices.Values(users[a]))
		for _, u := range us {
			acct.Users = append(acct.Users, sched.UserShare{Name: u, Shares: 1})
		}
		w.accounts = append(w.accounts, acct)
	}
	if pol.Fillers {
		w.accounts = append(w.accounts, sched.Account{Name: fillerAccount, Parent: "root", Shares: 1,
			Users: []sched.UserShare{{Name: fillerAccount, Shares: 1}}})
	}
	return w
}
