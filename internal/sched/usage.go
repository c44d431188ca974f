package sched

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// defaultBilling is slurm-lite's TRESBillingWeights when a partition sets
// none: usage is counted in GPUs, so a 4-GPU hour costs four 1-GPU hours.
var defaultBilling = TRESWeights{GPU: 1}

// Billing returns the job's TRES billing units (per second of running), from
// its partition's TRESBillingWeights (priority_multifactor.shtml, "Fairshare
// Factor"): the weighted sum of CPUs, memory in GiB and GPUs, or with
// PriorityFlags=MAX_TRES the largest of them. A job sharing a GPU counts the
// fraction of that GPU's memory it reserved. A running job is billed for its
// allocation, a pending one for its request.
func Billing(j Job, snap Snapshot) float64 {
	var part *Partition
	name := j.Partition
	for i := range snap.Partitions {
		p := &snap.Partitions[i]
		if p.Name == name || (name == "" && p.Default) {
			part = p
			break
		}
	}
	return billing(&j, part, &snap)
}

func billing(j *Job, part *Partition, snap *Snapshot) float64 {
	w := defaultBilling
	if part != nil && part.Billing != nil {
		w = *part.Billing
	}
	cpus := float64(max(1, j.Req.CPUs))
	mem := float64(j.Req.Mem)
	gpus := 0.0
	if len(j.Alloc.GPUs) > 0 || len(j.Alloc.CPUs) > 0 {
		if len(j.Alloc.CPUs) > 0 {
			cpus = float64(len(j.Alloc.CPUs))
		}
		mem = float64(j.Alloc.Mem)
		for _, g := range j.Alloc.GPUs {
			if g.Mem == 0 {
				gpus++
				continue
			}
			if total := gpuTotalMem(snap, g.UUID); total > 0 {
				gpus += min(1, float64(g.Mem)/float64(total))
			}
		}
	} else if j.Req.GPUMem > 0 {
		if total := largestGPU(snap, j.Req.GPUType); total > 0 {
			gpus = float64(max(1, j.Req.GPUs)) * min(1, float64(j.Req.GPUMem)/float64(total))
		}
	} else {
		gpus = float64(j.Req.GPUs)
	}
	parts := [3]float64{w.CPU * cpus, w.MemGiB * mem / float64(GiB), w.GPU * gpus}
	if snap.Config.Flags&FlagMaxTRES != 0 {
		return max(parts[0], parts[1], parts[2])
	}
	return parts[0] + parts[1] + parts[2]
}

func gpuTotalMem(snap *Snapshot, uuid string) int64 {
	for _, n := range snap.Nodes {
		for _, g := range n.GPUs {
			if g.UUID == uuid {
				return g.TotalMem
			}
		}
	}
	return 0
}

func largestGPU(snap *Snapshot, typ string) int64 {
	var best int64
	for _, n := range snap.Nodes {
		for _, g := range n.GPUs {
			if typeMatches(g.Type, typ) {
				best = max(best, g.TotalMem)
			}
		}
	}
	return best
}

// usageFactor is the job's QOS UsageFactor; jobs without a known QOS pay 1.
func usageFactor(snap *Snapshot, qos string) float64 {
	for _, q := range snap.QOS {
		if q.Name == qos {
			return max(0, q.UsageFactor)
		}
	}
	return 1
}

// Charge is the usage a job accrues by running for d: billing × seconds ×
// its QOS UsageFactor. A UsageFactor of 0 makes filler work free.
func Charge(j Job, snap Snapshot, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return Billing(j, snap) * d.Seconds() * usageFactor(&snap, j.QOS)
}

// AdvanceUsage moves the usage records from snap.Now to `to`: every record
// decays by PriorityDecayHalfLife, and every running job is charged for the
// time it ran in between, each instant's charge decayed from that instant
// (the integral of rate × 2^(-(to-s)/halfLife)). The daemon and the
// simulator call it between passes so that both age usage alike. The result
// has one record per association, sorted, all as of `to`.
func AdvanceUsage(snap Snapshot, to time.Time) []Usage {
	acc := map[assocKey]float64{}
	for _, u := range snap.Usage {
		acc[assocKey{u.Account, u.User}] += DecayUsage(u.Raw, to.Sub(u.AsOf), snap.Config.DecayHalfLife)
	}
	t := buildShareTree(&snap)
	hl := snap.Config.DecayHalfLife.Seconds()
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if j.State != slurm.Running {
			continue
		}
		// A start counts in whole seconds, as everywhere in the core (and
		// as Slurm's time_t): the daemon charges up to whole seconds too.
		from := snap.Now
		if start := time.Unix(j.Start.Unix(), 0); start.After(from) {
			from = start
		}
		secs := to.Sub(from).Seconds()
		if secs <= 0 {
			continue
		}
		rate := Billing(*j, snap) * usageFactor(&snap, j.QOS)
		if rate == 0 {
			continue
		}
		charge := rate * secs
		if hl > 0 {
			charge = rate * hl / math.Ln2 * (1 - math.Exp2(-secs/hl))
		}
		key := assocKey{j.Account, j.User}
		if ai, ok := t.assoc(j.Account, j.User); ok {
			key = assocKey{t.nodes[ai].account, j.User}
		}
		acc[key] += charge
	}
	out := make([]Usage, 0, len(acc))
	for k, raw := range acc {
		out = append(out, Usage{Account: k.account, User: k.user, Raw: raw, AsOf: to})
	}
	slices.SortFunc(out, func(a, b Usage) int {
		return cmp.Or(cmp.Compare(a.Account, b.Account), cmp.Compare(a.User, b.User))
	})
	return out
}

// NextUsageReset is when PriorityUsageResetPeriod next clears all usage
// after a moment last, as priority_multifactor.c's _next_reset computes it
// in loc: the next midnight (DAILY), the next Sunday's (WEEKLY), the first
// of the next month (MONTHLY), of April, July, October or January
// (QUARTERLY), of January (YEARLY). Zero for NONE and NOW (NOW clears once,
// when the daemon starts) and for anything else.
func NextUsageReset(period string, last time.Time, loc *time.Location) time.Time {
	t := last.In(loc)
	y, m, d := t.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, loc)
	switch period {
	case "DAILY":
		return midnight.AddDate(0, 0, 1)
	case "WEEKLY":
		return midnight.AddDate(0, 0, 7-int(t.Weekday()))
	case "MONTHLY":
		return time.Date(y, m+1, 1, 0, 0, 0, 0, loc)
	case "QUARTERLY":
		return time.Date(y, ((m-1)/3+1)*3+1, 1, 0, 0, 0, 0, loc)
	case "YEARLY":
		return time.Date(y+1, 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Time{}
}

// ResetUsage is every record cleared as of at: what usage is after
// PriorityUsageResetPeriod's reset (one record per association, kept so
// that the reset is stored).
func ResetUsage(us []Usage, at time.Time) []Usage {
	out := make([]Usage, 0, len(us))
	for _, u := range us {
		out = append(out, Usage{Account: u.Account, User: u.User, AsOf: at})
	}
	return out
}
