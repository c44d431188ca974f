package store

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Adoption: a database that came back behind (an old copy put back, a WAL
// lost) does not know the runs that started after it was written, though
// their job directories do. The daemon puts them back with these, under
// their own ids, as the run directories recorded them; nothing here
// decides what a trace proves, only how its job goes back in.

// Adopt puts job j back as the row of its id, as the run that the daemon
// found traces of recorded it. The row is created when the database lost it
// (with script, when the database lost the submission's script too), or
// replaced when the database has an older state of it. An array task
// leaves its array's pending record: it started, so it is not pending any
// more (dropped reports the tasks the record had pending that can no
// longer be, when the task took the record's own id). j.ID counts as given
// out (ReserveIDs).
func (t *Tx) Adopt(j Job, script Script) (dropped []int, err error) {
	if j.ID == 0 || j.User == "" {
		return nil, fmt.Errorf("adopting job %d: no id or no user in its record", j.ID)
	}
	scriptID := j.ID
	task := j.ArrayJobID != 0 && j.ArrayTaskID != NoTask
	if task {
		scriptID = j.ArrayJobID
	}
	j.ArrayPending = nil
	if err := t.ReserveIDs(j.ID + 1); err != nil {
		return nil, err
	}
	var used bool
	if err := t.queryRow("SELECT EXISTS (SELECT 1 FROM scripts WHERE id = ?)", scriptID).Scan(&used); err != nil {
		return nil, fmt.Errorf("adopting job %d: %w", j.ID, err)
	}
	if !used {
		if _, err := t.exec(sqlInsertScript, scriptID, j.UID, []byte(script.Text), encodeEnv(script.Env)); err != nil {
			return nil, fmt.Errorf("adopting job %d's script: %w", j.ID, err)
		}
	}
	if task && j.ArrayJobID != j.ID {
		// Taken out of its array's record, if that still lists it.
		if err := t.unpend(j.ArrayJobID, j.ArrayTaskID); err != nil {
			return nil, err
		}
	}
	cur, _, err := jobByID(ctxBG, t.tx, j.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		if err := t.insertRow("jobs", &j, scriptID); err != nil {
			return nil, err
		}
		t.touch(j.ID)
		return nil, nil
	case err != nil:
		return nil, err
	}
	if cur.ArrayRecord() && task && j.ArrayJobID == j.ID {
		// The task took the record's own id, as the last one pending
		// does (SplitTask): the record becomes the task.
		for _, p := range cur.ArrayPending {
			if p != j.ArrayTaskID {
				dropped = append(dropped, p)
			}
		}
		if _, err := t.exec("UPDATE jobs SET array_task_id = ?, array_pending = '' WHERE id = ?", j.ArrayTaskID, j.ID); err != nil {
			return nil, fmt.Errorf("adopting array task %d_%d: %w", j.ArrayJobID, j.ArrayTaskID, err)
		}
	} else if cur.ArrayRecord() || cur.ArrayJobID != j.ArrayJobID {
		return nil, fmt.Errorf("adopting job %d: the database holds another kind of job under that id (array %d task %d, the run's record says array %d task %d)",
			j.ID, cur.ArrayJobID, cur.ArrayTaskID, j.ArrayJobID, j.ArrayTaskID)
	}
	return dropped, t.PutJob(j)
}

// unpend takes task out of array arrayID's pending record, when the record
// is there and lists it; a record left with nothing pending is removed.
func (t *Tx) unpend(arrayID uint32, task int) error {
	rec, _, err := jobByID(ctxBG, t.tx, arrayID)
	if errors.Is(err, ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	i, ok := slices.BinarySearch(rec.ArrayPending, task)
	if !rec.ArrayRecord() || !ok {
		return nil
	}
	t.touch(arrayID)
	left := slices.Delete(slices.Clone(rec.ArrayPending), i, i+1)
	if len(left) == 0 {
		_, err = t.exec("DELETE FROM jobs WHERE id = ?", arrayID)
	} else {
		_, err = t.exec("UPDATE jobs SET array_pending = ? WHERE id = ?", formatTasks(left), arrayID)
	}
	if err != nil {
		return fmt.Errorf("taking task %d_%d out of its array's pending record: %w", arrayID, task, err)
	}
	return nil
}

// PutRun records an ended run of job j (j.Restarts numbers it) in
// accounting, as Requeue archives one: sacct -D shows it. A run already
// recorded is left as it is.
func (t *Tx) PutRun(j Job) error {
	scriptID := j.ID
	if j.ArrayJobID != 0 && j.ArrayTaskID != NoTask {
		scriptID = j.ArrayJobID
	}
	var have bool
	if err := t.queryRow("SELECT EXISTS (SELECT 1 FROM runs WHERE id = ? AND restarts = ?)", j.ID, j.Restarts).Scan(&have); err != nil {
		return fmt.Errorf("recording run %d of job %d: %w", j.Restarts, j.ID, err)
	}
	if have {
		return nil
	}
	j.ArrayPending = nil
	if err := t.insertRow("runs", &j, scriptID); err != nil {
		return fmt.Errorf("recording run %d of job %d: %w", j.Restarts, j.ID, err)
	}
	return nil
}

// RowState is what adoption compares of a job row with the job's
// directory.
type RowState struct {
	Restarts    int
	State       slurm.JobState
	ArrayRecord bool
}

// RowStates is every job row's RowState, by id: one light query, not the
// rows themselves, for a start-up that compares each with its directory.
func (s *Store) RowStates(ctx context.Context) (map[uint32]RowState, error) {
	rows, err := s.r.QueryContext(ctx, "SELECT id, restarts, state, array_job_id, array_task_id FROM jobs")
	if err != nil {
		return nil, fmt.Errorf("reading the jobs' states: %w", err)
	}
	defer rows.Close()
	out := map[uint32]RowState{}
	for rows.Next() {
		var (
			id, arrayID uint32
			task        int
			rs          RowState
			state       string
		)
		if err := rows.Scan(&id, &rs.Restarts, &state, &arrayID, &task); err != nil {
			return nil, fmt.Errorf("reading the jobs' states: %w", err)
		}
		rs.State = slurm.JobState(state)
		rs.ArrayRecord = arrayID != 0 && task == NoTask
		out[id] = rs
	}
	return out, rows.Err()
}
