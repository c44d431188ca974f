package store

import (
	"os"
	"path/filepath"
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

// The mark moves a block at a time: one write per block of submissions.
func TestTheHighWaterMarkMovesInBlocks(t *testing.T) {
	s, dir := openT(t)
	submitOne(t, s, newJob(t, trainScript))
	first, err := ReadHWM(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		submitOne(t, s, newJob(t, trainScript))
	}
	if again, _ := ReadHWM(dir); again != first {
		t.Fatalf("the mark moved from %d to %d within its block", first, again)
	}
	if first != 1+1+hwmBlock {
		t.Fatalf("mark %d after job 1, want %d", first, 1+1+hwmBlock)
	}
}
