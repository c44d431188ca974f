package schedtest

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sched"
)

// SnapBuilder builds a sched.Snapshot.
type SnapBuilder struct {
	now      time.Time
	cfg      sched.Config
	nodes    []*NodeBuilder
	parts    []*PartBuilder
	qos      []sched.QOS
	accounts []sched.Account
	usage    []sched.Usage
	jobs     []*JobBuilder
}

// Snap starts a snapshot at Epoch with sched.DefaultConfig(). Without
// partitions, Build adds one default partition "gpu".
func Snap() *SnapBuilder { return &SnapBuilder{now: Epoch, cfg: sched.DefaultConfig()} }

// Anchor is the cluster the golden files were recorded on: node gpu01 with
// 16 CPUs, 64000 MiB and four 80 GiB a100s; partitions gpu (default,
// PriorityTier 1) and scavenger (PriorityTier 0, PreemptMode REQUEUE);
// account lab with users root (1 share), alice (2) and bob (1), lab being
// everyone's default account, root also under the root account; and the
// golden priority weights.
func Anchor() *SnapBuilder {
	return Snap().
		Configure(func(c *sched.Config) {
			c.Weights = sched.Weights{Age: 1000, FairShare: 10000, Partition: 1000}
			c.MaxAge = 7 * 24 * time.Hour
			c.DecayHalfLife = 7 * 24 * time.Hour
		}).
		Node(Node("gpu01").GPUs(4, "a100", 80*GiB)).
		Part(Part("gpu").Default().Tier(1)).
		Part(Part("scavenger").Tier(0).Requeue()).
		QOS(QOS("normal")).
		Account("root", "", 1, U("root", 1)).
		Account("lab", "root", 1, DefU("alice", 2), DefU("bob", 1), DefU("root", 1))
}

// At sets the clock.
func (b *SnapBuilder) At(t time.Time) *SnapBuilder { b.now = t; return b }

// Configure edits the configuration.
func (b *SnapBuilder) Configure(f func(*sched.Config)) *SnapBuilder { f(&b.cfg); return b }

func (b *SnapBuilder) Node(n ...*NodeBuilder) *SnapBuilder { b.nodes = append(b.nodes, n...); return b }
func (b *SnapBuilder) Part(p ...*PartBuilder) *SnapBuilder { b.parts = append(b.parts, p...); return b }
func (b *SnapBuilder) QOS(q ...sched.QOS) *SnapBuilder     { b.qos = append(b.qos, q...); return b }
func (b *SnapBuilder) Job(j ...*JobBuilder) *SnapBuilder   { b.jobs = append(b.jobs, j...); return b }

// Account adds an account under parent ("" for the root) with users.
func (b *SnapBuilder) Account(name, parent string, shares int, users ...sched.UserShare) *SnapBuilder {
	b.accounts = append(b.accounts, sched.Account{Name: name, Parent: parent, Shares: shares, Users: users})
	return b
}

// AccountPriority sets an account's association Priority (name "root" for
// the root account, added if missing).
func (b *SnapBuilder) AccountPriority(name string, prio int) *SnapBuilder {
	for i := range b.accounts {
		if b.accounts[i].Name == name {
			b.accounts[i].Priority = prio
			return b
		}
	}
	b.accounts = append(b.accounts, sched.Account{Name: name, Shares: 1, Priority: prio})
	return b
}

// Usage adds raw usage (TRES-billing seconds) as of the snapshot's clock.
func (b *SnapBuilder) Usage(account, user string, raw float64) *SnapBuilder {
	b.usage = append(b.usage, sched.Usage{Account: account, User: user, Raw: raw, AsOf: b.now})
	return b
}

// UsageAsOf adds raw usage recorded at an earlier time; the pass decays it.
func (b *SnapBuilder) UsageAsOf(account, user string, raw float64, at time.Time) *SnapBuilder {
	b.usage = append(b.usage, sched.Usage{Account: account, User: user, Raw: raw, AsOf: at})
	return b
}

// Build returns the snapshot. GPU free memory not set explicitly is total
// minus foreign memory minus what running jobs' processes hold on it.
func (b *SnapBuilder) Build() sched.Snapshot {
	s := sched.Snapshot{Now: b.now, Config: b.cfg}
	for _, nb := range b.nodes {
		s.Nodes = append(s.Nodes, nb.Build())
	}
	if len(b.parts) == 0 {
		s.Partitions = append(s.Partitions, Part("gpu").Default().Build())
	}
	for _, pb := range b.parts {
		s.Partitions = append(s.Partitions, pb.Build())
	}
	s.QOS = append(s.QOS, b.qos...)
	for _, a := range b.accounts {
		a.Users = append([]sched.UserShare(nil), a.Users...)
		s.Accounts = append(s.Accounts, a)
	}
	s.Usage = append(s.Usage, b.usage...)
	for _, jb := range b.jobs {
		s.Jobs = append(s.Jobs, jb.Build())
	}
	for ni, nb := range b.nodes {
		for gi := range s.Nodes[ni].GPUs {
			if nb.freeSet[gi] {
				continue
			}
			g := &s.Nodes[ni].GPUs[gi]
			for _, j := range s.Jobs {
				for _, a := range j.Alloc.GPUs {
					if a.UUID == g.UUID && j.Alloc.Node == s.Nodes[ni].Name {
						g.FreeMem -= a.Used
					}
				}
			}
		}
	}
	return s
}

// Clone deep-copies a snapshot, so a test can check that a pass left its
// input alone. Nil slices stay nil.
func Clone(s sched.Snapshot) sched.Snapshot {
	c := s
	c.Nodes = each(s.Nodes, func(n sched.Node) sched.Node {
		n.GPUs = each(n.GPUs, func(g sched.GPU) sched.GPU {
			g.NVLinkPeers = each(g.NVLinkPeers, same)
			return g
		})
		return n
	})
	c.Partitions = each(s.Partitions, func(p sched.Partition) sched.Partition {
		p.Nodes = each(p.Nodes, same)
		if p.Billing != nil {
			w := *p.Billing
			p.Billing = &w
		}
		return p
	})
	c.QOS = each(s.QOS, same)
	c.Accounts = each(s.Accounts, func(a sched.Account) sched.Account {
		a.Users = each(a.Users, same)
		return a
	})
	c.Usage = each(s.Usage, same)
	c.Jobs = each(s.Jobs, CloneJob)
	return c
}

// CloneJob deep-copies a job.
func CloneJob(j sched.Job) sched.Job {
	j.ArrayTasks = each(j.ArrayTasks, same)
	j.Deps.Items = each(j.Deps.Items, same)
	j.Alloc.GPUs = each(j.Alloc.GPUs, same)
	j.Alloc.CPUs = each(j.Alloc.CPUs, same)
	j.Alloc.Ports = each(j.Alloc.Ports, same)
	return j
}

func same[T any](v T) T { return v }

func each[T any](in []T, f func(T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
