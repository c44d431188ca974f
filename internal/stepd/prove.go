package stepd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// A supervisor that dies without a word may leave its job's processes
// running, and the daemon then ends them through the job's cgroup. A kill
// is final, so the daemon acts only on proof that the cgroup is the one the
// supervisor of the run it means made for that run: a stepd.json names a
// cgroup, but the record may be another run's (a database put back from an
// old copy once gave a job id twice, and the second job's "lost" run
// killed the first one's live job through the first one's record).

// RunOwner is the run the daemon means: a job, its run number (its
// restarts) and the user it runs as.
type RunOwner struct {
	JobID uint32
	Run   int
	UID   uint32
}

// LeftCgroup returns the cgroup that the dead supervisor of run directory
// dir made for its job, once proven to be want's, or why it is not proven:
//
//  1. the directory's launch spec is want's run (job, run, user);
//  2. its stepd.json names want's job, was written after that spec, on
//     this boot, by a supervisor that is no longer alive and no longer
//     holds the directory;
//  3. the cgroup is that supervisor's: cgroup v2, named job_ID_PID for
//     this job and the pid in the record;
//  4. every process in it runs as want's user and started after that
//     supervisor did.
//
// "" with a nil error: the run had no cgroup.
func LeftCgroup(dir string, want RunOwner) (string, error) {
	spec, err := ReadSpec(filepath.Join(dir, SpecFile))
	if err != nil {
		return "", fmt.Errorf("no launch spec to match: %w", err)
	}
	if spec.JobID != want.JobID || spec.RestartCount != want.Run || spec.User.UID != want.UID {
		return "", fmt.Errorf("the launch spec in %s is job %d run %d of uid %d, not job %d run %d of uid %d",
			dir, spec.JobID, spec.RestartCount, spec.User.UID, want.JobID, want.Run, want.UID)
	}
	id, err := ReadIdentity(dir)
	if err != nil {
		return "", err
	}
	if id.Cgroup == "" {
		return "", nil
	}
	if id.JobID != want.JobID {
		return "", fmt.Errorf("the supervisor record in %s is job %d's", dir, id.JobID)
	}
	specAt, err1 := os.Stat(filepath.Join(dir, SpecFile))
	idAt, err2 := os.Stat(filepath.Join(dir, IdentityFile))
	if err := errors.Join(err1, err2); err != nil {
		return "", err
	}
	if idAt.ModTime().Before(specAt.ModTime()) {
		return "", fmt.Errorf("the supervisor record in %s is older than its launch spec: it is an earlier supervisor's", dir)
	}
	if boot, err := bootID(); err != nil || boot != id.BootID {
		return "", fmt.Errorf("the supervisor record in %s is from another boot", dir)
	}
	if Alive(id) || Supervised(dir) {
		return "", fmt.Errorf("its supervisor (pid %d) is alive", id.PID)
	}
	cg := filepath.Clean(id.Cgroup)
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	if cg != id.Cgroup || !strings.HasPrefix(cg, filepath.Clean(mnt)+"/") ||
		filepath.Base(cg) != fmt.Sprintf("job_%d_%d", want.JobID, id.PID) {
		return "", fmt.Errorf("cgroup %s is not the one a supervisor (pid %d) of job %d makes", id.Cgroup, id.PID, want.JobID)
	}
	if fi, err := os.Lstat(filepath.Join(cg, "cgroup.procs")); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a cgroup", cg)
	}
	for _, pid := range procfs.CgroupProcs(cg) {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		if err != nil {
			continue // gone
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != want.UID {
			return "", fmt.Errorf("process %d in %s runs as uid %d, not the job's %d", pid, cg, st.Uid, want.UID)
		}
		if st, err := procfs.ReadStat(pid); err == nil && st.StartTime < id.StartTime {
			return "", fmt.Errorf("process %d in %s started before the supervisor that made it", pid, cg)
		}
	}
	return cg, nil
}
