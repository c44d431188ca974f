package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/daemontest"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A job that ends while the state disk is full keeps its end: its
// supervisor holds the status it cannot write, the daemon answers squeue
// and refuses submissions saying why, and once there is room the job is
// recorded as it ended (its real exit code), once: not lost, not requeued,
// not run a second time. A real daemon, a real job, a real full tmpfs.
func TestAJobEndingOnAFullStateDiskKeepsItsEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a daemon and a real job")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { unmount(t, disk) })
	d := daemontest.Start(t, daemontest.Options{Dir: dir, State: filepath.Join(disk, "state")})
	c := d.Client
	submit := func(script string) (uint32, error) {
		req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\n" + script + "\n"),
			Command: jobscript.CommandLine{Script: "job.sh"}, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		req.Output = "/dev/null"
		var out api.Submitted
		err = c.Do(context.Background(), "POST", api.PathJobs, api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: dir}, &out)
		return out.JobID, err
	}
	job := func(id uint32) api.Job {
		var jobs []api.Job
		if err := c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d", api.PathJobs, id), nil, &jobs); err != nil || len(jobs) == 0 {
			t.Fatalf("job %d: %v (%d rows)", id, err, len(jobs))
		}
		return jobs[0]
	}

	// The job is held with a file the test creates once the disk is full,
	// and writes down its shell's pid (off the full disk) to be waited on.
	started, release, pid := filepath.Join(dir, "started"), filepath.Join(dir, "release"), filepath.Join(dir, "pid")
	id, err := submit("echo $$ > " + pid + "; touch " + started + "; until [ -e " + release + " ]; do sleep 0.05; done; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	// Its script runs (RUNNING is committed before the supervisor starts).
	waitUntil(t, 20*time.Second, "the job's script running", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})

	ballast := filepath.Join(disk, "ballast")
	f, err := os.Create(ballast)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()

	// The job's script ends with the disk full: squeue still answers, the
	// job is not lost, and a submission is refused, saying why. Its shell
	// is gone once its supervisor has reaped it.
	b, err := os.ReadFile(pid)
	if err != nil {
		t.Fatal(err)
	}
	shell, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the job's pid file: %q", b)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "the job's script reaped", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", shell))
		return errors.Is(err, fs.ErrNotExist)
	})
	if j := job(id); j.State != slurm.Running {
		t.Fatalf("with the disk full the job is %s; its end cannot be recorded yet, so it stays RUNNING", j.State)
	}
	// scancel says why it has nothing to do: the job has ended (Slurm's
	// ESLURM_ALREADY_DONE, which scancel -v prints).
	var res api.Results
	if err := c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{fmt.Sprint(id)}}, &res); err != nil ||
		len(res.Results) != 1 || res.Results[0].Code != slurm.ErrAlreadyDone {
		t.Fatalf("scancel of a job whose end waits for room: %+v %v, want ESLURM_ALREADY_DONE", res, err)
	}
	_, err = submit("true")
	var le *api.Error
	if !errors.As(err, &le) || le.Status != 503 || !strings.Contains(le.Message, "the state disk is full") {
		t.Fatalf("a submission on a full disk: %v, want a 503 saying the disk is full", err)
	}

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 30*time.Second, "the job's end recorded", func() bool { return job(id).State.Finished() })
	j := job(id)
	if j.State != slurm.Failed || j.ExitCode.String() != "3:0" || j.Restarts != 0 {
		for _, f := range []string{"status.json", "stepd.log"} {
			b, _ := os.ReadFile(filepath.Join(disk, "state", "jobs", fmt.Sprint(id), "run-0", f))
			t.Logf("%s:\n%s", f, b)
		}
		t.Fatalf("recorded %s exit %s after %d restarts; it ended FAILED 3:0, once", j.State, j.ExitCode, j.Restarts)
	}
	var recs []store.Record
	if err := c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d&dups=1", api.PathAccounting, id), nil, &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d runs in accounting; the job ran once", len(recs))
	}
	id2, err := submit("true")
	if err != nil || id2 <= id {
		t.Fatalf("a submission once there is room: %d, %v", id2, err)
	}
	waitUntil(t, 30*time.Second, "the last job's end", func() bool { return job(id2).State.Finished() })
}

// unmount unmounts the test's tmpfs once nothing holds it: a job's
// supervisor may still be writing its status there a moment after the
// daemon stopped (seen under make test-stress). After 20 s it detaches it
// lazily, so that the temporary directory can go.
func unmount(t *testing.T, disk string) {
	t.Helper()
	var out []byte
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if out, err = exec.Command("umount", disk).CombinedOutput(); err == nil {
			return
		}
	}
	t.Logf("umount %s: %v: %s; detaching it lazily", disk, err, out)
	if out, err := exec.Command("umount", "-l", disk).CombinedOutput(); err != nil {
		t.Errorf("umount -l %s: %v: %s", disk, err, out)
	}
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
