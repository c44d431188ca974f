package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// submitOne submits nj and returns its id.
func submitOne(t *testing.T, s *Store, nj NewJob) uint32 {
	t.Helper()
	ids, err := s.Submit(ctx, []NewJob{nj})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

func update(t *testing.T, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	if err := s.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

// arrayView is what the array tests compare: each row's id, task and
// pending tasks.
type arrayView struct {
	ID      uint32
	Task    int
	Pending []int
}

func arrayRows(t *testing.T, s *Store, arrayID uint32) []arrayView {
	t.Helper()
	jobs, err := s.Jobs(ctx, Filter{IDs: []uint32{arrayID}})
	if err != nil {
		t.Fatal(err)
	}
	var out []arrayView
	for _, j := range jobs {
		if j.ArrayJobID != arrayID {
			t.Errorf("job %d of array %d has ArrayJobID %d", j.ID, arrayID, j.ArrayJobID)
		}
		out = append(out, arrayView{j.ID, j.ArrayTaskID, j.ArrayPending})
	}
	return out
}

func TestArrayIsOneRowUntilItsTasksStart(t *testing.T) {
	s, _ := openT(t)
	id := submitOne(t, s, newJob(t, trainScript, "--array=0-3%2"))
	other := submitOne(t, s, newJob(t, trainScript)) // takes id 2: tasks get later ids
	if diff := cmp.Diff([]arrayView{{1, NoTask, []int{0, 1, 2, 3}}}, arrayRows(t, s, id)); diff != "" {
		t.Fatalf("array after submission (-want +got):\n%s", diff)
	}
	rec, err := s.Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.ArrayRecord() || rec.ArrayLimit != 2 {
		t.Errorf("record: ArrayRecord() = %v, ArrayLimit = %d; want true, 2", rec.ArrayRecord(), rec.ArrayLimit)
	}

	var started []Job
	for _, task := range []int{2, 0, 3} {
		update(t, s, func(tx *Tx) error {
			j, err := tx.SplitTask(id, task)
			if err != nil {
				return err
			}
			j.State, j.Start = slurm.Running, tx.Now()
			started = append(started, j)
			return tx.PutJob(j)
		})
	}
	want := []arrayView{{1, NoTask, []int{1}}, {3, 2, nil}, {4, 0, nil}, {5, 3, nil}}
	if diff := cmp.Diff(want, arrayRows(t, s, id)); diff != "" {
		t.Fatalf("array with three tasks started (-want +got):\n%s", diff)
	}
	// The last task to start takes the array's own id.
	update(t, s, func(tx *Tx) error {
		j, err := tx.SplitTask(id, 1)
		if err != nil {
			return err
		}
		if j.ID != id || j.ArrayTaskID != 1 || j.ArrayRecord() {
			t.Errorf("last task: id %d task %d record %v; want id %d task 1, no record", j.ID, j.ArrayTaskID, j.ArrayRecord(), id)
		}
		return nil
	})
	want = []arrayView{{1, 1, nil}, {3, 2, nil}, {4, 0, nil}, {5, 3, nil}}
	if diff := cmp.Diff(want, arrayRows(t, s, id)); diff != "" {
		t.Fatalf("array with every task started (-want +got):\n%s", diff)
	}
	// Every task runs the array's script.
	for _, j := range started {
		sc, err := s.Script(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Text != trainScript {
			t.Errorf("task %d_%d's script is %q", id, j.ArrayTaskID, sc.Text)
		}
	}
	if _, err := s.Job(ctx, other); err != nil {
		t.Errorf("the plain job between: %v", err)
	}
}

func TestSplitTaskRefusals(t *testing.T) {
	s, _ := openT(t)
	arr := submitOne(t, s, newJob(t, trainScript, "--array=1,5"))
	plain := submitOne(t, s, newJob(t, trainScript))
	for _, tc := range []struct {
		name    string
		arrayID uint32
		task    int
		want    string
	}{
		{"a task not in the array", arr, 2, "array task 1_2 is not pending"},
		{"a plain job", plain, 0, "job 2 is not an array with pending tasks"},
		{"a job that does not exist", 77, 0, "job 77: no such job"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Update(ctx, func(tx *Tx) error {
				_, err := tx.SplitTask(tc.arrayID, tc.task)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SplitTask(%d, %d) = %v, want an error containing %q", tc.arrayID, tc.task, err, tc.want)
			}
		})
	}
}

func TestDroppingPendingTasksLeavesNoTrace(t *testing.T) {
	s, _ := openT(t)
	id := submitOne(t, s, newJob(t, trainScript, "--array=0-4"))
	var left []int
	update(t, s, func(tx *Tx) (err error) {
		left, err = tx.DropTasks(id, []int{3, 1})
		return err
	})
	if diff := cmp.Diff([]int{0, 2, 4}, left); diff != "" {
		t.Errorf("tasks left (-want +got):\n%s", diff)
	}
	err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.DropTasks(id, []int{0, 1})
		return err
	})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "1_1") {
		t.Errorf("dropping a task already dropped: %v", err)
	}
	if diff := cmp.Diff([]arrayView{{id, NoTask, []int{0, 2, 4}}}, arrayRows(t, s, id)); diff != "" {
		t.Errorf("a refused drop changed the array (-want +got):\n%s", diff)
	}
	update(t, s, func(tx *Tx) (err error) {
		left, err = tx.DropTasks(id, []int{0, 2, 4})
		return err
	})
	if rows := arrayRows(t, s, id); len(left) != 0 || len(rows) != 0 {
		t.Errorf("after dropping every task: left %v, rows %v; want none", left, rows)
	}
	// Its id stays taken: its script is still there.
	if next := submitOne(t, s, newJob(t, trainScript)); next != id+1 {
		t.Errorf("next submission got id %d, want %d", next, id+1)
	}
}

func TestRequeueArchivesTheRunForAccounting(t *testing.T) {
	s, _ := openT(t)
	t0 := time.Date(2026, 11, 29, 8, 51, 8, 0, time.UTC)
	id := submitOne(t, s, newJob(t, trainScript))
	root := uint32(0)
	update(t, s, func(tx *Tx) error {
		j, err := tx.Job(id)
		if err != nil {
			return err
		}
		j.State, j.Start = slurm.Running, t0
		j.Alloc = Alloc{Node: "gpu01", GPUs: []GPUAlloc{{UUID: "GPU-a", Index: 0}, {UUID: "GPU-b", Index: 1}}, CPUs: []int{0, 1}, Mem: 16 << 30}
		j.PeakGPUMem, j.MeanGPUUtil = 30<<30, 87.5
		j.Notes = []string{"peak GPU memory 15G of 80G asked per GPU"}
		if err := tx.PutJob(j); err != nil {
			return err
		}
		return tx.PutStep(Step{JobID: id, Run: 0, ID: "batch", Name: "batch", State: slurm.Running, Start: t0})
	})
	update(t, s, func(tx *Tx) error {
		if err := tx.PutStep(Step{JobID: id, Run: 0, ID: "batch", Name: "batch", State: slurm.Cancelled,
			Start: t0, End: t0.Add(2 * time.Second), ExitCode: ExitCode{Status: 0, Signal: 15}, NTasks: 1,
			UserCPU: 1532 * time.Microsecond, SystemCPU: 2983 * time.Microsecond, MaxRSS: 5 << 20}); err != nil {
			return err
		}
		j, err := tx.Requeue(id, t0.Add(2*time.Second))
		if err != nil {
			return err
		}
		if j.Notes != nil || j.PeakGPUMem != 0 {
			t.Errorf("the next run starts with notes %q, peak GPU memory %d; want none", j.Notes, j.PeakGPUMem)
		}
		j.RequeuedBy = &root
		return tx.PutJob(j)
	})
	t1 := t0.Add(163 * time.Second)
	update(t, s, func(tx *Tx) error {
		j, err := tx.Job(id)
		if err != nil {
			return err
		}
		j.State, j.Start, j.End, j.CancelledBy = slurm.Cancelled, t1, t1.Add(2*time.Second), &root
		j.Notes = append(j.Notes, "used GPU 2, which it was not given")
		if err := tx.PutJob(j); err != nil {
			return err
		}
		return tx.PutStep(Step{JobID: id, Run: 1, ID: "batch", Name: "batch", State: slurm.Cancelled,
			Start: t1, End: t1.Add(2 * time.Second), ExitCode: ExitCode{Status: 0, Signal: 15}})
	})

	type runView struct {
		State       slurm.JobState
		Restarts    int
		Latest      bool
		Start, End  time.Time
		GPUs        int
		PeakGPUMem  int64
		CancelledBy *uint32
		Notes       []string
		Steps       []string
	}
	view := func(recs []Record) []runView {
		var out []runView
		for _, r := range recs {
			v := runView{r.Job.State, r.Job.Restarts, r.Latest, r.Job.Start, r.Job.End, len(r.Job.Alloc.GPUs), r.Job.PeakGPUMem, r.Job.CancelledBy, r.Job.Notes, nil}
			for _, st := range r.Steps {
				v.Steps = append(v.Steps, st.ID+" "+string(st.State)+" "+st.ExitCode.String())
			}
			out = append(out, v)
		}
		return out
	}
	// As golden/sacct_requeued_job.txt: the first run REQUEUED, the second
	// CANCELLED by 0, each with its batch step.
	recs, err := s.Records(ctx, Filter{IDs: []uint32{id}, EarlierRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []runView{
		{slurm.Requeued, 0, false, t0, t0.Add(2 * time.Second), 2, 30 << 30, nil,
			[]string{"peak GPU memory 15G of 80G asked per GPU"}, []string{"batch CANCELLED 0:15"}},
		{slurm.Cancelled, 1, true, t1, t1.Add(2 * time.Second), 0, 0, &root,
			[]string{"used GPU 2, which it was not given"}, []string{"batch CANCELLED 0:15"}},
	}
	if diff := cmp.Diff(want, view(recs)); diff != "" {
		t.Errorf("sacct -D records (-want +got):\n%s", diff)
	}
	recs, err = s.Records(ctx, Filter{IDs: []uint32{id}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[1:], view(recs)); diff != "" {
		t.Errorf("sacct records without -D (-want +got):\n%s", diff)
	}
	st := recs[0].Steps[0]
	if st.UserCPU != 0 || recs[0].Job.RequeuedBy == nil {
		t.Errorf("second run: step %+v, RequeuedBy %v", st, recs[0].Job.RequeuedBy)
	}
}

func TestNotesRoundTripThroughEveryRead(t *testing.T) {
	s, _ := openT(t)
	ids, err := s.Submit(ctx, []NewJob{newJob(t, trainScript), newJob(t, trainScript), newJob(t, trainScript)})
	if err != nil {
		t.Fatal(err)
	}
	noted, emptied := ids[0], ids[1] // ids[2] is never given notes
	notes := []string{
		"CUDA out of memory (stderr)",
		"peak GPU memory 3G of 20G asked per GPU",
		`quotes " and \ backslashes, a newline` + "\n" + `and ünïcode`,
		"",
	}
	update(t, s, func(tx *Tx) error {
		j, err := tx.Job(noted)
		if err != nil {
			return err
		}
		j.Notes = notes
		if err := tx.PutJob(j); err != nil {
			return err
		}
		// Emptied notes read back as none, like a job never given any.
		j, err = tx.Job(emptied)
		if err != nil {
			return err
		}
		j.Notes = []string{}
		return tx.PutJob(j)
	})

	j, err := s.Job(ctx, noted)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.Records(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][][]string{"Job": {j.Notes}}
	for _, j := range jobs {
		got["Jobs"] = append(got["Jobs"], j.Notes)
	}
	for _, r := range recs {
		got["Records"] = append(got["Records"], r.Job.Notes)
	}
	want := map[string][][]string{
		"Job":     {notes},
		"Jobs":    {notes, nil, nil},
		"Records": {notes, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notes as each read gives them (-want +got):\n%s", diff)
	}
	// No notes are stored as the column's default, "[]", so that SQL over
	// the column (json_each) sees an array in every row.
	var stored []string
	rows, err := s.r.QueryContext(ctx, "SELECT notes FROM jobs WHERE id != ? ORDER BY id", noted)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, n)
	}
	if diff := cmp.Diff([]string{"[]", "[]"}, stored); diff != "" {
		t.Errorf("stored text of no notes (-want +got):\n%s", diff)
	}
}

func TestFailedUpdateUndoesOnlyItself(t *testing.T) {
	s, _ := openT(t)
	// Requests handed to the writer together share one transaction.
	good := &request{jobs: []NewJob{newJob(t, trainScript)}, done: make(chan result, 1)}
	bad := &request{fn: func(tx *Tx) error {
		if _, err := tx.insert(newJob(t, trainScript)); err != nil {
			return err
		}
		return errors.New("changed my mind")
	}, done: make(chan result, 1)}
	panicky := &request{fn: func(tx *Tx) error {
		if err := tx.PutUsage(Usage{User: "bob", Account: "lab", Raw: 1}); err != nil {
			return err
		}
		panic("boom")
	}, done: make(chan result, 1)}
	after := &request{jobs: []NewJob{newJob(t, trainScript)}, done: make(chan result, 1)}
	s.commit([]*request{good, bad, panicky, after})

	got := []any{}
	for _, r := range []*request{good, bad, panicky, after} {
		res := <-r.done
		errText := ""
		if res.err != nil {
			errText = res.err.Error()
		}
		got = append(got, res.ids, errText, res.panicked)
	}
	// bad's job took id 2 inside its savepoint; the rollback gave it back.
	want := []any{[]uint32{1}, "", nil, []uint32(nil), "changed my mind", nil, []uint32(nil), "", "boom", []uint32{2}, "", nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	jobs, _ := s.Jobs(ctx, Filter{})
	usage, _ := s.Usage(ctx)
	if len(jobs) != 2 || len(usage) != 0 {
		t.Errorf("stored %d jobs and %d usage rows, want 2 and 0", len(jobs), len(usage))
	}
}

func TestUpdateEachIsOneCommitAndUndoesOnlyTheFailed(t *testing.T) {
	s, _ := openT(t)
	ids := []uint32{submitOne(t, s, newJob(t, trainScript)), submitOne(t, s, newJob(t, trainScript)), submitOne(t, s, newJob(t, trainScript))}
	before := s.commits.Load()
	start := func(id uint32, fail bool) func(tx *Tx) error {
		return func(tx *Tx) error {
			j, err := tx.Job(id)
			if err != nil {
				return err
			}
			j.State = slurm.Running
			if err := tx.PutJob(j); err != nil {
				return err
			}
			if fail {
				return errors.New("changed my mind")
			}
			return nil
		}
	}
	errs := s.UpdateEach(ctx, []func(tx *Tx) error{start(ids[0], false), start(ids[1], true), start(ids[2], false)})
	var errText []string
	for _, err := range errs {
		errText = append(errText, fmt.Sprint(err))
	}
	if diff := cmp.Diff([]string{"<nil>", "changed my mind", "<nil>"}, errText); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if got := s.commits.Load() - before; got != 1 {
		t.Errorf("%d commits for three updates, want 1", got)
	}
	jobs, err := s.Jobs(ctx, Filter{IDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	var states []slurm.JobState
	for _, j := range jobs {
		states = append(states, j.State)
	}
	if diff := cmp.Diff([]slurm.JobState{slurm.Running, slurm.Pending, slurm.Running}, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

func TestUpdatePanicReachesTheCaller(t *testing.T) {
	s, _ := openT(t)
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want boom", p)
		}
		// The writer survived.
		if _, err := s.Submit(ctx, []NewJob{newJob(t, trainScript)}); err != nil {
			t.Errorf("Submit after a panicking Update: %v", err)
		}
	}()
	s.Update(ctx, func(*Tx) error { panic("boom") })
	t.Error("Update returned instead of panicking")
}

func TestPutJobLeavesIdentityAlone(t *testing.T) {
	s, _ := openT(t)
	id := submitOne(t, s, newJob(t, trainScript, "--array=0-1"))
	update(t, s, func(tx *Tx) error {
		j, err := tx.Job(id)
		if err != nil {
			return err
		}
		j.ArrayPending, j.ArrayTaskID, j.Hold, j.Priority, j.Nice = nil, 5, HoldAdmin, 500, -10
		return tx.PutJob(j)
	})
	j, err := s.Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{j.ArrayTaskID, j.ArrayPending, j.Hold, j.Priority, j.Nice}
	if diff := cmp.Diff([]any{NoTask, []int{0, 1}, HoldAdmin, uint32(500), -10}, got); diff != "" {
		t.Errorf("task, pending, hold, priority, nice (-want +got):\n%s", diff)
	}
	err = s.Update(ctx, func(tx *Tx) error { return tx.PutJob(Job{ID: 404, User: "x"}) })
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("PutJob of a missing job: %v, want ErrNotFound", err)
	}
}

func TestUsageDrainsAndEventsSurviveReopen(t *testing.T) {
	s, dir := openT(t)
	t0 := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	usage := []Usage{
		{User: "", Account: "lab", Raw: 12.5, AsOf: t0},
		{User: "alice", Account: "lab", Raw: 3600, AsOf: t0},
		{User: "bob", Account: "lab", Raw: 7200.25, AsOf: t0.Add(time.Minute)},
	}
	drains := []Drain{
		{UUID: "GPU-3", Index: 3, Reason: "Xid 79: fallen off the bus", Since: t0, By: 0},
		{UUID: "GPU-1", Index: 1, Reason: "maintenance", Since: t0.Add(time.Hour), By: 1000},
	}
	update(t, s, func(tx *Tx) error {
		if err := tx.PutUsage(usage...); err != nil {
			return err
		}
		for _, d := range append(drains, Drain{UUID: "GPU-0", Index: 0, Reason: "flaky"}) {
			if err := tx.PutDrain(d); err != nil {
				return err
			}
		}
		return tx.DeleteDrain("GPU-0")
	})
	usage[1].Raw = 1800 // decayed
	update(t, s, func(tx *Tx) error { return tx.PutUsage(usage[1]) })
	events := []Event{
		{Time: t0, Actor: 0, ActorName: "root", JobID: 42, Action: "cancel", Detail: "CANCELLED by 0"},
		{Time: t0.Add(time.Second), Actor: 1002, ActorName: "bob", JobID: 43, Action: "yield", Detail: "stopped in 12s, exited cleanly, freed GPU 0"},
		{Time: t0.Add(2 * time.Second), Actor: 0, ActorName: "root", GPU: "GPU-3", Action: "drain", Detail: "Xid 79"},
	}
	update(t, s, func(tx *Tx) error {
		for i, e := range events {
			seq, err := tx.AppendEvent(e)
			if err != nil {
				return err
			}
			events[i].Seq = seq
		}
		return nil
	})
	if err := s.Update(ctx, func(tx *Tx) error { _, err := tx.AppendEvent(Event{}); return err }); err == nil {
		t.Error("AppendEvent accepted an event without an action")
	}
	s.Close()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	gotUsage, err := s.Usage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(usage, gotUsage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	gotDrains, err := s.Drains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(drains) // by index
	if diff := cmp.Diff(drains, gotDrains); diff != "" {
		t.Errorf("drains (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		f    EventFilter
		want []Event
	}{
		{"all", EventFilter{}, events},
		{"one job's", EventFilter{JobID: 43}, events[1:2]},
		{"since a time", EventFilter{Since: t0.Add(time.Second)}, events[1:]},
		{"the newest two, oldest first", EventFilter{Limit: 2}, events[1:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Events(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestARolledBackTransactionFailsTheWholeBatch(t *testing.T) {
	s, _ := openT(t)
	mk := func(fn func(*Tx) error, jobs ...NewJob) *request {
		return &request{fn: fn, jobs: jobs, done: make(chan result, 1)}
	}
	before := mk(nil, newJob(t, trainScript))
	// What SQLite does on an I/O error or a full disk: it rolls back the
	// transaction, whatever savepoints there were.
	lose := mk(func(tx *Tx) error { _, err := tx.exec("ROLLBACK"); return err })
	after := mk(nil, newJob(t, trainScript))
	s.commit([]*request{before, lose, after})
	for i, r := range []*request{before, lose, after} {
		res := <-r.done
		if res.err == nil || !strings.Contains(res.err.Error(), "rolled back") {
			t.Errorf("request %d: ids %v, error %v; want a rolled-back error", i, res.ids, res.err)
		}
	}
	jobs, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("%d jobs stored by a rolled-back batch", len(jobs))
	}
	// The writer goes on.
	if id := submitOne(t, s, newJob(t, trainScript)); id != 1 {
		t.Errorf("next submission got id %d, want 1", id)
	}
}

func TestForgetScriptsKeepsThoseStillNeeded(t *testing.T) {
	s, _ := openT(t)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	end := func(state slurm.JobState, at time.Time) func(*Job) {
		return func(j *Job) { j.State, j.End = state, at }
	}
	for _, tc := range []struct {
		name   string
		args   []string
		change func(*Job)
	}{
		{"finished long ago", nil, end(slurm.Completed, t0)},                                // 1: forgotten
		{"finished recently", nil, end(slurm.Failed, t0.Add(48*time.Hour))},                 // 2
		{"running", nil, func(j *Job) { j.State = slurm.Running }},                          // 3
		{"an array with a pending task", []string{"--array=0-1"}, end(slurm.Completed, t0)}, // 4, task 0 becomes 5
	} {
		nj := newJob(t, trainScript, tc.args...)
		nj.Job.Name = tc.name
		id := submitOne(t, s, nj)
		update(t, s, func(tx *Tx) error {
			j, err := tx.Job(id)
			if err != nil {
				return err
			}
			if j.ArrayRecord() {
				if j, err = tx.SplitTask(id, 0); err != nil {
					return err
				}
			}
			tc.change(&j)
			return tx.PutJob(j)
		})
	}
	var n int64
	update(t, s, func(tx *Tx) (err error) {
		n, err = tx.ForgetScripts(t0.Add(24 * time.Hour))
		return err
	})
	var kept []uint32
	for id := uint32(1); id <= 5; id++ {
		sc, err := s.Script(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Text != "" {
			kept = append(kept, id)
		} else if len(sc.Env) != 0 {
			t.Errorf("job %d: script forgotten, environment kept", id)
		}
	}
	if diff := cmp.Diff([]any{int64(1), []uint32{2, 3, 4, 5}}, []any{n, kept}); diff != "" {
		t.Errorf("scripts forgotten, jobs whose script is kept (-want +got):\n%s", diff)
	}
}
