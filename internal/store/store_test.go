package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

var ctx = context.Background()

// openT opens a store in a fresh directory, closed when the test ends.
func openT(t testing.TB) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// parse reads a batch script as sbatch would, with extra command-line
// arguments.
func parse(t testing.TB, script string, args ...string) jobscript.Request {
	t.Helper()
	cl, err := jobscript.ParseCommandLine(append(args, "train.sh"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{
		Script:  []byte(script),
		Command: cl,
		Now:     time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	return *req
}

const trainScript = `#!/bin/bash
#SBATCH --job-name=train --gpus=2 --time=1-00:00:00 --mem=16G
#SBATCH --output=logs/%x-%j.out --requeue --signal=B:USR1@60 --export=ALL,HF_TOKEN=hf_s3cret
#SLITE --yieldable --batch-size=64
python train.py
`

// newJob is a submission by alice of script with args.
func newJob(t testing.TB, script string, args ...string) NewJob {
	req := parse(t, script, args...)
	return NewJob{
		Job: Job{
			User: "alice", UID: 1001, GID: 1001, Account: "lab", Partition: "gpu", QOS: "normal",
			Name: req.JobName, TimeLimit: req.TimeLimit.Duration(), Requeue: true,
			Request: req, SubmitDir: "/home/alice/proj", CheckpointDir: "/var/spool/slurm-lite/ckpt/x",
		},
		Script: script,
		Env:    []string{"PATH=/usr/bin:/bin", "HF_TOKEN=hf_s3cret", "WEIRD=\xff\xfe not utf-8", "EMPTY="},
	}
}

func TestSubmitCommitsAndSurvivesReopen(t *testing.T) {
	s, dir := openT(t)
	nj := newJob(t, trainScript)
	submit := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	nj.Job.Submit = submit
	ids, err := s.Submit(ctx, []NewJob{nj, newJob(t, trainScript, "--hold")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint32{1, 2}, ids); diff != "" {
		t.Fatalf("ids (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Job(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := nj.Job
	want.ID, want.ArrayTaskID, want.State = 1, NoTask, slurm.Pending
	want.Request.Script = "" // kept apart
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job 1 after reopening (-want +got):\n%s", diff)
	}
	if got.Request.Export == nil || !got.Request.Yieldable || got.Request.BatchSize != 64 || got.Request.Signal == nil {
		t.Errorf("the request lost options on the way: %+v", got.Request)
	}
	sc, err := s2.Script(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Script{Text: nj.Script, Env: nj.Env, UID: 1001}, sc); diff != "" {
		t.Errorf("script of job 1 (-want +got):\n%s", diff)
	}
	next, err := s2.NextJobID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next != 3 {
		t.Errorf("NextJobID = %d, want 3", next)
	}
	ids, err = s2.Submit(ctx, []NewJob{nj})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint32{3}, ids); diff != "" {
		t.Errorf("id after reopening (-want +got):\n%s", diff)
	}
}

func TestSubmitFillsDefaults(t *testing.T) {
	s, _ := openT(t)
	before := time.Now()
	nj := newJob(t, trainScript)
	nj.Job.ID, nj.Job.ArrayJobID, nj.Job.ArrayTaskID = 99, 98, 3 // the store assigns these
	ids, err := s.Submit(ctx, []NewJob{nj})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Job(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	got := []any{j.ID, j.ArrayJobID, j.ArrayTaskID, j.State, j.Submit.Before(before) || j.Submit.After(time.Now())}
	if diff := cmp.Diff([]any{uint32(1), uint32(0), NoTask, slurm.Pending, false}, got); diff != "" {
		t.Errorf("id, array id, task, state, submit time out of range (-want +got):\n%s", diff)
	}
}

func TestSubmitRefusesAJobWithoutUser(t *testing.T) {
	s, _ := openT(t)
	good := newJob(t, trainScript)
	bad := good
	bad.Job.User = ""
	if _, err := s.Submit(ctx, []NewJob{good, bad}); err == nil {
		t.Fatal("Submit accepted a job without a user")
	}
	// The whole call is undone, including the good job's id.
	jobs, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	next, _ := s.NextJobID(ctx)
	if len(jobs) != 0 || next != 1 {
		t.Errorf("after a refused Submit: %d jobs, next id %d; want 0 jobs, next id 1", len(jobs), next)
	}
}

func TestConcurrentSubmissionsGetDistinctIDs(t *testing.T) {
	s, _ := openT(t)
	const n = 200
	nj := newJob(t, trainScript)
	ids := make([]uint32, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			j := nj
			j.Job.Name = fmt.Sprintf("job-%d", i)
			got, err := s.Submit(ctx, []NewJob{j})
			if err == nil {
				ids[i] = got[0]
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	sorted := slices.Sorted(slices.Values(ids))
	want := make([]uint32, n)
	for i := range want {
		want[i] = uint32(i + 1)
	}
	if diff := cmp.Diff(want, sorted); diff != "" {
		t.Errorf("ids of %d concurrent submissions (-want +got):\n%s", n, diff)
	}
	jobs, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[uint32]string{}
	for _, j := range jobs {
		names[j.ID] = j.Name
	}
	for i, id := range ids {
		if names[id] != fmt.Sprintf("job-%d", i) {
			t.Errorf("job %d is named %q, want job-%d", id, names[id], i)
		}
	}
}

func TestCancelledContextEitherCommitsOrNot(t *testing.T) {
	s, _ := openT(t)
	nj := newJob(t, trainScript)
	var committed int
	for range 50 {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ids, err := s.Submit(c, []NewJob{nj})
		switch {
		case err == nil:
			committed++
			if _, err := s.Job(ctx, ids[0]); err != nil {
				t.Fatalf("Submit returned id %d, then: %v", ids[0], err)
			}
		case !errors.Is(err, context.Canceled):
			t.Fatalf("Submit with a cancelled context: %v", err)
		}
	}
	jobs, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != committed {
		t.Errorf("%d submissions reported committed, %d jobs stored", committed, len(jobs))
	}
}

func TestSecondOpenOfTheSameDirectoryIsRefused(t *testing.T) {
	_, dir := openT(t)
	s2, err := Open(dir)
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of an open state directory succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
}

func TestClosedStoreRefusesWrites(t *testing.T) {
	s, _ := openT(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := s.Submit(ctx, []NewJob{newJob(t, trainScript)})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	if err := s.Update(ctx, func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Update after Close: %v, want ErrClosed", err)
	}
}

func TestJobsFilter(t *testing.T) {
	s, _ := openT(t)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	mk := func(user, part, name string, state slurm.JobState, submit, end time.Time, args ...string) NewJob {
		nj := newJob(t, trainScript, args...)
		nj.Job.User, nj.Job.Partition, nj.Job.Name, nj.Job.State = user, part, name, state
		nj.Job.Submit, nj.Job.End = submit, end
		return nj
	}
	_, err := s.Submit(ctx, []NewJob{
		mk("alice", "gpu", "a", slurm.Completed, t0, t0.Add(time.Hour)),                         // 1
		mk("bob", "gpu", "b", slurm.Running, t0.Add(2*time.Hour), time.Time{}),                  // 2
		mk("alice", "scavenger", "c", slurm.Pending, t0.Add(3*time.Hour), time.Time{}),          // 3
		mk("alice", "gpu", "d", slurm.Pending, t0.Add(5*time.Hour), time.Time{}, "--array=0-3"), // 4
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.SplitTask(4, 2) // becomes job 5
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want []uint32
	}{
		{"no filter selects every job", Filter{}, []uint32{1, 2, 3, 4, 5}},
		{"an array's id selects its record and its tasks", Filter{IDs: []uint32{4}}, []uint32{4, 5}},
		{"a task's own id selects it alone", Filter{IDs: []uint32{5, 2}}, []uint32{2, 5}},
		{"users", Filter{Users: []string{"bob"}}, []uint32{2}},
		{"partitions and states together", Filter{Partitions: []string{"gpu"}, States: []slurm.JobState{slurm.Completed, slurm.Running}}, []uint32{1, 2}},
		{"names", Filter{Names: []string{"c", "b"}}, []uint32{2, 3}},
		{"a window selects what was submitted and not yet ended in it", Filter{Since: t0.Add(4 * time.Hour)}, []uint32{2, 3, 4, 5}},
		{"since leaves out jobs that ended before", Filter{Since: t0.Add(90 * time.Minute), Until: t0.Add(4 * time.Hour)}, []uint32{2, 3}},
		{"until leaves out jobs submitted after", Filter{Until: t0.Add(2 * time.Hour)}, []uint32{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := s.Jobs(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint32
			for _, j := range jobs {
				got = append(got, j.ID)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubmissionsThatWaitShareOneCommit(t *testing.T) {
	s, _ := openT(t)
	const n = 50
	// Hold the writer in a transaction while n submissions queue up.
	release := make(chan struct{})
	held := make(chan error, 1)
	entered := make(chan struct{})
	go func() {
		held <- s.Update(ctx, func(*Tx) error {
			close(entered)
			<-release
			return nil
		})
	}()
	<-entered
	var wg sync.WaitGroup
	nj := newJob(t, trainScript)
	for range n {
		wg.Go(func() {
			if _, err := s.Submit(ctx, []NewJob{nj}); err != nil {
				t.Error(err)
			}
		})
	}
	for len(s.reqs) < n {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if got := s.commits.Load(); got != 2 {
		t.Errorf("%d commits for one update and %d queued submissions, want 2", got, n)
	}
}

func TestJobIDsWrapAroundSkippingIDsInUse(t *testing.T) {
	s, _ := openT(t)
	nj := newJob(t, trainScript)
	if _, err := s.Submit(ctx, []NewJob{nj, nj}); err != nil { // 1 and 2
		t.Fatal(err)
	}
	update(t, s, func(tx *Tx) error {
		_, err := tx.exec(sqlSetNextID, int64(MaxJobID))
		return err
	})
	ids, err := s.Submit(ctx, []NewJob{nj, nj})
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.NextJobID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint32{MaxJobID, 3, 4}, append(ids, next)); diff != "" {
		t.Errorf("ids across the wrap, then the next id (-want +got):\n%s", diff)
	}
}

func TestMissingJobsAreNotFound(t *testing.T) {
	s, _ := openT(t)
	if _, err := s.Job(ctx, 5); !errors.Is(err, ErrNotFound) {
		t.Errorf("Job(5) in an empty store: %v, want ErrNotFound", err)
	}
	if _, err := s.Script(ctx, 5); !errors.Is(err, ErrNotFound) {
		t.Errorf("Script(5) in an empty store: %v, want ErrNotFound", err)
	}
}
