package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A state directory whose database is missing or empty is a fresh start
// only if nothing else in it says jobs ran there. Job directories, live
// supervisors or a job id high-water mark say they did: the database was
// deleted or emptied by hand, a disk was swapped, a backup half-restored.
// Starting fresh then would give job id 1 again, hand the GPUs that live
// jobs hold to new ones, call those jobs lost and kill them, and give the
// new jobs their checkpoint directories. So the daemon refuses, says what
// it found and how to recover, and starts fresh only when told to
// (slurmd-lite --fresh), which moves the old job directories aside and
// keeps the high-water mark, so that ids still never repeat.

// stateTraces are what a state directory holds of earlier jobs.
type stateTraces struct {
	jobDirs []uint32       // jobs/N
	live    map[uint32]int // job -> pid of its live supervisor
	mark    uint32         // the job id high-water mark, 0 if none
}

func (t stateTraces) any() bool { return len(t.jobDirs) > 0 || len(t.live) > 0 || t.mark > 0 }

// dbMissing reports whether the state database is missing or empty.
func dbMissing(stateDir string) bool {
	fi, err := os.Stat(filepath.Join(stateDir, store.FileName))
	return errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0)
}

// findTraces lists the job directories under jobsDir, the live supervisors
// among them, and the high-water mark.
func findTraces(stateDir, jobsDir string) (stateTraces, error) {
	t := stateTraces{live: map[uint32]int{}}
	var err error
	if t.mark, err = store.ReadHWM(stateDir); err != nil {
		return t, err
	}
	ents, err := os.ReadDir(jobsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	} else if err != nil {
		return t, fmt.Errorf("reading %s: %w", jobsDir, err)
	}
	for _, e := range ents {
		n, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil || !e.IsDir() {
			continue
		}
		id := uint32(n)
		t.jobDirs = append(t.jobDirs, id)
		runs, _ := os.ReadDir(filepath.Join(jobsDir, e.Name()))
		for _, r := range runs {
			if rec, err := stepd.ReadIdentity(filepath.Join(jobsDir, e.Name(), r.Name())); err == nil && stepd.Alive(rec) {
				t.live[id] = rec.PID
			}
		}
	}
	slices.Sort(t.jobDirs)
	return t, nil
}

// checkState refuses a missing or empty database among the traces of
// earlier jobs, unless fresh, which then moves the job directories aside,
// or rebuild, which lets the start put back what they prove (adopt.go).
func checkState(stateDir, jobsDir string, fresh, rebuild bool, now time.Time, log *slog.Logger) error {
	if !dbMissing(stateDir) {
		db := filepath.Join(stateDir, store.FileName)
		if fresh {
			return fmt.Errorf("--fresh starts over only where the state database is missing or empty, and %s is there: to start over on purpose, stop slurmd-lite and move %s away first (its jobs are then forgotten)",
				db, stateDir)
		}
		if rebuild {
			return fmt.Errorf("--rebuild rebuilds only a missing or empty state database, and %s is there: a database that is behind its job directories is brought up to date by a plain start, which puts back every run it does not know", db)
		}
		return nil
	}
	t, err := findTraces(stateDir, jobsDir)
	if err != nil || !t.any() {
		return err
	}
	db := filepath.Join(stateDir, store.FileName)
	var found []string
	if len(t.jobDirs) > 0 {
		found = append(found, fmt.Sprintf("%d job directories in %s (%s)", len(t.jobDirs), jobsDir, idList(t.jobDirs, 8)))
	}
	var pids []string
	var liveSups string
	if len(t.live) > 0 {
		ids := make([]uint32, 0, len(t.live))
		for id := range t.live {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var sups []string
		for _, id := range ids {
			sups = append(sups, fmt.Sprintf("job %d (pid %d)", id, t.live[id]))
			pids = append(pids, strconv.Itoa(t.live[id]))
		}
		liveSups = strings.Join(sups, ", ")
		found = append(found, fmt.Sprintf("%d live job supervisors: %s", len(t.live), liveSups))
	}
	if t.mark > 0 {
		found = append(found, fmt.Sprintf("job ids up to %d may have been given out (%s)", t.mark-1, filepath.Join(stateDir, store.HWMFile)))
	}
	if rebuild {
		log.Warn("rebuilding the state database from the job directories (--rebuild)", "found", strings.Join(found, "; "))
		return nil
	}
	if !fresh {
		return fmt.Errorf("the state database %s is missing or empty, but %s holds the traces of earlier jobs: %s. "+
			"Starting fresh would reuse job ids and give running jobs' GPUs and checkpoints to new ones, so slurmd-lite does not start. "+
			"Put the database back (%s, with its -wal file, from a copy: slurmd-lite writes one to %s before every migration; any file copy taken while the daemon was stopped will do, however old: the runs it does not know are put back from their job directories); "+
			"or, without a copy, rebuild it from the job directories (every job that started, with its accounting; jobs that never started are reported lost): slurmd-lite --rebuild; "+
			"or, to start over on purpose, forgetting those jobs, run: slurmd-lite --fresh",
			db, stateDir, strings.Join(found, "; "), db, stateDir)
	}
	if len(pids) > 0 {
		return fmt.Errorf("--fresh: %d job supervisors still run (%s) and their jobs hold GPUs that a fresh start would give away; end them first (kill %s), or put the database back instead",
			len(pids), liveSups, strings.Join(pids, " "))
	}
	// Named by the daemon's clock (now), as everything it shows.
	aside := jobsDir + ".before-fresh-" + now.Format("20060102T150405")
	if len(t.jobDirs) > 0 {
		// The ids of the directories moved aside stay taken, even where
		// the mark went with the database: their checkpoints are named
		// by them.
		if err := store.RaiseHWM(stateDir, t.jobDirs[len(t.jobDirs)-1]+1); err != nil {
			return fmt.Errorf("--fresh: %w", err)
		}
		if err := os.Rename(jobsDir, aside); err != nil {
			return fmt.Errorf("--fresh: moving the old job directories aside: %w", err)
		}
	}
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Rename(f, f+".before-fresh"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--fresh: moving %s aside: %w", f, err)
		}
	}
	log.Warn("starting fresh on purpose (--fresh): earlier jobs are forgotten", "found", strings.Join(found, "; "),
		"job_directories_moved_to", aside, "ids_continue_from", t.mark)
	return nil
}

// idList is up to n ids, then how many more.
func idList(ids []uint32, n int) string {
	var s []string
	for i, id := range ids {
		if i == n {
			s = append(s, fmt.Sprintf("and %d more", len(ids)-n))
			break
		}
		s = append(s, strconv.Itoa(int(id)))
	}
	return strings.Join(s, ", ")
}
