package stepd

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestAlive(t *testing.T) {
	self, err := selfIdentity(1)
	if err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := procfs.ReadStat(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	dead := Identity{PID: sleeper.Process.Pid, BootID: self.BootID, StartTime: st.StartTime}
	sleeper.Process.Kill()
	sleeper.Wait()

	tests := []struct {
		name string
		rec  Identity
		want bool
	}{
		{"this process", self, true},
		{"a pid reused by a process that started at another time", Identity{PID: self.PID, BootID: self.BootID, StartTime: self.StartTime + 1}, false},
		{"a record from before a reboot", Identity{PID: self.PID, BootID: "00000000-0000-0000-0000-000000000000", StartTime: self.StartTime}, false},
		{"a process that has ended", dead, false},
		{"no pid", Identity{BootID: self.BootID}, false},
		{"no boot id", Identity{PID: self.PID, StartTime: self.StartTime}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Alive(tc.rec); got != tc.want {
				t.Errorf("Alive(%+v) = %v, want %v", tc.rec, got, tc.want)
			}
		})
	}
}

// TestAliveZombie: a supervisor that exited but was not reaped yet is not
// alive.
func TestAliveZombie(t *testing.T) {
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Wait()
	var st procfs.Stat
	for {
		if st, err = procfs.ReadStat(p.Pid); err != nil {
			t.Fatal(err)
		}
		if st.State == 'Z' {
			break
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 1e6}, nil)
	}
	boot, _ := bootID()
	if Alive(Identity{PID: p.Pid, BootID: boot, StartTime: st.StartTime}) {
		t.Error("a zombie is alive")
	}
}

// TestIdentityRecorded: a running supervisor's record names it, its job's
// pid and the tracking mode, and Alive holds until it ends.
func TestIdentityRecorded(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho started\nexec sleep 30\n").start()
	j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "started\n")
	rec, err := ReadIdentity(j.dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Call(j.dir, Request{Op: OpStatus})
	if err != nil {
		t.Fatal(err)
	}
	if rec.PID != j.proc.Pid || rec.JobPID != rep.Status.JobPID || rec.Tracking != rep.Status.Tracking || !Alive(rec) || !Supervised(j.dir) {
		t.Errorf("record %+v, status %+v, supervised %v; want the supervisor (pid %d) alive", rec, rep.Status, Supervised(j.dir), j.proc.Pid)
	}
	if _, err := Call(j.dir, Request{Op: OpCancel, Kill: true}); err != nil {
		t.Fatal(err)
	}
	j.wait()
	if Alive(rec) || Supervised(j.dir) {
		t.Errorf("alive %v, supervised %v after the supervisor exited", Alive(rec), Supervised(j.dir))
	}
}

func TestFinal(t *testing.T) {
	exited := func(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }
	signalled := func(sig syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(sig) }
	type result struct {
		State     slurm.JobState
		Exit      string
		Batch     slurm.JobState
		BatchExit string
	}
	tests := []struct {
		name string
		in   outcome
		want result
	}{
		{"exit 0 completes", outcome{wait: exited(0)}, result{slurm.Completed, "0:0", slurm.Completed, "0:0"}},
		{"exit 3 fails with 3:0", outcome{wait: exited(3)}, result{slurm.Failed, "3:0", slurm.Failed, "3:0"}},
		{"a segfault fails with 0:11", outcome{wait: signalled(syscall.SIGSEGV)}, result{slurm.Failed, "0:11", slurm.Failed, "0:11"}},
		{"the time limit: TIMEOUT with the script's status, the batch step CANCELLED 0:9 (scontrol_show_job_timeout_exit_tignore.txt)",
			outcome{wait: signalled(syscall.SIGKILL), ending: &Ending{Why: WhyTimeLimit}},
			result{slurm.Timeout, "0:9", slurm.Cancelled, "0:9"}},
		{"the time limit on a script that exits 143 on SIGTERM: the batch step FAILED (sacct_n_P_timeout_th143.txt)",
			outcome{wait: exited(143), ending: &Ending{Why: WhyTimeLimit}},
			result{slurm.Timeout, "143:0", slurm.Failed, "143:0"}},
		{"a cancel: CANCELLED with the batch step's 0:15 (scontrol_show_job_cancelled_exit_cwrap.txt)",
			outcome{wait: signalled(syscall.SIGTERM), ending: &Ending{}},
			result{slurm.Cancelled, "0:15", slurm.Cancelled, "0:15"}},
		{"a cancel of a script that exits 0 on SIGTERM: the batch step COMPLETED (slurmdbd's rule; golden/README.md, issue 24)",
			outcome{wait: exited(0), ending: &Ending{}},
			result{slurm.Cancelled, "0:0", slurm.Completed, "0:0"}},
		{"a requeue is a cancel to the supervisor", outcome{wait: exited(0), ending: &Ending{Why: WhyRequeue}},
			result{slurm.Cancelled, "0:0", slurm.Completed, "0:0"}},
		{"an OOM kill, even when the script exits 0", outcome{wait: exited(0), oomKills: 1},
			result{slurm.OutOfMemory, "0:125", slurm.OutOfMemory, "0:125"}},
		{"a cancel wins over an OOM kill", outcome{wait: signalled(syscall.SIGKILL), oomKills: 2, ending: &Ending{}},
			result{slurm.Cancelled, "0:9", slurm.Cancelled, "0:9"}},
		{"a launch failure (sacct_output_dir_missing.txt)", outcome{launchErr: os.ErrPermission},
			result{slurm.Failed, "0:53", slurm.Cancelled, "0:53"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state, exit, batch := final(tc.in)
			if diff := cmp.Diff(tc.want, result{state, exit, batch.State, batch.ExitCode}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCPUList(t *testing.T) {
	for in, want := range map[string]string{"0,1,2,3": "0-3", "8,0,1,2,3": "0-3,8", "5": "5", "1,3,5": "1,3,5", "2,2,3": "2-3"} {
		var cpus []int
		for _, f := range strings.Split(in, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			cpus = append(cpus, n)
		}
		if got := cpuList(cpus); got != want {
			t.Errorf("cpuList(%s) = %q, want %q", in, got, want)
		}
	}
}
