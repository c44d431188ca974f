package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Job ids run from FirstJobID to MaxJobID, then start again at FirstJobID,
// skipping ids still in use: Slurm's FirstJobId and MaxJobId defaults.
const (
	FirstJobID uint32 = 1
	MaxJobID   uint32 = 0x03ff0000
)

// Tx is a write transaction, given to Update's function. Its reads see its
// own writes. It is valid only during that call.
type Tx struct {
	tx    *sql.Tx
	now   time.Time
	stmts map[string]*sql.Stmt
	// touched collects the job rows the batch wrote, for the job cache.
	touched map[uint32]struct{}
	// written holds, for job rows the batch inserted and nothing wrote
	// since, the values inserted (cache.go's rowOf); added are the ids
	// this request inserted, taken out of it if the request is undone.
	written map[uint32][]any
	added   []uint32
	// next is the writer's memory of next_job_id (allocID).
	next *nextID
	// maxID is the highest job id this request gave out (0: none): the
	// batch moves the high-water mark past it before it commits (hwm.go).
	maxID uint32
}

// Now is the time of the transaction's batch: use it for times the change
// itself sets, so that all of one change carries one time.
func (t *Tx) Now() time.Time { return t.now }

var ctxBG = context.Background()

func (t *Tx) exec(query string, args ...any) (sql.Result, error) {
	if query == sqlSetNextID {
		t.forgetNext() // whoever sets it, allocID reads it again
	}
	if st, ok := t.stmts[query]; ok {
		return t.tx.StmtContext(ctxBG, st).ExecContext(ctxBG, args...)
	}
	return t.tx.ExecContext(ctxBG, query, args...)
}

func (t *Tx) queryRow(query string, args ...any) *sql.Row {
	if st, ok := t.stmts[query]; ok {
		return t.tx.StmtContext(ctxBG, st).QueryRowContext(ctxBG, args...)
	}
	return t.tx.QueryRowContext(ctxBG, query, args...)
}

// Statements the writer runs for every submission, prepared once at Open
// (preparing them each time cost a third of a submission's CPU).
const (
	sqlSavepoint    = "SAVEPOINT req"
	sqlRollbackTo   = "ROLLBACK TO req"
	sqlRelease      = "RELEASE req"
	sqlNextID       = "SELECT value FROM meta WHERE key = 'next_job_id'"
	sqlSetNextID    = "UPDATE meta SET value = ? WHERE key = 'next_job_id'"
	sqlIDUsed       = "SELECT EXISTS (SELECT 1 FROM jobs WHERE id = ?1) OR EXISTS (SELECT 1 FROM scripts WHERE id = ?1)"
	sqlInsertScript = "INSERT INTO scripts (id, uid, text, env) VALUES (?, ?, ?, ?)"
)

func insertRowSQL(table string) string {
	return "INSERT INTO " + table + " (" + jobCols + ") VALUES (" + placeholders(jobColCount) + ")"
}

var preparedSQL = []string{
	sqlSavepoint, sqlRollbackTo, sqlRelease, sqlNextID, sqlSetNextID, sqlIDUsed, sqlInsertScript,
	insertRowSQL("jobs"), putJobSQL, jobByIDSQL,
}

// prepare prepares preparedSQL on the writer's connection.
func prepare(ctx context.Context, db *sql.DB) (map[string]*sql.Stmt, error) {
	stmts := map[string]*sql.Stmt{}
	for _, q := range preparedSQL {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("preparing %q: %w", q, err)
		}
		stmts[q] = st
	}
	return stmts, nil
}

// Insert creates one submitted job in the transaction, with whatever else
// the caller writes there (scrontab's entries and the crontab they came
// from are one commit); see NewJob for what it fills in.
func (t *Tx) Insert(nj NewJob) (uint32, error) { return t.insert(nj) }

// insert creates one submitted job; see NewJob for what it fills in.
func (t *Tx) insert(nj NewJob) (uint32, error) {
	j := nj.Job
	if j.User == "" {
		return 0, errors.New("submitting a job without a user name")
	}
	id, err := t.allocID()
	if err != nil {
		return 0, err
	}
	j.ID, j.ArrayJobID, j.ArrayTaskID = id, 0, NoTask
	if j.Request.Array != nil || len(j.ArrayPending) > 0 {
		j.ArrayJobID = id
		if len(j.ArrayPending) == 0 {
			j.ArrayPending = j.Request.Array.Tasks
		}
		j.ArrayPending = normTasks(j.ArrayPending)
		if len(j.ArrayPending) == 0 {
			return 0, fmt.Errorf("submitting array job %q: it has no tasks", j.Name)
		}
		if j.ArrayLimit == 0 && j.Request.Array != nil {
			j.ArrayLimit = j.Request.Array.Limit
		}
	} else {
		j.ArrayPending = nil
	}
	if j.State == "" {
		j.State = slurm.Pending
	}
	if j.Submit.IsZero() {
		j.Submit = t.now
	}
	if _, err := t.exec(sqlInsertScript,
		id, j.UID, []byte(nj.Script), encodeEnv(nj.Env)); err != nil {
		return 0, fmt.Errorf("storing job %d's script: %w", id, err)
	}
	args, err := t.insertRowArgs("jobs", &j, id)
	if err != nil {
		return 0, err
	}
	t.touch(id)
	t.wrote(id, args)
	return id, nil
}

func (t *Tx) insertRow(table string, j *Job, scriptID uint32) error {
	_, err := t.insertRowArgs(table, j, scriptID)
	return err
}

// insertRowArgs is insertRow, returning the values the row was written
// with.
func (t *Tx) insertRowArgs(table string, j *Job, scriptID uint32) ([]any, error) {
	args, err := jobArgs(j, scriptID)
	if err != nil {
		return nil, err
	}
	if _, err := t.exec(insertRowSQL(table), args...); err != nil {
		return nil, fmt.Errorf("storing job %d: %w", j.ID, err)
	}
	return args, nil
}

// allocID takes the next free job id. An id is in use while a job row or a
// submission's script has it (an array's record may be gone, its script
// not), so after a wrap-around ids are skipped, never reused.
func (t *Tx) allocID() (uint32, error) {
	var next int64
	if t.next != nil && t.next.ok {
		next = t.next.v
	} else if err := t.queryRow(sqlNextID).Scan(&next); err != nil {
		return 0, fmt.Errorf("reading the next job id: %w", err)
	}
	id := uint32(next)
	if next < int64(FirstJobID) || next > int64(MaxJobID) {
		id = FirstJobID
	}
	for tries := uint32(0); ; tries++ {
		if tries > MaxJobID-FirstJobID {
			return 0, fmt.Errorf("every job id from %d to %d is in use", FirstJobID, MaxJobID)
		}
		var used bool
		err := t.queryRow(sqlIDUsed, id).Scan(&used)
		if err != nil {
			return 0, fmt.Errorf("allocating a job id: %w", err)
		}
		if !used {
			break
		}
		if id++; id > MaxJobID {
			id = FirstJobID
		}
	}
	if _, err := t.exec(sqlSetNextID, int64(id)+1); err != nil {
		t.forgetNext()
		return 0, fmt.Errorf("advancing the next job id: %w", err)
	}
	if t.next != nil {
		t.next.v, t.next.ok = int64(id)+1, true
	}
	t.gave(id)
	return id, nil
}

// nextID is next_job_id as the writer last set it, so that allocID need
// not read it for every job (it was one of a submission's seven
// statements). The writer is the one writer, so the value holds until
// something else writes the row (ReserveIDs, PutMeta) or a rollback undoes
// an allocation (a request undone, a batch that did not commit): each of
// those forgets it, and the next allocID reads the row again.
type nextID struct {
	v  int64
	ok bool
}

// forgetNext makes the next allocID read next_job_id again.
func (t *Tx) forgetNext() {
	if t.next != nil {
		t.next.ok = false
	}
}

// Job returns the job row with that id, or ErrNotFound.
func (t *Tx) Job(id uint32) (Job, error) {
	j, _, err := jobByID(ctxBG, t.tx, id)
	return j, err
}

// Jobs returns the job rows that f selects, by id.
func (t *Tx) Jobs(f Filter) ([]Job, error) { return queryJobs(ctxBG, t.tx, "jobs", f) }

// putCols are the columns PutJob writes: all but the row's identity, its
// script, and its array bookkeeping, which only Submit, SplitTask and
// DropTasks change.
var putCols = func() []string {
	var cols []string
	for c := range strings.SplitSeq(jobCols, ",") {
		c = strings.TrimSpace(c)
		switch c {
		case "id", "script_id", "array_job_id", "array_task_id", "array_pending":
			continue
		}
		cols = append(cols, c)
	}
	return cols
}()

var putJobSQL = "UPDATE jobs SET " + strings.Join(putCols, " = ?, ") + " = ? WHERE id = ?"

// PutJob writes j over the job row j.ID, which must exist. It leaves the
// row's identity, script and array bookkeeping (ArrayJobID, ArrayTaskID,
// ArrayPending) as they are. Read the job in the same transaction (Tx.Job),
// change it, put it: a copy read outside may be stale.
func (t *Tx) PutJob(j Job) error {
	args, err := jobArgs(&j, 0)
	if err != nil {
		return err
	}
	byName := map[string]any{}
	i := 0
	for c := range strings.SplitSeq(jobCols, ",") {
		byName[strings.TrimSpace(c)] = args[i]
		i++
	}
	vals := make([]any, 0, len(putCols)+1)
	for _, c := range putCols {
		vals = append(vals, byName[c])
	}
	vals = append(vals, j.ID)
	t.touch(j.ID)
	res, err := t.exec(putJobSQL, vals...)
	if err != nil {
		return fmt.Errorf("updating job %d: %w", j.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("updating job %d: %w", j.ID, ErrNotFound)
	}
	return nil
}

// SplitTask takes task out of array arrayID's pending record and returns it
// as a job row of its own, still in the record's state: when it starts, or
// when one pending task is held, updated or requeued on its own. The task
// gets a new job id, except the last pending one, which takes the array's
// own id, as in Slurm (the record becomes that task).
func (t *Tx) SplitTask(arrayID uint32, task int) (Job, error) {
	rec, scriptID, err := jobByID(ctxBG, t.tx, arrayID)
	if err != nil {
		return Job{}, err
	}
	if !rec.ArrayRecord() {
		return Job{}, fmt.Errorf("job %d is not an array with pending tasks", arrayID)
	}
	t.touch(arrayID)
	i, ok := slices.BinarySearch(rec.ArrayPending, task)
	if !ok {
		return Job{}, fmt.Errorf("array task %d_%d is not pending: %w", arrayID, task, ErrNotFound)
	}
	if len(rec.ArrayPending) == 1 {
		if _, err := t.exec("UPDATE jobs SET array_task_id = ?, array_pending = '' WHERE id = ?", task, arrayID); err != nil {
			return Job{}, fmt.Errorf("starting array task %d_%d: %w", arrayID, task, err)
		}
		rec.ArrayTaskID, rec.ArrayPending = task, nil
		return rec, nil
	}
	left := slices.Delete(slices.Clone(rec.ArrayPending), i, i+1)
	if _, err := t.exec("UPDATE jobs SET array_pending = ? WHERE id = ?", formatTasks(left), arrayID); err != nil {
		return Job{}, fmt.Errorf("splitting array task %d_%d: %w", arrayID, task, err)
	}
	id, err := t.allocID()
	if err != nil {
		return Job{}, err
	}
	j := rec
	j.ID, j.ArrayTaskID, j.ArrayPending = id, task, nil
	if err := t.insertRow("jobs", &j, scriptID); err != nil {
		return Job{}, err
	}
	t.touch(id)
	return j, nil
}

// DropTasks removes pending tasks from array arrayID's record, which is how
// cancelling a pending task leaves no trace (as in Slurm), and returns the
// tasks still pending. A record left with none is deleted. Tasks not pending
// are an error that names them, and nothing is dropped.
func (t *Tx) DropTasks(arrayID uint32, tasks []int) ([]int, error) {
	rec, _, err := jobByID(ctxBG, t.tx, arrayID)
	if err != nil {
		return nil, err
	}
	if !rec.ArrayRecord() {
		return nil, fmt.Errorf("job %d is not an array with pending tasks", arrayID)
	}
	t.touch(arrayID)
	drop := normTasks(tasks)
	var missing []string
	for _, task := range drop {
		if _, ok := slices.BinarySearch(rec.ArrayPending, task); !ok {
			missing = append(missing, fmt.Sprintf("%d_%d", arrayID, task))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("array tasks %s are not pending: %w", strings.Join(missing, ", "), ErrNotFound)
	}
	left := slices.DeleteFunc(slices.Clone(rec.ArrayPending), func(task int) bool {
		_, found := slices.BinarySearch(drop, task)
		return found
	})
	if len(left) == 0 {
		_, err = t.exec("DELETE FROM jobs WHERE id = ?", arrayID)
	} else {
		_, err = t.exec("UPDATE jobs SET array_pending = ? WHERE id = ?", formatTasks(left), arrayID)
	}
	if err != nil {
		return nil, fmt.Errorf("dropping tasks of array %d: %w", arrayID, err)
	}
	return left, nil
}

// Requeue ends the job's current run at at and starts the next: the run as
// it was goes to accounting as a REQUEUED record (PREEMPTED or NODE_FAIL
// when the row says so; with its steps), and the
// job row goes back to PENDING with Restarts one higher, a new Submit time
// (Slurm resets it), and no start, end, exit code, allocation, GPU figures
// or notes: those were the ended run's, and stay with its record. Eligible, holds, priority, batch size and who did what are
// left for the caller to set. It returns the job as it now is.
func (t *Tx) Requeue(id uint32, at time.Time) (Job, error) {
	j, scriptID, err := jobByID(ctxBG, t.tx, id)
	if err != nil {
		return Job{}, err
	}
	if j.ArrayRecord() {
		return Job{}, fmt.Errorf("requeueing job %d: the pending tasks of an array have no run to end", id)
	}
	run := j
	// Slurm shows a run ended by preemption or a node failure as such
	// under sacct -D; any other requeued run as REQUEUED.
	if run.State != slurm.Preempted && run.State != slurm.NodeFail {
		run.State = slurm.Requeued
	}
	if run.End.IsZero() {
		run.End = at
	}
	if err := t.insertRow("runs", &run, scriptID); err != nil {
		return Job{}, fmt.Errorf("archiving run %d of job %d: %w", j.Restarts, id, err)
	}
	j.Restarts++
	j.State, j.Reason = slurm.Pending, slurm.ReasonNone
	// Pending again from now, and eligible at once (Slurm resets both;
	// its two-minute hold-off after a requeue is not kept here).
	j.Submit, j.Eligible = at, at
	j.Start, j.End = time.Time{}, time.Time{}
	j.ExitCode, j.Alloc = ExitCode{}, Alloc{}
	j.PeakGPUMem, j.MeanGPUUtil = 0, 0
	j.Notes = nil
	if err := t.PutJob(j); err != nil {
		return Job{}, err
	}
	return j, nil
}

// ForgetScripts empties the stored script and environment of every
// submission all of whose jobs have finished and ended before before, and
// returns how many it emptied: they often hold tokens, and accounting needs
// neither. The daemon calls it once finished jobs are past MinJobAge (a
// requeue of a finished job needs its script). Script then returns an empty
// Text, which no submission has (sbatch refuses an empty script).
func (t *Tx) ForgetScripts(before time.Time) (int64, error) {
	var live []any
	for _, st := range []slurm.JobState{slurm.Pending, slurm.Running, slurm.Suspended, slurm.Completing, slurm.Requeued, slurm.Resizing} {
		live = append(live, string(st))
	}
	res, err := t.exec(`UPDATE scripts SET text = x'', env = x''
		WHERE length(text) + length(env) > 0 AND NOT EXISTS (
			SELECT 1 FROM jobs WHERE script_id = scripts.id
			AND (end_time IS NULL OR end_time >= ? OR state IN (`+placeholders(len(live))+`)))`,
		append([]any{before.UnixNano()}, live...)...)
	if err != nil {
		return 0, fmt.Errorf("forgetting old scripts: %w", err)
	}
	return res.RowsAffected()
}

// PutStep writes a step of a job's run, replacing an earlier write of the
// same (JobID, Run, ID).
func (t *Tx) PutStep(st Step) error {
	q := "INSERT OR REPLACE INTO steps (" + stepCols + ") VALUES (" + placeholders(strings.Count(stepCols, ",")+1) + ")"
	if _, err := t.exec(q, stepArgs(&st)...); err != nil {
		return fmt.Errorf("storing step %d.%s: %w", st.JobID, st.ID, err)
	}
	return nil
}

// PutUsage writes associations' decayed usage, replacing what was there.
func (t *Tx) PutUsage(us ...Usage) error {
	for _, u := range us {
		_, err := t.exec(`INSERT INTO usage (user, account, raw, as_of) VALUES (?, ?, ?, ?)
			ON CONFLICT (user, account) DO UPDATE SET raw = excluded.raw, as_of = excluded.as_of`,
			u.User, u.Account, u.Raw, timeArg(u.AsOf))
		if err != nil {
			return fmt.Errorf("storing usage of %s/%s: %w", u.Account, u.User, err)
		}
	}
	return nil
}

// PutDrain drains a GPU, or changes the reason of a drain.
func (t *Tx) PutDrain(d Drain) error {
	_, err := t.exec(`INSERT INTO gpu_drains (uuid, idx, reason, since, by_uid) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (uuid) DO UPDATE SET idx = excluded.idx, reason = excluded.reason,
			since = excluded.since, by_uid = excluded.by_uid`,
		d.UUID, d.Index, d.Reason, timeArg(d.Since), d.By)
	if err != nil {
		return fmt.Errorf("draining GPU %s: %w", d.UUID, err)
	}
	return nil
}

// DeleteDrain resumes a GPU; resuming one not drained is not an error.
func (t *Tx) DeleteDrain(uuid string) error {
	if _, err := t.exec("DELETE FROM gpu_drains WHERE uuid = ?", uuid); err != nil {
		return fmt.Errorf("resuming GPU %s: %w", uuid, err)
	}
	return nil
}

// AppendEvent adds e to the audit trail (Time defaults to Now) and returns
// its sequence number.
func (t *Tx) AppendEvent(e Event) (int64, error) {
	if e.Action == "" {
		return 0, errors.New("recording an event without an action")
	}
	if e.Time.IsZero() {
		e.Time = t.now
	}
	res, err := t.exec(`INSERT INTO events (time, actor, actor_name, job_id, gpu, action, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		e.Time.UnixNano(), e.Actor, e.ActorName, e.JobID, e.GPU, e.Action, e.Detail)
	if err != nil {
		return 0, fmt.Errorf("recording %s event: %w", e.Action, err)
	}
	return res.LastInsertId()
}
