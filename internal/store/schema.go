package store

import (
	"context"
	"database/sql"
	"fmt"
)

// applicationID marks a SQLite file as slurm-lite's state (PRAGMA
// application_id, bytes 68-71 of the file): "SLIT". A SQLite file without it
// that already has tables is someone else's and is refused.
const applicationID = 0x534c4954

// migration is one step of the schema's history. Version N's step turns a
// version N-1 database into version N; it runs in one transaction with the
// PRAGMA user_version that records it, so a crash leaves the old version or
// the new one, never half of a step. A step is SQL, or Go for changes SQL
// cannot express (rewriting encoded values).
type migration struct {
	version int
	what    string
	sql     string
	do      func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema's history, oldest first. Append only: a released
// step never changes, since databases out there already ran it.
var migrations = []migration{
	{version: 1, what: "jobs, their scripts and the job id counter", sql: schemaV1},
	{version: 2, what: "accounting: earlier runs and steps", sql: schemaV2},
	{version: 3, what: "fair-share usage, GPU drains and the audit trail", sql: schemaV3},
	{version: 4, what: "notes on each run of a job", sql: schemaV4},
	{version: 5, what: "the job a yielded job was stopped for, a shrunk job's GPUs", sql: schemaV5},
}

// SchemaVersion is the schema this binary writes: the last migration's.
var SchemaVersion = migrations[len(migrations)-1].version

// jobColumnsDDL are the columns of a job row as version 1 made them, shared
// by jobs (the current run) and runs (earlier runs). Times are Unix
// nanoseconds, NULL for none; request and alloc are JSON. Later columns are
// added to both tables by the steps that brought them (notes: version 4).
// Released steps use this text, so it never changes.
const jobColumnsDDL = `
	array_job_id   INTEGER NOT NULL,
	array_task_id  INTEGER NOT NULL,
	array_pending  TEXT    NOT NULL,
	array_limit    INTEGER NOT NULL,
	script_id      INTEGER NOT NULL,
	user           TEXT    NOT NULL,
	uid            INTEGER NOT NULL,
	gid            INTEGER NOT NULL,
	account        TEXT    NOT NULL,
	partition      TEXT    NOT NULL,
	qos            TEXT    NOT NULL,
	name           TEXT    NOT NULL,
	state          TEXT    NOT NULL,
	reason         TEXT    NOT NULL,
	submit_time    INTEGER,
	eligible_time  INTEGER,
	start_time     INTEGER,
	end_time       INTEGER,
	time_limit     INTEGER NOT NULL,
	exit_status    INTEGER NOT NULL,
	exit_signal    INTEGER NOT NULL,
	restarts       INTEGER NOT NULL,
	requeue        INTEGER NOT NULL,
	hold           INTEGER NOT NULL,
	priority       INTEGER NOT NULL,
	nice           INTEGER NOT NULL,
	request        TEXT    NOT NULL,
	submit_dir     TEXT    NOT NULL,
	alloc          TEXT    NOT NULL,
	batch_size     INTEGER NOT NULL,
	checkpoint_dir TEXT    NOT NULL,
	cancelled_by   INTEGER,
	requeued_by    INTEGER,
	yielded_by     INTEGER,
	peak_gpu_mem   INTEGER NOT NULL,
	mean_gpu_util  REAL    NOT NULL`

const schemaV1 = `
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value ANY  NOT NULL
) STRICT;
INSERT INTO meta (key, value) VALUES ('next_job_id', 1);

-- One script and environment per submission; an array's tasks share theirs.
CREATE TABLE scripts (
	id   INTEGER PRIMARY KEY,
	uid  INTEGER NOT NULL,
	text BLOB    NOT NULL,
	env  BLOB    NOT NULL
) STRICT;

CREATE TABLE jobs (
	id INTEGER PRIMARY KEY,` + jobColumnsDDL + `,
	FOREIGN KEY (script_id) REFERENCES scripts (id)
) STRICT;
CREATE INDEX jobs_state ON jobs (state);
CREATE INDEX jobs_user ON jobs (user);
CREATE INDEX jobs_array ON jobs (array_job_id) WHERE array_job_id != 0;
CREATE INDEX jobs_end ON jobs (end_time);
`

const schemaV2 = `
-- Earlier runs of requeued jobs, as they ended; the latest run is the job row.
CREATE TABLE runs (
	id INTEGER NOT NULL,` + jobColumnsDDL + `,
	PRIMARY KEY (id, restarts)
) STRICT;
CREATE INDEX runs_user ON runs (user);
CREATE INDEX runs_end ON runs (end_time);

CREATE TABLE steps (
	job_id        INTEGER NOT NULL,
	run           INTEGER NOT NULL,
	step_id       TEXT    NOT NULL,
	name          TEXT    NOT NULL,
	state         TEXT    NOT NULL,
	start_time    INTEGER,
	end_time      INTEGER,
	exit_status   INTEGER NOT NULL,
	exit_signal   INTEGER NOT NULL,
	ntasks        INTEGER NOT NULL,
	user_cpu      INTEGER NOT NULL,
	system_cpu    INTEGER NOT NULL,
	max_rss       INTEGER NOT NULL,
	peak_gpu_mem  INTEGER NOT NULL,
	mean_gpu_util REAL    NOT NULL,
	PRIMARY KEY (job_id, run, step_id)
) STRICT;
`

const schemaV3 = `
CREATE TABLE usage (
	user    TEXT    NOT NULL,
	account TEXT    NOT NULL,
	raw     REAL    NOT NULL,
	as_of   INTEGER,
	PRIMARY KEY (user, account)
) STRICT;

CREATE TABLE gpu_drains (
	uuid   TEXT    PRIMARY KEY,
	idx    INTEGER NOT NULL,
	reason TEXT    NOT NULL,
	since  INTEGER,
	by_uid INTEGER NOT NULL
) STRICT;

CREATE TABLE events (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	time       INTEGER NOT NULL,
	actor      INTEGER NOT NULL,
	actor_name TEXT    NOT NULL,
	job_id     INTEGER NOT NULL,
	gpu        TEXT    NOT NULL,
	action     TEXT    NOT NULL,
	detail     TEXT    NOT NULL
) STRICT;
CREATE INDEX events_job ON events (job_id) WHERE job_id != 0;
`

// Rows from before version 4 get no notes. A JSON array, as the request and
// allocation are JSON: a note may hold any character.
const schemaV4 = `
ALTER TABLE jobs ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';
`

// A yielded job remembers the job it gave its GPUs to (0: none), so that a
// restarted daemon keeps it from taking them back first; a shrunk one, the
// GPUs it had before (0: not shrunk), to be given them back.
const schemaV5 = `
ALTER TABLE jobs ADD COLUMN yielded_for INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN yielded_for INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN full_gpus INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN full_gpus INTEGER NOT NULL DEFAULT 0;
`

// migrate brings db from version from up to the last of steps, one
// transaction per step.
func migrate(ctx context.Context, db *sql.DB, from int, steps []migration) error {
	for _, m := range steps {
		if m.version <= from {
			continue
		}
		if err := migrateOne(ctx, db, m); err != nil {
			return fmt.Errorf("migrating the schema to version %d (%s): %w", m.version, m.what, err)
		}
	}
	return nil
}

func migrateOne(ctx context.Context, db *sql.DB, m migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if m.sql != "" {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return err
		}
	}
	if m.do != nil {
		if err := m.do(ctx, tx); err != nil {
			return err
		}
	}
	// PRAGMA takes no bound parameters; the version is ours, not input.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
		return err
	}
	return tx.Commit()
}
