package store

import (
	"errors"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The job cache answers exactly as SQL does, whatever the writes before:
// submissions (plain and arrays), state changes and endings (recent and
// long ago), task splits and drops, requeues, and updates that fail and
// roll back.
func TestJobCacheAnswersAsSQLDoes(t *testing.T) {
	const window = 5 * time.Minute
	plain, array := newJob(t, trainScript), newJob(t, trainScript, "--array=0-5")
	users := []string{"alice", "bob"}
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		// A fresh store each time, unsynced: the property is about what
		// is read, and a sync per step made the test take minutes.
		n++
		s, err := open(filepath.Join(dir, strconv.Itoa(n)), options{synchronous: "OFF", migrations: migrations})
		if err != nil {
			rt.Fatal(err)
		}
		defer s.Close()
		if err := s.CacheJobs(ctx, window); err != nil {
			rt.Fatal(err)
		}
		var ids []uint32
		pick := func() uint32 { return rapid.SampledFrom(ids).Draw(rt, "id") }
		steps := rapid.IntRange(1, 15).Draw(rt, "steps")
		for range steps {
			var err error
			switch op := rapid.IntRange(0, 5).Draw(rt, "op"); {
			case op == 0 || len(ids) == 0:
				nj := plain
				if rapid.Bool().Draw(rt, "array") {
					nj = array
				}
				nj.Job.User = rapid.SampledFrom(users).Draw(rt, "user")
				var got []uint32
				got, err = s.Submit(ctx, []NewJob{nj})
				ids = append(ids, got...)
			case op == 1:
				id := pick()
				ago := time.Duration(rapid.IntRange(0, 20).Draw(rt, "ago")) * time.Minute
				err = s.Update(ctx, func(tx *Tx) error {
					j, err := tx.Job(id)
					if err != nil {
						return err
					}
					j.State, j.End = slurm.Completed, time.Now().Add(-ago)
					j.Notes = append(j.Notes, "ended")
					return tx.PutJob(j)
				})
			case op == 2:
				id := pick()
				task := rapid.IntRange(0, 5).Draw(rt, "task")
				err = s.Update(ctx, func(tx *Tx) error {
					j, err := tx.SplitTask(id, task)
					ids = append(ids, j.ID)
					return err
				})
			case op == 3:
				id := pick()
				task := rapid.IntRange(0, 5).Draw(rt, "task")
				err = s.Update(ctx, func(tx *Tx) error {
					_, err := tx.DropTasks(id, []int{task})
					return err
				})
			case op == 4:
				id := pick()
				err = s.Update(ctx, func(tx *Tx) error {
					_, err := tx.Requeue(id, time.Now())
					return err
				})
			case op == 5:
				id := pick()
				err = s.Update(ctx, func(tx *Tx) error {
					j, err := tx.Job(id)
					if err != nil {
						return err
					}
					j.State = slurm.Running
					if err := tx.PutJob(j); err != nil {
						return err
					}
					return errors.New("changed my mind")
				})
			}
			_ = err // refusals are part of the sequence
			for _, f := range []Filter{
				{Since: time.Now().Add(-window)},
				{Since: time.Now().Add(-time.Minute), Users: []string{"bob"}},
				{Since: time.Now().Add(-window), IDs: ids[:min(len(ids), 2)], States: []slurm.JobState{slurm.Pending}},
			} {
				got, err := s.Jobs(ctx, f)
				if err != nil {
					rt.Fatal(err)
				}
				want, err := queryJobs(ctx, s.r, "jobs", f)
				if err != nil {
					rt.Fatal(err)
				}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					rt.Fatalf("cached jobs for %+v (-sql +cache):\n%s", f, diff)
				}
				// EachJob visits the same jobs in place, in the same order.
				var each []Job
				if err := s.EachJob(ctx, f, func(j *Job) { each = append(each, *j) }); err != nil {
					rt.Fatal(err)
				}
				if diff := cmp.Diff(want, each, cmpopts.EquateEmpty()); diff != "" {
					rt.Fatalf("EachJob for %+v (-sql +each):\n%s", f, diff)
				}
			}
		}
	})
}

// A query reaching further back than the cache's window, or with no
// window at all, is answered by SQL: it sees jobs that ended long ago.
func TestJobCacheLeavesOlderQueriesToSQL(t *testing.T) {
	s, _ := openT(t)
	if err := s.CacheJobs(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	nj := newJob(t, trainScript)
	nj.Job.State, nj.Job.End = slurm.Completed, time.Now().Add(-time.Hour)
	if _, err := s.Submit(ctx, []NewJob{nj}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Filter
		want int
	}{
		{"within the window: the cache, which does not keep it", Filter{Since: time.Now().Add(-30 * time.Second)}, 0},
		{"two hours back: SQL", Filter{Since: time.Now().Add(-2 * time.Hour)}, 1},
		{"no window: SQL", Filter{}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := s.Jobs(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, len(jobs)); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
		})
	}
}

// A row the writer inserted goes into the cache decoded from the values it
// was written with, not read back (rowOf): it must be exactly what a read
// gives, for every column, and the cache must hold that.
func TestAnInsertedRowIsCachedAsItReadsBack(t *testing.T) {
	s, _ := openT(t)
	if err := s.CacheJobs(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	full := newJob(t, trainScript, "--hold", "--nice=5", "--dependency=afterok:1")
	j := &full.Job
	j.Hold, j.Reason, j.Priority, j.Nice = HoldUser, slurm.ReasonJobHeldUser, 4242, -3
	j.Eligible = time.Unix(1_700_000_000, 123456789)
	j.Start, j.End = time.Unix(1_700_000_100, 5), time.Unix(1_700_000_200, 7)
	j.ExitCode, j.Restarts, j.BatchSize = ExitCode{Status: 3, Signal: 9}, 2, 4
	by := uint32(1001)
	j.CancelledBy, j.YieldedBy = &by, &by
	j.Notes = []string{"first", "second"}
	j.Alloc = Alloc{Node: "gpu01", CPUs: []int{0, 1}, Mem: 1 << 30, Ports: []int{12000}}
	j.PeakGPUMem, j.MeanGPUUtil, j.YieldedFor, j.FullGPUs = 80<<30, 0.375, 7, 2
	j.Requeue = false
	live := full
	live.Job.End = time.Time{}
	for name, nj := range map[string]NewJob{
		"plain": newJob(t, trainScript),
		"array": newJob(t, trainScript, "--array=0-9%3"),
		"full":  full,
		"live":  live,
	} {
		id := submitOne(t, s, nj)
		read, scriptID, err := jobByID(ctx, s.r, id)
		if err != nil {
			t.Fatal(err)
		}
		args, err := jobArgs(&read, scriptID)
		if err != nil {
			t.Fatal(err)
		}
		fromArgs, ok := rowOf(args)
		if !ok {
			t.Fatalf("%s: the inserted values do not decode (rowOf)", name)
		}
		if d := cmp.Diff(read, fromArgs, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s: decoded from the values written vs read back (-read +decoded):\n%s", name, d)
		}
		if !read.End.IsZero() {
			continue // ended long ago: outside the cache's window
		}
		cached, ok := s.cachedJobs(Filter{IDs: []uint32{id}, Since: s.clock.Now().Add(-time.Minute)})
		if !ok || len(cached) != 1 {
			t.Fatalf("%s: job %d not answered from the cache (%v, %d rows)", name, id, ok, len(cached))
		}
		if d := cmp.Diff(read, cached[0]); d != "" {
			t.Errorf("%s: cached vs read back (-read +cached):\n%s", name, d)
		}
	}
}
