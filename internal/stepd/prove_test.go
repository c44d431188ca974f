package stepd

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// TestLeftCgroupNeedsProof: what a supervisor that died without a word
// left running is the daemon's to kill only when every check holds: the
// launch spec is the run the daemon means, the supervisor is dead, and
// every process in the cgroup is the job's user's and younger than the
// supervisor.
func TestLeftCgroupNeedsProof(t *testing.T) {
	if ok, why := cgroupAvailable(); !ok {
		t.Skip("no writable cgroup v2: " + why)
	}
	j := newJob(t, "#!/bin/sh\necho started\nexec sleep 300\n").start()
	j.waitOutput("slurm-"+strconv.Itoa(int(j.spec.JobID))+".out", "started\n")
	rec, err := ReadIdentity(j.dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Cgroup == "" {
		t.Skip("the job got no cgroup here")
	}
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(rec.Cgroup, "cgroup.kill"), []byte("1"), 0) })
	me := RunOwner{JobID: j.spec.JobID, Run: 0, UID: j.spec.User.UID}

	wantErr := func(why string, owner RunOwner, substr string) {
		t.Helper()
		cg, err := LeftCgroup(j.dir, owner)
		if err == nil || !strings.Contains(err.Error(), substr) {
			t.Errorf("%s: LeftCgroup = %q, %v; want an error containing %q", why, cg, err, substr)
		}
	}
	wantErr("supervisor alive", me, "is alive")

	// The supervisor dies without a word; its job runs on in the cgroup.
	if err := syscall.Kill(rec.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = j.proc.Wait()
	if len(procfs.CgroupProcs(rec.Cgroup)) == 0 {
		t.Fatalf("nothing left in %s after the supervisor's death", rec.Cgroup)
	}
	wantErr("another run", RunOwner{JobID: me.JobID, Run: 1, UID: me.UID}, "not job")
	wantErr("another user", RunOwner{JobID: me.JobID, Run: 0, UID: me.UID + 1}, "not job")
	wantErr("another job", RunOwner{JobID: me.JobID + 1, Run: 0, UID: me.UID}, "not job")

	// A record that names a cgroup this supervisor did not make.
	forged := rec
	forged.Cgroup = filepath.Join(filepath.Dir(rec.Cgroup), "job_1_1")
	withIdentity(t, j.dir, forged, func() { wantErr("forged cgroup", me, "is not the one") })

	// A process of another user inside the cgroup.
	if nobody, err := user.Lookup("nobody"); err == nil && os.Geteuid() == 0 {
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := procfs.JoinCgroup(rec.Cgroup, cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		wantErr("another user's process", me, "runs as uid")
		cmd.Process.Kill()
		cmd.Wait()
	}

	cg, err := LeftCgroup(j.dir, me)
	if err != nil || cg != rec.Cgroup {
		t.Fatalf("the run's own cgroup: LeftCgroup = %q, %v; want %q", cg, err, rec.Cgroup)
	}
}

// withIdentity runs fn with dir's stepd.json replaced by rec, then puts
// the original back.
func withIdentity(t *testing.T, dir string, rec Identity, fn func()) {
	t.Helper()
	path := filepath.Join(dir, IdentityFile)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeIdentity(dir, rec); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.WriteFile(path, orig, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}()
	fn()
}

// TestARequestForAnotherRunIsRefused: a supervisor takes a request that
// names a run (Request.Run) only when it is its own: a cancel meant for
// another job, another run or another user's job kills nothing.
func TestARequestForAnotherRunIsRefused(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho started\nexec sleep 300\n").start()
	j.waitOutput("slurm-"+strconv.Itoa(int(j.spec.JobID))+".out", "started\n")
	me := RunOwner{JobID: j.spec.JobID, Run: 0, UID: j.spec.User.UID}
	for _, other := range []RunOwner{
		{JobID: me.JobID + 1, Run: 0, UID: me.UID},
		{JobID: me.JobID, Run: 1, UID: me.UID},
		{JobID: me.JobID, Run: 0, UID: me.UID + 1},
	} {
		rep, err := Call(j.dir, Request{Op: OpCancel, Kill: true, Run: &other})
		if err == nil || !strings.Contains(rep.Error, "refused") {
			t.Errorf("a cancel for %+v: reply %+v, %v; want it refused", other, rep, err)
		}
	}
	rep, err := Call(j.dir, Request{Op: OpStatus, Run: &me})
	if err != nil || rep.Status == nil || rep.Status.State != "RUNNING" {
		t.Fatalf("after the refused cancels: %+v, %v; want the job RUNNING", rep, err)
	}
	if _, err := Call(j.dir, Request{Op: OpCancel, Kill: true, Run: &me}); err != nil {
		t.Fatal(err)
	}
	if st := j.wait(); st.State != "CANCELLED" {
		t.Fatalf("the job's own cancel left it %s", st.State)
	}
}

// TestASupervisorDeepInTheFileSystemAnswers: a run directory whose
// control socket's path is longer than a Unix socket address holds (a
// long StateSaveLocation) still gets a supervisor that answers; before,
// it failed to start and its job looped through lost and requeued.
func TestASupervisorDeepInTheFileSystemAnswers(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho started\nexec sleep 300\n")
	deep := filepath.Join(filepath.Dir(j.dir), strings.Repeat("d", 60), strings.Repeat("e", 60), "state")
	if err := os.MkdirAll(filepath.Dir(deep), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(j.dir, deep); err != nil {
		t.Fatal(err)
	}
	j.dir = deep
	j.spec.Script = filepath.Join(deep, "script")
	if n := len(filepath.Join(j.dir, SocketFile)); n <= maxSunPath {
		t.Fatalf("the socket's path is %d bytes: not deep enough to test", n)
	}
	j.start()
	j.waitOutput("slurm-"+strconv.Itoa(int(j.spec.JobID))+".out", "started\n")
	rep, err := Call(j.dir, Request{Op: OpStatus})
	if err != nil || rep.Status == nil || rep.Status.State != "RUNNING" {
		t.Fatalf("status of a deep supervisor: %+v, %v", rep, err)
	}
	if _, err := Call(j.dir, Request{Op: OpCancel, Kill: true}); err != nil {
		t.Fatal(err)
	}
	if st := j.wait(); st.State != "CANCELLED" {
		t.Fatalf("state %s after the cancel", st.State)
	}
	if _, err := os.Lstat(filepath.Join(j.dir, SocketFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the control socket is left behind: %v", err)
	}
}
