package daemon

import (
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// This file maps the configuration, the GPU inventory and the stored jobs
// onto the scheduling core's own types. The core imports none of them, so
// this is the one place where their vocabularies meet.

// schedConfig is the core's configuration from the file's.
func schedConfig(c *config.Config) sched.Config {
	sc := sched.DefaultConfig()
	sc.PriorityType = sched.PriorityType(c.PriorityType)
	sc.SchedulerType = sched.SchedulerType(c.SchedulerType)
	p := c.Priority
	sc.Weights = sched.Weights{
		Age:       uint32(max(p.WeightAge, 0)),
		FairShare: uint32(max(p.WeightFairshare, 0)),
		JobSize:   uint32(max(p.WeightJobSize, 0)),
		Partition: uint32(max(p.WeightPartition, 0)),
		QOS:       uint32(max(p.WeightQOS, 0)),
		Assoc:     uint32(max(p.WeightAssoc, 0)),
		TRES:      schedTRESWeights(p.WeightTRES),
	}
	sc.ShardSize = int64(c.ShardSize)
	// Slurm's tree always holds root/root, which `sacctmgr add cluster`
	// makes (and the exported sacctmgr.sh leaves in place).
	sc.RootAssoc = true
	sc.MaxAge = p.MaxAge
	sc.DecayHalfLife = p.DecayHalfLife
	sc.FavorSmall = p.FavorSmall
	if flags, err := sched.ParsePriorityFlags(p.Flags); err == nil {
		sc.Flags = flags
	}
	sp := c.SchedulerParameters
	sc.Backfill = sched.Backfill{Window: sp.BFWindow, MaxJobTest: sp.BFMaxJobTest, Resolution: sp.BFResolution}
	sc.MaxJobCount = c.MaxJobCount
	sc.MaxJobCountPerUser = c.MaxJobCountPerUser.Of(c.MaxJobCount)
	sc.MaxArraySize = c.MaxArraySize
	sc.AllowUnlistedUsers = c.AllowUnlistedUsers
	sc.EnforcePartLimits = c.PartLimitsEnforced()
	sc.SafeLimits = c.SafeLimits()
	sc.DefaultAccount = implicitAccount(c)
	y := c.Yield
	sc.Shrink, sc.ShrinkTries, sc.ShrinkPayback, sc.ShrinkRegrow = y.Shrink, y.ShrinkTries, y.ShrinkPayback, y.ShrinkRegrow
	sc.YieldPayback, sc.YieldOwn, sc.YieldCost, sc.YieldMinRun = y.Payback, y.Own, y.Cost, y.MinRun
	return sc
}

// schedTRESWeights is PriorityWeightTRES in the core's terms: in Slurm's
// TRES order (config's), the order sprio lists the factors in.
func schedTRESWeights(w config.TRESWeights) []sched.TRESWeight {
	var out []sched.TRESWeight
	for _, n := range w.Names() {
		out = append(out, sched.TRESWeight{Name: n, Weight: w[n]})
	}
	return out
}

// routedPartition is the partition of a job that names none: the first
// [[Route]] whose MaxTime its time limit (0: none given) is within, else
// the default partition. A job without a limit gets its partition's
// DefaultTime, which a route cannot know, so it is routed only by a limit
// it gave.
func routedPartition(c *config.Config, limit time.Duration) string {
	if limit > 0 {
		for _, r := range c.Routes {
			if limit <= r.MaxTime {
				return r.Partition
			}
		}
	}
	if p := c.DefaultPartition(); p != nil {
		return p.PartitionName
	}
	return ""
}

// implicitAccount is where users go that no account lists: the account
// named after the cluster (see config's glossary).
func implicitAccount(c *config.Config) string { return c.ClusterName }

func schedPartitions(c *config.Config) []sched.Partition {
	out := make([]sched.Partition, 0, len(c.Partitions))
	for _, p := range c.Partitions {
		sp := sched.Partition{
			Name:              p.PartitionName,
			Default:           p.Default,
			PriorityTier:      p.PriorityTier,
			PriorityJobFactor: p.PriorityJobFactor,
			MaxTime:           p.MaxTime,
			DefaultTime:       p.DefaultTime,
			PreemptMode:       sched.PreemptMode(p.PreemptMode),
			// DRAIN refuses new jobs but runs those queued (slurm.conf's
			// State); INACTIVE does neither.
			Down:          p.State == config.StateDown || p.State == config.StateInactive,
			Closed:        p.State == config.StateDrain || p.State == config.StateInactive,
			AllowAccounts: p.AllowAccounts,
			QOS:           p.QOS,
		}
		if w := p.TRESBillingWeights; len(w) > 0 {
			sp.Billing = &sched.TRESWeights{CPU: w["cpu"], MemGiB: w["mem"] * 1024, GPU: w["gres/gpu"]}
		}
		out = append(out, sp)
	}
	return out
}

func schedQOS(c *config.Config) []sched.QOS {
	out := make([]sched.QOS, 0, len(c.QOS))
	for _, q := range c.QOS {
		out = append(out, sched.QOS{
			Name:                 q.Name,
			Priority:             q.Priority,
			UsageFactor:          q.UsageFactor,
			MaxGPUsPerUser:       int(q.MaxTRESPerUser["gres/gpu"]),
			PerUser:              tresLimits(q.MaxTRESPerUser),
			PerJob:               tresLimits(q.MaxTRESPerJob),
			MaxWall:              q.MaxWall,
			MaxJobsPerUser:       q.MaxJobsPerUser,
			MaxSubmitJobsPerUser: q.MaxSubmitJobsPerUser,
			DenyOnLimit:          q.HasFlag("DenyOnLimit"),
			GrpTRESMins:          grpTRESMins(q.GrpTRESMins),
			NoDecay:              q.HasFlag("NoDecay"),
		})
	}
	return out
}

// tresLimits are a QOS's TRES limits in the core's terms (config refuses
// the TRES it does not enforce).
func tresLimits(t config.TRES) sched.TRESLimits {
	return sched.TRESLimits{CPUs: int(t["cpu"]), Mem: t["mem"] * int64(slurmsyntax.MiB), Nodes: int(t["node"]),
		Billing: int(t["billing"]), GPUs: int(t["gres/gpu"])}
}

// grpTRESMins is an account's TRES limit (GrpTRESMins, GrpTRES, ...) in
// the core's terms (config refuses the TRES it does not count).
func grpTRESMins(t config.TRES) sched.TRESMins {
	return sched.TRESMins{GPU: t["gres/gpu"], CPU: t["cpu"], Billing: t["billing"]}
}

func schedAccounts(c *config.Config) []sched.Account {
	if len(c.Accounts) == 0 {
		return nil // every user shares the default account equally
	}
	users := map[string][]sched.UserShare{}
	for _, u := range c.Users {
		users[u.Account] = append(users[u.Account], sched.UserShare{
			Name: u.Name, Shares: u.Shares, Priority: u.Priority, Default: u.DefaultAccount == u.Account, MaxJobs: u.MaxJobs,
		})
	}
	// Slurm creates root's own association in the root account with the
	// cluster (1 share); a [[User]] Name="root" Account="root" sets its
	// shares. It sits beside the top accounts in the tree.
	rootUsers := users[config.RootAccount]
	if !slices.ContainsFunc(rootUsers, func(u sched.UserShare) bool { return u.Name == "root" }) {
		rootUsers = append(rootUsers, sched.UserShare{Name: "root", Shares: 1})
	}
	out := []sched.Account{{Name: config.RootAccount, Users: rootUsers}}
	for _, a := range c.AccountTree() {
		if a.Name == config.RootAccount {
			continue
		}
		out = append(out, sched.Account{Name: a.Name, Parent: a.Parent, Shares: a.Shares, Priority: a.Priority, Users: users[a.Name],
			GrpTRESMins: grpTRESMins(a.GrpTRESMins), GrpTRES: grpTRESMins(a.GrpTRES), GrpTRESRunMins: grpTRESMins(a.GrpTRESRunMins),
			MaxTRESMinsPerJob: grpTRESMins(a.MaxTRESMinsPerJob), MaxJobs: a.MaxJobs})
	}
	return out
}

// schedNode is the machine as the core sees it: the configured CPUs and
// memory, and the GPUs of the latest sample that are still on the bus.
func schedNode(c *config.Config, gs gpu.Snapshot, drained bool) sched.Node {
	n := sched.Node{
		Name:    c.Node.NodeName,
		CPUs:    c.Node.CPUs,
		Mem:     int64(c.Node.RealMemory),
		Drained: drained || gs.NodeDrain != "",
	}
	for _, g := range gs.GPUs {
		if g.Index < 0 {
			continue
		}
		// The core matches a requested type as a substring; offering both
		// the configured short type and Slurm's autodetected name lets
		// --gres=gpu:a100:1 and --gres=gpu:nvidia_a100-sxm4-80gb:1 both
		// match, as they do on real Slurm.
		typ := g.Type
		if g.AutoType != "" && g.AutoType != g.Type {
			typ = g.AutoType + " " + g.Type
		}
		n.GPUs = append(n.GPUs, sched.GPU{
			UUID:        g.UUID,
			Index:       g.Index,
			Type:        typ,
			TotalMem:    int64(g.MemoryTotal),
			FreeMem:     int64(g.MemoryFree),
			ForeignMem:  int64(g.Foreign),
			NVLinkPeers: g.Peers,
			Drained:     !g.Offered() && g.State != gpu.Taken,
		})
	}
	return n
}

// schedRequest is what a job asks of one node, in the core's terms: its
// GPUs as every GPU option adds up on this node (jobscript's NodeGPUs),
// shards as GPU memory.
func schedRequest(r *jobscript.Request, shard slurmsyntax.Bytes) sched.Request {
	need := r.NodeGPUs()
	req := sched.Request{GPUs: need.GPUs, GPUType: need.Type, GPUMem: int64(need.Shards) * int64(shard)}
	if r.GPUMem > 0 {
		req.GPUMem = int64(r.GPUMem)
	}
	tasks := max(r.NTasks, 1)
	req.CPUs = tasks * max(r.CPUsPerTask, 1)
	req.Tasks = tasks
	if r.ResvPorts != nil {
		req.Ports, req.PortsAsked = *r.ResvPorts, true
	}
	if r.CPUsPerGPU > 0 && req.GPUs > 0 {
		req.CPUs = max(req.CPUs, r.CPUsPerGPU*req.GPUs)
	}
	const mib = int64(slurmsyntax.MiB)
	switch {
	case r.MemPerNode != nil:
		req.Mem = int64(*r.MemPerNode) * mib
	case r.MemPerCPU != nil:
		req.Mem = int64(*r.MemPerCPU) * mib * int64(req.CPUs)
	case r.MemPerGPU != nil:
		req.Mem = int64(*r.MemPerGPU) * mib * int64(max(req.GPUs, 1))
	}
	return req
}

// exclusive is --exclusive on a one-node cluster: the whole machine, as
// real Slurm gives it (every CPU and GPU), and the memory the job asks for
// over all of them: --mem-per-cpu (or DefMemPerCPU, which the job got at
// submission) times every CPU, --mem-per-gpu times every GPU, --mem (or
// DefMemPerNode) as given; all of it for --mem=0, or when it asks for none
// (Slurm's DefMemPerNode=UNLIMITED): golden/scontrol_show_job_exclusive_*.
// A product over all the CPUs or GPUs is held to the node's memory: the
// job has the node to itself.
func exclusive(req sched.Request, n sched.Node, r *jobscript.Request) sched.Request {
	req.CPUs = n.CPUs
	req.GPUs = len(n.GPUs)
	req.GPUType = ""
	req.GPUMem = 0
	const mib = int64(slurmsyntax.MiB)
	switch {
	case r.MemPerCPU != nil:
		req.Mem = min(int64(*r.MemPerCPU)*mib*int64(n.CPUs), n.Mem)
	case r.MemPerNode != nil && *r.MemPerNode > 0:
		req.Mem = int64(*r.MemPerNode) * mib
	case r.MemPerGPU != nil && len(n.GPUs) > 0:
		req.Mem = min(int64(*r.MemPerGPU)*mib*int64(len(n.GPUs)), n.Mem)
	default:
		req.Mem = n.Mem
	}
	return req
}

// schedDeps is a job's dependency in the core's terms.
func schedDeps(r *jobscript.Request) sched.Dependency {
	if r.Dependency == nil {
		return sched.Dependency{}
	}
	d := sched.Dependency{Any: r.Dependency.Parsed.Any}
	for _, t := range r.Dependency.Parsed.Terms {
		if t.Type == slurmsyntax.DepSingleton {
			d.Items = append(d.Items, sched.DepItem{Type: sched.DepSingleton})
			continue
		}
		for _, ref := range t.Jobs {
			task := ref.Task
			if task < 0 {
				task = -1
			}
			d.Items = append(d.Items, sched.DepItem{Type: sched.DepType(t.Type), JobID: ref.JobID, Task: task, Delay: t.Delay})
		}
	}
	return d
}

// schedJob is a stored job in the core's terms. id overrides the job id
// for an array task not yet split from its pending record.
func schedJob(j *store.Job, id uint32, task int, shard slurmsyntax.Bytes, node sched.Node) sched.Job {
	r := &j.Request
	sj := sched.Job{
		ID:            id,
		ArrayJobID:    j.ArrayJobID,
		ArrayTaskID:   task,
		ArrayLimit:    j.ArrayLimit,
		Name:          j.Name,
		User:          j.User,
		Account:       j.Account,
		Partition:     j.Partition,
		QOS:           j.QOS,
		Reservation:   r.Reservation,
		State:         j.State,
		ExitCode:      j.ExitCode.Status,
		Submit:        j.Submit,
		Eligible:      j.Eligible,
		Begin:         r.Begin,
		Start:         j.Start,
		TimeLimit:     j.TimeLimit,
		Hold:          schedHold(j.Hold),
		Nice:          j.Nice,
		Deps:          schedDeps(r),
		Req:           schedRequest(r, shard),
		Yieldable:     r.Yieldable,
		YieldedFor:    j.YieldedFor,
		FullGPUs:      j.FullGPUs,
		FixedPriority: j.Priority,
	}
	// Pending, a yielded job goes first in its tier; running again, the
	// scheduler's own stops spare it its minimum run.
	sj.Resumed = j.YieldedBy != nil
	sj.CheckpointInterval = r.CheckpointInterval.Duration()
	if r.Sharing == jobscript.Exclusive {
		sj.Req = exclusive(sj.Req, node, r)
	}
	if j.ExitCode.Signal != 0 && sj.ExitCode == 0 {
		sj.ExitCode = 128 + j.ExitCode.Signal
	}
	if j.State == "RUNNING" || j.State == "COMPLETING" {
		sj.Alloc = schedAlloc(j.Alloc)
	}
	return sj
}

func schedAlloc(a store.Alloc) sched.Alloc {
	out := sched.Alloc{Node: a.Node, CPUs: a.CPUs, Mem: a.Mem, Ports: a.Ports}
	for _, g := range a.GPUs {
		out.GPUs = append(out.GPUs, sched.GPUAlloc{UUID: g.UUID, Index: g.Index, Mem: g.Mem})
	}
	return out
}

// withUsed fills in what a running job's processes hold on each of its
// GPUs, as the inventory last sampled it (NVML: the job's processes;
// simulated: what the job declared). The core subtracts only the reserved
// memory not yet touched from the driver's free memory, which already
// counts what the job's processes hold: without Used, a 20G job that holds
// its 20G was counted twice, and one 80G GPU took two 20G jobs, not four.
func withUsed(a sched.Alloc, use gpu.JobSample) sched.Alloc {
	for i := range a.GPUs {
		a.GPUs[i].Used = int64(use.Memory[a.GPUs[i].UUID])
	}
	return a
}

func storeAlloc(a sched.Alloc) store.Alloc {
	out := store.Alloc{Node: a.Node, CPUs: a.CPUs, Mem: a.Mem, Ports: a.Ports}
	for _, g := range a.GPUs {
		out.GPUs = append(out.GPUs, store.GPUAlloc{UUID: g.UUID, Index: g.Index, Mem: g.Mem})
	}
	return out
}

func schedUsage(us []store.Usage) []sched.Usage {
	out := make([]sched.Usage, 0, len(us))
	for _, u := range us {
		out = append(out, sched.Usage{Account: u.Account, User: u.User, Raw: u.Raw, AsOf: u.AsOf})
	}
	return out
}

func storeUsage(us []sched.Usage) []store.Usage {
	out := make([]store.Usage, 0, len(us))
	for _, u := range us {
		out = append(out, store.Usage{Account: u.Account, User: u.User, Raw: u.Raw, AsOf: u.AsOf})
	}
	return out
}

// effectiveLimit is the time limit in force for a job: its own, else its
// partition's DefaultTime, else MaxTime, at most the MaxWall of its
// partition's QOS and of its own (as the core resolves it).
func effectiveLimit(c *config.Config, j *store.Job) time.Duration {
	if j.TimeLimit != 0 {
		return j.TimeLimit
	}
	limit := slurmsyntax.Infinite
	var qos []string
	for _, p := range c.Partitions {
		if p.PartitionName == j.Partition {
			limit = p.DefaultLimit()
			qos = append(qos, p.QOS)
		}
	}
	for _, name := range append(qos, j.QOS) {
		if q := c.QOSByName(name); q != nil && q.MaxWall > 0 && (limit <= 0 || limit > q.MaxWall) {
			limit = q.MaxWall
		}
	}
	return limit
}

// schedHold is the scheduler's view of a hold: the daemon's own holds keep
// a job waiting as its owner's hold does.
func schedHold(h store.Hold) sched.Hold {
	switch h {
	case store.HoldNone:
		return sched.HoldNone
	case store.HoldAdmin:
		return sched.HoldAdmin
	}
	return sched.HoldUser
}
