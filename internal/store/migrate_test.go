package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 || m.what == "" || (m.sql == "") == (m.do == nil) {
			t.Errorf("migration %d: version %d, what %q, sql %d bytes, do %v: want version %d, a description, and SQL or Go",
				i, m.version, m.what, len(m.sql), m.do != nil, i+1)
		}
	}
}

func TestUpgradeFromVersion1KeepsTheJobs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, FileName)
	// A state directory as the first schema left it.
	old, err := open(dir, options{synchronous: "FULL", migrations: migrations[:1]})
	if err != nil {
		t.Fatal(err)
	}
	nj := newJob(t, trainScript, "--array=0-2")
	ids, err := old.Submit(ctx, []NewJob{nj, newJob(t, trainScript)})
	if err != nil {
		t.Fatal(err)
	}
	want, err := old.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	if v := userVersion(t, path); v != 1 {
		t.Fatalf("the old store wrote schema version %d, want 1", v)
	}

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs after the upgrade (-want +got):\n%s", diff)
	}
	if v := userVersion(t, path); v != SchemaVersion {
		t.Errorf("schema version after the upgrade %d, want %d", v, SchemaVersion)
	}
	if v := userVersion(t, path+".v1.bak"); v != 1 {
		t.Errorf("the backup taken before the upgrade has version %d, want 1", v)
	}
	// What the later versions added works on the upgraded data.
	update(t, s, func(tx *Tx) error {
		if _, err := tx.Requeue(ids[1], tx.Now()); err != nil {
			return err
		}
		if _, err := tx.AppendEvent(Event{Actor: 0, JobID: ids[1], Action: "requeue"}); err != nil {
			return err
		}
		return tx.PutUsage(Usage{User: "alice", Account: "lab", Raw: 1})
	})
	recs, err := s.Records(ctx, Filter{IDs: ids[1:], EarlierRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Job.State != slurm.Requeued {
		t.Errorf("records after a requeue on the upgraded store: %+v", recs)
	}
	if next := submitOne(t, s, newJob(t, trainScript)); next != ids[1]+1 {
		t.Errorf("next id after the upgrade %d, want %d", next, ids[1]+1)
	}
}

func TestAFailedMigrationStepLeavesTheVersionBefore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, FileName)
	s, err := open(dir, options{synchronous: "FULL", migrations: migrations[:1]})
	if err != nil {
		t.Fatal(err)
	}
	submitOne(t, s, newJob(t, trainScript))
	s.Close()

	boom := errors.New("disk on fire")
	steps := append(migrations[:1:1], migration{version: 2, what: "a step that fails half-way",
		do: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, "DELETE FROM jobs"); err != nil {
				return err
			}
			return boom
		}})
	if _, err := open(dir, options{synchronous: "FULL", migrations: steps}); !errors.Is(err, boom) {
		t.Fatalf("open with a failing step: %v", err)
	}
	if v := userVersion(t, path); v != 1 {
		t.Errorf("schema version after a failed step %d, want 1", v)
	}
	s, err = open(dir, options{synchronous: "FULL", migrations: migrations[:1]})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if jobs, _ := s.Jobs(ctx, Filter{}); len(jobs) != 1 {
		t.Errorf("%d jobs after a failed step, want the 1 it deleted and rolled back", len(jobs))
	}
}

func TestGoMigrationStepsRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	steps := append(migrations[:1:1], migration{version: 2, what: "rename every job",
		do: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE jobs SET name = upper(name)")
			return err
		}})
	s, err := open(dir, options{synchronous: "FULL", migrations: steps[:1]})
	if err != nil {
		t.Fatal(err)
	}
	id := submitOne(t, s, newJob(t, trainScript))
	s.Close()
	s, err = open(dir, options{synchronous: "FULL", migrations: steps})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j, err := s.Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "TRAIN" {
		t.Errorf("name after the Go step %q, want TRAIN", j.Name)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".v1.bak")); err != nil {
		t.Errorf("no backup before the Go step: %v", err)
	}
}
