package sched

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// PriorityRow is one line of sprio -l: a pending job's priority and each
// weighted factor (sprio rounds them to integers when it prints).
type PriorityRow struct {
	JobID     uint32
	Partition string
	User      string
	Priority  uint32
	Site      float64
	Age       float64
	Assoc     float64
	FairShare float64
	JobSize   float64
	// PartitionPrio is the weighted partition factor (sprio's PARTITION).
	PartitionPrio float64
	QOSPrio       float64
	// TRES are the weighted TRES factors that are not 0, in
	// PriorityWeightTRES's order (sprio's TRES column).
	TRES []TRESFactor
	Nice int
}

// Priorities returns the rows sprio -l prints: pending jobs that are
// eligible (not held, dependencies met, begin time reached), by job id.
func Priorities(snap Snapshot) []PriorityRow {
	p := newPass(&snap)
	var rows []PriorityRow
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if !isPending(j.State) || j.Hold != HoldNone {
			continue
		}
		pj := p.resolve(j)
		if pj.part < 0 || !p.accruing(&pj) {
			continue
		}
		f := p.factors(&pj)
		rows = append(rows, PriorityRow{
			JobID:         j.ID,
			Partition:     snap.Partitions[pj.part].Name,
			User:          j.User,
			Priority:      f.total,
			Age:           f.age,
			Assoc:         f.assoc,
			FairShare:     f.fs,
			JobSize:       f.size,
			PartitionPrio: f.part,
			QOSPrio:       f.qos,
			TRES:          f.tres,
			Nice:          j.Nice,
		})
	}
	slices.SortFunc(rows, func(a, b PriorityRow) int { return cmp.Compare(a.JobID, b.JobID) })
	return rows
}

// prioFactors are a job's weighted priority factors.
type prioFactors struct {
	total                           uint32
	age, assoc, fs, size, part, qos float64
	tres                            []TRESFactor
}

// topPriority is where priority/basic starts counting down (Slurm's
// TOP_PRIORITY).
const topPriority = 0xffff0000

// factors computes the job's priority. With priority/multifactor it is the
// sum priority_multifactor.shtml gives under "Job Priority Factors In
// General":
//
//	PriorityWeightAge × age + PriorityWeightAssoc × association +
//	PriorityWeightFairshare × fair-share + PriorityWeightJobSize × job size +
//	PriorityWeightPartition × partition + PriorityWeightQOS × QOS +
//	SUM(TRES weight × TRES factor) - nice
//
// each factor between 0 and 1, the sum truncated to an integer and kept
// between 1 and 2^32-1 (priority_multifactor.c, _get_priority_internal).
// The association, partition and QOS factors are the association's
// Priority, PriorityJobFactor and the QOS priority normalised by the
// largest ("Association Factor", "Partition Factor", "Quality of Service
// (QOS) Factor"), unless NO_NORMAL_ASSOC / NO_NORMAL_PART / NO_NORMAL_QOS;
// the TRES factors are in tresFactors. With priority/basic it is
// submission order: the earlier the job (the lower its id), the higher,
// less nice.
func (p *pass) factors(pj *pjob) prioFactors {
	j := pj.job
	if j.FixedPriority != 0 {
		return prioFactors{total: j.FixedPriority}
	}
	if !p.cfg.multifactor() {
		id := j.ID
		if j.ArrayJobID != 0 {
			id = j.ArrayJobID
		}
		return prioFactors{total: clampPriority(float64(topPriority) - float64(id) - float64(j.Nice))}
	}
	w := &p.cfg.Weights
	var f prioFactors
	if w.Age > 0 && p.accruing(pj) {
		f.age = float64(w.Age) * p.ageFactor(pj)
	}
	if w.Assoc > 0 && pj.assoc >= 0 {
		af := float64(p.tree.nodes[pj.assoc].prio)
		if p.cfg.Flags&FlagNoNormalAssoc == 0 {
			af = ratio(af, float64(p.tree.maxPrio))
		}
		f.assoc = float64(w.Assoc) * af
	}
	if w.FairShare > 0 && pj.assoc >= 0 {
		f.fs = float64(w.FairShare) * p.tree.nodes[pj.assoc].fs
	}
	if w.JobSize > 0 {
		f.size = float64(w.JobSize) * p.sizeFactor(pj)
	}
	if w.Partition > 0 && pj.part >= 0 {
		jf := float64(p.snap.Partitions[pj.part].PriorityJobFactor)
		if p.cfg.Flags&FlagNoNormalPart == 0 {
			jf = ratio(jf, p.maxPartFactor)
		}
		f.part = float64(w.Partition) * jf
	}
	if w.QOS > 0 && pj.qos >= 0 {
		qf := float64(p.snap.QOS[pj.qos].Priority)
		if p.cfg.Flags&FlagNoNormalQOS == 0 {
			qf = ratio(qf, p.maxQOSPrio)
		}
		f.qos = float64(w.QOS) * qf
	}
	var tres float64
	f.tres, tres = p.tresFactors(pj)
	f.total = clampPriority(f.age + f.assoc + f.fs + f.size + f.part + f.qos + tres - float64(j.Nice))
	return f
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func clampPriority(v float64) uint32 {
	// Priority 0 is reserved for held jobs.
	if v < 1 || math.IsNaN(v) {
		return 1
	}
	if v >= math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v)
}

// accruing reports whether the job's age grows: it is eligible, or
// PriorityFlags=ACCRUE_ALWAYS.
func (p *pass) accruing(pj *pjob) bool {
	return p.cfg.Flags&FlagAccrueAlways != 0 || p.eligible(pj)
}

// eligible reports whether the job may start as far as it alone decides
// (job_mgr.c, job_independent): no hold, its begin time reached, its
// dependencies met.
func (p *pass) eligible(pj *pjob) bool {
	j := pj.job
	if j.Hold != HoldNone || (!j.Begin.IsZero() && j.Begin.Unix() > p.now) {
		return false
	}
	if len(j.Deps.Items) > 0 {
		r, _ := p.depState(j)
		return r == depMet
	}
	return true
}

// eligibleAt is when a job that is eligible now and has no Eligible time
// yet became so, as slurmctld sets details->begin_time: its begin time
// when it waits on nothing else (kept from submission), else the pass that
// found it eligible (a dependency met, a hold released).
func (p *pass) eligibleAt(j *Job) time.Time {
	if len(j.Deps.Items) == 0 && j.Begin.After(j.Submit) {
		return j.Begin
	}
	return p.snap.Now
}

// ageFactor is min(1, wait/PriorityMaxAge) with the wait counted from when
// the job became eligible (priority_multifactor.shtml, "Age Factor";
// acct_policy.c sets accrue_time to the eligible time), or from its
// submission with ACCRUE_ALWAYS. A job not yet given its Eligible time
// counts from its submission or begin time when it waits on nothing else
// (jobs recorded before Eligible was kept, the simulator's), else from
// now: its dependency was met in this pass.
func (p *pass) ageFactor(pj *pjob) float64 {
	j := pj.job
	from := j.Eligible
	if p.cfg.Flags&FlagAccrueAlways != 0 {
		from = j.Submit
	} else if from.IsZero() {
		from = p.snap.Now
		if len(j.Deps.Items) == 0 {
			from = j.Submit
			if j.Begin.After(from) {
				from = j.Begin
			}
		}
	}
	wait := p.prioTime(j) - from.Unix()
	if wait <= 0 {
		wait = 0
	}
	maxAge := ceilSeconds(p.cfg.MaxAge)
	if wait >= maxAge {
		return 1
	}
	return float64(wait) / float64(maxAge)
}

// prioTime is the moment (Unix seconds) a pending job's priority was
// computed at: now when priorities are recalculated at every pass, else
// the last recalculation (snap.Calc), or the job's submission if it came
// later: Slurm computes a job's priority when it is submitted and then
// only in the decay thread, every PriorityCalcPeriod
// (priority_multifactor.c, priority_p_set and decay_apply_weighted_factors).
func (p *pass) prioTime(j *Job) int64 {
	at := p.snap.Calc.At
	if at.IsZero() {
		return p.now
	}
	return min(p.now, max(at.Unix(), j.Submit.Unix()))
}

// sizeFactor is Slurm's job size factor (priority_multifactor.shtml, "Job
// Size Factor"): the mean of the job's share of nodes and of CPUs, or of
// what it leaves free under PriorityFavorSmall. With
// SMALL_RELATIVE_TO_TIME it is the job's CPUs (at least its nodes' share
// of the cluster's) per minute of its time limit, over the cluster's CPUs
// (and 1 less that under PriorityFavorSmall).
func (p *pass) sizeFactor(pj *pjob) float64 {
	j := pj.job
	nodes := float64(max(1, len(p.snap.Nodes)))
	cluster := float64(p.totalCPUs)
	cpus := float64(max(1, j.Req.CPUs))
	var f float64
	if p.cfg.Flags&FlagSmallRelativeToTime != 0 {
		// One node's worth of CPUs at least (min_nodes is 1 here).
		f = max(cluster/nodes, cpus)
		minutes := float64(0xffffffff) // Slurm's INFINITE time limit
		if pj.limit < forever {
			minutes = float64((pj.limit + 59) / 60)
		}
		f /= max(1, minutes)
		if cluster > 0 {
			f /= cluster
		}
		if p.cfg.FavorSmall {
			f = 1 - f
		}
		return min(1, max(0, f))
	}
	if p.cfg.FavorSmall {
		f = (nodes - 1) / nodes
		if cluster > 0 {
			f = (f + (cluster-cpus)/cluster) / 2
		}
	} else {
		f = 1 / nodes
		if cluster > 0 {
			f = (f + cpus/cluster) / 2
		}
	}
	return min(1, max(0, f))
}

// compareJobs is the order in which a pass considers pending jobs
// (priority_multifactor.shtml, "Introduction"):
//
//  1. partition PriorityTier, higher first;
//  2. jobs resuming after a yield first, so a shrunk job comes back ahead
//     of ordinary work of its tier, and with them, before them, the
//     pending jobs they were stopped for (Job.YieldedFor); started, a
//     resumed job keeps that rank for its minimum run (settled), so the
//     work it went ahead of does not stop it a pass later;
//  3. priority, higher first;
//  4. submit time, earlier first;
//  5. job id, then array task id, lower first.
func compareJobs(a, b *pjob) int {
	return cmp.Or(
		-cmp.Compare(a.tier, b.tier),
		boolFirst(a.job.Resumed || a.yieldedTo, b.job.Resumed || b.yieldedTo),
		boolFirst(a.yieldedTo, b.yieldedTo),
		-cmp.Compare(a.prio, b.prio),
		cmp.Compare(a.submit, b.submit),
		cmp.Compare(a.job.ID, b.job.ID),
		cmp.Compare(a.job.ArrayTaskID, b.job.ArrayTaskID),
	)
}

func isPending(s slurm.JobState) bool { return s == slurm.Pending || s == slurm.Requeued }

// holdsResources reports whether a job in state s still holds what it was
// given.
func holdsResources(s slurm.JobState) bool {
	return s == slurm.Running || s == slurm.Suspended || s == slurm.Completing
}
