package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Filter selects jobs for squeue, scontrol and sacct. Empty fields select
// everything; the fields that are set must all match.
type Filter struct {
	// IDs match a job's id or its array's id, so that 7 selects array 7's
	// tasks and its pending record (squeue -j 7).
	IDs        []uint32
	Users      []string
	Accounts   []string
	Partitions []string
	States     []slurm.JobState
	Names      []string
	// Since and Until select jobs that existed at some time in the window:
	// submitted by Until, and not ended before Since (sacct -S, -E). A zero
	// time leaves that side open.
	Since time.Time
	Until time.Time
	// EarlierRuns adds, in Records, the runs that requeues archived
	// (sacct -D); without it Records gives each job's latest run.
	EarlierRuns bool
}

// where is f as a SQL condition over the job columns, with its arguments.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	in := func(col string, n int) string { return col + " IN (" + placeholders(n) + ")" }
	if len(f.IDs) > 0 {
		conds = append(conds, "("+in("id", len(f.IDs))+" OR "+in("array_job_id", len(f.IDs))+")")
		for range 2 {
			for _, id := range f.IDs {
				args = append(args, id)
			}
		}
	}
	for _, c := range []struct {
		col  string
		vals []string
	}{
		{"user", f.Users},
		{"account", f.Accounts},
		{"partition", f.Partitions},
		{"state", statesAsStrings(f.States)},
		{"name", f.Names},
	} {
		if len(c.vals) == 0 {
			continue
		}
		conds = append(conds, in(c.col, len(c.vals)))
		for _, v := range c.vals {
			args = append(args, v)
		}
	}
	if !f.Since.IsZero() {
		conds = append(conds, "(end_time IS NULL OR end_time >= ?)")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "submit_time <= ?")
		args = append(args, f.Until.UnixNano())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func statesAsStrings(ss []slurm.JobState) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// querier is what reads need: the read pool, or a write transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func queryJobs(ctx context.Context, q querier, table string, f Filter) ([]Job, error) {
	var jobs []Job
	err := eachJob(ctx, q, table, f, func(j *Job) { jobs = append(jobs, *j) })
	return jobs, err
}

// eachJob calls fn with each row of table that f selects, in queryJobs'
// order.
func eachJob(ctx context.Context, q querier, table string, f Filter, fn func(*Job)) error {
	where, args := f.where()
	order := " ORDER BY id"
	if table == "runs" {
		order = " ORDER BY id, restarts"
	}
	rows, err := q.QueryContext(ctx, "SELECT "+jobCols+" FROM "+table+where+order, args...)
	if err != nil {
		return fmt.Errorf("reading %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		j, _, err := scanJob(rows)
		if err != nil {
			return fmt.Errorf("reading %s: %w", table, err)
		}
		fn(&j)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", table, err)
	}
	return nil
}

// countJobs is how many rows eachJob would read.
func countJobs(ctx context.Context, q querier, table string, f Filter) (int, error) {
	where, args := f.where()
	var n int
	if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting %s: %w", table, err)
	}
	return n, nil
}

var jobByIDSQL = "SELECT " + jobCols + " FROM jobs WHERE id = ?"

func jobByID(ctx context.Context, q querier, id uint32) (Job, uint32, error) {
	j, scriptID, err := scanJob(q.QueryRowContext(ctx, jobByIDSQL, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, 0, fmt.Errorf("job %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Job{}, 0, fmt.Errorf("reading job %d: %w", id, err)
	}
	return j, scriptID, nil
}

// Job returns the job row with that id, or an error wrapping ErrNotFound.
// A pending array task is not a row: look for its array's record.
func (s *Store) Job(ctx context.Context, id uint32) (Job, error) {
	j, _, err := jobByID(ctx, s.r, id)
	return j, err
}

// Jobs returns the job rows f selects (EarlierRuns aside), by id: the
// controller's view, for squeue and scontrol.
func (s *Store) Jobs(ctx context.Context, f Filter) ([]Job, error) {
	if jobs, ok := s.cachedJobs(f); ok {
		return jobs, nil
	}
	return queryJobs(ctx, s.r, "jobs", f)
}

// EachJob calls fn with each job Jobs would return, in the same order,
// without copying the jobs when the cache answers (a 10,000-job squeue
// copied 14 MB). fn must not keep the pointer or change the job, and must
// not call the store: the cache is read-locked meanwhile.
func (s *Store) EachJob(ctx context.Context, f Filter, fn func(*Job)) error {
	if s.cachedEach(f, nil, fn) {
		return nil
	}
	jobs, err := queryJobs(ctx, s.r, "jobs", f)
	if err != nil {
		return err
	}
	for i := range jobs {
		fn(&jobs[i])
	}
	return nil
}

// Runs returns every run f selects, the latest (jobs) and those requeues
// archived (runs), without steps: what a budget (GrpTRESMins) counts.
func (s *Store) Runs(ctx context.Context, f Filter) ([]Job, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("reading runs: %w", err)
	}
	defer tx.Rollback() // one snapshot for both tables
	latest, err := queryJobs(ctx, tx, "jobs", f)
	if err != nil {
		return nil, err
	}
	earlier, err := queryJobs(ctx, tx, "runs", f)
	if err != nil {
		return nil, err
	}
	return append(earlier, latest...), nil
}

// Records returns the accounting records f selects, for sacct: each job's
// latest run and, with f.EarlierRuns, its earlier ones, with their steps,
// ordered by job id and run.
func (s *Store) Records(ctx context.Context, f Filter) ([]Record, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("reading accounting: %w", err)
	}
	defer tx.Rollback() // one snapshot for jobs, runs and steps
	// The records go straight into a slice counted for them all: a job's
	// record is a kilobyte and more, and with 10,000 of them gathering
	// them in a slice grown by doubling, then copying them into another,
	// was a fifth of sacct's time in the daemon.
	tables := []string{"jobs"}
	if f.EarlierRuns {
		tables = append(tables, "runs")
	}
	n := 0
	for _, t := range tables {
		c, err := countJobs(ctx, tx, t, f)
		if err != nil {
			return nil, err
		}
		n += c
	}
	recs := make([]Record, 0, n)
	for _, t := range tables {
		latest := t == "jobs"
		if err := eachJob(ctx, tx, t, f, func(j *Job) { recs = append(recs, Record{Job: *j, Latest: latest}) }); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(recs, func(a, b Record) int {
		return cmp.Or(cmp.Compare(a.Job.ID, b.Job.ID), cmp.Compare(a.Job.Restarts, b.Job.Restarts))
	})
	if err := attachSteps(ctx, tx, recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// attachSteps reads the steps of recs' runs, a chunk of jobs at a time (a
// query's parameters are limited).
func attachSteps(ctx context.Context, q querier, recs []Record) error {
	type key struct {
		id  uint32
		run int
	}
	at := map[key]int{}
	var ids []uint32
	for i, r := range recs {
		at[key{r.Job.ID, r.Job.Restarts}] = i
		if i == 0 || recs[i-1].Job.ID != r.Job.ID {
			ids = append(ids, r.Job.ID)
		}
	}
	for chunk := range slices.Chunk(ids, 500) {
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := q.QueryContext(ctx, "SELECT "+stepCols+" FROM steps WHERE job_id IN ("+
			placeholders(len(chunk))+") ORDER BY job_id, run, "+stepOrder, args...)
		if err != nil {
			return fmt.Errorf("reading steps: %w", err)
		}
		for rows.Next() {
			st, err := scanStep(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("reading steps: %w", err)
			}
			if i, ok := at[key{st.JobID, st.Run}]; ok {
				recs[i].Steps = append(recs[i].Steps, st)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("reading steps: %w", err)
		}
	}
	return nil
}

// stepOrder is sacct's order of a run's steps: batch, extern, then the
// numbered steps by number (not by when they were last written: the batch
// step is written when the job ends).
const stepOrder = `CASE step_id WHEN 'batch' THEN -2 WHEN 'extern' THEN -1 ELSE CAST(step_id AS INTEGER) END, rowid`

// Script returns the script and environment job id was submitted with (an
// array task's are its array's), or an error wrapping ErrNotFound. The
// caller serves them to Script.UID and root only.
func (s *Store) Script(ctx context.Context, id uint32) (Script, error) {
	var (
		sc   Script
		text []byte
		env  []byte
	)
	err := s.r.QueryRowContext(ctx,
		"SELECT s.uid, s.text, s.env FROM jobs j JOIN scripts s ON s.id = j.script_id WHERE j.id = ?", id).
		Scan(&sc.UID, &text, &env)
	if errors.Is(err, sql.ErrNoRows) {
		return Script{}, fmt.Errorf("script of job %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Script{}, fmt.Errorf("reading the script of job %d: %w", id, err)
	}
	sc.Text, sc.Env = string(text), decodeEnv(env)
	return sc, nil
}

// NextJobID is the id the next submission is likely to get (ids still in
// use are skipped after a wrap-around).
func (s *Store) NextJobID(ctx context.Context) (uint32, error) {
	var next int64
	if err := s.r.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'next_job_id'").Scan(&next); err != nil {
		return 0, fmt.Errorf("reading the next job id: %w", err)
	}
	if next < int64(FirstJobID) || next > int64(MaxJobID) {
		return FirstJobID, nil
	}
	return uint32(next), nil
}

// Usage returns every association's stored usage, by account and user.
func (s *Store) Usage(ctx context.Context) ([]Usage, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT user, account, raw, as_of FROM usage ORDER BY account, user")
	if err != nil {
		return nil, fmt.Errorf("reading usage: %w", err)
	}
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		var u Usage
		var asOf sql.NullInt64
		if err := rows.Scan(&u.User, &u.Account, &u.Raw, &asOf); err != nil {
			return nil, fmt.Errorf("reading usage: %w", err)
		}
		u.AsOf = timeOf(asOf)
		out = append(out, u)
	}
	return out, rows.Err()
}

// Users returns every user with a job, an earlier run or usage in the
// store, by name.
func (s *Store) Users(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT user FROM jobs UNION SELECT user FROM runs UNION SELECT user FROM usage ORDER BY 1")
	if err != nil {
		return nil, fmt.Errorf("reading users: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("reading users: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// Drains returns the drained GPUs, by index.
func (s *Store) Drains(ctx context.Context) ([]Drain, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT uuid, idx, reason, since, by_uid FROM gpu_drains ORDER BY idx, uuid")
	if err != nil {
		return nil, fmt.Errorf("reading GPU drains: %w", err)
	}
	defer rows.Close()
	var out []Drain
	for rows.Next() {
		var d Drain
		var since sql.NullInt64
		if err := rows.Scan(&d.UUID, &d.Index, &d.Reason, &since, &d.By); err != nil {
			return nil, fmt.Errorf("reading GPU drains: %w", err)
		}
		d.Since = timeOf(since)
		out = append(out, d)
	}
	return out, rows.Err()
}

// EventFilter selects audit events; zero fields select everything.
type EventFilter struct {
	JobID uint32
	// NoJob keeps the events of no job (GPUs', the node's).
	NoJob bool
	Since time.Time
	Until time.Time
	// Limit keeps the newest Limit events.
	Limit int
}

// Events returns the audit events f selects, oldest first.
func (s *Store) Events(ctx context.Context, f EventFilter) ([]Event, error) {
	q := "SELECT seq, time, actor, actor_name, job_id, gpu, action, detail FROM events"
	var conds []string
	var args []any
	if f.JobID != 0 {
		conds = append(conds, "job_id = ?")
		args = append(args, f.JobID)
	}
	if f.NoJob {
		conds = append(conds, "job_id = 0")
	}
	if !f.Since.IsZero() {
		conds = append(conds, "time >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		conds = append(conds, "time <= ?")
		args = append(args, f.Until.UnixNano())
	}
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	q += " ORDER BY seq DESC"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var t int64
		if err := rows.Scan(&e.Seq, &t, &e.Actor, &e.ActorName, &e.JobID, &e.GPU, &e.Action, &e.Detail); err != nil {
			return nil, fmt.Errorf("reading events: %w", err)
		}
		e.Time = time.Unix(0, t)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading events: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// GPUSeconds returns, by account, the GPU-seconds its jobs have held:
// every run recorded (requeued runs included), running ones up to now. A
// job on a shared GPU (--gpu-mem) counts that GPU whole. One aggregate
// query over the job and run tables (tens of milliseconds for 100,000
// jobs): the web listener caches it.
func (s *Store) GPUSeconds(ctx context.Context, now time.Time) (map[string]float64, error) {
	const runs = `SELECT account, start_time, end_time, alloc FROM %s
		WHERE start_time IS NOT NULL AND state != 'PENDING'`
	q := `SELECT account, SUM((COALESCE(end_time, ?1) - start_time) / 1e9 * json_array_length(alloc, '$.gpus'))
		FROM (` + fmt.Sprintf(runs, "jobs") + ` UNION ALL ` + fmt.Sprintf(runs, "runs") + `)
		WHERE json_array_length(alloc, '$.gpus') > 0 AND COALESCE(end_time, ?1) > start_time
		GROUP BY account ORDER BY account`
	rows, err := s.r.QueryContext(ctx, q, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("summing GPU-seconds by account: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var account string
		var secs float64
		if err := rows.Scan(&account, &secs); err != nil {
			return nil, fmt.Errorf("summing GPU-seconds by account: %w", err)
		}
		out[account] = secs
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("summing GPU-seconds by account: %w", err)
	}
	return out, nil
}

// AutoRequeues counts the job's archived runs that ended in an automatic
// requeue: those in state NODE_FAIL (a lost supervisor, a lost GPU) and
// those with a note that starts with one of marks (the daemon's words for
// a RequeueExit code or a launch failure). max_batch_requeue bounds them.
func (s *Store) AutoRequeues(ctx context.Context, id uint32, marks ...string) (int, error) {
	q := "SELECT COUNT(*) FROM runs WHERE id = ? AND (state = ?"
	args := []any{id, string(slurm.NodeFail)}
	for _, m := range marks {
		// notes is a JSON array of strings: a note that starts with m
		// follows a quote.
		q += " OR instr(notes, ?) > 0"
		b, _ := json.Marshal(m)
		args = append(args, strings.TrimSuffix(string(b), `"`))
	}
	var n int
	if err := s.r.QueryRowContext(ctx, q+")", args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the automatic requeues of job %d: %w", id, err)
	}
	return n, nil
}
