// Package schedtest builds scheduler inputs for tests and runs scheduling
// passes on a fixed clock: chainable builders for jobs, nodes, partitions
// and whole snapshots (schedtest.Job(7).User("alice").GPUs(2)), and a
// Harness that runs cycles, applies their plans, advances time and checks
// that no pass modified its input.
package schedtest

import (
	"fmt"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Epoch is the fixed clock tests start at.
var Epoch = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

// GiB is 2^30 bytes.
const GiB = sched.GiB

// UUID is the UUID the node builder gives the node's GPU at index i.
func UUID(node string, i int) string { return fmt.Sprintf("GPU-%s-%d", node, i) }

// JobBuilder builds a sched.Job; every method returns the builder.
type JobBuilder struct{ j sched.Job }

// Job starts a pending job submitted at Epoch, with one CPU, no time limit
// (the partition's applies), user "user" and name "job<id>".
func Job(id uint32) *JobBuilder {
	return &JobBuilder{sched.Job{
		ID: id, ArrayTaskID: -1, Name: fmt.Sprintf("job%d", id), User: "user",
		State: slurm.Pending, Submit: Epoch, Req: sched.Request{CPUs: 1},
	}}
}

// Build returns the job.
func (b *JobBuilder) Build() sched.Job {
	return CloneJob(b.j)
}

func (b *JobBuilder) User(u string) *JobBuilder      { b.j.User = u; return b }
func (b *JobBuilder) Name(n string) *JobBuilder      { b.j.Name = n; return b }
func (b *JobBuilder) Account(a string) *JobBuilder   { b.j.Account = a; return b }
func (b *JobBuilder) Partition(p string) *JobBuilder { b.j.Partition = p; return b }
func (b *JobBuilder) QOS(q string) *JobBuilder       { b.j.QOS = q; return b }

// GPUs asks for n whole GPUs (or, after GPUMem, n GPUs to share).
func (b *JobBuilder) GPUs(n int) *JobBuilder { b.j.Req.GPUs = n; return b }

// GPUType makes a GPU type a hard constraint.
func (b *JobBuilder) GPUType(t string) *JobBuilder { b.j.Req.GPUType = t; return b }

// GPUMem asks for a share of a GPU with this peak memory.
func (b *JobBuilder) GPUMem(bytes int64) *JobBuilder { b.j.Req.GPUMem = bytes; return b }

func (b *JobBuilder) CPUs(n int) *JobBuilder { b.j.Req.CPUs = n; return b }

// Ports asks for n ports of the snapshot's MpiParams range.
func (b *JobBuilder) Ports(n int) *JobBuilder { b.j.Req.Ports, b.j.Req.PortsAsked = n, true; return b }

// HoldsPorts gives a running job the ports it holds.
func (b *JobBuilder) HoldsPorts(ports ...int) *JobBuilder { b.j.Alloc.Ports = ports; return b }
func (b *JobBuilder) Mem(bytes int64) *JobBuilder         { b.j.Req.Mem = bytes; return b }
func (b *JobBuilder) Nice(n int) *JobBuilder              { b.j.Nice = n; return b }
func (b *JobBuilder) Yieldable() *JobBuilder              { b.j.Yieldable = true; return b }
func (b *JobBuilder) Resumed() *JobBuilder                { b.j.Resumed = true; return b }

// CheckpointInterval declares how often the job saves a checkpoint.
func (b *JobBuilder) CheckpointInterval(d time.Duration) *JobBuilder {
	b.j.CheckpointInterval = d
	return b
}

// Shrunk marks a job a shrink left with fewer GPUs than the full count.
func (b *JobBuilder) Shrunk(full int) *JobBuilder { b.j.FullGPUs = full; return b }

// YieldedFor marks a pending job requeued by a yield for job id.
func (b *JobBuilder) YieldedFor(id uint32) *JobBuilder {
	b.j.Resumed, b.j.YieldedFor = true, id
	return b
}
func (b *JobBuilder) Priority(p uint32) *JobBuilder { b.j.FixedPriority = p; return b }

// Time sets the requested time limit (sched.Unlimited for UNLIMITED).
func (b *JobBuilder) Time(d time.Duration) *JobBuilder { b.j.TimeLimit = d; return b }

// Submitted sets the submit time.
func (b *JobBuilder) Submitted(t time.Time) *JobBuilder { b.j.Submit = t; return b }

// Eligible sets when the job became eligible.
func (b *JobBuilder) Eligible(t time.Time) *JobBuilder { b.j.Eligible = t; return b }

// Begin sets --begin.
func (b *JobBuilder) Begin(t time.Time) *JobBuilder { b.j.Begin = t; return b }

// Hold puts an owner's hold on the job; HoldAdmin an operator's.
func (b *JobBuilder) Hold() *JobBuilder      { b.j.Hold = sched.HoldUser; return b }
func (b *JobBuilder) HoldAdmin() *JobBuilder { b.j.Hold = sched.HoldAdmin; return b }

// Dep adds a dependency on a job (task -1) or array task.
func (b *JobBuilder) Dep(t sched.DepType, id uint32, task int) *JobBuilder {
	b.j.Deps.Items = append(b.j.Deps.Items, sched.DepItem{Type: t, JobID: id, Task: task})
	return b
}

func (b *JobBuilder) After(id uint32) *JobBuilder      { return b.Dep(sched.DepAfter, id, -1) }
func (b *JobBuilder) AfterOK(id uint32) *JobBuilder    { return b.Dep(sched.DepAfterOK, id, -1) }
func (b *JobBuilder) AfterNotOK(id uint32) *JobBuilder { return b.Dep(sched.DepAfterNotOK, id, -1) }
func (b *JobBuilder) AfterAny(id uint32) *JobBuilder   { return b.Dep(sched.DepAfterAny, id, -1) }
func (b *JobBuilder) Singleton() *JobBuilder           { return b.Dep(sched.DepSingleton, 0, -1) }

// AfterPlus is after:ID+MIN: delay after job id started.
func (b *JobBuilder) AfterPlus(id uint32, delay time.Duration) *JobBuilder {
	b.j.Deps.Items = append(b.j.Deps.Items, sched.DepItem{Type: sched.DepAfter, JobID: id, Task: -1, Delay: delay})
	return b
}

// AnyDep makes the dependencies '?'-separated: one satisfied suffices.
func (b *JobBuilder) AnyDep() *JobBuilder { b.j.Deps.Any = true; return b }

// Task makes the job task `task` of array `array`, at most `limit` tasks
// running at once (0: no throttle).
func (b *JobBuilder) Task(array uint32, task, limit int) *JobBuilder {
	b.j.ArrayJobID, b.j.ArrayTaskID, b.j.ArrayLimit = array, task, limit
	return b
}

// ArrayTasks sets the task ids of a submission.
func (b *JobBuilder) ArrayTasks(ids ...int) *JobBuilder { b.j.ArrayTasks = ids; return b }

// Running marks the job running since start on node, holding the given GPUs
// whole (by index on that node) and its CPUs counted from 0 upwards unless
// CPUIDs says otherwise.
func (b *JobBuilder) Running(start time.Time, node string, gpus ...int) *JobBuilder {
	b.j.State, b.j.Start = slurm.Running, start
	b.j.Alloc.Node = node
	for _, g := range gpus {
		b.j.Alloc.GPUs = append(b.j.Alloc.GPUs, sched.GPUAlloc{UUID: UUID(node, g), Index: g})
	}
	return b
}

// Sharing adds a shared GPU to a running job's allocation: mem reserved,
// used what its processes hold now.
func (b *JobBuilder) Sharing(gpu int, mem, used int64) *JobBuilder {
	b.j.Alloc.GPUs = append(b.j.Alloc.GPUs, sched.GPUAlloc{UUID: UUID(b.j.Alloc.Node, gpu), Index: gpu, Mem: mem, Used: used})
	return b
}

// CPUIDs sets a running job's CPU ids.
func (b *JobBuilder) CPUIDs(ids ...int) *JobBuilder { b.j.Alloc.CPUs = ids; return b }

// HostMem sets a running job's allocated host memory.
func (b *JobBuilder) HostMem(bytes int64) *JobBuilder { b.j.Alloc.Mem = bytes; return b }

// State sets the state (for finished jobs, with their exit code).
func (b *JobBuilder) State(s slurm.JobState, exit int) *JobBuilder {
	b.j.State, b.j.ExitCode = s, exit
	return b
}

// NodeBuilder builds a sched.Node.
type NodeBuilder struct {
	n       sched.Node
	freeSet map[int]bool
}

// Node starts a node with 16 CPUs, 64000 MiB of memory and no GPUs.
func Node(name string) *NodeBuilder {
	return &NodeBuilder{n: sched.Node{Name: name, CPUs: 16, Mem: 64000 << 20}, freeSet: map[int]bool{}}
}

func (b *NodeBuilder) CPUs(n int) *NodeBuilder      { b.n.CPUs = n; return b }
func (b *NodeBuilder) Mem(bytes int64) *NodeBuilder { b.n.Mem = bytes; return b }
func (b *NodeBuilder) Drained() *NodeBuilder        { b.n.Drained = true; return b }

// GPUs adds n GPUs of a type with the given memory each.
func (b *NodeBuilder) GPUs(n int, typ string, mem int64) *NodeBuilder {
	for range n {
		i := len(b.n.GPUs)
		b.n.GPUs = append(b.n.GPUs, sched.GPU{UUID: UUID(b.n.Name, i), Index: i, Type: typ, TotalMem: mem, FreeMem: mem})
	}
	return b
}

// NVLink links every pair of GPUs within each group (by index).
func (b *NodeBuilder) NVLink(groups ...[]int) *NodeBuilder {
	for _, g := range groups {
		for _, x := range g {
			for _, y := range g {
				if x != y {
					b.n.GPUs[x].NVLinkPeers = append(b.n.GPUs[x].NVLinkPeers, UUID(b.n.Name, y))
				}
			}
		}
	}
	return b
}

// Drain drains GPU i.
func (b *NodeBuilder) Drain(i int) *NodeBuilder { b.n.GPUs[i].Drained = true; return b }

// Foreign makes processes the scheduler did not start hold mem on GPU i.
func (b *NodeBuilder) Foreign(i int, mem int64) *NodeBuilder {
	b.n.GPUs[i].ForeignMem = mem
	return b
}

// Free sets GPU i's free memory as the driver reports it; otherwise the
// snapshot builder computes it from foreign and job memory.
func (b *NodeBuilder) Free(i int, mem int64) *NodeBuilder {
	b.n.GPUs[i].FreeMem = mem
	b.freeSet[i] = true
	return b
}

// Build returns the node; free memory is total minus foreign memory.
func (b *NodeBuilder) Build() sched.Node {
	n := b.n
	n.GPUs = append([]sched.GPU(nil), b.n.GPUs...)
	for i := range n.GPUs {
		n.GPUs[i].NVLinkPeers = append([]string(nil), b.n.GPUs[i].NVLinkPeers...)
		if !b.freeSet[i] {
			n.GPUs[i].FreeMem = n.GPUs[i].TotalMem - n.GPUs[i].ForeignMem
		}
	}
	return n
}

// PartBuilder builds a sched.Partition.
type PartBuilder struct{ p sched.Partition }

// Part starts a partition with Slurm's defaults: PriorityTier 1,
// PriorityJobFactor 1, no limits, every node.
func Part(name string) *PartBuilder {
	return &PartBuilder{sched.Partition{Name: name, PriorityTier: 1, PriorityJobFactor: 1, PreemptMode: sched.PreemptOff}}
}

func (b *PartBuilder) Default() *PartBuilder        { b.p.Default = true; return b }
func (b *PartBuilder) Tier(t int) *PartBuilder      { b.p.PriorityTier = t; return b }
func (b *PartBuilder) JobFactor(f int) *PartBuilder { b.p.PriorityJobFactor = f; return b }
func (b *PartBuilder) Requeue() *PartBuilder        { b.p.PreemptMode = sched.PreemptRequeue; return b }
func (b *PartBuilder) Down() *PartBuilder           { b.p.Down = true; return b }

// Accounts sets AllowAccounts.
func (b *PartBuilder) Accounts(a ...string) *PartBuilder { b.p.AllowAccounts = a; return b }

// Drain closes the partition to new jobs (State DRAIN).
func (b *PartBuilder) Drain() *PartBuilder { b.p.Closed = true; return b }
func (b *PartBuilder) Nodes(n ...string) *PartBuilder {
	b.p.Nodes = n
	return b
}

// QOS sets the partition's QOS.
func (b *PartBuilder) QOS(q string) *PartBuilder { b.p.QOS = q; return b }

func (b *PartBuilder) MaxTime(d time.Duration) *PartBuilder     { b.p.MaxTime = d; return b }
func (b *PartBuilder) DefaultTime(d time.Duration) *PartBuilder { b.p.DefaultTime = d; return b }
func (b *PartBuilder) Billing(w sched.TRESWeights) *PartBuilder {
	b.p.Billing = &w
	return b
}

// Build returns the partition.
func (b *PartBuilder) Build() sched.Partition {
	p := b.p
	p.Nodes = append([]string(nil), b.p.Nodes...)
	p.AllowAccounts = append([]string(nil), b.p.AllowAccounts...)
	if b.p.Billing != nil {
		w := *b.p.Billing
		p.Billing = &w
	}
	return p
}

// QOS returns a QOS with UsageFactor 1 and no limits.
func QOS(name string) sched.QOS { return sched.QOS{Name: name, UsageFactor: 1} }

// U is a user's share in an account.
func U(name string, shares int) sched.UserShare { return sched.UserShare{Name: name, Shares: shares} }

// DefU is a user's share in their default account.
func DefU(name string, shares int) sched.UserShare {
	return sched.UserShare{Name: name, Shares: shares, Default: true}
}
