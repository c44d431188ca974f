package stepd

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// newAdoptJob makes an interactive job whose caller is a shell running
// command (a stand-in for srun or salloc), started here.
func newAdoptJob(t *testing.T, command string) (*testJob, *exec.Cmd) {
	t.Helper()
	j := newJob(t, "")
	j.spec.Script, j.spec.Adopt = "", true
	caller := exec.Command("sh", "-c", command)
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = caller.Process.Kill()
		_ = caller.Wait()
	})
	return j, caller
}

// descendantOf waits for a live child of pid and returns it.
func descendantOf(j *testJob, pid int) int {
	var child int
	j.waitFor("the caller's child", func() bool {
		if d := procfs.Descendants(pid); len(d) > 0 {
			child = d[0]
			return true
		}
		return false
	})
	return child
}

func TestAdoptFinishKillsWhatTheCommandLeft(t *testing.T) {
	for _, noCgroup := range []bool{false, true} {
		t.Run(map[bool]string{false: "cgroup where there is one", true: "process groups"}[noCgroup], func(t *testing.T) {
			t.Parallel()
			testAdoptFinish(t, noCgroup)
		})
	}
}

func testAdoptFinish(t *testing.T, noCgroup bool) {
	j, caller := newAdoptJob(t, "sleep 30 & exec sleep 60")
	pid := caller.Process.Pid
	j.spec.Caller, j.spec.Cgroup.Disable = pid, noCgroup
	j.start()
	child := descendantOf(j, pid)
	j.waitFor("stepd.json", func() bool { _, err := ReadIdentity(j.dir); return err == nil })
	rec, _ := ReadIdentity(j.dir)
	if rec.JobPID != pid || !Alive(rec) {
		t.Errorf("identity %+v: want the supervisor alive and JobPID %d", rec, pid)
	}
	rep, err := Call(j.dir, Request{Op: OpAdopt, PID: pid})
	if err != nil || rep.Adopted == "" {
		t.Fatalf("adopt: %+v, %v", rep, err)
	}
	// The command (here, the caller's child) ends with 3; the caller
	// says so and goes on living until it exits.
	rep, err = Call(j.dir, Request{Op: OpFinish, PID: pid, Exit: "3:0"})
	if err != nil || rep.Status == nil {
		t.Fatalf("finish: %+v, %v", rep, err)
	}
	if got := rep.Status; got.State != slurm.Failed || got.ExitCode != "3:0" {
		t.Errorf("finish's status: %s %s, want FAILED 3:0", got.State, got.ExitCode)
	}
	if st, err := ReadStatus(j.dir); err != nil || st.State != slurm.Failed {
		t.Errorf("status.json when finish answered: %+v, %v", st, err)
	}
	if procfs.Alive(child) {
		t.Errorf("what the command left still runs\n%s", j.log())
	}
	if !procfs.Alive(pid) {
		t.Error("the caller was killed: it exits by itself")
	}
	_ = caller.Process.Kill()
	_ = caller.Wait()
	j.wait()
}

func TestAdoptCallerThatDiesEndsTheJob(t *testing.T) {
	t.Parallel()
	j, caller := newAdoptJob(t, "sleep 30 & wait")
	pid := caller.Process.Pid
	j.start() // the caller is named after the start, as by a restarted daemon
	child := descendantOf(j, pid)
	j.waitFor("the socket", func() bool { _, err := Call(j.dir, Request{Op: OpStatus}); return err == nil })
	if _, err := Call(j.dir, Request{Op: OpAdopt, PID: pid}); err != nil {
		t.Fatal(err)
	}
	_ = caller.Process.Signal(syscall.SIGKILL)
	_ = caller.Wait()
	st := j.wait()
	// The caller said nothing of its end: the job's exit code is that of
	// a killed caller, as for a batch script (final).
	if st.State != slurm.Cancelled || st.ExitCode != "0:9" || st.Ending == nil || st.Ending.By != nil {
		t.Errorf("status %s %s ending %+v, want CANCELLED 0:9 by no one", st.State, st.ExitCode, st.Ending)
	}
	j.waitFor("the caller's child killed", func() bool { return !procfs.Alive(child) })
}

func TestAdoptTimeLimit(t *testing.T) {
	t.Parallel()
	j, caller := newAdoptJob(t, `trap "exit 5" TERM; sleep 30 & wait`)
	pid := caller.Process.Pid
	j.spec.Caller, j.spec.TimeLimit = pid, 500*time.Millisecond
	j.start()
	// The caller gets SIGTERM, exits 5 without a word: TIMEOUT.
	_ = caller.Wait()
	st := j.wait()
	if st.State != slurm.Timeout || st.ExitCode != "0:9" {
		t.Errorf("status %s %s, want TIMEOUT 0:9\n%s", st.State, st.ExitCode, j.log())
	}
}

func TestAdoptCancelThenFinish(t *testing.T) {
	t.Parallel()
	j, caller := newAdoptJob(t, `trap "" TERM; sleep 30 & exec sleep 60`)
	pid := caller.Process.Pid
	j.spec.Caller = pid
	j.start()
	j.waitFor("the socket", func() bool { _, err := Call(j.dir, Request{Op: OpStatus}); return err == nil })
	by := uint32(7)
	if _, err := Call(j.dir, Request{Op: OpCancel, By: &by, Grace: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	rep, err := Call(j.dir, Request{Op: OpFinish, PID: pid, Exit: "0:15"})
	if err != nil || rep.Status == nil {
		t.Fatalf("finish: %+v, %v", rep, err)
	}
	if st := rep.Status; st.State != slurm.Cancelled || st.Ending == nil || st.Ending.By == nil || *st.Ending.By != 7 {
		t.Errorf("status %s ending %+v, want CANCELLED by 7", st.State, st.Ending)
	}
	_ = caller.Process.Kill()
	_ = caller.Wait()
	j.wait()
}

func TestAdoptRefusedByABatchJob(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\nexec sleep 30\n").start()
	j.waitFor("the socket", func() bool { _, err := Call(j.dir, Request{Op: OpStatus}); return err == nil })
	if _, err := Call(j.dir, Request{Op: OpAdopt, PID: j.proc.Pid}); err == nil {
		t.Error("a batch job adopted a process")
	}
	if _, err := Call(j.dir, Request{Op: OpFinish, Exit: "0:0"}); err == nil {
		t.Error("a batch job was finished")
	}
	_ = callQuiet(j.dir, Request{Op: OpCancel, Kill: true})
	j.wait()
}
