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
)

// Job ids never repeat on one machine, even when the database is lost: a
// job's id names its directory, its checkpoint directory and its lines in
// people's notes and scripts. Besides the database's next_job_id, the
// state directory holds a high-water mark (HWMFile): every id below it may
// have been given out. The writer moves it a block ahead before it gives
// out an id at or above it, so it costs one small fsynced write per
// hwmBlock submissions, and a database that starts empty continues from it.

// HWMFile is the high-water mark's file in the state directory.
const HWMFile = "job-ids"

// hwmBlock is how far ahead the mark is moved.
const hwmBlock = 1000

// ReadHWM reads the state directory's high-water mark: 0 when there is
// none.
func ReadHWM(dir string) (uint32, error) {
	b, err := os.ReadFile(filepath.Join(dir, HWMFile))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the job id high-water mark: %w", err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("the job id high-water mark %s holds %q, not a job id; write the highest job id this machine gave out plus one into it",
			filepath.Join(dir, HWMFile), strings.TrimSpace(string(b)))
	}
	return uint32(n), nil
}

// writeHWM replaces the mark durably: a temporary file, fsynced, renamed
// over it, and the directory fsynced.
func writeHWM(dir string, n uint32) error {
	tmp := filepath.Join(dir, HWMFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("writing the job id high-water mark: %w", err)
	}
	_, err = fmt.Fprintf(f, "%d\n", n)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, HWMFile))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the job id high-water mark: %w", err)
	}
	return nil
}

// hwm is the writer's view of the mark.
type hwm struct {
	dir  string
	mark uint32
}

// reserve makes sure id is below the mark, moving it ahead if not.
func (h *hwm) reserve(id uint32) error {
	if h == nil || id < h.mark {
		return nil
	}
	next := uint64(id) + 1 + hwmBlock
	if next > uint64(MaxJobID)+1 {
		next = uint64(MaxJobID) + 1
	}
	if err := writeHWM(h.dir, uint32(next)); err != nil {
		return err
	}
	h.mark = uint32(next)
	return nil
}

// continueFromHWM starts the database's ids at the mark when they are
// behind it (a database that was lost and started empty, or an old backup
// put back), and returns the writer's view of the mark. The mark is a
// block ahead of the id that moved it last: a database whose next id is
// past that id is not behind.
func continueFromHWM(ctx context.Context, s *Store) (*hwm, error) {
	dir := filepath.Dir(s.path)
	mark, err := ReadHWM(dir)
	if err != nil {
		return nil, err
	}
	var next int64
	if err := s.w.QueryRowContext(ctx, sqlNextID).Scan(&next); err != nil {
		return nil, fmt.Errorf("reading the next job id: %w", err)
	}
	if next < int64(mark)-hwmBlock {
		if _, err := s.w.ExecContext(ctx, sqlSetNextID, int64(mark)); err != nil {
			return nil, fmt.Errorf("continuing job ids from the high-water mark %d: %w", mark, err)
		}
	}
	return &hwm{dir: dir, mark: mark}, nil
}
