package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A database can come back behind its job directories: an administrator
// puts back a copy taken a little earlier (the recovery the daemon itself
// recommends for a lost database), a WAL is lost or damaged after a crash
// and SQLite falls back to the last checkpoint. Started as it is, such a
// database gives again the ids of the jobs it does not know, hands their
// GPUs to new jobs, runs again what already ran, and calls the live ones
// lost. So before reattaching, the daemon compares the database with what
// the job directories prove, and adopts what it finds:
//
//  1. a run directory with a launch spec that the database does not know
//     (the job is missing, or its row is older: fewer restarts, or pending
//     where the run started) is put back as the spec's record says (the
//     daemon's own row as the run started, with its user, request and
//     allocation); reattach then finds it RUNNING and does what it does
//     for any running job: a live supervisor is watched, a final status
//     recorded with its real exit code, a dead one lost (NODE_FAIL);
//  2. the runs between the row the database kept and the adopted one go
//     to accounting from their own statuses (sacct -D);
//  3. ids up to the highest job directory are taken (never given again);
//  4. the ids the exact high-water mark says were given out that neither
//     the database nor a job directory knows are the acknowledged jobs
//     whose records are lost: they never started, so nothing of them can
//     be put back. They are reported by id, in the log and the audit
//     trail (sacctmgr show event Jobs=N), never silently dropped.
//
// Every adoption is in the log and the audit trail.

// runTrace is a run directory the database does not know.
type runTrace struct {
	id  uint32
	run int
	// inDB: the database has a row for the job (older than the run).
	inDB bool
	row  store.RowState
	spec *stepd.Spec
}

// adoptTraces does 1 to 4 above; it runs before reattach, with nothing
// scheduled yet.
func (d *Daemon) adoptTraces(ctx context.Context) error {
	rows, err := d.st.RowStates(ctx)
	if err != nil {
		return err
	}
	ents, err := os.ReadDir(d.jobsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", d.jobsDir, err)
	}
	var maxDir uint32
	var traces []runTrace
	for _, e := range ents {
		n, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil || !e.IsDir() || n == 0 {
			continue
		}
		id := uint32(n)
		maxDir = max(maxDir, id)
		row, inDB := rows[id]
		run, ok := d.unknownRun(id, row, inDB)
		if !ok {
			continue
		}
		spec, err := stepd.ReadSpec(filepath.Join(d.runDir(id, run), stepd.SpecFile))
		if err != nil {
			d.log.Error("a job directory the database does not know holds no readable launch spec: left as it is", "job", id, "run", run, "err", err)
			continue
		}
		traces = append(traces, runTrace{id: id, run: run, inDB: inDB, row: row, spec: spec})
	}
	// An array task that took its array's own id (the last one pending
	// does) goes in after the array's other tasks, which leave the
	// record first.
	slices.SortStableFunc(traces, func(a, b runTrace) int {
		ra, rb := a.spec.ArrayJobID == a.id && a.spec.ArrayTaskCount > 0, b.spec.ArrayJobID == b.id && b.spec.ArrayTaskCount > 0
		if ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return int(a.id) - int(b.id)
	})
	adopted := map[uint32]bool{}
	arrays := map[uint32]bool{}
	// A few hundred a transaction: a database rebuilt from thousands of
	// job directories (slurmd-lite --rebuild) takes one sync per batch.
	for batch := range slices.Chunk(traces, 256) {
		fns := make([]func(*store.Tx) error, len(batch))
		done := make([]func(), len(batch))
		for i, t := range batch {
			if fns[i], done[i], err = d.adoptRun(t); err != nil {
				return d.notAdopted(t, err)
			}
		}
		var failed error
		for i, err := range d.st.UpdateEach(ctx, fns) {
			t := batch[i]
			if err != nil {
				failed = cmp.Or(failed, d.notAdopted(t, err))
				continue
			}
			done[i]()
			adopted[t.id] = true
			if t.spec.ArrayTaskCount > 0 {
				arrays[t.spec.ArrayJobID] = true
			}
		}
		if failed != nil {
			return failed
		}
	}
	if maxDir > 0 {
		if err := d.st.Update(ctx, func(tx *store.Tx) error { return tx.ReserveIDs(maxDir + 1) }); err != nil {
			return err
		}
	}
	return d.reportLost(ctx, rows, adopted, arrays)
}

// notAdopted is why the start stops at a run it could not put back, and
// the way on.
func (d *Daemon) notAdopted(t runTrace, err error) error {
	dir := d.runDir(t.id, t.run)
	return fmt.Errorf("putting back job %d from %s: %w; slurmd-lite does not start with a database that does not know a run its job directories prove: "+
		"put back a copy of the database that knows it, or move %s aside (that job is then forgotten; its id stays taken) and start again",
		t.id, dir, err, filepath.Dir(dir))
}

// unknownRun is the run of job id that its directory holds and the
// database does not know, if any: a run after the row's (a later run has
// a directory), or the row's own run where the row is still pending (a
// pending row has no launch spec in its run's directory: a start writes
// the spec only after its commit).
func (d *Daemon) unknownRun(id uint32, row store.RowState, inDB bool) (int, bool) {
	hasSpec := func(run int) bool {
		_, err := os.Lstat(filepath.Join(d.runDir(id, run), stepd.SpecFile))
		return err == nil
	}
	if inDB {
		if _, err := os.Lstat(d.runDir(id, row.Restarts+1)); err != nil {
			if (row.State == slurm.Pending || row.ArrayRecord) && hasSpec(row.Restarts) {
				return row.Restarts, true
			}
			return 0, false
		}
	}
	runs, err := os.ReadDir(filepath.Join(d.jobsDir, strconv.FormatUint(uint64(id), 10)))
	if err != nil {
		return 0, false
	}
	latest := -1
	for _, r := range runs {
		if k, ok := strings.CutPrefix(r.Name(), "run-"); ok {
			if n, err := strconv.Atoi(k); err == nil && n > latest && hasSpec(n) {
				latest = n
			}
		}
	}
	if latest < 0 || (inDB && latest < row.Restarts) {
		return 0, false
	}
	return latest, true
}

// adoptRun is the change that puts job t.id back as run t.run recorded
// it, RUNNING (reattach settles it), with the runs between in accounting,
// and what to log once it is committed.
func (d *Daemon) adoptRun(t runTrace) (change func(*store.Tx) error, done func(), err error) {
	j, err := d.runRecord(t.spec)
	if err != nil {
		return nil, nil, err
	}
	j.State, j.Reason, j.End, j.ExitCode = slurm.Running, slurm.ReasonNone, time.Time{}, store.ExitCode{}
	from := 0
	if t.inDB && !t.row.ArrayRecord {
		from = t.row.Restarts
	}
	// The runs in between, as their directories recorded them.
	var runs []store.Job
	for r := from; r < t.run; r++ {
		dir := d.runDir(t.id, r)
		spec, err := stepd.ReadSpec(filepath.Join(dir, stepd.SpecFile))
		if err != nil {
			continue // never launched: not a run
		}
		run, err := d.runRecord(spec)
		if err != nil {
			continue
		}
		st, err := stepd.ReadStatus(dir)
		if err != nil {
			st = stepd.Status{State: slurm.NodeFail, ExitCode: "0:0", End: run.Start}
		}
		// Ended while no daemon ran it: its supervisor's end is the only
		// witness (awayEnd).
		applyStatus(&run, awayEnd(run, st, d.now()))
		if run.State != slurm.Preempted && run.State != slurm.NodeFail {
			run.State = slurm.Requeued
		}
		runs = append(runs, run)
	}
	script := store.Script{Text: t.spec.ScriptText, Env: t.spec.SubmitEnv, UID: j.UID}
	detail := fmt.Sprintf("put back from %s: the database came back without this run (run %d, user %s)", d.runDir(t.id, t.run), t.run, j.User)
	var dropped []int
	change = func(tx *store.Tx) error {
		for _, r := range runs {
			if err := tx.PutRun(r); err != nil {
				return err
			}
		}
		var err error
		if dropped, err = tx.Adopt(j, script); err != nil {
			return err
		}
		_, err = tx.AppendEvent(d.schedEvent(j.ID, evAdopt, detail))
		return err
	}
	done = func() {
		d.log.Warn("job put back from its job directory: the database came back without this run",
			"job", j.ID, "run", t.run, "user", j.User, "earlier_runs_recorded", len(runs))
		if len(dropped) > 0 {
			d.log.Error("array tasks that were pending when the database was written are lost: their array's record became a task since",
				"array", j.ArrayJobID, "tasks", fmt.Sprint(dropped))
		}
	}
	return change, done, nil
}

// runRecord is the job as a run's launch spec recorded it: the daemon's
// own row at the run's start (Spec.Record), or, for a run launched before
// specs carried it, what the spec itself says.
func (d *Daemon) runRecord(spec *stepd.Spec) (store.Job, error) {
	var j store.Job
	if len(spec.Record) > 0 {
		if err := json.Unmarshal(spec.Record, &j); err != nil {
			return j, fmt.Errorf("reading the record in its launch spec: %w", err)
		}
		if j.ID != spec.JobID || j.Restarts != spec.RestartCount {
			return j, fmt.Errorf("the record in its launch spec is job %d run %d, the spec's job %d run %d",
				j.ID, j.Restarts, spec.JobID, spec.RestartCount)
		}
		return j, nil
	}
	j = store.Job{
		ID: spec.JobID, ArrayTaskID: store.NoTask,
		User: spec.User.Name, UID: spec.User.UID, GID: spec.User.GID,
		Account: spec.Account, Partition: spec.Partition, QOS: spec.QOS, Name: spec.Name,
		Submit: spec.Start, Eligible: spec.Start, Start: spec.Start, TimeLimit: spec.TimeLimit,
		Restarts: spec.RestartCount, SubmitDir: spec.SubmitDir,
		BatchSize: spec.BatchSize, CheckpointDir: spec.CheckpointDir,
		Alloc: store.Alloc{Node: spec.NodeName, CPUs: spec.CPUs, Mem: spec.MemLimit},
	}
	if spec.ArrayTaskCount > 0 {
		j.ArrayJobID, j.ArrayTaskID = spec.ArrayJobID, spec.ArrayTaskID
	}
	for _, i := range spec.GPUs {
		g := store.GPUAlloc{Index: i}
		for _, s := range d.gsnap.GPUs {
			if s.Index == i {
				g.UUID = s.UUID
			}
		}
		j.Alloc.GPUs = append(j.Alloc.GPUs, g)
	}
	if j.User == "" {
		return j, errors.New("its launch spec names no user")
	}
	return j, nil
}

// reportLost reports the ids the high-water mark says were given out that
// the database did not know and no job directory put back.
func (d *Daemon) reportLost(ctx context.Context, rows map[uint32]store.RowState, adopted, arrays map[uint32]bool) error {
	behind := d.st.IDsBehind()
	if behind.Empty() || d.opts.Fresh {
		// --fresh forgets the jobs on purpose: nothing to report.
		return nil
	}
	if !behind.Exact {
		d.log.Error("the database came back behind the job id high-water mark of an earlier slurm-lite: jobs with ids in this range may have been acknowledged and are lost; ids continue after it",
			"ids", fmt.Sprintf("%d-%d", behind.From, behind.To-1))
		return nil
	}
	var lost, partial []uint32
	for id := behind.From; id < behind.To; id++ {
		_, inDB := rows[id]
		switch {
		case adopted[id] || inDB:
		case arrays[id]:
			partial = append(partial, id)
		default:
			lost = append(lost, id)
		}
	}
	if len(lost) == 0 && len(partial) == 0 {
		return nil
	}
	lostWhy := "acknowledged, but the database came back without it and it had not started: it will not run; submit it again"
	if len(lost) > 0 {
		if d.opts.Rebuild {
			// A rebuilt database knows no job that never started:
			// some were pending when it was lost, some were cancelled
			// long before; the ids alone cannot tell which.
			lostWhy = "no job directory: it never started (pending when the database was lost, or cancelled before it started); the rebuilt database cannot tell which, and it will not run"
			d.log.Warn("job ids given out that no job directory shows started: pending when the database was lost, or cancelled before they started; they will not run (submit again what was still wanted)",
				"jobs", idRanges(lost), "count", len(lost))
		} else {
			d.log.Error("acknowledged jobs lost: the database came back without them and they never started, so nothing of them is left to put back; they will not run (their users must submit them again)",
				"jobs", idRanges(lost), "count", len(lost), "database", d.st.Path())
		}
	}
	if len(partial) > 0 {
		d.log.Error("arrays put back from the tasks that had started; their tasks that had not started are lost",
			"arrays", idRanges(partial))
	}
	return d.st.Update(ctx, func(tx *store.Tx) error {
		for _, id := range lost {
			if _, err := tx.AppendEvent(d.schedEvent(id, evLost, lostWhy)); err != nil {
				return err
			}
		}
		for _, id := range partial {
			if _, err := tx.AppendEvent(d.schedEvent(id, evLost,
				"array: the database came back without it; the tasks that had started were put back, the others are lost")); err != nil {
				return err
			}
		}
		return nil
	})
}

// idRanges writes ascending ids as ranges: "4, 7-9".
func idRanges(ids []uint32) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j == i {
			fmt.Fprint(&b, ids[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		}
		i = j + 1
	}
	return b.String()
}
