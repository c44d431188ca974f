package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// updater is who asks for an update, as the rules see them.
type updater struct {
	uid uint32
	// operator: root or a configured operator, who may raise limits and
	// set priorities (slurmctld's validate_operator).
	operator bool
	// now is the update's time: a released job becomes eligible then.
	now time.Time
}

// changes is an api.Update with its GRES strings read.
type changes struct {
	api.Update
	gres, gpus []jobscript.Gres
	// gresErr: Gres= or GPUs= did not parse; each job refuses it, as
	// slurmctld refuses it job by job.
	gresErr error
}

// readChanges parses what an update's strings say.
func readChanges(u api.Update) changes {
	ch := changes{Update: u}
	if u.Gres != nil {
		ch.gres, ch.gresErr = parseGres(*u.Gres)
	}
	if u.GPUs != nil && ch.gresErr == nil {
		ch.gpus, ch.gresErr = parseGres(*u.GPUs)
		for _, g := range ch.gpus {
			if g.Name != "gpu" {
				ch.gresErr = fmt.Errorf("%q is not a GPU request", *u.GPUs)
			}
		}
	}
	return ch
}

// parseGres reads Gres= as --gres is written: name[:type][:count], comma
// separated, with the "gres:" or "gres/" that scontrol and TresPerJob put
// before names; "" is no GRES at all. Each item is read by jobscript's
// parser, as sbatch and srun read --gres. Names other than gpu and shard
// are refused: this machine has no others.
func parseGres(s string) ([]jobscript.Gres, error) {
	var out []jobscript.Gres
	if s == "" || strings.EqualFold(s, "none") {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimPrefix(strings.TrimPrefix(item, "gres:"), "gres/")
		if name, _, _ := strings.Cut(item, ":"); name != "gpu" && name != "shard" {
			return nil, fmt.Errorf("unknown generic resource %q: this machine has gpu and shard", name)
		}
		gs, ok := jobscript.ParseGPUOption("gres", item)
		if !ok {
			return nil, fmt.Errorf("invalid generic resource %q: write name[:type][:count], e.g. gpu:a100:2", item)
		}
		out = append(out, gs...)
	}
	return out, nil
}

// change applies an update to one job row in the order and with the rules
// of slurmctld's _update_job (src/slurmctld/job_mgr.c of 22.05):
//
//  1. a finished job changes no more (ESLURM_JOB_FINISHED);
//  2. only its owner and operators may change it (ESLURM_USER_ID_MISSING);
//  3. the partition and the GRES change only while it is pending;
//  4. the comment, the partition, the GRES;
//  5. the time limit: anyone may lower it; raising it is for operators,
//     and for the owner of a pending job whose partition's MaxTime allows it;
//  6. the priority: operators set it; an owner may only hold (0);
//  7. nice: operators set any, owners only a positive one;
//  8. the name, requeue.
//
// Unlike slurmctld, which keeps what it changed before a refusal, a refused
// update changes nothing. prio is the job's computed priority (sprio's),
// against which an owner's new priority counts as lower or higher.
func change(j store.Job, ch changes, who updater, cfg *config.Config, prio uint32) (store.Job, slurm.Errno) {
	if j.State.Finished() {
		return j, slurm.ErrJobFinished
	}
	if who.uid != j.UID && !who.operator {
		return j, slurm.ErrUserIDMissing
	}
	pending := j.State == slurm.Pending
	if ch.Partition != nil && *ch.Partition != j.Partition {
		if !pending {
			return j, slurm.ErrJobNotPending
		}
		p := cfg.Partition(*ch.Partition)
		switch {
		case p == nil:
			return j, slurm.ErrInvalidPartitionName
		case p.State == "INACTIVE" || p.State == "DRAIN":
			return j, slurm.ErrPartitionNotAvail
		}
		j.Partition = p.PartitionName
	}
	if ch.Gres != nil || ch.GPUs != nil {
		if !pending {
			return j, slurm.ErrJobNotPending
		}
		if ch.gresErr != nil {
			return j, slurm.ErrInvalidGRES
		}
		r := &j.Request
		r.GPUsPerNode, r.GPUsPerTask = nil, nil
		r.DropGPUsPerSocket()
		if ch.Gres != nil {
			r.Gres, r.GPUs, r.GresNone = ch.gres, nil, len(ch.gres) == 0
		}
		if ch.GPUs != nil {
			r.GPUs = ch.gpus
			r.Gres = slices.DeleteFunc(slices.Clone(r.Gres), func(g jobscript.Gres) bool { return g.Name == "gpu" })
		}
	}
	if ch.Comment != nil {
		j.Request.Comment = *ch.Comment
	}
	if ch.TimeLimit != nil {
		var code slurm.Errno
		if j, code = changeLimit(j, *ch.TimeLimit, who, cfg); code != 0 {
			return j, code
		}
	}
	if ch.Priority != nil {
		var code slurm.Errno
		if j, code = changePriority(j, *ch.Priority, who, prio); code != 0 {
			return j, code
		}
	}
	if ch.Nice != nil && *ch.Nice != j.Nice {
		switch {
		case j.Priority != 0 && j.Hold == store.HoldNone:
			// A fixed priority leaves nice nothing to do: slurmctld
			// ignores the request and says nothing.
		case who.operator || *ch.Nice >= 0:
			j.Nice = *ch.Nice
		default:
			return j, slurm.ErrAccessDenied
		}
	}
	if ch.Name != nil {
		j.Name = *ch.Name
	}
	if ch.Requeue != nil {
		j.Requeue = *ch.Requeue
	}
	return j, 0
}

// changeLimit is the time limit step of change. As in Slurm, only an
// operator may raise a limit; anyone may lower their own job's. A running
// job's new limit goes to its supervisor (setLimit), which counts it from
// the job's start.
func changeLimit(j store.Job, limit time.Duration, who updater, cfg *config.Config) (store.Job, slurm.Errno) {
	if limit <= 0 {
		return j, slurm.ErrInvalidTimeLimit
	}
	old := effectiveLimit(cfg, &j)
	switch {
	case limit == old:
		return j, 0
	case who.operator || limit < old:
		if tm := j.Request.TimeMin.Duration(); tm != 0 && limit < tm {
			return j, slurm.ErrInvalidTimeMinLimit
		}
	case j.State == slurm.Pending && partMaxTime(cfg, j.Partition) >= limit:
	default:
		return j, slurm.ErrAccessDenied
	}
	j.TimeLimit = limit
	return j, 0
}

func partMaxTime(cfg *config.Config, name string) time.Duration {
	if p := cfg.Partition(name); p != nil {
		return p.MaxTime
	}
	return slurmsyntax.Infinite
}

// changePriority is the priority step of change. A job's fixed priority
// is Job.Priority (0: computed); Slurm's priority 0 is a hold.
func changePriority(j store.Job, p uint32, who updater, prio uint32) (store.Job, slurm.Errno) {
	held := j.Hold != store.HoldNone
	switch {
	case held && p == 0:
	case held && p == api.PriorityRelease && (who.operator || !j.Hold.ByAdmin()):
		j.Hold, j.Reason = store.HoldNone, slurm.ReasonNone
		releasedEligible(&j, who.now)
	case held && p == api.PriorityRelease:
		return j, slurm.ErrAccessDenied
	case held:
		return j, slurm.ErrJobHeld
	case p == api.PriorityRelease && who.operator:
		j.Priority = 0
	case p == api.PriorityRelease:
		// Already released: nothing to do.
	case p == 0 && who.operator:
		j.Hold, j.Reason = store.HoldAdmin, slurm.ReasonJobHeldAdmin
	case p == 0 && j.State == slurm.Pending:
		j.Hold, j.Reason = store.HoldUser, slurm.ReasonJobHeldUser
	case p == 0:
		return j, slurm.ErrJobNotPending
	case who.operator:
		j.Priority, j.Nice = p, 0
	case p < cmp.Or(j.Priority, prio):
		// slurmctld sets it until the next recalculation and says so;
		// here the recalculation is at once.
		return j, slurm.ErrPrioResetFail
	default:
		return j, slurm.ErrAccessDenied
	}
	return j, 0
}

// update is scontrol update of jobs: each job string is changed in a
// transaction of its own, as slurmctld changes each job on its own.
func (d *Daemon) update(ctx context.Context, req *localapi.Request[api.Update]) (api.UpdateResults, error) {
	caller := req.Caller
	cfg := d.config()
	who := updater{uid: caller.UID, operator: caller.UID == 0 || cfg.IsOperator(caller.User), now: d.now()}
	ch := readChanges(req.Body)
	// A new partition or GRES is checked as a submission is: it must exist,
	// be open to the job's account, and fit this machine some day.
	var snap *sched.Snapshot
	if ch.Partition != nil || ch.Gres != nil || ch.GPUs != nil {
		s, err := d.submitSnapshot(ctx, d.now(), true)
		if err != nil {
			return api.UpdateResults{}, err
		}
		snap = &s
	}
	prio := d.liveView().prio // published: never changed, so kept without a copy
	u := jobUpdate{d: d, cfg: cfg, caller: caller, who: who, ch: ch, snap: snap, prio: prio}
	if f := checkUpdateFields(req.Body); f != nil {
		u.fields = &outcome{f.code, f.words, f.hint}
	}
	var res api.UpdateResults
	for _, s := range ch.Jobs {
		var r api.UpdateResult
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			u.limited = u.limited[:0]
			r = u.one(tx, s)
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("updating job %s: %w", s, err)
		}
		for _, j := range u.limited {
			d.setLimit(j)
		}
		res.Results = append(res.Results, r)
	}
	d.wake()
	return res, nil
}

// jobUpdate is one update request on its way through the jobs it names.
type jobUpdate struct {
	d      *Daemon
	cfg    *config.Config
	caller localapi.Identity
	who    updater
	ch     changes
	snap   *sched.Snapshot
	prio   map[uint32]uint32
	// limited are running jobs whose limit changed, for their supervisors.
	limited []store.Job
	// fields is the refusal of a name, comment or nice over Slurm's
	// limits (checkUpdateFields), which every job the caller may change
	// answers with; nil when they are fine.
	fields *outcome
}

// one resolves a job string as slurmctld's update_job_str does and changes
// each row it names: "N" is a plain job, one array task known by its own
// id, or a whole array; "N_T,U-V" are tasks of array N, split from the
// pending record when only some of its tasks are named.
func (u *jobUpdate) one(tx *store.Tx, s string) api.UpdateResult {
	r := api.UpdateResult{Job: s}
	idPart, taskPart, hasTasks := strings.Cut(s, "_")
	id64, err := strconv.ParseUint(idPart, 10, 32)
	if err != nil || id64 == 0 {
		return u.refused(r, slurm.ErrInvalidJobID)
	}
	id := uint32(id64)
	rows, err := tx.Jobs(store.Filter{IDs: []uint32{id}})
	if err != nil {
		r.Code, r.Error = slurm.ErrInvalidJobID, err.Error()
		return r
	}
	if !hasTasks {
		for _, j := range rows {
			if j.ID == id && j.ArrayJobID != id {
				o := u.apply(tx, j)
				r.Code, r.Error, r.Hint = o.code, o.words, o.hint
				return r
			}
		}
		if len(rows) == 0 {
			return u.refused(r, slurm.ErrInvalidJobID)
		}
		outcomes := map[int]outcome{} // by task
		for _, j := range rows {
			o := u.apply(tx, j)
			for _, t := range rowTasks(j) {
				outcomes[t] = o
			}
		}
		r.Array = groupTasks(id, outcomes)
		return r
	}
	tasks, err := parseTaskList(strings.Trim(taskPart, "[]"))
	if err != nil {
		return u.refused(r, slurm.ErrInvalidJobID)
	}
	outcomes := map[int]outcome{}
	for _, j := range rows {
		if !j.ArrayRecord() || j.ArrayJobID != id {
			continue
		}
		var named []int
		for _, t := range j.ArrayPending {
			if tasks[t] {
				named = append(named, t)
			}
		}
		switch {
		case len(named) == 0:
		case len(named) == len(j.ArrayPending):
			o := u.apply(tx, j)
			for _, t := range named {
				outcomes[t] = o
				delete(tasks, t)
			}
		default:
			// The named tasks leave the record and become rows of their
			// own, which the loop below finds.
			for _, t := range named {
				if _, err := tx.SplitTask(id, t); err != nil {
					outcomes[t] = refused(slurm.ErrInvalidJobID)
					delete(tasks, t)
				}
			}
		}
	}
	if len(tasks) > 0 {
		rows, err = tx.Jobs(store.Filter{IDs: []uint32{id}})
		if err != nil {
			r.Code, r.Error = slurm.ErrInvalidJobID, err.Error()
			return r
		}
	}
	for _, t := range slices.Sorted(maps.Keys(tasks)) {
		o := refused(slurm.ErrInvalidJobID)
		for _, j := range rows {
			if j.ArrayJobID == id && j.ArrayTaskID == t && !j.ArrayRecord() {
				o = u.apply(tx, j)
				break
			}
		}
		outcomes[t] = o
	}
	r.Array = groupTasks(id, outcomes)
	return r
}

// outcome is what became of one row: Slurm's code (0 for success) and its
// words.
type outcome struct {
	code  slurm.Errno
	words string
	// hint follows Slurm's words: the numbers and the fix.
	hint string
}

func refused(code slurm.Errno) outcome { return outcome{code: code, words: code.Error()} }

func (u *jobUpdate) refused(r api.UpdateResult, code slurm.Errno) api.UpdateResult {
	r.Code, r.Error = code, code.Error()
	return r
}

// apply changes one row, checks a new partition or GRES as a submission,
// writes the row and records who changed another user's job.
func (u *jobUpdate) apply(tx *store.Tx, j store.Job) outcome {
	if c := j.Request.Cron; c != nil && !c.Off {
		// slurmctld refuses it before anything else: the crontab is
		// the job's definition.
		o := refused(slurm.ErrCannotModifyCronJob)
		o.hint = fmt.Sprintf("job %d is the scrontab entry on lines %d-%d of %s's crontab; change the entry with scrontab -e", j.ID, c.LineStart, c.LineEnd, j.User)
		return o
	}
	cur, code := change(j, u.ch, u.who, u.cfg, u.prio[j.ID])
	if code != 0 {
		o := refused(code)
		o.hint = updateHint(j, u.ch, u.who, u.cfg, u.prio[j.ID], code)
		return o
	}
	if u.fields != nil {
		// Refused after the job's own checks (finished, whose), as
		// _update_job tests the fields after them.
		return *u.fields
	}
	if cur.Partition != j.Partition {
		if e := allowGroupsRefusal(u.caller, cur.Partition, u.cfg); e != nil {
			return outcome{code: e.Code, words: e.Message, hint: e.Hint}
		}
	}
	if u.snap != nil && (cur.Partition != j.Partition || u.ch.Gres != nil || u.ch.GPUs != nil) {
		if o := u.check(cur, cur.Partition != j.Partition); o.code != 0 {
			return o
		}
	}
	if err := tx.PutJob(cur); err != nil {
		u.d.log.Error("updating a job", "job", j.ID, "err", err)
		return outcome{code: slurm.ErrInvalidJobID, words: err.Error()}
	}
	if cur.State == slurm.Running && cur.TimeLimit != j.TimeLimit {
		u.limited = append(u.limited, cur)
	}
	detail := describe(u.ch.Update)
	u.d.log.Info("job updated", "job", j.ID, "by", u.caller.User, "change", detail)
	e := u.d.callerEvent(u.caller, j.ID, evUpdate, detail)
	e.Time = tx.Now() // the change's own time
	_, err := tx.AppendEvent(e)
	if err != nil {
		u.d.log.Error("recording an event", "job", j.ID, "err", err)
	}
	return outcome{}
}

// check refuses a changed job that a submission of it would be refused
// for (unknown or closed partition, an account it does not allow, GPUs
// this machine does not have), with the controller's code; newPartition
// says whether the update moves it to another partition. The job itself
// is left out of the snapshot, so that it does not count twice.
func (u *jobUpdate) check(j store.Job, newPartition bool) outcome {
	snap := *u.snap
	// An update adds no job: a user above MaxJobCountPerUser (lowered
	// since) may still move or change the jobs they hold.
	snap.Config.MaxJobCountPerUser = 0
	if !newPartition {
		// A job already queued in a DRAIN partition stays there: only a
		// move into one is a new job for it.
		snap.Partitions = slices.Clone(snap.Partitions)
		for i := range snap.Partitions {
			snap.Partitions[i].Closed = false
		}
	}
	snap.Jobs = slices.DeleteFunc(slices.Clone(snap.Jobs), func(sj sched.Job) bool {
		return sj.ID == j.ID || (j.ArrayRecord() && sj.ArrayJobID == j.ID && sj.State == slurm.Pending)
	})
	var node sched.Node
	if len(snap.Nodes) > 0 {
		node = snap.Nodes[0]
	}
	sj := schedJob(&j, j.ID, j.ArrayTaskID, u.cfg.ShardSize, node)
	if j.ArrayRecord() {
		sj.ArrayTasks = j.ArrayPending
	}
	err := sched.CheckSubmit(sj, snap)
	var se *sched.SubmitError
	if errors.As(err, &se) && !se.Retry {
		u.d.log.Info("update refused", "job", j.ID, "why", se.Detail)
		return outcome{code: cmp.Or(se.Code, slurm.ErrInvalidGRES), words: se.Msg, hint: se.Detail}
	}
	return outcome{}
}

// rowTasks are the array tasks a row stands for.
func rowTasks(j store.Job) []int {
	if j.ArrayRecord() {
		return j.ArrayPending
	}
	return []int{j.ArrayTaskID}
}

// groupTasks is slurmctld's _resp_array_xlate: tasks grouped by outcome,
// each group "N_1-3,7", the groups ordered by their lowest task.
func groupTasks(id uint32, outcomes map[int]outcome) []api.Result {
	byOutcome := map[outcome][]int{}
	for t, o := range outcomes {
		byOutcome[o] = append(byOutcome[o], t)
	}
	var out []api.Result
	for o, tasks := range byOutcome {
		slices.Sort(tasks)
		out = append(out, api.Result{Job: fmt.Sprintf("%d_%s", id, slurmsyntax.FormatTasks(tasks, 0)),
			Code: o.code, Error: o.words})
	}
	slices.SortFunc(out, func(a, b api.Result) int { return cmp.Compare(firstTask(a.Job), firstTask(b.Job)) })
	return out
}

func firstTask(s string) int {
	_, tasks, _ := strings.Cut(s, "_")
	n, _ := strconv.Atoi(strings.FieldsFunc(tasks, func(r rune) bool { return r == '-' || r == ',' })[0])
	return n
}

// parseTaskList reads "1-3,7" (steps as "0-9:2") into a set.
func parseTaskList(s string) (map[int]bool, error) {
	a, err := slurmsyntax.ParseArray(s, slurmsyntax.MaxArraySizeLimit)
	if err != nil {
		return nil, err
	}
	set := map[int]bool{}
	for _, t := range a.Tasks {
		set[t] = true
	}
	return set, nil
}

// describe says what an update changes, for the log and the audit trail.
func describe(u api.Update) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	if u.TimeLimit != nil {
		add("TimeLimit", slurmsyntax.FormatDuration(*u.TimeLimit))
	}
	if u.Partition != nil {
		add("Partition", *u.Partition)
	}
	if u.Priority != nil {
		add("Priority", strconv.FormatUint(uint64(*u.Priority), 10))
	}
	if u.Nice != nil {
		add("Nice", strconv.Itoa(*u.Nice))
	}
	if u.Name != nil {
		add("JobName", *u.Name)
	}
	if u.Comment != nil {
		add("Comment", strconv.Quote(*u.Comment))
	}
	if u.Gres != nil {
		add("Gres", *u.Gres)
	}
	if u.GPUs != nil {
		add("TresPerJob", "gres:"+*u.GPUs)
	}
	if u.Requeue != nil {
		add("Requeue", strconv.FormatBool(*u.Requeue))
	}
	return strings.Join(parts, " ")
}

// setLimit gives a running job's new time limit to its supervisor, which
// enforces it from then on, across restarts of the daemon. A supervisor
// that cannot take it (started by a build without OpLimit) keeps its first
// limit; a lower one is then enforced by a timer of this process, which a
// restart of the daemon loses.
func (d *Daemon) setLimit(j store.Job) {
	limit := effectiveLimit(d.config(), &j)
	_, err := d.callSupervisor(j, stepd.Request{Op: stepd.OpLimit, Limit: limit})
	if err == nil {
		d.log.Info("running job's time limit changed", "job", j.ID, "limit", slurmsyntax.FormatDuration(limit))
		return
	}
	d.log.Warn("the job's supervisor did not take its new time limit", "job", j.ID, "err", err)
	if limit == slurmsyntax.Infinite {
		return
	}
	// A real timer for a wait on the daemon's clock: a fake clock set
	// forward fires it at once, and enforceLimit checks again.
	time.AfterFunc(max(j.Start.Add(limit).Sub(d.now()), 0), func() { d.enforceLimit(j.ID, j.Restarts) })
}

// enforceLimit ends a running job past its time limit as its supervisor
// would have. It checks again: the job may have ended, been requeued, or
// had its limit changed since the timer was set.
func (d *Daemon) enforceLimit(id uint32, run int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := d.st.Job(ctx, id)
	if err != nil || j.State != slurm.Running || j.Restarts != run {
		return
	}
	limit := effectiveLimit(d.config(), &j)
	if limit == slurmsyntax.Infinite || d.now().Sub(j.Start) < limit-time.Second {
		return
	}
	if _, err := stepd.Call(d.runDir(id, run), stepd.Request{Op: stepd.OpCancel, Why: stepd.WhyTimeLimit,
		Run: &stepd.RunOwner{JobID: id, Run: run, UID: j.UID}}); err != nil {
		d.log.Error("ending a job at its updated time limit", "job", id, "err", err)
		return
	}
	d.log.Info("job reached its updated time limit", "job", id, "limit", slurmsyntax.FormatDuration(limit))
}
