package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/durable"
)

// Job ids never repeat on one machine, whatever happens to the database: a
// job's id names its directory, its checkpoint directory, its cgroup and
// its lines in people's notes and scripts. Besides the database's
// next_job_id, the state directory holds a high-water mark (HWMFile): the
// highest id ever given out, plus one. It is exact: each batch that gives
// out ids moves it, durably, before its commit (so before anyone hears an
// id), which costs one small in-place write and one fdatasync per batch,
// not per job (the writer's group commit). That write and sync run at the
// same time as the batch's commit, and the batch is answered only once
// both are on disk (writer.go): either may land without the other in a
// crash, which is no worse than the order mark-then-commit (see commit).
//
// Because it is exact, a database that comes back behind it (a copy put
// back, a WAL lost or damaged, an emptied file) tells exactly which ids it
// does not know although they were given out: IDsBehind. The daemon
// adopts those its job directories prove and reports the rest by id.
//
// Marks written by slurm-lite before the exact mark were a block of 1000
// ahead of the last id; such a mark (variable width, not hwmWidth digits)
// is read as one: only a database more than a block behind it is behind,
// and which ids in between were given out cannot be told.

// HWMFile is the high-water mark's file in the state directory.
const HWMFile = "job-ids"

// hwmWidth is the exact mark's width in digits: every write is the same
// size in place, so a rewrite never changes the file's length.
const hwmWidth = 10

// legacyBlock is how far ahead the marks of earlier versions were.
const legacyBlock = 1000

// ReadHWM reads the state directory's high-water mark: 0 when there is
// none.
func ReadHWM(dir string) (uint32, error) {
	m, _, err := readHWM(dir)
	return m, err
}

// readHWM is ReadHWM, and whether the mark is exact (not a legacy block
// mark).
func readHWM(dir string) (mark uint32, exact bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, HWMFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading the job id high-water mark: %w", err)
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, false, fmt.Errorf("the job id high-water mark %s holds %q, not a job id; write the highest job id this machine gave out plus one into it",
			filepath.Join(dir, HWMFile), s)
	}
	return uint32(n), len(s) == hwmWidth, nil
}

// RaiseHWM makes the state directory's mark at least n (the store is not
// open): ids below n count as given out. slurmd-lite --fresh raises it past
// the job directories it moves aside.
func RaiseHWM(dir string, n uint32) error {
	mark, _, err := readHWM(dir)
	if err != nil {
		return err
	}
	if mark >= n {
		return nil // a legacy block mark stays one: it is read as one
	}
	h, err := openHWM(dir, max(mark, n))
	if err != nil {
		return err
	}
	h.close()
	return nil
}

// hwm is the writer's view of the mark, and the file it rewrites in place.
type hwm struct {
	dir  string
	mark uint32
	f    *os.File
}

// openHWM makes the mark's file exact-format and n (a new name, by a
// temporary file renamed over it and the directory synced), and keeps it
// open for the writes in place that follow.
func openHWM(dir string, n uint32) (*hwm, error) {
	path := filepath.Join(dir, HWMFile)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("writing the job id high-water mark: %w", err)
	}
	h := &hwm{dir: dir, f: f}
	err = h.set(n)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = durable.SyncDir(dir)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("writing the job id high-water mark: %w", err)
	}
	return h, nil
}

// set rewrites the mark in place, durably. A write of 11 bytes at the
// start of a file lies within one sector, which disks write whole.
func (h *hwm) set(n uint32) error {
	if err := h.write(n); err != nil {
		return err
	}
	h.mark = n
	return nil
}

// write is set without remembering n: the writer runs it beside the
// batch's commit (writer.go) and records the mark once both are known.
func (h *hwm) write(n uint32) error {
	if _, err := h.f.WriteAt(fmt.Appendf(nil, "%0*d\n", hwmWidth, n), 0); err != nil {
		return fmt.Errorf("writing the job id high-water mark %s: %w", filepath.Join(h.dir, HWMFile), err)
	}
	if err := writeHook(); err != nil {
		return fmt.Errorf("writing the job id high-water mark %s: %w", filepath.Join(h.dir, HWMFile), err)
	}
	if err := fdatasync(h.f); err != nil {
		return fmt.Errorf("syncing the job id high-water mark %s: %w", filepath.Join(h.dir, HWMFile), err)
	}
	return nil
}

// writeHook lets tests fail a mark write; nil error in the daemon.
var writeHook = func() error { return nil }

// needs reports whether a batch that gave out ids up to hi must move the
// mark past hi before anyone hears them.
func (h *hwm) needs(hi uint32) bool { return hi != 0 && hi >= h.mark }

// undo puts the mark back after a batch that did not commit: its ids
// were never given out. Best effort: a mark left ahead only makes the
// next start report ids that nobody was told.
func (h *hwm) undo(prev uint32) {
	if h.mark != prev {
		_ = h.set(prev)
	}
}

// fdatasync flushes f's data (and its size), not its times.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }

func (h *hwm) close() {
	if h != nil && h.f != nil {
		h.f.Close()
	}
}

// continueFromHWM starts the database's ids at the mark when they are
// behind it (a database that was lost and started empty, an old copy put
// back, a WAL lost), remembers which ids that skips (Store.IDsBehind), and
// opens the mark for the writer, exact from here on.
func continueFromHWM(ctx context.Context, s *Store) (*hwm, error) {
	dir := filepath.Dir(s.path)
	mark, exact, err := readHWM(dir)
	if err != nil {
		return nil, err
	}
	var next int64
	if err := s.w.QueryRowContext(ctx, sqlNextID).Scan(&next); err != nil {
		return nil, fmt.Errorf("reading the next job id: %w", err)
	}
	behind := next < int64(mark)
	if !exact {
		// A legacy block mark: ids up to a block below it may never
		// have been given out.
		behind = next < int64(mark)-legacyBlock
	}
	if behind {
		if _, err := s.w.ExecContext(ctx, sqlSetNextID, int64(mark)); err != nil {
			return nil, fmt.Errorf("continuing job ids from the high-water mark %d: %w", mark, err)
		}
		s.behind = IDRange{From: uint32(next), To: mark, Exact: exact}
		next = int64(mark)
	}
	// From here the mark is exact: the next id the database gives.
	return openHWM(dir, uint32(max(next, int64(FirstJobID))))
}

// IDRange is a range of job ids, From up to (not including) To.
type IDRange struct {
	From, To uint32
	// Exact: every id in the range was given out (an exact mark). Not
	// exact: some may have been (a legacy block mark).
	Exact bool
}

// Empty reports whether the range holds no id.
func (r IDRange) Empty() bool { return r.To <= r.From }

// IDsBehind are the ids that the high-water mark says were given out and
// the database did not know when it was opened: the database came back
// behind (see hwm.go). Their jobs' records are lost, unless their job
// directories prove what they were (the daemon adopts those). Empty when
// the database was up to date.
func (s *Store) IDsBehind() IDRange { return s.behind }

// ReserveIDs makes every id below n count as given out: the next id is at
// least n, and the mark covers it. The daemon calls it with what job
// directories prove was given out, which a mark put back or lost with the
// database may not know.
func (t *Tx) ReserveIDs(n uint32) error {
	var next int64
	if err := t.queryRow(sqlNextID).Scan(&next); err != nil {
		return fmt.Errorf("reading the next job id: %w", err)
	}
	if int64(n) <= next {
		return nil
	}
	if _, err := t.exec(sqlSetNextID, int64(n)); err != nil {
		return fmt.Errorf("reserving job ids below %d: %w", n, err)
	}
	t.gave(n - 1)
	return nil
}

// gave records that the request gave out id: the batch moves the mark
// past it before committing.
func (t *Tx) gave(id uint32) { t.maxID = max(t.maxID, id) }
