package sched

import (
	"fmt"
	"math"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// An association's limits besides its budget (quota.go), as acct_policy.c
// checks them after the QOS's (a limit the job's QOS sets for the same
// thing goes before the association's, which is then not checked): MaxJobs on the user's association
// (acct_policy_job_runnable_pre_select), then for each account from the
// job's up GrpTRESMins, GrpTRES and GrpTRESRunMins, and for the nearest
// account that sets one, MaxTRESMinsPerJob (a max_* limit, inherited).
// Each TRES in Slurm's id order: cpu, billing, gres/gpu.

// tresNames are the TRES of the [3] arrays: cpu, billing, gres/gpu.
var tresNames = [3]string{"cpu", "billing", "gres/gpu"}

// of is m's limits in the [3] order.
func (m TRESMins) of() [3]int64 { return [3]int64{m.CPU, m.Billing, m.GPU} }

// assocLimits is the first association limit that holds the job.
func (p *pass) assocLimits(pj *pjob) (blocker, bool) {
	q := p.quota
	if !q.any || pj.assoc < 0 {
		return blocker{}, false
	}
	j := pj.job
	node := &p.tree.nodes[pj.assoc]
	if limit := p.maxJobs(node.account, j.User); limit > 0 && !p.qosMaxJobsSet(pj) && q.jobs[pj.assoc] >= limit {
		return blocker{reason: slurm.ReasonAssocMaxJobsLimit,
			detail: fmt.Sprintf("%s runs %d jobs in account %s, its MaxJobs is %d", j.User, q.jobs[pj.assoc], node.account, limit)}, true
	}
	if b, ok := p.assocGrpTRESMins(pj); ok {
		return b, true
	}
	wants := [3]float64{jobCPUs(j), p.jobBilling(pj), jobGPUs(j, p.snap)}
	reqMins := [3]float64{}
	for i := range wants {
		reqMins[i] = math.Inf(1)
		if pj.limit < forever {
			reqMins[i] = wants[i] * float64(pj.limit) / 60
		}
	}
	grp := [3]slurm.Reason{slurm.ReasonAssocGrpCpuLimit, slurm.ReasonAssocGrpBilling, slurm.ReasonAssocGrpGRES}
	grpRun := [3]slurm.Reason{slurm.ReasonAssocGrpCPURunMinutesLimit, slurm.ReasonAssocGrpBillingRunMinutes, slurm.ReasonAssocGrpGRESRunMinutes}
	perJob := [3]slurm.Reason{slurm.ReasonAssocMaxCpuMinutesPerJobLimit, slurm.ReasonAssocMaxBillingMinutesPerJob, slurm.ReasonAssocMaxGRESMinutesPerJob}
	units := [3]string{"CPUs", "billing", "GPUs"}
	seen := map[string]bool{}
	perJobDone := false
	for a := node.account; a != "" && !seen[a]; a = q.parent[a] {
		seen[a] = true
		acct := q.accounts[a]
		if acct == nil {
			continue
		}
		held, run := q.held[a], q.run[a]
		for i, limit := range acct.GrpTRES.of() {
			if limit > 0 && wants[i] > 0 && held[i]+wants[i] > float64(limit) {
				return blocker{reason: grp[i], detail: fmt.Sprintf("account %s's running jobs hold %s %s and this one asks for %s, its GrpTRES is %s=%d",
					a, trimFloat(held[i]), units[i], trimFloat(wants[i]), tresNames[i], limit)}, true
			}
		}
		for i, limit := range acct.GrpTRESRunMins.of() {
			if limit > 0 && wants[i] > 0 && run[i]+reqMins[i] > float64(limit) {
				return blocker{reason: grpRun[i], detail: fmt.Sprintf("asks for %s %s-minutes (its time limit), account %s's running jobs may still use %s, its GrpTRESRunMins is %s=%d",
					fmtMins(reqMins[i]), tresNames[i], a, fmtMins(run[i]), tresNames[i], limit)}, true
			}
		}
		if !perJobDone && acct.MaxTRESMinsPerJob.Any() {
			perJobDone = true
			if b, ok := maxTRESMinsPerJob(acct, wants, reqMins, perJob); ok {
				return b, true
			}
		}
	}
	return blocker{}, false
}

// maxTRESMinsPerJob is an account's MaxTRESMinsPerJob the job breaks.
func maxTRESMinsPerJob(acct *Account, wants, reqMins [3]float64, reasons [3]slurm.Reason) (blocker, bool) {
	for i, limit := range acct.MaxTRESMinsPerJob.of() {
		if limit > 0 && wants[i] > 0 && reqMins[i] > float64(limit) {
			return blocker{reason: reasons[i], detail: fmt.Sprintf("asks for %s %s-minutes (its time limit), account %s's MaxTRESMinsPerJob is %s=%d",
				fmtMins(reqMins[i]), tresNames[i], acct.Name, tresNames[i], limit)}, true
		}
	}
	return blocker{}, false
}

// qosMaxJobsSet says whether a QOS of the job has a MaxJobsPerUser: the
// association's MaxJobs is then not checked (acct_policy.c's pre-select
// check, qos_rec.max_jobs_pu == INFINITE).
func (p *pass) qosMaxJobsSet(pj *pjob) bool {
	for _, qi := range pj.qosList() {
		if p.snap.QOS[qi].MaxJobsPerUser > 0 {
			return true
		}
	}
	return false
}

// maxJobs is a user association's MaxJobs: its own, else the nearest
// account's above it (max_* limits are inherited); 0 for none.
func (p *pass) maxJobs(account, user string) int {
	q := p.quota
	if n := q.userMax[assocKey{account, user}]; n > 0 {
		return n
	}
	seen := map[string]bool{}
	for a := account; a != "" && !seen[a]; a = q.parent[a] {
		seen[a] = true
		if acct := q.accounts[a]; acct != nil && acct.MaxJobs > 0 {
			return acct.MaxJobs
		}
	}
	return 0
}

// assocNeverFits is a limit no wait can meet, refused at submission under
// DenyOnLimit: MaxTRESMinsPerJob, or a GrpTRES the job alone is over.
func (p *pass) assocNeverFits(pj *pjob) (blocker, bool) {
	q := p.quota
	if !q.any || pj.assoc < 0 {
		return blocker{}, false
	}
	if b, ok := p.assocGrpTRESMinsNeverFits(pj); ok {
		return b, true
	}
	j := pj.job
	wants := [3]float64{jobCPUs(j), p.jobBilling(pj), jobGPUs(j, p.snap)}
	reqMins := [3]float64{}
	for i := range wants {
		if j.TimeLimit > 0 && j.TimeLimit < Unlimited {
			reqMins[i] = wants[i] * j.TimeLimit.Minutes()
		}
	}
	grp := [3]slurm.Reason{slurm.ReasonAssocGrpCpuLimit, slurm.ReasonAssocGrpBilling, slurm.ReasonAssocGrpGRES}
	perJob := [3]slurm.Reason{slurm.ReasonAssocMaxCpuMinutesPerJobLimit, slurm.ReasonAssocMaxBillingMinutesPerJob, slurm.ReasonAssocMaxGRESMinutesPerJob}
	seen := map[string]bool{}
	perJobDone := false
	for a := p.tree.nodes[pj.assoc].account; a != "" && !seen[a]; a = q.parent[a] {
		seen[a] = true
		acct := q.accounts[a]
		if acct == nil {
			continue
		}
		for i, limit := range acct.GrpTRES.of() {
			if limit > 0 && wants[i] > float64(limit) {
				return blocker{reason: grp[i], detail: fmt.Sprintf("asks for %s %s, more than account %s's GrpTRES %s=%d",
					trimFloat(wants[i]), tresNames[i], a, tresNames[i], limit)}, true
			}
		}
		if !perJobDone && acct.MaxTRESMinsPerJob.Any() {
			perJobDone = true
			if b, ok := maxTRESMinsPerJob(acct, wants, reqMins, perJob); ok {
				return b, true
			}
		}
	}
	return blocker{}, false
}
