package sched

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	// Detail is slurm-lite's explanation: what was asked, what exists here
	// and, where there is one, the fix. The daemon logs it and sends it as
	// the refusal's hint, which the commands print on a line of their own
	// after Slurm's (which tools parse); Slurm prints nothing like it.
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
func refuseNoted(code slurm.Errno, note, detail string) *SubmitError {
	return &SubmitError{Code: code, Msg: code.Error(), Notes: []string{note}, Detail: detail}
}

// CheckSubmit refuses a submission the way slurmctld does, in its order:
// MaxJobCount (every job record counts, finished ones still kept included;
// an array counts its tasks), the partition, the account (once accounts are
// configured a user no account lists is refused, unless
// AllowUnlistedUsers), the QOS and its MaxSubmitJobsPerUser, the user's
// share of MaxJobCount (MaxJobCountPerUser), MaxArraySize,
// the partition's MaxTime with EnforcePartLimits, and a request no node of
// the partition could ever satisfy. It returns nil or a *SubmitError.
// Limits that only make a job wait (per-user running limits; MaxTime
// without EnforcePartLimits) are not refusals: Cycle reports them as
// reasons.
func CheckSubmit(job Job, snap Snapshot) error {
	cfg := &snap.Config
	tasks := max(1, len(job.ArrayTasks))
	if len(snap.Jobs)+tasks >= cfg.maxJobCount() {
		return refuse(slurm.EAGAIN, fmt.Sprintf("MaxJobCount limit (%d) reached", cfg.maxJobCount()))
	}
	p := newCheckPass(&snap)
	if job.State == "" {
		job.State = slurm.Pending
	}
	pj := p.resolve(&job)
	if pj.part < 0 {
		if job.Partition == "" {
			return refuse(slurm.ErrDefaultPartitionNotSet,
				fmt.Sprintf("no partition was asked for and none is the default; the partitions here are %s: name one with --partition", p.partitionNames()))
		}
		return refuseNoted(slurm.ErrInvalidPartitionName, fmt.Sprintf("invalid partition specified: %s", job.Partition),
			fmt.Sprintf("asked for partition %q; the partitions here are %s", job.Partition, p.partitionNames()))
	}
	if pt := &snap.Partitions[pj.part]; pt.Closed {
		var open []string
		for _, o := range snap.Partitions {
			if !o.Closed {
				open = append(open, o.Name)
			}
		}
		state := "DRAIN"
		if pt.Down {
			state = "INACTIVE"
		}
		detail := fmt.Sprintf("partition %s is %s: it takes no new jobs", pt.Name, state)
		if len(open) > 0 {
			detail += "; the partitions that do are " + strings.Join(open, ", ")
		}
		return refuse(slurm.ErrPartitionNotAvail, detail)
	}
	if pj.assoc < 0 && !p.admitsNewUser(&job) {
		return refuse(slurm.ErrInvalidAccount, p.accountDetail(&job))
	}
	if err := p.checkAllowAccounts(&pj); err != nil {
		return err
	}
	if pj.qos == -2 {
		return refuse(slurm.ErrInvalidQOS, fmt.Sprintf("asked for QOS %q; the QOS here are %s", job.QOS, p.qosNames()))
	}
	for _, qi := range pj.qosList() {
		q := &snap.QOS[qi]
		if q.MaxSubmitJobsPerUser > 0 {
			n := 0
			for i := range snap.Jobs {
				j := &snap.Jobs[i]
				if j.User == job.User && !j.State.Finished() && p.usesQOS(j, q.Name) {
					n++
				}
			}
			if n+tasks > q.MaxSubmitJobsPerUser {
				return refuse(slurm.ErrAccountingPolicy,
					fmt.Sprintf("asked for %d more %s in QOS %s, where %s has %d pending or running; its MaxSubmitJobsPerUser is %d: wait for some to end",
						tasks, plural(tasks, "job", "jobs"), q.Name, job.User, n, q.MaxSubmitJobsPerUser))
			}
		}
		if !q.DenyOnLimit {
			continue
		}
		// DenyOnLimit: what would leave the job pending for ever, or
		// until the user's other jobs end when it alone is over a
		// per-user limit, is refused now.
		b, over := p.perJobLimit(&pj, q)
		if !over {
			b, over = p.perUserLimit(&pj, q, userCount{})
		}
		if !over && q.MaxGPUsPerUser > 0 && job.Req.GPUMem == 0 && job.Req.GPUs > q.MaxGPUsPerUser {
			b, over = blocker{reason: slurm.ReasonQOSMaxGRESPerUser, detail: fmt.Sprintf("asks for %d GPUs, QOS %s's MaxTRESPerUser is gres/gpu=%d",
				job.Req.GPUs, q.Name, q.MaxGPUsPerUser)}, true
		}
		if !over {
			b, over = p.assocNeverFits(&pj)
		}
		if over {
			return refuse(slurm.ErrAccountingPolicy, fmt.Sprintf("%s (%s; the QOS has DenyOnLimit)", b.detail, b.reason))
		}
	}
	if err := checkUserShare(&job, tasks, snap); err != nil {
		return err
	}
	if len(job.ArrayTasks) > 0 && slices.Max(job.ArrayTasks) >= cfg.maxArraySize() {
		if cfg.maxArraySize() <= 1 {
			return refuse(slurm.ErrInvalidArray, fmt.Sprintf("asked for array task ids up to %d; MaxArraySize is %d, which turns job arrays off", slices.Max(job.ArrayTasks), cfg.MaxArraySize))
		}
		return refuse(slurm.ErrInvalidArray, fmt.Sprintf("asked for array task ids up to %d; MaxArraySize is %d, so task ids go from 0 to %d",
			slices.Max(job.ArrayTasks), cfg.maxArraySize(), cfg.maxArraySize()-1))
	}
	if err := p.checkPartLimits(&pj); err != nil {
		return err
	}
	if r, n := snap.Ports, JobPorts(snap.Ports, job.Req); n > r.Size() {
		// What srun's step gets from slurmctld for a count beyond the
		// range (golden/resv_ports_too_many.txt).
		return refuse(slurm.ErrPortsInvalid, fmt.Sprintf("the job would hold %d ports while it runs (its tasks + 1, or srun's --resv-ports); MpiParams = \"ports=%d-%d\" holds %d: ask for fewer, or widen that range",
			n, r.Lo, r.Hi, r.Size()))
	}
	return p.checkFits(&pj)
}

// CheckUserShare is checkUserShare for tasks more records of user, made
// together (a crontab's entries, each a job, checked as one batch:
// checked one by one against the same snapshot, none would count the
// others).
func CheckUserShare(user string, tasks int, snap Snapshot) error {
	return checkUserShare(&Job{User: user}, tasks, snap)
}

// checkUserShare refuses a job that would take its user past
// MaxJobCountPerUser: the user's job records, counted as MaxJobCount counts
// them (each array task, and finished jobs until MinJobAge), plus the
// tasks asked for. Slurm has no such share; it is refused as QOS
// MaxSubmitJobsPerUser is (ESLURM_ACCOUNTING_POLICY), and sbatch does not
// retry it as it retries a full MaxJobCount: waiting in a loop would not
// free the user's own jobs.
func checkUserShare(job *Job, tasks int, snap Snapshot) error {
	share := snap.Config.MaxJobCountPerUser
	if share <= 0 {
		return nil
	}
	n := 0
	for i := range snap.Jobs {
		if snap.Jobs[i].User == job.User {
			n++
		}
	}
	if n+tasks <= share {
		return nil
	}
	return refuse(slurm.ErrAccountingPolicy, fmt.Sprintf(
		"%s holds %d %s (pending, running, or ended less than MinJobAge ago) and asked for %d more; one user may hold %d of MaxJobCount's %d (MaxJobCountPerUser), so that others can still submit: cancel what is not needed (scancel) and submit again once those have left the queue (MinJobAge after their end), or ask the administrator to raise MaxJobCountPerUser",
		job.User, n, plural(n, "job", "jobs"), tasks, share, snap.Config.maxJobCount()))
}

// checkPartLimits is EnforcePartLimits: a time limit over the partition's
// MaxTime is refused at submission (ESLURM_INVALID_TIME_LIMIT), instead of
// being taken and left pending for ever with reason PartitionTimeLimit.
// A limit not given (0) takes the partition's default, which is within it.
func (p *pass) checkPartLimits(pj *pjob) error {
	if !p.snap.Config.EnforcePartLimits {
		return nil
	}
	j, pt := pj.job, &p.snap.Partitions[pj.part]
	if j.TimeLimit <= 0 || pt.MaxTime <= 0 || pt.MaxTime >= Unlimited || j.TimeLimit <= pt.MaxTime {
		return nil
	}
	detail := fmt.Sprintf("asked for a time limit of %s; partition %s's MaxTime is %s: ask for %s or less",
		fmtDuration(j.TimeLimit), pt.Name, fmtDuration(pt.MaxTime), fmtDuration(pt.MaxTime))
	var longer []string
	for _, o := range p.snap.Partitions {
		if o.Name != pt.Name && !o.Down && !o.Closed && (o.MaxTime <= 0 || o.MaxTime >= j.TimeLimit) {
			longer = append(longer, fmt.Sprintf("%s (MaxTime %s)", o.Name, fmtDuration(cmp.Or(o.MaxTime, Unlimited))))
		}
	}
	if len(longer) > 0 {
		detail += ", or use partition " + strings.Join(longer, " or ")
	}
	return refuse(slurm.ErrInvalidTimeLimit, detail)
}

// checkAllowAccounts refuses a job whose account the partition's
// AllowAccounts leaves out, as slurmctld does (ESLURM_INVALID_ACCOUNT).
func (p *pass) checkAllowAccounts(pj *pjob) error {
	pt := &p.snap.Partitions[pj.part]
	if len(pt.AllowAccounts) == 0 || slices.Contains(pt.AllowAccounts, "ALL") {
		return nil
	}
	acct := pj.job.Account
	if pj.assoc >= 0 {
		acct = p.tree.nodes[pj.assoc].account
	} else if acct == "" {
		acct = p.tree.defAccount
	}
	if slices.Contains(pt.AllowAccounts, acct) {
		return nil
	}
	return refuse(slurm.ErrInvalidAccount, fmt.Sprintf("the job's account is %s; partition %s takes jobs of account %s only (AllowAccounts): use another partition, or an account it allows with --account",
		acct, pt.Name, strings.Join(pt.AllowAccounts, ", ")))
}

// partitionNames lists the partitions, the default marked as sinfo marks it.
func (p *pass) partitionNames() string {
	if len(p.snap.Partitions) == 0 {
		return "none"
	}
	names := make([]string, len(p.snap.Partitions))
	for i, pt := range p.snap.Partitions {
		names[i] = pt.Name
		if pt.Default {
			names[i] += "*"
		}
	}
	return strings.Join(names, ", ")
}

func (p *pass) qosNames() string {
	if len(p.snap.QOS) == 0 {
		return "none"
	}
	names := make([]string, len(p.snap.QOS))
	for i, q := range p.snap.QOS {
		names[i] = q.Name
	}
	return strings.Join(names, ", ")
}

// accountDetail says why a user has no association for the job, and which
// accounts they do have.
func (p *pass) accountDetail(j *Job) string {
	t := p.tree
	if !t.configured {
		return fmt.Sprintf("asked for account %q; no accounts are configured, so every job runs in account %s: leave --account out", j.Account, t.defAccount)
	}
	var mine []string
	for k := range t.assocs {
		if k.user == j.User {
			mine = append(mine, k.account)
		}
	}
	slices.Sort(mine)
	switch {
	case len(mine) > 0 && j.Account != "":
		return fmt.Sprintf("asked for account %q; %s's accounts are %s: name one of them with --account, or leave --account out", j.Account, j.User, strings.Join(mine, ", "))
	case len(mine) > 0:
		return fmt.Sprintf("%s's accounts are %s, and none is the default: name one with --account", j.User, strings.Join(mine, ", "))
	}
	return fmt.Sprintf("user %s is in no account; an operator adds them with a [[User]] entry (Name = %q, Account = ...) in the configuration, or sets AllowUnlistedUsers = true", j.User, j.User)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
// count: they may come back. Slurm answers each with the same words; the
// detail says what was asked and what the partition's nodes have.
func (p *pass) checkFits(pj *pjob) error {
	r := &pj.job.Req
	need := r.GPUs
	if r.GPUMem > 0 {
		need = max(1, r.GPUs)
	}
	typeKnown := r.GPUType == ""
	var mostGPUs, mostCPUs int
	var mostMem, biggestGPU int64
	types := map[string]int{} // GPU type -> count on the largest node
	for n, node := range p.snap.Nodes {
		if !p.partHasNode(pj.part, n) {
			continue
		}
		gpus := 0
		here := map[string]int{}
		for _, g := range node.GPUs {
			here[g.Type]++
			if !typeMatches(g.Type, r.GPUType) {
				continue
			}
			typeKnown = true
			biggestGPU = max(biggestGPU, g.TotalMem)
			if r.GPUMem == 0 || g.TotalMem >= r.GPUMem {
				gpus++
			}
		}
		for t, c := range here {
			types[t] = max(types[t], c)
		}
		if gpus >= need && node.CPUs >= max(1, r.CPUs) && node.Mem >= r.Mem {
			return nil
		}
		mostGPUs, mostCPUs, mostMem = max(mostGPUs, gpus), max(mostCPUs, node.CPUs), max(mostMem, node.Mem)
	}
	gpuNoun := func(n int) string {
		w := plural(n, "GPU", "GPUs")
		if r.GPUType != "" {
			w = r.GPUType + " " + w
		}
		return w
	}
	switch {
	case !typeKnown:
		// Real Slurm 22.05 refuses --gpus=abc so (golden sbatch_gpus_bad.txt).
		return refuse(slurm.ErrRequestedNodeConfigUnavailable,
			fmt.Sprintf("asked for GPU type %q; the GPUs here are %s", r.GPUType, gpuTypes(types)))
	case r.Mem > mostMem:
		return refuseNoted(slurm.ErrRequestedNodeConfigUnavailable, "Memory specification can not be satisfied",
			fmt.Sprintf("asked for %s of memory; the largest node here has %s (its RealMemory): ask for %s or less", fmtSize(r.Mem), fmtSize(mostMem), fmtSize(mostMem)))
	case max(1, r.CPUs) > mostCPUs:
		return refuse(slurm.ErrRequestedNodeConfigUnavailable,
			fmt.Sprintf("asked for %d CPUs; the largest node here has %d", max(1, r.CPUs), mostCPUs))
	case r.GPUMem > biggestGPU:
		return refuse(slurm.ErrRequestedNodeConfigUnavailable,
			fmt.Sprintf("asked for %s of GPU memory per GPU; the largest GPU here has %s", fmtSize(r.GPUMem), fmtSize(biggestGPU)))
	case r.GPUMem > 0:
		return refuse(slurm.ErrRequestedNodeConfigUnavailable,
			fmt.Sprintf("asked for %d %s with %s of memory each; the largest node here has %d with that much", need, gpuNoun(need), fmtSize(r.GPUMem), mostGPUs))
	}
	return refuse(slurm.ErrRequestedNodeConfigUnavailable,
		fmt.Sprintf("asked for %d %s; the largest node here has %d", need, gpuNoun(need), mostGPUs))
}

// gpuTypes lists GPU types with their counts: "4 x a100, 2 x h100", or
// "none".
func gpuTypes(types map[string]int) string {
	if len(types) == 0 {
		return "none"
	}
	var out []string
	for _, t := range slices.Sorted(maps.Keys(types)) {
		name := t
		if name == "" {
			name = "(no type)"
		}
		out = append(out, fmt.Sprintf("%d x %s", types[t], name))
	}
	return strings.Join(out, ", ")
}

// fmtSize prints a size as Slurm's options take it: "80G", "512M".
func fmtSize(b int64) string {
	switch {
	case b%GiB == 0:
		return fmt.Sprintf("%dG", b/GiB)
	case b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	}
	return fmt.Sprintf("%.1fG", float64(b)/float64(GiB))
}

// usesQOS reports whether a job's limits count in QOS name: its own QOS,
// or its partition's.
func (p *pass) usesQOS(j *Job, name string) bool {
	if j.QOS == name {
		return true
	}
	part := p.defPart
	if j.Partition != "" {
		var ok bool
		if part, ok = p.partIdx[j.Partition]; !ok {
			return false
		}
	}
	return part >= 0 && p.snap.Partitions[part].QOS == name
}
