package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// oldState makes dir a state directory as schema version v left it, holding
// what fill put into a store of today's schema, less the columns version v
// did not have yet. The schema comes from the real migrations up to v; the
// rows are copied table by table, column by column, as the old file has
// them. (A Store cannot write an older schema itself: its statements name
// today's columns.) It returns the jobs and records fill left, as today's
// store reads them.
func oldState(t *testing.T, dir string, v int, fill func(s *Store)) ([]Job, []Record) {
	t.Helper()
	src, _ := openT(t)
	fill(src)
	jobs, err := src.Jobs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := src.Records(ctx, Filter{EarlierRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	// A consistent copy to read the rows from, with the source still open.
	srcPath := filepath.Join(t.TempDir(), "src.db")
	if err := src.Backup(ctx, srcPath); err != nil {
		t.Fatal(err)
	}

	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // ATTACH belongs to one connection
	if err := migrate(ctx, db, 0, migrations[:v]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ATTACH DATABASE ? AS src", "file:"+srcPath); err != nil {
		t.Fatal(err)
	}
	var tables []string
	rows, err := db.QueryContext(ctx, "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	for _, table := range tables {
		var cols []string
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?, 'main')", table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, name)
		}
		rows.Close()
		list := strings.Join(cols, ", ")
		// OR REPLACE: meta already has its next_job_id row.
		q := fmt.Sprintf("INSERT OR REPLACE INTO main.%s (%s) SELECT %s FROM src.%s", table, list, list, table)
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("copying %s into a version %d database: %v", table, v, err)
		}
	}
	if got := userVersion(t, path); got != v {
		t.Fatalf("the old state has schema version %d, want %d", got, v)
	}
	return jobs, recs
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
	var ids []uint32
	want, _ := oldState(t, dir, 1, func(s *Store) {
		var err error
		ids, err = s.Submit(ctx, []NewJob{newJob(t, trainScript, "--array=0-2"), newJob(t, trainScript)})
		if err != nil {
			t.Fatal(err)
		}
	})

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
	// Today's schema, and a next step that fails: the steps' own columns
	// do not matter here.
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	submitOne(t, s, newJob(t, trainScript))
	s.Close()

	boom := errors.New("disk on fire")
	steps := append(migrations[:len(migrations):len(migrations)], migration{version: SchemaVersion + 1, what: "a step that fails half-way",
		do: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, "DELETE FROM jobs"); err != nil {
				return err
			}
			return boom
		}})
	if _, err := open(dir, options{synchronous: "FULL", migrations: steps}); !errors.Is(err, boom) {
		t.Fatalf("open with a failing step: %v", err)
	}
	if v := userVersion(t, path); v != SchemaVersion {
		t.Errorf("schema version after a failed step %d, want %d", v, SchemaVersion)
	}
	s, err = Open(dir)
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
	steps := append(migrations[:len(migrations):len(migrations)], migration{version: SchemaVersion + 1, what: "rename every job",
		do: func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "UPDATE jobs SET name = upper(name)")
			return err
		}})
	s, err := Open(dir)
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
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s.v%d.bak", FileName, SchemaVersion))); err != nil {
		t.Errorf("no backup before the Go step: %v", err)
	}
}

func TestUpgradeFromVersion3GivesEveryRunEmptyNotes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, FileName)
	t0 := time.Date(2026, 11, 29, 8, 51, 8, 0, time.UTC)
	// Version 3 had no notes: a requeued job (an archived run with its
	// step) and a pending one.
	var ids []uint32
	_, want := oldState(t, dir, 3, func(s *Store) {
		var err error
		ids, err = s.Submit(ctx, []NewJob{newJob(t, trainScript), newJob(t, trainScript, "--array=0-2")})
		if err != nil {
			t.Fatal(err)
		}
		update(t, s, func(tx *Tx) error {
			j, err := tx.Job(ids[0])
			if err != nil {
				return err
			}
			j.State, j.Start, j.PeakGPUMem = slurm.Running, t0, 3<<30
			if err := tx.PutJob(j); err != nil {
				return err
			}
			if err := tx.PutStep(Step{JobID: ids[0], ID: "batch", Name: "batch", State: slurm.Cancelled, Start: t0}); err != nil {
				return err
			}
			_, err = tx.Requeue(ids[0], t0.Add(time.Minute))
			return err
		})
	})

	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Records(ctx, Filter{EarlierRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after the upgrade (-want +got):\n%s", diff)
	}
	if len(got) != 3 || got[0].Latest || got[0].Job.State != slurm.Requeued {
		t.Errorf("the fixture lost its archived run: %d records, first %+v", len(got), got[0].Job)
	}
	// The rows from before hold the column's default, which reads as none.
	var stored []string
	rows, err := s.r.QueryContext(ctx, "SELECT notes FROM jobs UNION ALL SELECT notes FROM runs")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, n)
	}
	rows.Close()
	if diff := cmp.Diff([]string{"[]", "[]", "[]"}, stored); diff != "" {
		t.Errorf("stored notes of the upgraded rows (-want +got):\n%s", diff)
	}
	if v := userVersion(t, path); v != SchemaVersion {
		t.Errorf("schema version after the upgrade %d, want %d", v, SchemaVersion)
	}
	if v := userVersion(t, path+".v3.bak"); v != 3 {
		t.Errorf("the backup taken before the upgrade has version %d, want 3", v)
	}
	// The upgraded rows take notes, and a requeue archives them.
	update(t, s, func(tx *Tx) error {
		j, err := tx.Job(ids[0])
		if err != nil {
			return err
		}
		j.Notes = []string{"CUDA out of memory (stderr)"}
		if err := tx.PutJob(j); err != nil {
			return err
		}
		_, err = tx.Requeue(ids[0], t0.Add(time.Hour))
		return err
	})
	got, err = s.Records(ctx, Filter{IDs: ids[:1], EarlierRuns: true})
	if err != nil {
		t.Fatal(err)
	}
	var notes [][]string
	for _, r := range got {
		notes = append(notes, r.Job.Notes)
	}
	if diff := cmp.Diff([][]string{nil, {"CUDA out of memory (stderr)"}, nil}, notes); diff != "" {
		t.Errorf("notes of each run after a second requeue (-want +got):\n%s", diff)
	}
}
