package sched

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Budgets of TRES-minutes: an account's GrpTRESMins.
//
// Slurm checks an association's GrpTRESMins against usage_tres_raw, the
// association's usage of each TRES: every running job's TRES × seconds ×
// its QOS UsageFactor, charged to the association and every account above
// it, decayed by PriorityDecayHalfLife and cleared by
// PriorityUsageResetPeriod like fair-share usage (acct_policy.c,
// acct_policy_job_runnable_post_select; priority_multifactor.c,
// _apply_new_usage). A job that wants a TRES whose used minutes (whole
// minutes, rounded down) have reached the limit waits with
// AssocGrp<TRES>Minutes; running jobs are never stopped by it.
//
// The core is given the runs instead of a running counter: usage is a
// function of the runs since the last reset (AccountTRESUsage), so the
// budget survives restarts with the job records and needs no store of its
// own.

// TRESMins are TRES-minutes per TRES; 0 is no limit.
type TRESMins struct {
	GPU     int64 // gres/gpu
	CPU     int64 // cpu
	Billing int64 // billing
}

// Any reports whether any limit is set.
func (m TRESMins) Any() bool { return m.GPU > 0 || m.CPU > 0 || m.Billing > 0 }

// TRESUsage is an account's decayed usage per TRES, in TRES-seconds, its
// sub-accounts' included.
type TRESUsage struct {
	Account string
	GPU     float64
	CPU     float64
	Billing float64
}

// Run is a job's run for AccountTRESUsage: Job with Start (and its
// allocation), and End, zero while it runs.
type Run struct {
	Job Job
	End time.Time
}

// AccountTRESUsage is each account's usage per TRES at snap.Now from the
// runs given, counted from since (the last PriorityUsageResetPeriod reset;
// zero: from each run's start): every run's TRES × seconds × UsageFactor,
// each instant's charge decayed by PriorityDecayHalfLife to Now (the same
// integral as AdvanceUsage), charged to the run's account and every
// account above it. Runs whose account is not in the tree are left out.
func AccountTRESUsage(snap Snapshot, runs []Run, since time.Time) []TRESUsage {
	t := buildShareTree(&snap)
	parent := accountParents(&snap)
	hl := snap.Config.DecayHalfLife.Seconds()
	now := snap.Now
	acc := tresTotals{}
	for i := range runs {
		r := &runs[i]
		j := &r.Job
		from, to, ok := runSpan(r, since, now)
		if !ok {
			continue
		}
		f := usageFactor(&snap, j.QOS) * decayedLength(from, to, now, hl)
		gpus, cpus := jobGPUs(j, &snap), jobCPUs(j)
		bill := billing(j, partitionOf(&snap, j.Partition), &snap)
		ai, ok := t.assoc(j.Account, j.User)
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for a := t.nodes[ai].account; a != "" && !seen[a]; a = parent[a] {
			seen[a] = true
			acc.add(a, gpus*f, cpus*f, bill*f)
		}
	}
	return acc.sorted()
}

// runSpan is the part of a run that counts towards usage at now: from its
// start, or since when later, to its end, or now while it runs, in whole
// seconds as its record keeps them; ok is false when nothing of it does.
func runSpan(r *Run, since, now time.Time) (from, to time.Time, ok bool) {
	if r.Job.Start.IsZero() {
		return time.Time{}, time.Time{}, false
	}
	from = time.Unix(r.Job.Start.Unix(), 0)
	if from.Before(since) {
		from = since
	}
	to = now
	if !r.End.IsZero() && r.End.Before(now) {
		to = time.Unix(r.End.Unix(), 0)
	}
	return from, to, to.After(from)
}

// decayedLength is the length of [from, to] in seconds with each instant
// decayed by the half-life hl (seconds; 0 for none) to now: a charge per
// second times it is the span's usage at now (AdvanceUsage's integral).
func decayedLength(from, to, now time.Time, hl float64) float64 {
	if hl <= 0 {
		return to.Sub(from).Seconds()
	}
	return hl / math.Ln2 * (math.Exp2(-now.Sub(to).Seconds()/hl) - math.Exp2(-now.Sub(from).Seconds()/hl))
}

// tresTotals sums TRES usage by name (an account's or a QOS's).
type tresTotals map[string]*TRESUsage

func (t tresTotals) add(name string, gpu, cpu, bill float64) {
	u := t[name]
	if u == nil {
		u = &TRESUsage{Account: name}
		t[name] = u
	}
	u.GPU += gpu
	u.CPU += cpu
	u.Billing += bill
}

// sorted is the totals by name.
func (t tresTotals) sorted() []TRESUsage {
	out := make([]TRESUsage, 0, len(t))
	for _, u := range t {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b TRESUsage) int { return strings.Compare(a.Account, b.Account) })
	return out
}

// accountParents maps each configured account to its parent; the root's
// parent is "".
func accountParents(snap *Snapshot) map[string]string {
	parent := map[string]string{}
	for _, a := range snap.Accounts {
		if a.Name == rootAccount {
			continue
		}
		p := a.Parent
		if p == "" {
			p = rootAccount
		}
		parent[a.Name] = p
	}
	return parent
}

func partitionOf(snap *Snapshot, name string) *Partition {
	for i := range snap.Partitions {
		p := &snap.Partitions[i]
		if p.Name == name || (name == "" && p.Default) {
			return p
		}
	}
	return nil
}

// jobGPUs is the gres/gpu a job holds (a running job) or asks for (a
// pending one): whole GPUs, a shared GPU counting the part of its memory
// reserved, as billing counts it.
func jobGPUs(j *Job, snap *Snapshot) float64 {
	if len(j.Alloc.GPUs) > 0 {
		n := 0.0
		for _, g := range j.Alloc.GPUs {
			if g.Mem == 0 {
				n++
			} else if total := gpuTotalMem(snap, g.UUID); total > 0 {
				n += min(1, float64(g.Mem)/float64(total))
			}
		}
		return n
	}
	if len(j.Alloc.CPUs) > 0 {
		return 0 // running without GPUs
	}
	if j.Req.GPUMem > 0 {
		if total := largestGPU(snap, j.Req.GPUType); total > 0 {
			return float64(max(1, j.Req.GPUs)) * min(1, float64(j.Req.GPUMem)/float64(total))
		}
	}
	return float64(j.Req.GPUs)
}

func jobCPUs(j *Job) float64 {
	if len(j.Alloc.CPUs) > 0 {
		return float64(len(j.Alloc.CPUs))
	}
	return float64(max(1, j.Req.CPUs))
}

// quotaIndex is the pass's view of budgets: limits and usage by account,
// and (for AccountingStorageEnforce safe) the TRES-minutes the running
// jobs under each account may still use: TRES × the time left to their
// limits (Slurm's grp_used_tres_run_secs), jobs started in the pass
// included.
type quotaIndex struct {
	parent map[string]string
	limits map[string]TRESMins
	usage  map[string]TRESUsage
	run    map[string][3]float64 // cpu, billing, gres/gpu minutes
	// The other association limits (assoclimits.go): any is set when some
	// account or user has one; held is what the running jobs under each
	// account hold (cpu, billing, gres/gpu), jobs the running jobs of each
	// user association (by tree node).
	any      bool
	accounts map[string]*Account
	held     map[string][3]float64
	jobs     map[int]int
	userMax  map[assocKey]int
}

func newQuotaIndex(snap *Snapshot) *quotaIndex {
	q := &quotaIndex{limits: map[string]TRESMins{}, usage: map[string]TRESUsage{}, run: map[string][3]float64{},
		accounts: map[string]*Account{}, held: map[string][3]float64{}, jobs: map[int]int{}, userMax: map[assocKey]int{}}
	for i := range snap.Accounts {
		a := &snap.Accounts[i]
		q.accounts[a.Name] = a
		if a.GrpTRESMins.Any() {
			q.limits[a.Name] = a.GrpTRESMins
		}
		if a.GrpTRESMins.Any() || a.GrpTRES.Any() || a.GrpTRESRunMins.Any() || a.MaxTRESMinsPerJob.Any() || a.MaxJobs > 0 {
			q.any = true
		}
		for _, u := range a.Users {
			if u.MaxJobs > 0 {
				q.userMax[assocKey{a.Name, u.Name}] = u.MaxJobs
				q.any = true
			}
		}
	}
	if !q.any {
		return q
	}
	q.parent = accountParents(snap)
	for _, u := range snap.TRESUsage {
		q.usage[u.Account] = u
	}
	return q
}

// countRun adds (sign 1) or removes (-1) a running job to its user
// association's count and, with its TRES and its TRES-minutes left, to its
// account and those above it (safe, GrpTRES, GrpTRESRunMins).
func (p *pass) countRun(pj *pjob, sign int) {
	q := p.quota
	if !q.any || pj.assoc < 0 {
		return
	}
	q.jobs[pj.assoc] += sign
	j := pj.job
	start := p.now
	if !j.Start.IsZero() {
		start = j.Start.Unix()
	}
	left := 0.0
	switch {
	case pj.limit >= forever:
		left = math.Inf(1)
	case start+pj.limit > p.now:
		left = float64(start+pj.limit-p.now) / 60
	}
	wants := [3]float64{jobCPUs(j), p.jobBilling(pj), jobGPUs(j, p.snap)}
	seen := map[string]bool{}
	for a := p.tree.nodes[pj.assoc].account; a != "" && !seen[a]; a = q.parent[a] {
		seen[a] = true
		r, h := q.run[a], q.held[a]
		for i := range r {
			if wants[i] > 0 {
				r[i] += float64(sign) * wants[i] * left
				h[i] += float64(sign) * wants[i]
			}
		}
		q.run[a], q.held[a] = r, h
	}
}

// assocGrpTRESMins is the budget a job waits for: the first account, from
// its own up, whose GrpTRESMins of a TRES the job wants is used up (in
// Slurm's TRES order: cpu, billing, gres/gpu).
func (p *pass) assocGrpTRESMins(pj *pjob) (blocker, bool) {
	q := p.quota
	if len(q.limits) == 0 || pj.assoc < 0 {
		return blocker{}, false
	}
	j := pj.job
	wants := [3]float64{jobCPUs(j), p.jobBilling(pj), jobGPUs(j, p.snap)}
	qosSet := p.qosGrpTRESMinsSet(pj)
	seen := map[string]bool{}
	for a := p.tree.nodes[pj.assoc].account; a != "" && !seen[a]; a = q.parent[a] {
		seen[a] = true
		lim, ok := q.limits[a]
		if !ok {
			continue
		}
		u := q.usage[a]
		for i, c := range []struct {
			tres, unit string
			limit      int64
			used       float64
			reason     slurm.Reason
		}{
			{"cpu", "CPU", lim.CPU, u.CPU, slurm.ReasonAssocGrpCPUMinutes},
			{"billing", "billing", lim.Billing, u.Billing, slurm.ReasonAssocGrpBillingMinutes},
			{"gres/gpu", "GPU", lim.GPU, u.GPU, slurm.ReasonAssocGrpGRESMinutes},
		} {
			used := int64(c.used / 60) // acct_policy.c: usage_tres_raw / 60, whole minutes
			if c.limit == 0 || wants[i] <= 0 || qosSet[i] {
				continue
			}
			if used >= c.limit {
				return blocker{reason: c.reason, expected: p.resetUnix(),
					detail: fmt.Sprintf("account %s has used %d of its GrpTRESMins %s=%d minutes, 0 left; %s",
						a, used, c.tres, c.limit, p.resetWords())}, true
			}
			if !p.cfg.SafeLimits {
				continue
			}
			// safe: the job starts only if its whole time limit fits what
			// is left beside what the running jobs may still use
			// (_validate_tres_usage_limits, TRES_USAGE_REQ_NOT_SAFE_WITH_USAGE).
			req := math.Inf(1)
			if pj.limit < forever {
				req = wants[i] * float64(pj.limit) / 60
			}
			run := q.run[a][i]
			if req+run > float64(c.limit-used) {
				return blocker{reason: c.reason, expected: p.resetUnix(),
					detail: fmt.Sprintf("asks for %s %s-minutes (its time limit), account %s has %d of its GrpTRESMins %s=%d left and its running jobs may use %s of them (AccountingStorageEnforce safe); %s",
						fmtMins(req), c.unit, a, c.limit-used, c.tres, c.limit, fmtMins(run), p.resetWords())}, true
			}
		}
	}
	return blocker{}, false
}

// assocGrpTRESMinsNeverFits is a job whose time limit × TRES is more than
// a GrpTRESMins of its account or one above: under DenyOnLimit Slurm
// refuses it at submission (acct_policy_validate, _validate_time_limit
// with strict checking). A job that gives no time limit is left alone:
// Slurm cuts its limit to what the budget allows instead.
func (p *pass) assocGrpTRESMinsNeverFits(pj *pjob) (blocker, bool) {
	q := p.quota
	j := pj.job
	if len(q.limits) == 0 || pj.assoc < 0 || j.TimeLimit <= 0 || j.TimeLimit >= Unlimited {
		return blocker{}, false
	}
	mins := j.TimeLimit.Minutes()
	wants := [3]float64{jobCPUs(j), p.jobBilling(pj), jobGPUs(j, p.snap)}
	seen := map[string]bool{}
	for a := p.tree.nodes[pj.assoc].account; a != "" && !seen[a]; a = q.parent[a] {
		seen[a] = true
		lim, ok := q.limits[a]
		if !ok {
			continue
		}
		for i, c := range []struct {
			tres, unit string
			limit      int64
			reason     slurm.Reason
		}{
			{"cpu", "CPU", lim.CPU, slurm.ReasonAssocGrpCPUMinutes},
			{"billing", "billing", lim.Billing, slurm.ReasonAssocGrpBillingMinutes},
			{"gres/gpu", "GPU", lim.GPU, slurm.ReasonAssocGrpGRESMinutes},
		} {
			if c.limit == 0 || wants[i] <= 0 || wants[i]*mins <= float64(c.limit) {
				continue
			}
			return blocker{reason: c.reason, detail: fmt.Sprintf("asks for %s %s-minutes (%s × %s), more than account %s's GrpTRESMins %s=%d",
				trimFloat(wants[i]*mins), c.unit, trimFloat(wants[i]), fmtDuration(j.TimeLimit), a, c.tres, c.limit)}, true
		}
	}
	return blocker{}, false
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// fmtMins prints TRES-minutes: whole, rounded up, or UNLIMITED.
func fmtMins(m float64) string {
	if math.IsInf(m, 1) {
		return "UNLIMITED"
	}
	return strconv.FormatFloat(math.Max(0, math.Ceil(m-1e-9)), 'f', 0, 64)
}

// qosGrpTRESMinsSet says which TRES (cpu, billing, gres/gpu) a QOS of the
// job has a GrpTRESMins for: the association's of those TRES are not
// checked (acct_policy.c skips an association limit the QOS set, the
// QOS's being the one that holds).
func (p *pass) qosGrpTRESMinsSet(pj *pjob) [3]bool {
	var set [3]bool
	for _, qi := range pj.qosList() {
		for i, l := range p.snap.QOS[qi].GrpTRESMins.of() {
			set[i] = set[i] || l > 0
		}
	}
	return set
}

// resetUnix is the next usage reset, 0 when none comes.
func (p *pass) resetUnix() int64 {
	if r := p.cfg.NextUsageReset; !r.IsZero() {
		return r.Unix()
	}
	return 0
}

// resetWords says when a spent budget comes back.
func (p *pass) resetWords() string {
	if r := p.cfg.NextUsageReset; !r.IsZero() {
		return "usage resets at " + r.Format("2006-01-02T15:04:05")
	}
	if hl := p.cfg.DecayHalfLife; hl > 0 {
		return "usage decays by half every " + fmtDuration(hl) + " (PriorityDecayHalfLife)"
	}
	return "usage never resets (PriorityUsageResetPeriod NONE)"
}

// PrevUsageReset is the last PriorityUsageResetPeriod reset at or before
// t: the boundary NextUsageReset gives from just before it. Zero for NONE,
// NOW and anything else.
func PrevUsageReset(period string, t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	y, m, d := l.Date()
	var b time.Time
	switch period {
	case "DAILY":
		b = time.Date(y, m, d, 0, 0, 0, 0, loc)
	case "WEEKLY":
		b = time.Date(y, m, d-int(l.Weekday()), 0, 0, 0, 0, loc)
	case "MONTHLY":
		b = time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case "QUARTERLY":
		b = time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, loc)
	case "YEARLY":
		b = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	}
	return b
}
