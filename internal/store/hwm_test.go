package store

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// A database that is lost (deleted, or emptied) starts empty, but its job
// ids continue after every id the machine gave out.
func TestJobIDsNeverRepeatAfterTheDatabaseIsLost(t *testing.T) {
	for _, loss := range []string{"deleted", "emptied"} {
		t.Run(loss, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			var last uint32
			for range 3 {
				last = submitOne(t, s, newJob(t, trainScript))
			}
			if mark, err := ReadHWM(dir); err != nil || mark <= last {
				t.Fatalf("high-water mark %d (%v) after id %d: not ahead of it", mark, err, last)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
				p := filepath.Join(dir, f)
				if loss == "emptied" && f == FileName {
					if err := os.Truncate(p, 0); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			s, err = Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if jobs, err := s.Jobs(ctx, Filter{}); err != nil || len(jobs) != 0 {
				t.Fatalf("the database was lost, yet it holds %d jobs (%v)", len(jobs), err)
			}
			if id := submitOne(t, s, newJob(t, trainScript)); id <= last {
				t.Fatalf("the first job after the loss got id %d; ids up to %d were given out before", id, last)
			}
		})
	}
}

// The mark is exact: the highest id given out, plus one, on disk before
// the submission is answered, whatever the batch.
func TestTheHighWaterMarkIsExact(t *testing.T) {
	s, dir := openT(t)
	for want := uint32(1); want <= 5; want++ {
		id := submitOne(t, s, newJob(t, trainScript))
		if id != want {
			t.Fatalf("job %d, want %d", id, want)
		}
		if mark, err := ReadHWM(dir); err != nil || mark != id+1 {
			t.Fatalf("mark %d (%v) after job %d, want %d", mark, err, id, id+1)
		}
	}
	// A refused submission gives out no id and leaves the mark alone.
	bad := newJob(t, trainScript)
	bad.Job.User = ""
	if _, err := s.Submit(ctx, []NewJob{bad}); err == nil {
		t.Fatal("a job without a user was accepted")
	}
	if mark, _ := ReadHWM(dir); mark != 6 {
		t.Fatalf("mark %d after a refused submission, want 6", mark)
	}
}

// A copy of the database put back (taken while the daemon was stopped, a
// little older than now) knows fewer ids than were given out: the store
// continues after the mark and says exactly which ids it does not know.
func TestAnOldCopyPutBackIsBehindByExactIDs(t *testing.T) {
	s, dir := openT(t)
	for range 3 {
		submitOne(t, s, newJob(t, trainScript))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	copyDB(t, dir, dir+"/copy")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		submitOne(t, s, newJob(t, trainScript)) // 4..7
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	copyDB(t, dir+"/copy", dir)
	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := s.IDsBehind(), (IDRange{From: 4, To: 8, Exact: true}); got != want {
		t.Fatalf("IDsBehind %+v, want %+v", got, want)
	}
	if id := submitOne(t, s, newJob(t, trainScript)); id != 8 {
		t.Fatalf("the first job after the copy was put back got id %d, want 8", id)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.ReserveIDs(20) }); err != nil {
		t.Fatal(err)
	}
	if id := submitOne(t, s, newJob(t, trainScript)); id != 20 {
		t.Fatalf("after ReserveIDs(20) the next job got id %d, want 20", id)
	}
	if mark, _ := ReadHWM(dir); mark != 21 {
		t.Fatalf("mark %d, want 21", mark)
	}
}

// A mark written by an earlier version was a block of 1000 ahead of the
// last id: a database within a block of it is not behind (it would
// otherwise skip up to 999 ids at the upgrade), one further behind
// continues from it without claiming to know which ids were given out.
func TestALegacyBlockMarkIsReadAsOne(t *testing.T) {
	for _, c := range []struct {
		name   string
		mark   string
		wantID uint32
		behind IDRange
	}{
		{"within a block", "1004\n", 4, IDRange{}},
		{"beyond a block", "2500\n", 2500, IDRange{From: 4, To: 2500}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := openT(t)
			for range 3 {
				submitOne(t, s, newJob(t, trainScript))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, HWMFile), []byte(c.mark), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.IDsBehind(); got != c.behind {
				t.Fatalf("IDsBehind %+v, want %+v", got, c.behind)
			}
			if id := submitOne(t, s, newJob(t, trainScript)); id != c.wantID {
				t.Fatalf("next id %d, want %d", id, c.wantID)
			}
			if mark, _ := ReadHWM(dir); mark != c.wantID+1 {
				t.Fatalf("mark %d after job %d: not exact", mark, c.wantID)
			}
		})
	}
}

// copyDB copies the database files of state directory from into to, as an
// administrator's cp of a stopped daemon's state would.
func copyDB(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FileName, FileName + "-wal"} {
		os.Remove(filepath.Join(to, f))
		b, err := os.ReadFile(filepath.Join(from, f))
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(to, FileName+"-shm"))
}

// The mark is written beside the commit, not before it: when its write
// fails after the commit has landed, the submission is not answered until
// a later write puts the id in the mark too, so nobody hears an id the
// mark does not hold.
func TestAFailedMarkBesideACommitHoldsTheAnswer(t *testing.T) {
	s, dir := openT(t)
	first := submitOne(t, s, newJob(t, trainScript))
	var failures atomic.Int32
	failures.Store(3)
	writeHook = func() error {
		if failures.Add(-1) >= 0 {
			return errors.New("injected write failure")
		}
		return nil
	}
	t.Cleanup(func() { writeHook = func() error { return nil } })
	id := submitOne(t, s, newJob(t, trainScript))
	if failures.Load() >= 0 {
		t.Fatalf("answered with %d writes of the mark still to fail", failures.Load()+1)
	}
	if id != first+1 {
		t.Fatalf("job %d, want %d", id, first+1)
	}
	if mark, err := ReadHWM(dir); err != nil || mark != id+1 {
		t.Fatalf("mark %d (%v) after job %d, want %d", mark, err, id, id+1)
	}
}

// The writer remembers the next id between batches (nextID), but an id
// taken by a request that is then undone goes back: the next job gets it,
// as it would had the row been read again; and ids set aside (ReserveIDs)
// are skipped.
func TestAnUndoneRequestGivesItsIDBack(t *testing.T) {
	s, _ := openT(t)
	first := submitOne(t, s, newJob(t, trainScript))
	undone := errors.New("changed my mind")
	err := s.Update(ctx, func(tx *Tx) error {
		if _, err := tx.Insert(newJob(t, trainScript)); err != nil {
			return err
		}
		return undone
	})
	if !errors.Is(err, undone) {
		t.Fatalf("update: %v, want %v", err, undone)
	}
	if next := submitOne(t, s, newJob(t, trainScript)); next != first+1 {
		t.Fatalf("job %d after an undone insert, want %d", next, first+1)
	}
	update(t, s, func(tx *Tx) error { return tx.ReserveIDs(first + 10) })
	if next := submitOne(t, s, newJob(t, trainScript)); next != first+10 {
		t.Fatalf("job %d after ids below %d were reserved, want %d", next, first+10, first+10)
	}
}
