package sched

import (
	"fmt"
	"slices"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// SubmitError is a submission refused as slurmctld refuses it.
type SubmitError struct {
	Code slurm.Errno
	// Msg is Slurm's text for Code, which sbatch prints after "Batch job
	// submission failed: ".
	Msg string
	// Notes are lines the controller sends before the refusal, which sbatch
	// prints as errors of their own ("Memory specification can not be
	// satisfied").
	Notes []string
	// Detail is slurm-lite's explanation with numbers, for the daemon's log
	// and for a hint after Slurm's lines; Slurm prints nothing like it.
	Detail string
	// Retry is true when sbatch should sleep and try again (EAGAIN).
	Retry bool
}

func (e *SubmitError) Error() string { return e.Msg }

// refuse is a refusal with only our own explanation.
func refuse(code slurm.Errno, detail string) *SubmitError {
	return &SubmitError{Code: code, Msg: code.Error(), Detail: detail, Retry: code == slurm.EAGAIN}
}

// refuseNoted is a refusal that Slurm precedes with a line of its own.
func refuseNoted(code slurm.Errno, note string) *SubmitError {
	return &SubmitError{Code: code, Msg: code.Error(), Notes: []string{note}, Detail: note}
}

// CheckSubmit refuses a submission the way slurmctld does, in its order:
// MaxJobCount (every job record counts, finished ones still kept included;
// an array counts its tasks), the partition, the account (once accounts are
// configured a user no account lists is refused, unless
// AllowUnlistedUsers), the QOS and its MaxSubmitJobsPerUser, MaxArraySize,
// and a request no node of the partition could ever satisfy. It returns nil
// or a *SubmitError. Limits that only make a job wait (MaxTime, per-user
// running limits) are not refusals: Cycle reports them as reasons.
func CheckSubmit(job Job, snap Snapshot) error {
	cfg := &snap.Config
	tasks := max(1, len(job.ArrayTasks))
	if len(snap.Jobs)+tasks >= cfg.maxJobCount() {
		return refuse(slurm.EAGAIN, fmt.Sprintf("MaxJobCount limit (%d) reached", cfg.maxJobCount()))
	}
	p := newPass(&snap)
	if job.State == "" {
		job.State = slurm.Pending
	}
	pj := p.resolve(&job)
	if pj.part < 0 {
		if job.Partition == "" {
			return refuse(slurm.ErrInvalidPartitionName, "no partition given and none is the default")
		}
		return refuseNoted(slurm.ErrInvalidPartitionName, fmt.Sprintf("invalid partition specified: %s", job.Partition))
	}
	if pj.assoc < 0 && !p.admitsNewUser(&job) {
		return refuse(slurm.ErrInvalidAccount, fmt.Sprintf("user %s has no association with account %q", job.User, job.Account))
	}
	if pj.qos == -2 {
		return refuse(slurm.ErrInvalidQOS, fmt.Sprintf("QOS %q does not exist", job.QOS))
	}
	if pj.qos >= 0 {
		q := &snap.QOS[pj.qos]
		if q.MaxSubmitJobsPerUser > 0 {
			n := 0
			for i := range snap.Jobs {
				j := &snap.Jobs[i]
				if j.User == job.User && j.QOS == job.QOS && !j.State.Finished() {
					n++
				}
			}
			if n+tasks > q.MaxSubmitJobsPerUser {
				return refuse(slurm.ErrAccountingPolicy, fmt.Sprintf("%s has %d jobs in QOS %s, MaxSubmitJobsPerUser is %d", job.User, n, q.Name, q.MaxSubmitJobsPerUser))
			}
		}
	}
	if len(job.ArrayTasks) > 0 && slices.Max(job.ArrayTasks) >= cfg.maxArraySize() {
		return refuse(slurm.ErrInvalidArray, fmt.Sprintf("task ids must be below MaxArraySize=%d", cfg.maxArraySize()))
	}
	return p.checkFits(&pj)
}

// admitsNewUser: without configured accounts everyone shares the default
// account, and with AllowUnlistedUsers so does a user no account lists; a
// first-time user has no association in the tree yet but is admitted,
// provided the job names no account or that one: any other is no
// association of theirs (Slurm's "Invalid account").
func (p *pass) admitsNewUser(j *Job) bool {
	t := p.tree
	if !t.configured {
		return j.Account == "" || j.Account == t.defAccount
	}
	if _, listed := t.defaults[j.User]; listed {
		return false
	}
	return t.unlisted && (j.Account == "" || j.Account == t.defAccount)
}

// checkFits refuses a request that no node of the partition could satisfy
// even empty: more GPUs (of the type) than any node has, more GPU memory
// than its largest GPU, more CPUs or memory than the node. Drained GPUs
// count: they may come back.
func (p *pass) checkFits(pj *pjob) error {
	r := &pj.job.Req
	need := r.GPUs
	if r.GPUMem > 0 {
		need = max(1, r.GPUs)
	}
	typeKnown := r.GPUType == ""
	var mostGPUs, mostCPUs int
	var mostMem, biggestGPU int64
	for n, node := range p.snap.Nodes {
		if !p.partHasNode(pj.part, n) {
			continue
		}
		gpus := 0
		for _, g := range node.GPUs {
			if !typeMatches(g.Type, r.GPUType) {
				continue
			}
			typeKnown = true
			biggestGPU = max(biggestGPU, g.TotalMem)
			if r.GPUMem == 0 || g.TotalMem >= r.GPUMem {
				gpus++
			}
		}
		if gpus >= need && node.CPUs >= max(1, r.CPUs) && node.Mem >= r.Mem {
			return nil
		}
		mostGPUs, mostCPUs, mostMem = max(mostGPUs, gpus), max(mostCPUs, node.CPUs), max(mostMem, node.Mem)
	}
	switch {
	case !typeKnown:
		// Real Slurm 22.05 refuses --gpus=abc so (golden sbatch_gpus_bad.txt).
		return refuse(slurm.ErrRequestedNodeConfigUnavailable, fmt.Sprintf("no GPU of type %q on this machine", r.GPUType))
	case r.Mem > mostMem:
		return refuseNoted(slurm.ErrRequestedNodeConfigUnavailable, "Memory specification can not be satisfied")
	case max(1, r.CPUs) > mostCPUs:
		return refuse(slurm.ErrRequestedNodeConfigUnavailable, fmt.Sprintf("needs %d CPUs, the largest node has %d", max(1, r.CPUs), mostCPUs))
	case r.GPUMem > biggestGPU:
		return refuse(slurm.ErrRequestedNodeConfigUnavailable, fmt.Sprintf("needs %s of GPU memory, the largest GPU has %s", fmtGiB(r.GPUMem), fmtGiB(biggestGPU)))
	case r.GPUMem > 0:
		return refuse(slurm.ErrRequestedNodeConfigUnavailable, fmt.Sprintf("needs %d GPUs with %s of memory each, the largest node has %d", need, fmtGiB(r.GPUMem), mostGPUs))
	}
	return refuse(slurm.ErrRequestedNodeConfigUnavailable, fmt.Sprintf("needs %d GPUs, the largest node has %d", need, mostGPUs))
}
