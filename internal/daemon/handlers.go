package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

func (d *Daemon) routes() localapi.Routes {
	return localapi.Routes{
		{Method: "GET", Path: api.PathPing, Handler: localapi.Func(d.ping)},
		{Method: "POST", Path: api.PathJobs, Handler: localapi.Func(d.submit)},
		{Method: "GET", Path: api.PathJobs, Handler: localapi.Func(d.jobs)},
		{Method: "GET", Path: api.PathSqueueJobs, Handler: localapi.Func(d.squeueJobs)},
		{Method: "POST", Path: api.PathCancel, Handler: localapi.Func(d.cancel)},
		{Method: "POST", Path: api.PathControl, Handler: localapi.Func(d.control)},
		{Method: "POST", Path: api.PathUpdate, Handler: localapi.Func(d.update)},
		{Method: "GET", Path: api.PathAccounting, Handler: localapi.Func(d.accounting)},
		{Method: "GET", Path: api.PathNode, Handler: localapi.Func(d.node)},
		{Method: "GET", Path: api.PathConfig, Handler: localapi.Func(d.configInForce)},
		{Method: "GET", Path: api.PathShares, Handler: localapi.Func(d.shares)},
		{Method: "GET", Path: api.PathAssocMgr, Handler: localapi.Func(d.assocMgr)},
		{Method: "GET", Path: api.PathPriorities, Handler: localapi.Func(d.priorities)},
		{Method: "POST", Path: api.PathNodeUpdate, Handler: localapi.Func(d.updateNode)},
		{Method: "GET", Path: api.PathNodeDrains, Handler: localapi.Func(d.drains)},
		{Method: "GET", Path: api.PathEvents, Handler: localapi.Func(d.events)},
		{Method: "POST", Path: api.PathYield, Handler: localapi.Func(d.yield)},
		{Method: "GET", Path: api.PathYieldSteps, Handler: localapi.Func(d.yieldSteps)},
		{Method: "POST", Path: api.PathSteps, Handler: localapi.Func(d.createStep)},
		{Method: "GET", Path: api.PathSteps, Handler: localapi.Func(d.stepsJob)},
		{Method: "POST", Path: api.PathStepsEnd, Handler: localapi.Func(d.endStep)},
		{Method: "POST", Path: api.PathAlloc, Handler: localapi.Func(d.submitAlloc)},
		{Method: "GET", Path: api.PathAlloc, Handler: localapi.Func(d.waitAlloc)},
		{Method: "POST", Path: api.PathAllocEnd, Handler: localapi.Func(d.endAlloc)},
		{Method: "GET", Path: api.PathReservations, Handler: localapi.Func(d.listReservations)},
		{Method: "POST", Path: api.PathReservations, Handler: localapi.Func(d.changeReservation)},
		{Method: "GET", Path: api.PathCrontab, Handler: localapi.Func(d.crontab)},
		{Method: "POST", Path: api.PathCrontab, Handler: localapi.Func(d.installCrontab)},
		{Method: "POST", Path: api.PathCrontabRemove, Handler: localapi.Func(d.removeCrontab)},
		{Method: "POST", Path: api.PathToken, Handler: localapi.Func(d.token)},
	}
}

func (d *Daemon) ping(ctx context.Context, req *localapi.Request[struct{}]) (map[string]string, error) {
	return map[string]string{"status": "ok"}, nil
}

// refusal is a Slurm refusal as it travels.
func refusal(code slurm.Errno, msg string) *api.Error {
	return &api.Error{Status: http.StatusBadRequest, Message: msg, Code: code}
}

// runAs makes j the job of the user uid (a name or a number), in the group
// gid when given, else in the user's primary group.
func runAs(j *store.Job, uid, gid string) error {
	if uid != "" {
		u, err := user.Lookup(uid)
		if err != nil {
			if u, err = user.LookupId(uid); err != nil {
				return fmt.Errorf("Invalid user id: no user %q", uid)
			}
		}
		n, _ := strconv.ParseUint(u.Uid, 10, 32)
		g, _ := strconv.ParseUint(u.Gid, 10, 32)
		j.User, j.UID, j.GID = u.Username, uint32(n), uint32(g)
	}
	if gid != "" {
		g, err := user.LookupGroup(gid)
		if err != nil {
			if g, err = user.LookupGroupId(gid); err != nil {
				return fmt.Errorf("Invalid group id: no group %q", gid)
			}
		}
		n, _ := strconv.ParseUint(g.Gid, 10, 32)
		j.GID = uint32(n)
	}
	return nil
}

// submit is sbatch: checks as slurmctld checks, then one durable commit.
func (d *Daemon) submit(ctx context.Context, req *localapi.Request[api.Submit]) (api.Submitted, error) {
	caller := req.Caller
	if req.Body.Request.Cron != nil {
		// Only scrontab makes cron jobs, through its own path, which
		// keeps the crontab beside them.
		return api.Submitted{}, localapi.Errorf(http.StatusBadRequest, "a submission may not carry a crontab entry; install crontabs with scrontab")
	}
	cfg := d.config()
	now := d.now()
	a, err := d.admit(ctx, caller, req.Body, now, false)
	if err != nil {
		return api.Submitted{}, err
	}
	j, sj, snap := a.job, a.sj, a.snap
	r := j.Request
	if req.Body.TestOnly {
		next, err := d.st.NextJobID(ctx)
		if err != nil {
			return api.Submitted{}, err
		}
		sj.ID = next
		est := sched.WillRun(snap, sj)
		if est.Start.IsZero() {
			if e := neverStarts(est); e != nil {
				d.log.Info("test-only: the job could never start", "user", caller.User, "reason", est.Reason, "why", est.Detail)
				return api.Submitted{}, e
			}
		}
		return api.Submitted{JobID: next, Start: est.Start, Node: cmp.Or(est.Node, cfg.Node.NodeName), CPUs: est.CPUs,
			Partition: est.Partition, Hint: unknownStart(est)}, nil
	}
	script := r.Script
	j.Request.Script = ""
	ids, err := d.st.Submit(ctx, []store.NewJob{{Job: j, Script: script, Env: req.Body.Env}})
	if errors.Is(err, store.ErrFull) {
		// Refused, not half-taken: nothing of the job was recorded.
		return api.Submitted{}, &api.Error{Status: http.StatusServiceUnavailable, Message: err.Error()}
	}
	if err != nil {
		return api.Submitted{}, fmt.Errorf("saving the job: %w", err)
	}
	d.log.Info("job submitted", "job", ids[0], "user", caller.User, "name", j.Name, "partition", j.Partition)
	d.noteSubmitted(sj, ids[0])
	known := d.noteUser(j.User)
	if j.Hold != store.HoldNone && j.Request.Dependency == nil && known {
		// A held job can start nothing and stop nothing, and its user
		// is already in the share tree, so it changes no other job's
		// plan or priority: squeue shows its reason from the hold. Its
		// pass can wait (wakeIdle).
		d.wakeIdle()
	} else {
		d.wake()
	}
	return api.Submitted{JobID: ids[0]}, nil
}

// admitted is a submission that passed every check: its job row, the
// job as the scheduler sees it, and the snapshot it was checked against.
type admitted struct {
	job  store.Job
	sj   sched.Job
	snap sched.Snapshot
}

// admit checks a submission as slurmctld does and makes its job row, not
// yet stored: sbatch's and each scrontab entry's. shareCounted says the
// caller checks MaxJobCountPerUser itself, for a batch of jobs (a
// crontab's entries, which replace the crontab's pending jobs).
func (d *Daemon) admit(ctx context.Context, caller localapi.Identity, body api.Submit, now time.Time, shareCounted bool) (admitted, error) {
	r := body.Request
	if !strings.HasPrefix(body.Cwd, "/") {
		return admitted{}, localapi.Errorf(http.StatusBadRequest, "the submission directory %q is not an absolute path", body.Cwd)
	}
	cfg := d.config()
	if err := checkSubmitFields(caller, &r, cfg); err != nil {
		d.log.Info("submission refused", "user", caller.User, "why", err.Hint)
		return admitted{}, err
	}
	defaultMemory(&r, cfg)
	j := store.Job{
		User: caller.User, UID: caller.UID, GID: caller.GID,
		Account: r.Account, Partition: r.Partition, QOS: r.QOS,
		Name: r.JobName, State: slurm.Pending,
		TimeLimit: r.TimeLimit.Duration(),
		Requeue:   r.Requeue == nil || *r.Requeue,
		SubmitDir: body.Cwd,
		Request:   r,
	}
	if r.TimeLimit == 0 {
		j.TimeLimit = 0
	}
	if r.UID != "" || r.GID != "" {
		// sbatch --uid/--gid: root submits for someone else; the job is
		// theirs in every respect (its processes, its files, its share).
		if caller.UID != 0 {
			return admitted{}, refusal(slurm.ErrUserIDMissing, slurm.ErrUserIDMissing.Error())
		}
		if err := runAs(&j, r.UID, r.GID); err != nil {
			return admitted{}, refusal(slurm.ErrUserIDMissing, err.Error())
		}
	}
	if r.Hold {
		j.Hold = store.HoldUser
		j.Reason = slurm.ReasonJobHeldUser
	}
	if r.Nice != nil {
		j.Nice = *r.Nice
	}
	if r.Priority != nil && (caller.UID == 0 || cfg.IsOperator(caller.User)) {
		j.Priority = *r.Priority
	}
	if j.Partition == "" {
		j.Partition = routedPartition(cfg, j.TimeLimit)
	}
	if e := allowGroupsRefusal(caller, j.Partition, cfg); e != nil {
		d.log.Info("submission refused", "user", caller.User, "why", e.Hint)
		return admitted{}, e
	}
	if j.Account == "" {
		if accts, ok := cfg.UserAccounts(j.User); ok && len(accts) > 0 {
			j.Account = accts[0]
		}
	}
	if j.QOS == "" {
		j.QOS = "normal"
	}
	if e := qosAllowed(cfg, j.User, j.Account, j.QOS); e != nil {
		d.log.Info("submission refused", "user", caller.User, "why", e.Hint)
		return admitted{}, e
	}
	if e := d.resvRefusal(ctx, &j); e != nil {
		d.log.Info("submission refused", "user", caller.User, "why", e.Hint)
		return admitted{}, e
	}

	snap, err := d.submitSnapshot(ctx, now, body.TestOnly)
	if err != nil {
		return admitted{}, err
	}
	if shareExempt(j.UID) || shareCounted {
		snap.Config.MaxJobCountPerUser = 0
	}
	j.Submit = now
	j.Eligible = eligibleAtSubmit(&j, now)
	sj := schedJob(&j, 0, -1, cfg.ShardSize, snap.Nodes[0])
	if r.Array != nil {
		sj.ArrayTasks = r.Array.Tasks
	}
	if err := sched.CheckSubmit(sj, snap); err != nil {
		var se *sched.SubmitError
		if errors.As(err, &se) {
			d.log.Info("submission refused", "user", caller.User, "why", se.Detail)
			return admitted{}, &api.Error{Status: http.StatusBadRequest, Code: se.Code,
				Message: strings.Join(append(append([]string(nil), se.Notes...), se.Msg), "\n"), Hint: se.Detail}
		}
		return admitted{}, err
	}
	return admitted{job: j, sj: sj, snap: snap}, nil
}

// jobs is squeue and scontrol show job. Query: id (repeated: N, A, A_T),
// user, state, partition, name (repeated each). It returns pending and
// running jobs and those that ended within MinJobAge.
func (d *Daemon) jobs(ctx context.Context, req *localapi.Request[struct{}]) ([]api.Job, error) {
	rows, err := d.listedJobs(ctx, req.Query)
	if err != nil {
		return nil, err
	}
	v := d.viewer(req.Caller)
	out := make([]api.Job, 0, len(rows))
	for i := range rows {
		if j, ok := v.job(rows[i]); ok {
			out = append(out, d.apiJob(j))
		}
	}
	return out, nil
}

// listedJobs are the stored jobs a job list's query selects (see jobs),
// without those that ended more than MinJobAge ago.
func (d *Daemon) listedJobs(ctx context.Context, q url.Values) ([]store.Job, error) {
	var rows []store.Job
	err := d.eachListedJob(ctx, q, func(j *store.Job) { rows = append(rows, *j) })
	return rows, err
}

// eachListedJob calls fn with each job listedJobs returns, in place (see
// store.EachJob: fn must not keep the job, change it, or call the store).
func (d *Daemon) eachListedJob(ctx context.Context, q url.Values, fn func(*store.Job)) error {
	cfg := d.config()
	now := d.now()
	f := store.Filter{Users: q["user"], Partitions: q["partition"], Names: q["name"],
		Since: now.Add(-cfg.MinJobAge)}
	for _, s := range q["state"] {
		if st, ok := slurm.ParseJobState(s); ok {
			f.States = append(f.States, st)
		}
	}
	// An id selects a job, or an array and all its tasks; the command
	// narrows A_T to the task itself.
	for _, s := range q["id"] {
		ref, err := parseJobRef(s)
		if err != nil {
			return refusal(slurm.ErrInvalidJobID, slurm.ErrInvalidJobID.Error())
		}
		f.IDs = append(f.IDs, ref.id)
	}
	return d.st.EachJob(ctx, f, func(j *store.Job) {
		if j.State.Finished() && !j.End.IsZero() && now.Sub(j.End) > cfg.MinJobAge {
			return
		}
		fn(j)
	})
}

// apiJob is a stored job with what the live daemon knows of it; j is as
// the caller may see it (viewer.job).
func (d *Daemon) apiJob(j store.Job) api.Job {
	aj := api.Job{Job: j}
	aj.SetLive(d.live(&j))
	r := &j.Request
	aj.WorkDir = api.ShowWorkDir(&j)
	aj.MemAll = r.MemPerNode != nil && *r.MemPerNode == 0
	aj.Command = r.ScriptPath
	if r.HasWrap || r.ScriptPath == "" {
		aj.Command = "(null)"
	}
	if len(r.Args) > 0 {
		aj.Command += " " + strings.Join(r.Args, " ")
	}
	aj.StdOut, aj.StdErr, aj.StdIn = api.ShowFiles(&j)
	return aj
}

// live is what the live daemon adds to a stored job: its priority,
// reason and expected start as the scheduler decided them, and the counts
// squeue and scontrol print. apiJob adds the paths and command; squeue's
// list needs none, and reads the job in place (a Job is large).
func (d *Daemon) live(j *store.Job) api.Live { return d.liveView().live(j) }

// liveView is what live reads of the daemon, taken at once: the last
// pass's decisions and priorities, and the configuration. Each pass and
// reload replaces these maps and the configuration whole, never changing
// them in place, and publishes them as one value (Daemon.view), so a view
// is read without the daemon's lock, which a job list must not take while
// it holds the store's cache (a lock order against every caller of the
// store that holds d.mu). A liveView is immutable: nothing may change its
// maps or configuration.
type liveView struct {
	cfg       *config.Config
	decisions map[uint32]sched.Decision
	prio      map[uint32]uint32
	// gpus is the last GPU sample; nil before the first (sample).
	gpus *gpu.Snapshot
	// fs is the usage the fair share and the budgets are computed from.
	fs *fairShareView
}

// fairShareView is the usage as the holder of mu last published it
// (Daemon.usage and its neighbours); like the rest of a view, never
// changed in place.
type fairShareView struct {
	usage          []sched.Usage
	usageAt        time.Time
	calc           sched.Calc
	budgetUsage    []sched.TRESUsage
	qosBudgetUsage []sched.TRESUsage
}

// sample is the last GPU sample, zero before the first.
func (v liveView) sample() gpu.Snapshot {
	if v.gpus == nil {
		return gpu.Snapshot{}
	}
	return *v.gpus
}

// liveView returns the view last published (publishLocked); it takes no
// lock.
func (d *Daemon) liveView() liveView { return *d.view.Load() }

func (v liveView) live(j *store.Job) api.Live {
	dec, decided := v.decisions[j.ID]
	l := api.Live{Priority: v.prio[j.ID], Reason: j.Reason}
	if j.State != slurm.Pending {
		// Not recomputed once started: the priority it started with, or
		// one an operator set since (scontrol update Priority=).
		l.Priority = cmp.Or(j.Priority, j.Alloc.Priority)
	}
	l.Limit = effectiveLimit(v.cfg, j)
	switch {
	case j.State == slurm.Pending && j.Hold == store.HoldNone && decided:
		l.Reason = dec.Reason
		l.ReasonDetail, l.StateDesc, l.ExpectedStart = dec.Detail, dec.StateDesc, dec.ExpectedStart
	case j.State == slurm.Pending && j.Hold != store.HoldNone:
		// A switch, not a map literal: squeue asks this of every job.
		switch j.Hold {
		case store.HoldUser, store.HoldSpecialExit:
			l.Reason = slurm.ReasonJobHeldUser
		case store.HoldAdmin:
			l.Reason = slurm.ReasonJobHeldAdmin
		case store.HoldLaunchFailed:
			l.Reason, l.StateDesc = slurm.ReasonJobHeldUser, launchFailedHeld
		case store.HoldMaxRequeue:
			l.Reason = slurm.ReasonJobHoldMaxRequeue
		}
		l.Priority = 0
	}
	if j.State == slurm.Pending && decided {
		l.DepReason = dec.DepReason
		if l.Priority == 0 && j.Hold == store.HoldNone {
			// Not eligible yet (a dependency, a begin time): sprio leaves
			// it out, but it has a priority, as in Slurm.
			l.Priority = dec.Priority
		}
	}
	if l.Reason == "" {
		l.Reason = slurm.ReasonNone
	}
	if j.ArrayRecord() {
		l.ArrayTasks = slurmsyntax.FormatTasks(j.ArrayPending, j.ArrayLimit)
	}
	r := &j.Request
	l.NumTasks = max(r.NTasks, 1)
	l.NumCPUs = len(j.Alloc.CPUs)
	if l.NumCPUs == 0 {
		l.NumCPUs = max(l.NumTasks*max(r.CPUsPerTask, 1), 1)
	}
	return l
}

// stdPaths are a job's standard files, expanded as its supervisor expands
// them.
func stdPaths(node string, j store.Job) stepd.Paths {
	r := &j.Request
	dir := j.SubmitDir
	if r.Chdir != "" {
		dir = r.Chdir
		if !strings.HasPrefix(dir, "/") {
			dir = j.SubmitDir + "/" + dir
		}
	}
	spec := &stepd.Spec{JobID: j.ID, Name: j.Name, User: stepd.Credential{Name: j.User}, WorkDir: dir,
		Output: r.Output, Error: r.Error, Input: r.Input, NodeName: node}
	if j.ArrayJobID != 0 {
		spec.ArrayJobID, spec.ArrayTaskID, spec.ArrayTaskCount = j.ArrayJobID, j.ArrayTaskID, 1
	}
	return stepd.StdPaths(spec)
}

// jobRef is a job id with an optional array task ("12", "12_3").
type jobRef struct {
	id    uint32
	task  int
	tasks []int // "12_[1-3]"
}

func parseJobRef(s string) (jobRef, error) {
	idPart, taskPart, hasTask := strings.Cut(strings.TrimSpace(s), "_")
	id, err := strconv.ParseUint(idPart, 10, 32)
	if err != nil || id == 0 {
		return jobRef{}, fmt.Errorf("invalid job id %q", s)
	}
	ref := jobRef{id: uint32(id), task: -1}
	if !hasTask {
		return ref, nil
	}
	if strings.HasPrefix(taskPart, "[") && strings.HasSuffix(taskPart, "]") {
		a, err := slurmsyntax.ParseArray(taskPart[1:len(taskPart)-1], slurmsyntax.MaxArraySizeLimit)
		if err != nil {
			return jobRef{}, err
		}
		ref.tasks = a.Tasks
		return ref, nil
	}
	t, err := strconv.Atoi(taskPart)
	if err != nil || t < 0 {
		return jobRef{}, fmt.Errorf("invalid array task %q", s)
	}
	ref.task = t
	return ref, nil
}

// mayAct: the owner, root and operators may act on a job.
func (d *Daemon) mayAct(caller localapi.Identity, j store.Job) bool {
	return caller.UID == 0 || caller.UID == j.UID || d.config().IsOperator(caller.User)
}

// target is one job row a request names, or pending tasks of an array.
type target struct {
	name  string
	job   store.Job
	tasks []int // pending tasks of the record to act on; nil: the whole row
}

// resolve finds the rows a job reference names.
func (d *Daemon) resolve(ctx context.Context, s string) ([]target, error) {
	ref, err := parseJobRef(s)
	if err != nil {
		return nil, err
	}
	rows, err := d.st.Jobs(ctx, store.Filter{IDs: []uint32{ref.id}})
	if err != nil {
		return nil, err
	}
	want := ref.tasks
	if ref.task >= 0 {
		want = []int{ref.task}
	}
	var out []target
	for _, j := range rows {
		if want == nil {
			if j.ID == ref.id || j.ArrayJobID == ref.id {
				out = append(out, target{name: s, job: j})
			}
			continue
		}
		if j.ArrayRecord() {
			var pending []int
			for _, t := range want {
				if slices.Contains(j.ArrayPending, t) {
					pending = append(pending, t)
				}
			}
			if len(pending) > 0 {
				out = append(out, target{name: s, job: j, tasks: pending})
			}
		} else if j.ArrayJobID == ref.id && slices.Contains(want, j.ArrayTaskID) {
			out = append(out, target{name: s, job: j})
		} else if j.ArrayJobID == 0 && j.ID == ref.id && ref.task < 0 {
			out = append(out, target{name: s, job: j})
		}
	}
	return out, nil
}

// cancel is scancel.
func (d *Daemon) cancel(ctx context.Context, req *localapi.Request[api.Cancel]) (api.Results, error) {
	c := req.Body
	var res api.Results
	var targets []target
	if len(c.Jobs) == 0 && c.User == "" && c.Partition == "" && c.Name == "" && len(c.States) == 0 {
		return res, localapi.Errorf(http.StatusBadRequest, "no job id and no filter: name the jobs to cancel")
	}
	if len(c.Jobs) == 0 {
		f := store.Filter{States: []slurm.JobState{slurm.Pending, slurm.Running}}
		if c.User != "" {
			f.Users = []string{c.User}
		}
		rows, err := d.st.Jobs(ctx, f)
		if err != nil {
			return res, err
		}
		for _, j := range rows {
			targets = append(targets, target{name: fmt.Sprint(j.ID), job: j})
		}
	}
	for _, s := range c.Jobs {
		ts, err := d.resolve(ctx, s)
		if err != nil || len(ts) == 0 {
			res.Results = append(res.Results, api.Result{Job: s, Code: slurm.ErrInvalidJobID, Error: slurm.ErrInvalidJobID.Error()})
			continue
		}
		targets = append(targets, ts...)
	}
	for _, t := range targets {
		j := t.job
		if c.User != "" && j.User != c.User || c.Partition != "" && j.Partition != c.Partition ||
			c.Name != "" && j.Name != c.Name || len(c.States) > 0 && !slices.Contains(c.States, j.State) {
			continue
		}
		res.Results = append(res.Results, d.cancelOne(ctx, req.Caller, t, c))
	}
	d.wake()
	return res, nil
}

func (d *Daemon) cancelOne(ctx context.Context, caller localapi.Identity, t target, c api.Cancel) api.Result {
	j := t.job
	r := api.Result{Job: t.name}
	if !d.mayAct(caller, j) {
		r.Code, r.Error = slurm.ErrAccessDenied, slurm.ErrAccessDenied.Error()
		return r
	}
	if j.State.Finished() {
		r.Code, r.Error = slurm.ErrAlreadyDone, slurm.ErrAlreadyDone.Error()
		return r
	}
	by := caller.UID
	audited := false
	switch {
	case j.State == slurm.Running && c.Signal != 0:
		target := stepd.TargetSteps
		if c.Batch {
			target = stepd.TargetBatch
		} else if c.Full {
			target = stepd.TargetAll
		}
		req := stepd.Request{Op: stepd.OpSignal, Signal: syscall.Signal(c.Signal), Target: target}
		if target == stepd.TargetSteps {
			req.Steps = d.stepProcs(j)
		}
		if _, err := d.callSupervisor(j, req); err != nil {
			d.unreachedResult(&r, j, err, "signal", "nothing to signal")
		}
	case j.State == slurm.Running:
		// Recorded before the supervisor is asked: the job's end, which
		// the loop records as soon as the supervisor exits, must come
		// after it in the trail.
		audited = true
		d.audit(ctx, caller, j.ID, evCancel, fmt.Sprintf("cancelled while %s", j.State))
		rep, err := d.callSupervisor(j, stepd.Request{Op: stepd.OpCancel, By: &by})
		switch {
		case err != nil:
			d.unreachedResult(&r, j, err, "cancel", "nothing to cancel")
		case rep.Status != nil && rep.Status.State.Finished():
			// It has ended; its end waits to be recorded (a full state
			// disk): nothing is left to cancel.
			r.Code, r.Error = slurm.ErrAlreadyDone, slurm.ErrAlreadyDone.Error()
		case rep.Status != nil:
			// COMPLETING at once, CANCELLED in accounting (ending.go).
			d.markEnding(ctx, j, rep.Status.Ending)
		}
	case j.State == slurm.Completing:
		// Cancelled or timed out already: its processes are going.
		r.Code, r.Error = slurm.ErrAlreadyDone, slurm.ErrAlreadyDone.Error()
	case c.Signal != 0:
		// Slurm cannot signal a pending job either.
		r.Code, r.Error = slurm.ErrJobPending, slurm.ErrJobPending.Error()
	default:
		var cancelled store.Job
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			cur, err := tx.Job(j.ID)
			if err != nil {
				return err
			}
			if cur.State != slurm.Pending {
				return errSkip
			}
			if t.tasks != nil && len(t.tasks) < len(cur.ArrayPending) {
				_, err := tx.DropTasks(cur.ID, t.tasks)
				return err
			}
			cur.State, cur.End, cur.CancelledBy = slurm.Cancelled, d.now(), &by
			cur.Reason = slurm.ReasonNone
			cancelled = cur
			return tx.PutJob(cur)
		})
		if err == nil && cancelled.ID != 0 {
			// slurmctld's end of a pending job: it starts and ends now.
			cancelled.Start = cancelled.End
			defer d.tell(notify.End, cancelled, "", "")
		}
		if errors.Is(err, errSkip) {
			// Started meanwhile: cancel it where it runs.
			return d.cancelOne(ctx, caller, target{name: t.name, job: d.mustJob(ctx, j.ID)}, c)
		}
		if err != nil {
			r.Code, r.Error = slurm.ErrInvalidJobID, err.Error()
		}
	}
	if r.Code == 0 {
		detail := fmt.Sprintf("cancelled while %s", j.State)
		if c.Signal != 0 {
			detail = fmt.Sprintf("signal %d while %s", c.Signal, j.State)
		}
		if !audited {
			d.audit(ctx, caller, j.ID, evCancel, detail)
		}
		if c.Signal == 0 {
			// A scrontab job cancelled is cancelled for good, and its
			// entry commented out in the crontab, as slurmctld does.
			d.disableCronEntry(ctx, j)
		}
		if c.Signal == 0 {
			d.tell(notify.Cancel, j, caller.User, detail)
		}
	}
	return r
}

func (d *Daemon) mustJob(ctx context.Context, id uint32) store.Job {
	j, _ := d.st.Job(ctx, id)
	return j
}

// audit records a change a caller asked for whose effect comes later
// (a running job's cancel or requeue, carried out by its supervisor).
func (d *Daemon) audit(ctx context.Context, caller localapi.Identity, id uint32, action eventAction, detail string) {
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.AppendEvent(d.callerEvent(caller, id, action, detail))
		return err
	})
	if err != nil {
		d.log.Error("recording an event", "job", id, "err", err)
	}
}

// control is scontrol hold, release and requeue.
func (d *Daemon) control(ctx context.Context, req *localapi.Request[api.Control]) (api.Results, error) {
	c := req.Body
	caller := req.Caller
	admin := caller.UID == 0 || d.config().IsOperator(caller.User)
	var res api.Results
	for _, s := range c.Jobs {
		ts, err := d.resolve(ctx, s)
		if err != nil || len(ts) == 0 {
			res.Results = append(res.Results, api.Result{Job: s, Code: slurm.ErrInvalidJobID, Error: slurm.ErrInvalidJobID.Error()})
			continue
		}
		for _, t := range ts {
			r := api.Result{Job: s}
			j := t.job
			switch {
			case !d.mayAct(caller, j) && c.Action == api.ActionRequeue:
				r.Code, r.Error = slurm.ErrAccessDenied, slurm.ErrAccessDenied.Error()
			case !d.mayAct(caller, j):
				r.Code, r.Error = slurm.ErrUserIDMissing, slurm.ErrUserIDMissing.Error()
			case c.Action == api.ActionHold || c.Action == api.ActionRelease:
				r = d.hold(ctx, caller, admin, t, c.Action == api.ActionHold)
			case c.Action == api.ActionRequeue:
				r = d.requeueReq(ctx, caller, j)
			default:
				return res, localapi.Errorf(http.StatusBadRequest, "unknown action %q: use hold, release or requeue", c.Action)
			}
			r.Job = s
			res.Results = append(res.Results, r)
		}
	}
	d.wake()
	return res, nil
}

func (d *Daemon) hold(ctx context.Context, caller localapi.Identity, admin bool, t target, hold bool) api.Result {
	var r api.Result
	var held store.Job
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.Job(t.job.ID)
		if err != nil {
			return err
		}
		if cur.State != slurm.Pending {
			return errSkip
		}
		switch {
		case hold && admin:
			cur.Hold, cur.Reason = store.HoldAdmin, slurm.ReasonJobHeldAdmin
		case hold:
			cur.Hold, cur.Reason = store.HoldUser, slurm.ReasonJobHeldUser
		case cur.Hold == store.HoldAdmin && !admin:
			return errDenied
		default:
			cur.Hold, cur.Reason = store.HoldNone, slurm.ReasonNone
			releasedEligible(&cur, d.now())
		}
		if err := tx.PutJob(cur); err != nil {
			return err
		}
		action, detail := evRelease, "released"
		if hold {
			action, detail = evHold, string(cur.Reason)
		}
		_, err = tx.AppendEvent(d.callerEvent(caller, cur.ID, action, detail))
		held = cur
		return err
	})
	if err == nil {
		kind := notify.Release
		if hold {
			kind = notify.Hold
		}
		d.tell(kind, held, caller.User, string(held.Reason))
	}
	switch {
	case errors.Is(err, errSkip):
		r.Code, r.Error = slurm.ErrJobNotPending, slurm.ErrJobNotPending.Error()
	case errors.Is(err, errDenied):
		r.Code, r.Error = slurm.ErrAccessDenied, slurm.ErrAccessDenied.Error()
	case err != nil:
		r.Code, r.Error = slurm.ErrInvalidJobID, err.Error()
	}
	return r
}

var errDenied = errors.New("denied")

// unreachedResult answers a cancel or signal whose request did not reach
// the job's supervisor (unreached.go) in the user's terms: Slurm's words
// for the code, our sentence as the hint; the socket's error is logged.
func (d *Daemon) unreachedResult(r *api.Result, j store.Job, err error, what, then string) {
	u := d.whyUnreached(j, err)
	d.log.Info(what+" not sent", "job", j.ID, "err", u)
	r.Code, r.Error, r.Hint = u.code(), u.code().Error(), u.tell(what, then)
}

// requeueReq is scontrol requeue: a running job is stopped and goes back to
// pending under its id; a finished one goes back to pending; a pending one
// is left as it is, which Slurm 22.05 answers with success
// (scontrol_requeue_pending.txt). A job submitted --no-requeue may not be.
func (d *Daemon) requeueReq(ctx context.Context, caller localapi.Identity, j store.Job) api.Result {
	var r api.Result
	switch {
	case !j.Requeue:
		r.Code, r.Error = slurm.ErrDisabled, slurm.ErrDisabled.Error()
	case j.State == slurm.Running:
		// A job may requeue itself (submitit's checkpoint handler runs
		// scontrol requeue $SLURM_JOB_ID, directly or through sh -c). The
		// stop is handed to the supervisor before the answer, so the
		// requeue holds even if the daemon dies right after answering
		// (the supervisor's status says it from then on); the supervisor
		// holds the stop's signal until the caller and the job's
		// processes it runs under (sh -c, up to the batch shell) have
		// exited, so they hear rc 0 first, as from Slurm's scontrol,
		// whose answer comes before slurmd stops the job. (Signalled with
		// the job, scontrol died with 143, which submitit took for the
		// job's failure; a wrapper did too.) Recorded first: the requeue
		// the stop leads to comes after it in the trail.
		d.audit(ctx, caller, j.ID, evRequeue, "requeue asked while RUNNING")
		// A stop that could not be handed over is not a requeue: the
		// caller hears so, and may try again.
		err := d.stopSparing(ctx, j.ID, stepd.WhyRequeue, fmt.Sprintf("requeued by %s", caller.User), caller.PID, false)
		var u *unreached
		switch {
		case errors.As(err, &u):
			// Not requeued: the job ended first (once its end is
			// recorded, a requeue takes it as an ended job), or its
			// supervisor is gone or mute. Try again later, either way.
			r.Code, r.Error = slurm.ErrTransitionStateNoUpdate, slurm.ErrTransitionStateNoUpdate.Error()
			r.Hint = u.tell("requeue", fmt.Sprintf("once its end is recorded, scontrol requeue %d requeues it as an ended job", j.ID))
		case err != nil:
			r.Code, r.Error = slurm.ErrDisabled, err.Error()
		}
	case j.State.Finished():
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			if _, err := tx.Requeue(j.ID, d.now()); err != nil {
				return err
			}
			_, err := tx.AppendEvent(d.callerEvent(caller, j.ID, evRequeue, fmt.Sprintf("requeued after it ended %s", j.State)))
			return err
		})
		if err != nil {
			r.Code, r.Error = slurm.ErrDisabled, err.Error()
		}
	}
	return r
}

// accounting is sacct. Query: id, user, state, name (repeated), since,
// until (RFC 3339), dups=1 for earlier runs.
func (d *Daemon) accounting(ctx context.Context, req *localapi.Request[struct{}]) ([]store.Record, error) {
	q := req.Query
	f := store.Filter{Users: q["user"], Names: q["name"], Accounts: q["account"], EarlierRuns: q.Get("dups") == "1"}
	for _, s := range q["state"] {
		if st, ok := slurm.ParseJobState(s); ok {
			f.States = append(f.States, st)
		}
	}
	for _, s := range q["id"] {
		ref, err := parseJobRef(s)
		if err != nil {
			continue
		}
		f.IDs = append(f.IDs, ref.id)
	}
	var err error
	if f.Since, err = queryTime(q, "since"); err != nil {
		return nil, err
	}
	if f.Until, err = queryTime(q, "until"); err != nil {
		return nil, err
	}
	// A COMPLETING job is in accounting as what its end will be (ending.go):
	// asked for CANCELLED or TIMEOUT, it is one; asked for RUNNING, not.
	want := f.States
	if len(want) > 0 && (slices.Contains(want, slurm.Cancelled) || slices.Contains(want, slurm.Timeout)) {
		f.States = append(slices.Clone(want), slurm.Completing)
	}
	recs, err := d.st.Records(ctx, f)
	if err != nil {
		return nil, err
	}
	v := d.viewer(req.Caller)
	usage := q.Get("usage") == "1"
	cfg := d.config()
	out := recs[:0]
	for _, r := range recs {
		r.Job.State = endingState(&r.Job)
		// A job that asked for no time limit runs under its partition's
		// DefaultTime, which slurmctld writes into the job and so into
		// accounting; the row keeps 0 for it (squeue and scontrol fill it
		// the same way, live).
		if r.Job.TimeLimit == 0 {
			r.Job.TimeLimit = effectiveLimit(cfg, &r.Job)
		}
		r.Job.ExitCode = r.Job.AccountedExitCode()
		if len(want) > 0 && !slices.Contains(want, r.Job.State) {
			continue
		}
		j, ok := v.job(r.Job)
		if !ok {
			continue
		}
		// sreport asks with usage=1: its figures are usage, which
		// PrivateData=usage hides from other users as Slurm's
		// slurmdbd does for sreport (sshare's rule).
		if usage && !v.seesUsage(j.User) {
			continue
		}
		r.Job = j
		out = append(out, r)
	}
	return out, nil
}

func queryTime(q url.Values, key string) (time.Time, error) {
	s := q.Get(key)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, localapi.Errorf(http.StatusBadRequest, "%s=%q is not an RFC 3339 time", key, s)
	}
	return t, nil
}

// node is scontrol show node and sinfo's view of the machine.
func (d *Daemon) node(ctx context.Context, req *localapi.Request[struct{}]) (api.Node, error) {
	cfg := d.config()
	gs := d.liveView().sample()
	running, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Running, slurm.Completing}})
	if err != nil {
		return api.Node{}, err
	}
	n := api.Node{Name: cfg.Node.NodeName, CPUs: cfg.Node.CPUs, MemoryMB: int64(cfg.Node.RealMemory / slurmsyntax.MiB),
		Comment: gs.Comment, Boot: d.boot, State: "IDLE"}
	// Under PrivateData=jobs a GPU names only the caller's jobs and their
	// processes (another's would show as foreign without its job): it is
	// counted as used all the same.
	v := d.viewer(req.Caller)
	holders := map[string][]uint32{}
	shown := map[string][]string{} // holders as squeue names them
	held := map[string]bool{}
	hidden := map[string]bool{}
	names := map[string]string{} // raw id -> "4_2" for an array task
	for _, j := range running {
		raw := strconv.FormatUint(uint64(j.ID), 10)
		names[raw] = shownJobID(j.ID, j.ArrayJobID, j.ArrayTaskID)
		n.AllocCPU += len(j.Alloc.CPUs)
		n.AllocMem += j.Alloc.Mem / int64(slurmsyntax.MiB)
		hide := !v.seesJob(j.UID)
		if hide {
			hidden[strconv.FormatUint(uint64(j.ID), 10)] = true
		}
		for _, g := range j.Alloc.GPUs {
			held[g.UUID] = true
			if !hide {
				holders[g.UUID] = append(holders[g.UUID], j.ID)
				shown[g.UUID] = append(shown[g.UUID], names[raw])
			}
		}
	}
	for _, names := range shown {
		slices.SortFunc(names, cmpShownIDs)
	}
	var present []gpu.GPU
	used := 0
	for _, g := range gs.GPUs {
		if g.Index < 0 {
			continue
		}
		present = append(present, g)
		ag := api.GPU{Index: g.Index, UUID: g.UUID, Type: g.Type, Model: g.Model, MemoryTotal: g.MemoryTotal,
			MemoryUsed: g.MemoryUsed, Foreign: g.Foreign, Utilization: g.Utilization, State: string(g.State),
			Reason: g.Reason, Jobs: holders[g.UUID], JobNames: shown[g.UUID]}
		for _, p := range g.Processes {
			if p.JobID != "" && hidden[p.JobID] {
				continue
			}
			job := p.JobID
			if name, ok := names[job]; ok {
				job = name
			}
			ag.Processes = append(ag.Processes, api.Process{PID: p.PID, User: p.User, Memory: p.Memory, JobID: job})
		}
		if held[g.UUID] {
			used++
		}
		n.GPUs = append(n.GPUs, ag)
	}
	n.Gres = gpu.Gres(present)
	if len(present) > 0 {
		typ := present[0].Type
		n.GresUsed = fmt.Sprintf("gpu:%s:%d", typ, used)
	}
	switch {
	case gs.NodeDrain != "":
		n.State, n.Reason = "DRAIN", gs.NodeDrain
	case n.AllocCPU >= n.CPUs && n.CPUs > 0:
		n.State = "ALLOCATED"
	case n.AllocCPU > 0 || used > 0:
		n.State = "MIXED"
	}
	return n, nil
}

// configInForce is the configuration the daemon runs with.
func (d *Daemon) configInForce(ctx context.Context, req *localapi.Request[struct{}]) (api.Config, error) {
	v := d.liveView()
	out := api.Config{Config: v.cfg, Path: d.cfgPath, Boot: d.boot, GPUs: v.sample().Comment, Cgroups: d.cgroupsView()}
	out.ImplicitUsers = d.implicitUsers(ctx, out.Config, append(namedUsers(req.Query), req.Caller.User)...)
	return out, nil
}

// shares is sshare: the fair-share tree as the core computes it now.
func (d *Daemon) shares(ctx context.Context, req *localapi.Request[struct{}]) ([]api.ShareRow, error) {
	snap, err := d.submitSnapshot(ctx, d.now(), true)
	if err != nil {
		return nil, err
	}
	d.withCalc(&snap)
	snap.Users = d.implicitUsers(ctx, d.config(), append(namedUsers(req.Query), req.Caller.User)...)
	v := d.viewer(req.Caller)
	var out []api.ShareRow
	for _, r := range sched.FairShareTree(snap) {
		if !v.seesUsage(r.User) {
			continue
		}
		row := api.ShareRow{Account: r.Account, User: r.User, Depth: r.Depth, RawShares: r.RawShares,
			NormShares: r.NormShares, RawUsage: r.RawUsage, NormUsage: r.NormUsage,
			EffectvUsage: r.EffectvUsage, FairShare: r.FairShare, LevelFS: r.LevelFS}
		switch {
		case math.IsInf(r.LevelFS, 0):
			row.LevelFS, row.LevelFSInf = 0, true
		case math.IsNaN(r.LevelFS):
			row.LevelFS, row.LevelFSNone = 0, true
		}
		out = append(out, row)
	}
	return out, nil
}

// priorities is sprio: each pending job's priority and weighted factors.
func (d *Daemon) priorities(ctx context.Context, req *localapi.Request[struct{}]) ([]api.PriorityRow, error) {
	now := d.now()
	cfg := d.config()
	jobs, err := d.st.JobRefs(ctx, store.Filter{Since: now.Add(-max(cfg.MinJobAge, time.Minute))})
	if err != nil {
		return nil, err
	}
	gs := d.liveView().sample()
	snap := d.buildSnapshot(ctx, now, jobs, gs)
	d.withCalc(&snap.Snapshot)
	v := d.viewer(req.Caller)
	byID := map[uint32]sched.Job{}
	for _, j := range snap.Jobs {
		byID[j.ID] = j
	}
	var out []api.PriorityRow
	for _, r := range sched.Priorities(snap.Snapshot) {
		id := fmt.Sprint(r.JobID)
		if k, ok := snap.placeholder[r.JobID]; ok {
			id = fmt.Sprintf("%d_%d", k.array, k.task)
		} else if sj := byID[r.JobID]; sj.ArrayJobID != 0 {
			id = fmt.Sprintf("%d_%d", sj.ArrayJobID, sj.ArrayTaskID)
		}
		sj := byID[r.JobID]
		if !v.seesJobOf(r.User) {
			continue
		}
		out = append(out, api.PriorityRow{JobID: id, Partition: r.Partition, User: r.User, Account: sj.Account,
			Priority: r.Priority, Site: r.Site, Age: r.Age, Assoc: r.Assoc, FairShare: r.FairShare,
			JobSize: r.JobSize, PartitionPrio: r.PartitionPrio, QOSPrio: r.QOSPrio, QOS: sj.QOS, Nice: r.Nice,
			TRES: apiTRES(r.TRES)})
	}
	return out, nil
}

func apiTRES(ts []sched.TRESFactor) []api.PriorityTRES {
	var out []api.PriorityTRES
	for _, t := range ts {
		out = append(out, api.PriorityTRES{Name: t.Name, Weight: t.Weight, Value: t.Value})
	}
	return out
}
