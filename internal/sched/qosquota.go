package sched

import (
	"fmt"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// A QOS's budget: its GrpTRESMins, checked against the QOS's usage of each
// TRES, that of its jobs and of the jobs of the partitions it is the QOS
// of (priority_multifactor.c, _apply_new_usage). That usage decays by
// PriorityDecayHalfLife unless the QOS has NoDecay; PriorityUsageResetPeriod
// clears it either way (_reset_usage clears every QOS's usage in Slurm
// 22.05, NoDecay or not; sacctmgr's page says otherwise, the code rules).

// QOSTRESUsage is each QOS's usage per TRES at snap.Now from the runs
// given, counted from since as AccountTRESUsage counts, but charged to the
// job's QOS and its partition's, each decayed unless that QOS has
// NoDecay. TRESUsage.Account holds the QOS's name.
func QOSTRESUsage(snap Snapshot, runs []Run, since time.Time) []TRESUsage {
	hl := snap.Config.DecayHalfLife.Seconds()
	noDecay := map[string]bool{}
	for _, q := range snap.QOS {
		noDecay[q.Name] = q.NoDecay
	}
	now := snap.Now
	acc := tresTotals{}
	for i := range runs {
		r := &runs[i]
		j := &r.Job
		from, to, ok := runSpan(r, since, now)
		if !ok {
			continue
		}
		part := partitionOf(&snap, j.Partition)
		names := []string{j.QOS}
		if part != nil && part.QOS != "" && part.QOS != j.QOS {
			names = append(names, part.QOS)
		}
		gpus, cpus := jobGPUs(j, &snap), jobCPUs(j)
		bill := billing(j, part, &snap)
		factor := usageFactor(&snap, j.QOS)
		for _, n := range names {
			if n == "" {
				continue
			}
			decay := hl
			if noDecay[n] {
				decay = 0
			}
			f := factor * decayedLength(from, to, now, decay)
			acc.add(n, gpus*f, cpus*f, bill*f)
		}
	}
	return acc.sorted()
}

// qosGrpTRESMins is the QOS budget a job waits for: one of a TRES it wants
// whose used minutes have reached the QOS's GrpTRESMins.
func (p *pass) qosGrpTRESMins(pj *pjob, q *QOS) (blocker, bool) {
	if !q.GrpTRESMins.Any() {
		return blocker{}, false
	}
	var u TRESUsage
	for _, x := range p.snap.QOSUsage {
		if x.Account == q.Name {
			u = x
		}
	}
	j := pj.job
	wants := [3]float64{jobCPUs(j), p.jobBilling(pj), jobGPUs(j, p.snap)}
	used := [3]float64{u.CPU, u.Billing, u.GPU}
	reasons := [3]slurm.Reason{slurm.ReasonQOSGrpCPUMinutes, slurm.ReasonQOSGrpBillingMinutes, slurm.ReasonQOSGrpGRESMinutes}
	for i, limit := range q.GrpTRESMins.of() {
		mins := int64(used[i] / 60)
		if limit == 0 || wants[i] <= 0 || mins < limit {
			continue
		}
		when := p.resetWords()
		expected := p.resetUnix()
		if q.NoDecay && expected == 0 {
			when = "usage never decays (NoDecay) nor resets (PriorityUsageResetPeriod NONE)"
		} else if q.NoDecay {
			when = "usage never decays (NoDecay); it resets at " + p.cfg.NextUsageReset.Format("2006-01-02T15:04:05")
		}
		return blocker{reason: reasons[i], expected: expected,
			detail: fmt.Sprintf("QOS %s has used %d of its GrpTRESMins %s=%d minutes, 0 left; %s", q.Name, mins, tresNames[i], limit, when)}, true
	}
	return blocker{}, false
}
