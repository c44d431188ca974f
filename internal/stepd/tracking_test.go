package stepd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// cgroupAvailable says whether this machine lets the supervisor make a
// job cgroup, and if not why.
func cgroupAvailable() (bool, string) {
	if _, err := ProbeCgroup(""); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// trackingModes are the modes this machine can test.
func trackingModes(t *testing.T) []string {
	modes := []string{TrackSubreaper}
	if ok, why := cgroupAvailable(); ok {
		modes = append(modes, TrackCgroup)
	} else {
		t.Logf("cgroup mode not tested: %s", why)
	}
	return modes
}

func readPID(t *testing.T, j *testJob, name string) int {
	t.Helper()
	j.waitFor(name, func() bool {
		_, err := strconv.Atoi(strings.TrimSpace(j.read(name)))
		return err == nil
	})
	pid, _ := strconv.Atoi(strings.TrimSpace(j.read(name)))
	return pid
}

// TestEscapeesDie: processes that leave the job's session (setsid nohup)
// or double-fork away from the batch script still end with the job.
func TestEscapeesDie(t *testing.T) {
	for _, mode := range trackingModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, `#!/bin/bash
setsid nohup sh -c 'echo $$ > setsid.pid; exec sleep 300' >/dev/null 2>&1 &
( ( sh -c 'echo $$ > orphan.pid; exec sleep 300' & ) & )
while [ ! -s setsid.pid ] || [ ! -s orphan.pid ]; do sleep 0.01; done
echo done
`)
			j.spec.Cgroup.Disable = mode == TrackSubreaper
			j.start()
			escaped := []int{readPID(t, j, "setsid.pid"), readPID(t, j, "orphan.pid")}
			st := j.wait()
			if st.State != slurm.Completed || st.Tracking != mode || !st.Killed {
				t.Errorf("state %s, tracking %s, killed %v; want COMPLETED, %s, the leftovers killed\nlog:\n%s",
					st.State, st.Tracking, st.Killed, mode, j.log())
			}
			for _, pid := range escaped {
				if alive(pid) {
					t.Errorf("process %d outlived the job", pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// TestLeftoversKeepGrace: after a cancel, a process still saving its
// checkpoint may finish within KillWait although the batch shell exited
// at once (Slurm would SIGKILL it when the batch shell ends; see doc.go).
func TestLeftoversKeepGrace(t *testing.T) {
	t.Parallel()
	j := newJob(t, `#!/bin/bash
trap 'exit 0' TERM
sh -c 'trap "sleep 0.3; echo checkpoint saved; exit 0" TERM; echo started; while :; do sleep 0.05; done' &
while :; do sleep 0.05; done
`)
	j.spec.KillWait = 10 * time.Second
	j.start()
	j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "started\n")
	if _, err := Call(j.dir, Request{Op: OpCancel}); err != nil {
		t.Fatal(err)
	}
	st := j.wait()
	if !strings.Contains(j.out(), "checkpoint saved") || st.Killed || st.State != slurm.Cancelled {
		t.Errorf("state %s, killed %v, output:\n%s\nwant CANCELLED, no SIGKILL, the checkpoint saved", st.State, st.Killed, j.out())
	}
	if st.StopTime < 300*time.Millisecond || st.StopTime > 5*time.Second {
		t.Errorf("stop time %v, want the checkpoint's 0.3s and little more", st.StopTime)
	}
}

// TestDaemonDies: the supervisor finishes the job and writes its status
// when its parent, the daemon, is killed with SIGKILL.
func TestDaemonDies(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho started\nwhile [ ! -e go ]; do sleep 0.01; done\necho finished\n")
	if err := WriteSpec(j.dir, j.spec); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "stepd.pid")
	daemon := exec.Command(os.Args[0], j.dir, pidFile)
	daemon.Env = append(supervisorEnv()[:len(supervisorEnv())-1], roleEnv+"=daemon")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "started\n")
	if err := daemon.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	daemon.Wait()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadIdentity(j.dir)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := strconv.Atoi(string(b)); rec.PID != want || !Alive(rec) {
		t.Fatalf("after the daemon's death: supervisor record %+v, alive %v; want pid %d alive", rec, Alive(rec), want)
	}
	if err := os.WriteFile(filepath.Join(j.work, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var st Status
	j.waitFor("the status file", func() bool {
		st, err = ReadStatus(j.dir)
		return err == nil
	})
	if st.State != slurm.Completed || j.out() != "started\nfinished\n" {
		t.Errorf("state %s, output %q; want COMPLETED, started and finished", st.State, j.out())
	}
	j.waitFor("the supervisor to exit", func() bool { return !Alive(rec) })
}

// TestOneSupervisorPerJob: a second supervisor for a job refuses to run
// it, while the first runs and after the job has a status.
func TestOneSupervisorPerJob(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho started >> log\nexec sleep 30\n").start()
	j.waitOutput("log", "started\n")
	second, err := Launch([]string{os.Args[0]}, supervisorEnv(), j.dir)
	if err != nil {
		t.Fatal(err)
	}
	if ps, _ := second.Wait(); ps.ExitCode() != 1 || !strings.Contains(j.log(), "another supervisor holds") {
		t.Errorf("second supervisor exited %d; log:\n%s", ps.ExitCode(), j.log())
	}
	if _, err := Call(j.dir, Request{Op: OpCancel, Kill: true}); err != nil {
		t.Fatal(err)
	}
	j.wait()
	third, err := Launch([]string{os.Args[0]}, supervisorEnv(), j.dir)
	if err != nil {
		t.Fatal(err)
	}
	if ps, _ := third.Wait(); ps.ExitCode() != 0 || j.read("log") != "started\n" {
		t.Errorf("a supervisor for a finished job exited %d and the job's log is %q; want 0 and one run", ps.ExitCode(), j.read("log"))
	}
}

// TestCgroup: in cgroup mode the job runs in its own cgroup, which is
// gone after the job.
func TestCgroup(t *testing.T) {
	if ok, why := cgroupAvailable(); !ok {
		t.Skip("no writable cgroup v2: " + why)
	}
	t.Parallel()
	j := newJob(t, "#!/bin/sh\ngrep '^0::' /proc/self/cgroup\n").start()
	st := j.wait()
	rec, err := ReadIdentity(j.dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Tracking != TrackCgroup || rec.Cgroup == "" || !strings.HasSuffix(strings.TrimSpace(j.out()), fmt.Sprintf("/job_%d_%d", j.spec.JobID, rec.PID)) {
		t.Fatalf("tracking %s, cgroup %q, the job saw %q", st.Tracking, rec.Cgroup, j.out())
	}
	if _, err := os.Stat(rec.Cgroup); !os.IsNotExist(err) {
		t.Errorf("cgroup %s still there after the job: %v", rec.Cgroup, err)
	}
}

// TestForkIntoNoCgroup: where the launcher cannot be started inside the
// job's cgroup (here a directory that is no cgroup, which clone3
// refuses), it is started outside and moved in by cgroup.procs, as
// before clone3 (here a plain file, so the write lands).
func TestForkIntoNoCgroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tr := &tracker{self: os.Getpid(), cgroup: dir}
	pid, err := tr.forkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{}})
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("wait: %v, status %v", err, ws)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err != nil || string(b) != strconv.Itoa(pid) {
		t.Errorf("cgroup.procs holds %q (%v), want the launcher's pid %d", b, err, pid)
	}
}

// TestOutOfMemory: a job over its memory limit is OUT_OF_MEMORY with
// Slurm's line, where the memory controller is available.
func TestOutOfMemory(t *testing.T) {
	if ok, why := cgroupAvailable(); !ok {
		t.Skip("no writable cgroup v2: " + why)
	}
	mnt, _ := cgroup2Mount()
	own, _ := ownCgroup()
	if b, _ := os.ReadFile(filepath.Join(mnt, own, "cgroup.controllers")); !strings.Contains(string(b), "memory") {
		t.Skipf("no memory controller in cgroup %s (controllers: %q)", filepath.Join(mnt, own), strings.TrimSpace(string(b)))
	}
	t.Parallel()
	// tail keeps a line in memory until its end, and /dev/zero has none.
	j := newJob(t, "#!/bin/sh\nhead -c 200000000 /dev/zero | tail -n 1 >/dev/null\necho survived\n")
	j.spec.MemLimit = 32 << 20
	zero := int64(0)
	j.spec.Cgroup.SwapMax = &zero
	j.start()
	st := j.wait()
	if st.MemLimitUnenforced {
		t.Skipf("the job's cgroup has no memory controller here: %q", st.Warnings)
	}
	if st.State != slurm.OutOfMemory || st.ExitCode != "0:125" || st.OOMKills < 1 {
		t.Errorf("state %s %s, %d OOM kills; want OUT_OF_MEMORY 0:125\nlog:\n%s", st.State, st.ExitCode, st.OOMKills, j.log())
	}
	if !strings.Contains(j.out(), fmt.Sprintf("error: Detected %d oom-kill event(s) in StepId=%d.batch.", st.OOMKills, j.spec.JobID)) {
		t.Errorf("no OOM line in the output:\n%s", j.out())
	}
}
