package sched

import (
	"fmt"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// blocker is a "not yet" that does not depend on free resources.
type blocker struct {
	reason   slurm.Reason
	detail   string
	expected int64 // Unix seconds; 0 when unknown
}

// staticBlock checks everything that keeps a job waiting whatever is free,
// in the order Slurm reports them: holds; an invalid partition, QOS or
// account; dependencies; --begin; partition state and time limit; the array
// throttle; QOS per-user limits; the association's limits. The per-user and per-array counters include
// jobs started earlier in this pass.
func (p *pass) staticBlock(pj *pjob) (blocker, bool) {
	j := pj.job
	switch j.Hold {
	case HoldAdmin:
		return blocker{reason: slurm.ReasonJobHeldAdmin}, true
	case HoldUser:
		return blocker{reason: slurm.ReasonJobHeldUser}, true
	}
	if pj.part < 0 {
		if j.Partition == "" {
			return blocker{reason: slurm.ReasonBadConstraints, detail: "no partition given and none is the default"}, true
		}
		return blocker{reason: slurm.ReasonBadConstraints, detail: fmt.Sprintf("partition %q does not exist", j.Partition)}, true
	}
	if pj.qos == -2 {
		return blocker{reason: slurm.ReasonInvalidQOS, detail: fmt.Sprintf("QOS %q does not exist", j.QOS)}, true
	}
	if pj.assoc < 0 {
		return blocker{reason: slurm.ReasonInvalidAccount, detail: fmt.Sprintf("user %s has no association with account %q", j.User, j.Account)}, true
	}
	if len(j.Deps.Items) > 0 {
		switch r, why := p.depState(j); r {
		case depWaiting:
			return blocker{reason: slurm.ReasonDependency, detail: why}, true
		case depNever:
			return blocker{reason: slurm.ReasonDependencyNeverSatisfied, detail: why}, true
		}
	}
	if !j.Begin.IsZero() && j.Begin.Unix() > p.now {
		return blocker{reason: slurm.ReasonBeginTime, expected: j.Begin.Unix(),
			detail: fmt.Sprintf("may start from %s", j.Begin.UTC().Format("2006-01-02T15:04:05"))}, true
	}
	pt := &p.snap.Partitions[pj.part]
	if pt.Down {
		return blocker{reason: slurm.ReasonPartitionDown, detail: fmt.Sprintf("partition %s is down", pt.Name)}, true
	}
	if j.TimeLimit > 0 && pt.MaxTime > 0 && pt.MaxTime < Unlimited && j.TimeLimit > pt.MaxTime {
		return blocker{reason: slurm.ReasonPartitionTimeLimit,
			detail: fmt.Sprintf("time limit %s exceeds partition %s's MaxTime %s", fmtDuration(j.TimeLimit), pt.Name, fmtDuration(pt.MaxTime))}, true
	}
	if j.ArrayJobID != 0 && j.ArrayLimit > 0 && p.arrayRun[j.ArrayJobID] >= j.ArrayLimit {
		return blocker{reason: slurm.ReasonJobArrayTaskLimit,
			detail: fmt.Sprintf("%d of array %d's tasks run, the limit is %d", p.arrayRun[j.ArrayJobID], j.ArrayJobID, j.ArrayLimit)}, true
	}
	// The partition's QOS first, then the job's (acct_policy.c, without
	// OverPartQOS).
	for _, qi := range pj.qosList() {
		q := &p.snap.QOS[qi]
		if b, ok := p.perJobLimit(pj, q); ok {
			return b, true
		}
		c := p.userQOS[userQOSKey{j.User, qi}]
		if q.MaxJobsPerUser > 0 && c.jobs >= q.MaxJobsPerUser {
			return blocker{reason: slurm.ReasonQOSMaxJobsPerUserLimit,
				detail: fmt.Sprintf("%s runs %d jobs in QOS %s, MaxJobsPerUser is %d", j.User, c.jobs, q.Name, q.MaxJobsPerUser)}, true
		}
		if want := j.Req.GPUs; q.MaxGPUsPerUser > 0 && j.Req.GPUMem == 0 && want > 0 && c.gpus+want > q.MaxGPUsPerUser {
			return blocker{reason: slurm.ReasonQOSMaxGRESPerUser,
				detail: fmt.Sprintf("%s holds %d GPUs in QOS %s and asks for %d, MaxTRESPerUser is gres/gpu=%d", j.User, c.gpus, q.Name, want, q.MaxGPUsPerUser)}, true
		}
		if b, ok := p.perUserLimit(pj, q, c); ok {
			return b, true
		}
		if b, ok := p.qosGrpTRESMins(pj, q); ok {
			return b, true
		}
	}
	// Then the association's, as acct_policy.c checks them after the QOS.
	return p.assocLimits(pj)
}

// qosList are the QOS whose limits hold for the job: its partition's, then
// its own.
func (pj *pjob) qosList() []int {
	var l []int
	if pj.partQOS >= 0 {
		l = append(l, pj.partQOS)
	}
	if pj.qos >= 0 {
		l = append(l, pj.qos)
	}
	return l
}

// perJobLimit is a QOS limit the job breaks on its own: MaxWall and
// MaxTRESPerJob, with Slurm's reasons (slurm_protocol_defs.c).
func (p *pass) perJobLimit(pj *pjob, q *QOS) (blocker, bool) {
	j := pj.job
	over := func(r slurm.Reason, what string, asked, limit any) (blocker, bool) {
		return blocker{reason: r, detail: fmt.Sprintf("asks for %v %s, QOS %s's %s", asked, what, q.Name, limit)}, true
	}
	if q.MaxWall > 0 && j.TimeLimit > q.MaxWall {
		return over(slurm.ReasonQOSMaxWallDurationPerJobLimit, "of time limit", fmtDuration(j.TimeLimit), "MaxWall is "+fmtDuration(q.MaxWall))
	}
	l := q.PerJob
	cpus := max(1, j.Req.CPUs)
	switch {
	case l.CPUs > 0 && cpus > l.CPUs:
		return over(slurm.ReasonQOSMaxCpuPerJobLimit, "CPUs", cpus, fmt.Sprintf("MaxTRESPerJob is cpu=%d", l.CPUs))
	case l.GPUs > 0 && j.Req.GPUMem == 0 && j.Req.GPUs > l.GPUs:
		return over(slurm.ReasonQOSMaxGRESPerJob, "GPUs", j.Req.GPUs, fmt.Sprintf("MaxTRESPerJob is gres/gpu=%d", l.GPUs))
	case l.Mem > 0 && j.Req.Mem > l.Mem:
		return over(slurm.ReasonQOSMaxMemoryPerJob, "of memory", fmtMiB(j.Req.Mem), "MaxTRESPerJob is mem="+fmtMiB(l.Mem))
	case l.Nodes > 0 && 1 > l.Nodes:
		return over(slurm.ReasonQOSMaxNodePerJobLimit, "nodes", 1, fmt.Sprintf("MaxTRESPerJob is node=%d", l.Nodes))
	case l.Billing > 0 && p.jobBilling(pj) > float64(l.Billing):
		return over(slurm.ReasonQOSMaxBillingPerJob, "of billing", p.jobBilling(pj), fmt.Sprintf("MaxTRESPerJob is billing=%d", l.Billing))
	}
	return blocker{}, false
}

// perUserLimit is MaxTRESPerUser's CPUs, memory, nodes and billing: what
// the user's running jobs in the QOS hold, with this one.
func (p *pass) perUserLimit(pj *pjob, q *QOS, c userCount) (blocker, bool) {
	j := pj.job
	l := q.PerUser
	over := func(r slurm.Reason, what string, held, asked any, limit string) (blocker, bool) {
		return blocker{reason: r, detail: fmt.Sprintf("%s holds %v %s in QOS %s and asks for %v, MaxTRESPerUser is %s",
			j.User, held, what, q.Name, asked, limit)}, true
	}
	cpus := max(1, j.Req.CPUs)
	switch {
	case l.CPUs > 0 && c.cpus+cpus > l.CPUs:
		return over(slurm.ReasonQOSMaxCpuPerUserLimit, "CPUs", c.cpus, cpus, fmt.Sprintf("cpu=%d", l.CPUs))
	case l.Mem > 0 && c.mem+j.Req.Mem > l.Mem:
		return over(slurm.ReasonQOSMaxMemoryPerUser, "of memory", fmtMiB(c.mem), fmtMiB(j.Req.Mem), "mem="+fmtMiB(l.Mem))
	case l.Nodes > 0 && c.nodes+1 > l.Nodes:
		return over(slurm.ReasonQOSMaxNodePerUserLimit, "nodes", c.nodes, 1, fmt.Sprintf("node=%d", l.Nodes))
	case l.Billing > 0 && c.billing+p.jobBilling(pj) > float64(l.Billing):
		return over(slurm.ReasonQOSMaxBillingPerUser, "of billing", c.billing, p.jobBilling(pj), fmt.Sprintf("billing=%d", l.Billing))
	}
	return blocker{}, false
}

// jobBilling is the job's billing (its TRES over its partition's
// TRESBillingWeights).
func (p *pass) jobBilling(pj *pjob) float64 {
	var part *Partition
	if pj.part >= 0 {
		part = &p.snap.Partitions[pj.part]
	}
	return billing(pj.job, part, p.snap)
}

// fmtMiB prints memory as Slurm's TRES strings do: megabytes, or G, T.
func fmtMiB(b int64) string {
	m := b >> 20
	switch {
	case m >= 1<<20 && m%(1<<20) == 0:
		return fmt.Sprintf("%dT", m>>20)
	case m >= 1<<10 && m%(1<<10) == 0:
		return fmt.Sprintf("%dG", m>>10)
	}
	return fmt.Sprintf("%dM", m)
}

// resourceDetail says, with numbers, why a job does not fit now: what no
// node of its partition could ever give it, or else what is short now.
func (p *pass) resourceDetail(sh *shape) string {
	if len(sh.nodes) == 0 {
		return "no node of the partition takes work"
	}
	if sh.gang > 0 {
		return p.gangDetail(sh)
	}
	usable, cpus, mem := 0, 0, int64(0)
	for i, n := range sh.nodes {
		count := 0
		for _, s := range sh.slots[i] {
			if !sh.shared || p.slots[s].gpu.TotalMem >= sh.key.gpuMem {
				count++
			}
		}
		usable = max(usable, count)
		cpus = max(cpus, p.snap.Nodes[n].CPUs)
		mem = max(mem, p.snap.Nodes[n].Mem)
	}
	switch {
	case usable < sh.need && sh.shared && sh.need == 1:
		return fmt.Sprintf("needs a GPU with %s of memory, the partition has none", fmtGiB(sh.key.gpuMem))
	case usable < sh.need && sh.shared:
		return fmt.Sprintf("needs %d GPUs with %s of memory each, the partition has %d", sh.need, fmtGiB(sh.key.gpuMem), usable)
	case usable < sh.need:
		return fmt.Sprintf("needs %d %s, the partition has %d usable", sh.need, gpuWord(sh), usable)
	case cpus < sh.key.cpus:
		return fmt.Sprintf("needs %d CPUs, the largest node has %d", sh.key.cpus, cpus)
	case mem < sh.key.mem:
		return fmt.Sprintf("needs %s of memory, the largest node has %s", fmtGiB(sh.key.mem), fmtGiB(mem))
	}
	freeGPUs, bestMem, freeCPUs, freeMem, freePorts := 0, int64(0), int64(0), int64(0), int64(0)
	for i, n := range sh.nodes {
		r0 := p.tls[n].row(0)
		freeCPUs = max(freeCPUs, r0[p.cpuCol(n)])
		freeMem = max(freeMem, r0[p.hmemCol(n)])
		freePorts = max(freePorts, r0[p.portCol(n)])
		count := 0
		for _, s := range sh.slots[i] {
			l := p.slots[s].local
			if sh.shared {
				if r0[busyCol(l)] > -excl {
					bestMem = max(bestMem, r0[memCol(l)])
				}
				if r0[busyCol(l)] > -excl && r0[memCol(l)] >= sh.key.gpuMem {
					count++
				}
			} else if r0[busyCol(l)] == 0 {
				count++
			}
		}
		freeGPUs = max(freeGPUs, count)
	}
	switch {
	case sh.shared && freeGPUs < sh.need && sh.need == 1:
		return fmt.Sprintf("needs %s of GPU memory, the best GPU has %s free", fmtGiB(sh.key.gpuMem), fmtGiB(max(0, bestMem)))
	case sh.shared && freeGPUs < sh.need:
		return fmt.Sprintf("needs %d GPUs with %s free each, %d have it", sh.need, fmtGiB(sh.key.gpuMem), freeGPUs)
	case freeGPUs < sh.need:
		return fmt.Sprintf("needs %d %s, %d free", sh.need, gpuWord(sh), freeGPUs)
	case freeCPUs < int64(sh.key.cpus):
		return fmt.Sprintf("needs %d CPUs, %d free", sh.key.cpus, max(0, freeCPUs))
	case freeMem < sh.key.mem:
		return fmt.Sprintf("needs %s of memory, %s free", fmtGiB(sh.key.mem), fmtGiB(max(0, freeMem)))
	case freePorts < int64(sh.key.ports):
		return fmt.Sprintf("needs %d ports of MpiParams' %d-%d, %d free", sh.key.ports, p.snap.Ports.Lo, p.snap.Ports.Hi, max(0, freePorts))
	}
	return "what is free now is reserved for higher-priority jobs"
}

func gpuWord(sh *shape) string {
	w := "GPUs"
	if sh.need == 1 {
		w = "GPU"
	}
	if sh.key.gpuType != "" {
		w = sh.key.gpuType + " " + w
	}
	return w
}

func fmtGiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/float64(GiB)) }

// fmtDuration prints a limit as Slurm does: [days-]hh:mm:ss, or UNLIMITED.
func fmtDuration(d time.Duration) string {
	if d >= Unlimited {
		return "UNLIMITED"
	}
	s := int64(d / time.Second)
	days, s := s/86400, s%86400
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}
