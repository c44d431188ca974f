package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/durable"
)

// FileName is the database's name in the state directory. SQLite keeps
// FileName-wal and FileName-shm beside it while it is open; they are part of
// the state (the WAL holds the latest commits until a checkpoint), so a copy
// of the directory must take all three, or use Backup.
const FileName = "state.db"

// lockName is the file flock(2)ed while a Store is open, so that a second
// daemon on the same state directory is refused instead of sharing it.
const lockName = "state.lock"

// Errors that Open wraps, for errors.Is.
var (
	// ErrCorrupt: the file is not a SQLite database, fails SQLite's
	// integrity check, or is not slurm-lite's.
	ErrCorrupt = errors.New("state database is damaged or not slurm-lite's")
	// ErrNewerSchema: the file was written by a newer slurmd-lite.
	ErrNewerSchema = errors.New("state database is from a newer slurmd-lite")
	// ErrLocked: another process has the state directory open.
	ErrLocked = errors.New("state directory is in use")
	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("state store is closed")
	// ErrNotFound: no job (or array task) with that id.
	ErrNotFound = errors.New("no such job")
	// ErrFull: the state directory's disk has no room to record a change
	// (SQLite's SQLITE_FULL, ENOSPC). Nothing of the change is recorded.
	ErrFull = errors.New("state disk is full")
)

// diskFull says whether err is SQLite's or the system's "no space".
func diskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "database or disk is full") || strings.Contains(msg, "SQLITE_FULL") ||
		strings.Contains(msg, "no space left on device")
}

// full gives err, when it is a full disk, a message that says so and what
// to do, and makes errors.Is(err, ErrFull) true.
func (s *Store) full(err error) error {
	if !diskFull(err) || errors.Is(err, ErrFull) {
		return err
	}
	dir := filepath.Dir(s.path)
	return kindError(ErrFull, "the state disk is full: %s has no room to record this (%v); nothing of it was recorded. Free space there (df -h %s): running jobs go on, and slurm-lite records again as soon as there is room",
		dir, err, dir)
}

// Store is the daemon's durable state: one SQLite database in WAL mode under
// the state directory. It is safe for concurrent use. Writes go through one
// writer goroutine that commits concurrent requests together (see Submit);
// reads use a pool of their own and see the last commit.
type Store struct {
	path string
	lock *os.File
	w    *sql.DB // the one write connection, used by the writer goroutine only
	// stmts are the writer's prepared statements, by their SQL.
	stmts map[string]*sql.Stmt
	r     *sql.DB // read connections (query_only)

	mu     sync.RWMutex // guards closed and sends on reqs
	closed bool
	reqs   chan *request
	done   chan struct{} // closed when the writer goroutine has exited

	// commits counts the writer's transactions, to show group commit at
	// work in tests and benchmarks.
	commits atomic.Int64

	// cache is the decoded job rows (CacheJobs); nil until asked for.
	cache *jobCache
	// hwm is the job id high-water mark (hwm.go); the writer's alone.
	hwm *hwm
	// next is next_job_id as the writer last set it (nextID); the
	// writer's alone.
	next nextID
	// behind are the ids the mark knew and the database did not, at Open.
	behind IDRange
	// clock is the time the store stamps by (OpenClock).
	clock clock.Clock
}

// options are Open's knobs that only tests and benchmarks turn.
type options struct {
	// synchronous is SQLite's PRAGMA synchronous: FULL, see doc.go.
	synchronous string
	// migrations replaces the schema history (tests of migrate).
	migrations []migration
	// clock is OpenClock's; nil is the machine's.
	clock clock.Clock
}

var defaultOptions = options{synchronous: "FULL", migrations: migrations}

// Open opens the state in dir (StateSaveLocation), creating dir (0700) and
// an empty database (0600) when there are none, and upgrading an older
// schema after saving a copy of it beside the database. It refuses, and
// leaves the file as it was, a file that is damaged or not slurm-lite's, one
// written by a newer slurmd-lite, one owned by another user, and a state
// directory another process has open: each error says what to do.
func Open(dir string) (*Store, error) { return open(dir, defaultOptions) }

// OpenClock is Open with the clock that stamps what a caller leaves
// unstamped (a job's submit time, an event's time, Tx.Now) and that the
// job cache's window counts back from: the daemon's, so that a job's
// times come from one clock (clock.Clock). Open's is the machine's.
func OpenClock(dir string, c clock.Clock) (*Store, error) {
	o := defaultOptions
	o.clock = c
	return open(dir, o)
}

func open(dir string, o options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("state directory %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	lock, err := lockDir(abs)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(abs, o)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the state lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, kindError(ErrLocked, "state directory %s is in use by another process (is slurmd-lite already running?); stop it, or give this one another StateSaveLocation", dir)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

func openLocked(dir string, o options) (*Store, error) {
	path := filepath.Join(dir, FileName)
	if err := prepareFile(path); err != nil {
		return nil, err
	}
	ctx := context.Background()
	latest := o.migrations[len(o.migrations)-1].version
	version, err := checkFile(ctx, path, latest)
	if err != nil {
		return nil, err
	}
	// Everything above only read the file; from here on it is written.
	w, err := sql.Open("sqlite", dsn(path, o.synchronous, connWrite))
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	// One connection: SQLite has one writer at a time anyway, and the
	// writer goroutine is its only user.
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if err := setWAL(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if version < latest {
		if version > 0 {
			if err := backupBeforeMigrate(ctx, w, path, version); err != nil {
				w.Close()
				return nil, err
			}
		}
		if err := migrate(ctx, w, version, o.migrations); err != nil {
			w.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	stmts, err := prepare(ctx, w)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, o.synchronous, connRead))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{
		path:  path,
		w:     w,
		stmts: stmts,
		r:     r,
		reqs:  make(chan *request, 1024),
		done:  make(chan struct{}),
		clock: o.clock,
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.hwm, err = continueFromHWM(ctx, s); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	go s.writer()
	return s, nil
}

// Kinds of connection.
const (
	connCheck  = iota // read-only, for the checks before anything is written
	connWrite         // the writer's
	connRead          // the readers'
	connBackup        // Backup's
)

// dsn is the driver's connection string: a file: URI (so any path works)
// with the pragmas every connection of that kind needs.
func dsn(path, synchronous string, kind int) string {
	q := url.Values{}
	switch kind {
	case connCheck:
		// Read-only, so that closing it never checkpoints a WAL into a
		// file that fails the checks.
		q.Add("mode", "ro")
	case connWrite:
		q.Add("mode", "rw") // never create: prepareFile made the file, with its mode
		// Take the write lock at BEGIN, not at the first write, so that a
		// transaction never fails half-way on a lock (there is one writer
		// connection, but a backup or the sqlite3 shell may hold it).
		q.Add("_txlock", "immediate")
	case connRead:
		q.Add("mode", "rw")
		q.Add("_pragma", "query_only(1)")
	case connBackup:
		// VACUUM INTO writes another file, which query_only forbids; it
		// reads this one in a read transaction, not waiting for the writer.
		q.Add("mode", "rw")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+synchronous+")")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// prepareFile makes sure path is a file SQLite may open: created empty with
// mode 0600 when missing (SQLite gives the -wal and -shm files the mode of
// the database), owned by this process's user, no wider than 0600, and
// starting with SQLite's header unless empty. It only reads an existing file.
func prepareFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		// A new file: make its entry durable before anything is committed
		// into it.
		f.Close()
		return durable.SyncDir(filepath.Dir(path))
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("state database %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return corrupt(path, fmt.Sprintf("it is not a regular file (%s)", fi.Mode().Type()))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state database %s belongs to uid %d, but slurmd-lite runs as uid %d: it holds job scripts and their environments, so only the daemon's user may own it; chown %d %s %s-wal %s-shm, or run slurmd-lite as that user",
			path, st.Uid, os.Geteuid(), os.Geteuid(), path, path, path)
	}
	if err := checkHeader(path); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := tighten(p); err != nil {
			return err
		}
	}
	return nil
}

// checkHeader refuses a file that is neither empty nor starts with SQLite's
// header, before SQLite sees it.
func checkHeader(path string) error {
	hdr := make([]byte, len(sqliteHeader))
	g, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("state database %s cannot be read: %w", path, err)
	}
	defer g.Close()
	n, err := io.ReadFull(g, hdr)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return nil // empty: SQLite treats it as a new database
	case err != nil && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("state database %s cannot be read: %w", path, err)
	case n < len(hdr) || !bytes.Equal(hdr, []byte(sqliteHeader)):
		return corrupt(path, "it does not start with SQLite's header")
	}
	return nil
}

const sqliteHeader = "SQLite format 3\x00"

// tighten removes group and other permissions from an existing file: the
// database holds scripts and environments, which often hold tokens.
func tighten(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state database %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("%s is readable by others and cannot be made private: %w", path, err)
	}
	return nil
}

// checkFile reads the file's identity and version and runs SQLite's quick
// integrity check, writing nothing. It returns the schema version (0 for an
// empty database).
func checkFile(ctx context.Context, path string, known int) (int, error) {
	// Even a read-only connection to a database in WAL mode creates the
	// -wal and -shm files: remove those it made if the file is refused, so
	// that the state directory is left exactly as it was found.
	var made []string
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			made = append(made, p)
		}
	}
	db, err := sql.Open("sqlite", dsn(path, "FULL", connCheck))
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	version, err := check(ctx, db, path, known)
	db.Close()
	if err != nil {
		for _, p := range made {
			// A -wal it made is empty; anything else is not ours to remove.
			if fi, statErr := os.Lstat(p); statErr == nil && (fi.Size() == 0 || strings.HasSuffix(p, "-shm")) {
				os.Remove(p)
			}
		}
	}
	return version, err
}

func check(ctx context.Context, db *sql.DB, path string, known int) (int, error) {
	var appID, version int
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, openError(path, err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, openError(path, err)
	}
	if appID != applicationID {
		var tables int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			return 0, openError(path, err)
		}
		if appID != 0 || version != 0 || tables != 0 {
			return 0, corrupt(path, fmt.Sprintf("it is a SQLite database, but not slurm-lite's (application_id %#x, %d schema objects)", appID, tables))
		}
		return 0, nil
	}
	if version > known {
		return 0, kindError(ErrNewerSchema, "state database %s has schema version %d, and this slurmd-lite knows versions up to %d; run the newer slurmd-lite that wrote it (there is no downgrade), or restore a backup made by this version%s",
			path, version, known, backupHint(path))
	}
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return 0, openError(path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return 0, openError(path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, openError(path, err)
	}
	if len(problems) > 0 {
		return 0, corrupt(path, "SQLite's integrity check found: "+strings.Join(problems, "; "))
	}
	return version, nil
}

// openError is an error from SQLite while reading a file that passed the
// header check: damage SQLite noticed, or an I/O error.
func openError(path string, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "corrupt") {
		return corrupt(path, msg)
	}
	return fmt.Errorf("state database %s cannot be read: %w", path, err)
}

// corrupt is the error for a state database slurmd-lite will not use. It
// never resets the state itself: losing every job must be someone's choice.
func corrupt(path, why string) error {
	return kindError(ErrCorrupt, "state database %s cannot be used: %s. slurmd-lite has left it as it is. Move it aside with its -wal and -shm files (mv %s %s.broken), then either restore a backup as %s%s, or start slurmd-lite again to begin with no jobs and no accounting",
		path, why, path, path, path, backupHint(path))
}

// kindError is an error whose message is its own but which errors.Is
// matches with kind: the sentinel's words would only repeat the message.
func kindError(kind error, format string, args ...any) error {
	return &stateError{msg: fmt.Sprintf(format, args...), kind: kind}
}

type stateError struct {
	msg  string
	kind error
}

func (e *stateError) Error() string { return e.msg }
func (e *stateError) Unwrap() error { return e.kind }

// backupHint names the backups beside path, newest last, for error messages.
func backupHint(path string) string {
	found, _ := filepath.Glob(path + ".*.bak")
	if len(found) == 0 {
		return ""
	}
	return " (backups found: " + strings.Join(found, ", ") + ")"
}

// setWAL switches the database to write-ahead logging, which is persistent:
// readers never wait for the writer, and a commit appends to one file.
func setWAL(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return fmt.Errorf("switching to WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("switching to WAL: SQLite kept journal mode %q", mode)
	}
	return nil
}

// backupBeforeMigrate copies a database about to be upgraded to
// state.db.vN.bak, so that a failed upgrade or a downgrade of slurmd-lite
// can go back to it.
func backupBeforeMigrate(ctx context.Context, db *sql.DB, path string, version int) error {
	dst := fmt.Sprintf("%s.v%d.bak", path, version)
	if _, err := os.Stat(dst); err == nil {
		return nil // an earlier, interrupted upgrade already saved this version
	}
	if err := vacuumInto(ctx, db, dst); err != nil {
		return fmt.Errorf("saving %s before upgrading its schema from version %d: %w", path, version, err)
	}
	return nil
}

// vacuumInto writes a consistent, compact copy of the database to dst,
// readable by the owner only.
func vacuumInto(ctx context.Context, db *sql.DB, dst string) error {
	tmp := dst + ".tmp"
	os.Remove(tmp)
	// Create it first, with its mode: VACUUM INTO would use the umask's.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	u := "file:" + (&url.URL{Path: tmp}).EscapedPath()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", u); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return durable.SyncDir(filepath.Dir(dst))
}

// Backup writes a consistent copy of the state to dst (mode 0600) while the
// store stays in use: what an operator restores after losing the disk.
func (s *Store) Backup(ctx context.Context, dst string) error {
	db, err := sql.Open("sqlite", dsn(s.path, "FULL", connBackup))
	if err != nil {
		return fmt.Errorf("backing up %s: %w", s.path, err)
	}
	defer db.Close()
	if err := vacuumInto(ctx, db, dst); err != nil {
		return fmt.Errorf("backing up %s to %s: %w", s.path, dst, err)
	}
	return nil
}

// Path is the database file's path.
func (s *Store) Path() string { return s.path }

// Close lets the writer commit what it was given, checkpoints the WAL into
// the database, and closes the files. Submit and Update after Close return
// ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.reqs)
	s.mu.Unlock()
	<-s.done
	var errs []error
	if _, err := s.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		errs = append(errs, fmt.Errorf("checkpointing %s: %w", s.path, err))
	}
	s.hwm.close()
	errs = append(errs, s.r.Close(), s.w.Close(), s.lock.Close())
	return errors.Join(errs...)
}
