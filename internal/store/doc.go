// Package store keeps the daemon's durable state: jobs, the next job id,
// accounting (every run of every job, with its steps), fair-share usage,
// GPU drains and an audit trail, in one SQLite database (modernc.org/sqlite,
// pure Go) under StateSaveLocation. All SQL of the project lives here.
//
//	s, err := store.Open(cfg.StateSaveLocation)  // checks, upgrades, or says what to do
//	ids, err := s.Submit(ctx, []store.NewJob{nj}) // on disk when it returns
//	err = s.Update(ctx, func(tx *store.Tx) error { // state changes
//		j, err := tx.SplitTask(arrayID, task)
//		...
//		return tx.PutJob(j)
//	})
//	jobs, err := s.Jobs(ctx, store.Filter{States: active})   // squeue
//	recs, err := s.Records(ctx, store.Filter{EarlierRuns: true}) // sacct -D
//
// # Files
//
// In the state directory (created 0700): state.db (0600), and while it is
// open state.db-wal and state.db-shm (SQLite gives them the database's
// mode), all three part of the state; state.lock, flock(2)ed while a Store
// is open so that a second daemon on the same directory is refused; and
// state.db.vN.bak, the copy taken before upgrading from schema version N.
// Backup writes a consistent copy of a live store elsewhere.
//
// # Writing: one writer, group commit
//
//	Submit, Update ──▶ queue ──▶ writer goroutine:
//	    BEGIN IMMEDIATE
//	    for each waiting request (up to 256):
//	        SAVEPOINT; insert jobs or run fn; RELEASE, or ROLLBACK TO on error
//	        (a request alone in its batch: no savepoint; ROLLBACK on error)
//	    COMMIT (one fsync of the WAL), beside the job id mark's write and
//	    fdatasync when the batch gave out ids (hwm.go); wait for both
//	    bring the job cache up to date
//	    answer every request of the batch
//
// A caller hears back only after COMMIT, so sbatch prints "Submitted batch
// job N" only for a job that is on disk. No request waits for company: a
// lone submission is committed at once, and the requests that arrive while a
// commit is syncing form the next batch. A request that fails (an Update's
// error or panic) rolls back its own savepoint only; a failed COMMIT fails
// the whole batch, and every caller in it hears so. A caller whose context
// ends while its request is still queued withdraws it; once the writer has
// taken it, the caller waits for the outcome, so an error always means
// "not committed".
//
// # Durability: WAL with synchronous=FULL
//
// In WAL mode, synchronous=NORMAL syncs only at checkpoints: a commit
// survives the daemon dying (the kernel has the bytes), but the last commits
// can vanish in a power cut or kernel panic, and then an id sbatch printed
// would be gone, or given again to another job. The design promises that an
// accepted submission is on disk, so Open uses FULL: the WAL is synced at
// every commit. Group commit pays that sync once per batch. Measured on a
// 2-core VM with an ext4 virtual disk (go test -bench Submit
// ./internal/store/; the single-submitter FULL figure follows the disk's
// sync latency, 0.2 to 0.35 ms there, and varies from run to run):
//
//	                       1 submitter          16 submitters
//	synchronous=FULL       2,800-4,300 jobs/s   17,000-18,000 jobs/s (7.9 jobs/commit)
//	synchronous=NORMAL     9,700-10,700 jobs/s  18,000-20,800 jobs/s (3.9-4.6 jobs/commit)
//
// With 16 submitters, FULL costs nothing measurable: the batches grow to
// absorb the sync. A disk with a slower sync makes bigger batches, not
// slower submission, until the CPU (about 50 us a job here) is the limit.
// Starting sbatch and its round trip to the daemon cost more than that per
// job, so the sync is not what limits submission. Readers use their
// own connections (query_only) and WAL snapshots: squeue never waits for a
// commit. The kill -9 test shows that no printed id is lost to a crash of
// the process; power cuts are what FULL is for, and no test here can cut
// the power.
//
// # The job cache
//
// The daemon reads the jobs of the last MinJobAge for every squeue, every
// scheduling pass and every submission's checks. With CacheJobs, Jobs
// answers such a query from decoded rows in memory (cache.go): the writer
// reads each row its batch wrote again after COMMIT, before any caller of
// the batch hears back, so a committed change is always in the cache. A
// query that reaches further back (sacct) goes to SQLite. Without it, a
// submission with 5,000 jobs queued spent 20 ms reading and decoding them.
//
// # Data model
//
// jobs has one row per job id: a plain job, an array task, or an array's
// pending record. It is the controller's view (squeue, scontrol) and also
// the accounting record of the job's latest run; rows are kept for good.
// Times are Unix nanoseconds (NULL for none); the request, the allocation
// and the run's notes are JSON; the exit code is Slurm's status:signal pair.
//
// scripts holds each submission's script and environment, apart from the
// job rows: listing jobs never reads them, and an array's tasks share one
// copy. Environments are stored NUL-separated, byte for byte.
//
// runs holds the earlier runs of requeued jobs, with the same columns as
// jobs: Requeue copies the row there as REQUEUED (as Slurm's sacct -D
// shows a requeued run), then resets the job to PENDING with Restarts one
// higher. steps holds each run's steps (batch, extern, 0, 1, ...), keyed by
// (job, run, step), so a run keeps its steps when the job runs again.
//
// usage holds each (user, account) association's decayed usage and when it
// was decayed; gpu_drains the drained GPUs by UUID with reason, time and
// who; events the audit trail; meta the next job id.
//
// # Array jobs
//
// An array submission is one row and one id (as in Slurm), its tasks not
// started kept as a list of ranges in array_pending. SplitTask takes a task
// out into a row of its own when it starts (or is held or changed on its
// own): it gets the next job id, except the last task to leave, which takes
// the array's own id, the record becoming that task (golden/README.md: "The
// last array task to start gets the array's own job id"). DropTasks removes
// pending tasks, which is how cancelling one leaves no trace in squeue or
// sacct; a record left with none is deleted, its id never given again.
// Job ids run from 1 to Slurm's MaxJobId default, then wrap, skipping ids in
// use.
//
// # Secrets
//
// Scripts and environments often hold API tokens. The database and its
// companions are 0600 and must belong to the daemon's user (Open tightens a
// wider mode, and refuses a file owned by someone else); the directory is
// created 0700. The store itself does no access control: the API serves
// Store.Script to the job's owner (Script.UID) and root only, and the same
// holds for Job.Request, which may carry --export=NAME=value values.
// Tx.ForgetScripts empties the scripts and environments of submissions
// whose jobs all finished before a given time, so that tokens are not kept
// for good with the accounting.
//
// # Damage, versions, migrations
//
// Open never resets state. A file that is not empty and not SQLite, that
// fails SQLite's quick_check, or that is another program's database
// (application_id is "SLIT") is refused with ErrCorrupt and left as it was
// (the check connection is read-only, and any -wal or -shm it had to make is
// removed again); the error names the file, says how to move it aside, and
// lists the backups beside it. A schema newer than this binary's is refused
// with ErrNewerSchema. An older one is copied to state.db.vN.bak, then
// upgraded by the steps of migrations, each in one transaction with the
// PRAGMA user_version it reaches: append-only, SQL or Go.
//
// # Glossary
//
//   - WAL: SQLite's write-ahead log. A commit appends pages to state.db-wal;
//     a checkpoint copies them into state.db. Readers see the last commit
//     without blocking the writer.
//   - synchronous=FULL: SQLite syncs the WAL at every commit, so a commit
//     outlives a power cut.
//   - group commit: one transaction, and one sync, for all the requests
//     that queued while the previous commit was syncing.
//   - savepoint: a transaction inside the batch's transaction, which one
//     request can roll back alone.
//   - pending record: an array's row while some of its tasks have not
//     started; squeue shows it as 7_[1-3].
//   - split: taking one task out of the pending record into its own row.
//   - run: one start-to-end of a job; a requeue ends one and begins the
//     next. Job.Restarts numbers them.
//   - record: one run as accounting shows it (Record), with its steps.
//   - drain: a GPU kept out of scheduling, with a reason, across restarts.
//   - event: one line of the audit trail: who changed what, when.
//   - schema version: PRAGMA user_version, the last migration applied.
package store
