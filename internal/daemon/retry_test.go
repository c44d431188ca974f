package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/daemontest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A job whose supervisor cannot be started (the machine's fault: here its
// binary is gone) is requeued held, "launch failed requeued held", as
// slurmctld does when slurmd cannot launch a batch job, not failed and not
// looped; released, it is tried again, and past max_batch_requeue such
// requeues it fails (JobLaunchFailure, 0:53). A real daemon, real requests.
// retryDaemon starts a real slurmd-lite (daemontest) run as argv0, whose
// supervisors therefore start from argv0, with max_batch_requeue = 1;
// gone, when set, is removed once the daemon listens (argv0 then names a
// binary that is no longer there). It submits a job with sbatch and
// returns the daemon and the job's id; the daemon stops when the test
// ends.
func retryDaemon(t *testing.T, dir, argv0, gone string) (*daemontest.Daemon, uint32) {
	t.Helper()
	d := daemontest.Start(t, daemontest.Options{Dir: dir, Argv0: argv0, Config: `
[SchedulerParameters]
max_batch_requeue = 1
`})
	if gone != "" {
		if err := os.Remove(gone); err != nil {
			t.Fatal(err)
		}
	}
	out := d.Must("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
	id, err := strconv.ParseUint(out, 10, 32)
	if err != nil {
		t.Fatalf("sbatch --parsable printed %q", out)
	}
	return d, uint32(id)
}

func TestASupervisorThatCannotStartIsRequeuedHeld(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	// No supervisor can start from a binary that is not there: the
	// daemon runs as a copy of itself that is removed once it listens.
	dir := t.TempDir()
	exe := filepath.Join(dir, "gone", "slurmd-lite")
	copyFile(t, daemontest.Bin(t, "slurmd-lite"), exe)
	d, id := retryDaemon(t, dir, exe, exe)
	c := d.Client
	job := func() api.Job { return d.Job(id) }

	var j api.Job
	waitUntil(t, 20*time.Second, "the job requeued held after its failed launch", func() bool {
		j = job()
		return j.State == slurm.Pending && j.Hold == store.HoldLaunchFailed
	})
	if j.Reason != slurm.ReasonJobHeldUser || j.StateDesc != "launch failed requeued held" || j.Priority != 0 || j.Restarts != 1 {
		t.Errorf("held job: reason %q, state desc %q, priority %d, restarts %d; want JobHeldUser, %q, 0, 1",
			j.Reason, j.StateDesc, j.Priority, j.Restarts, "launch failed requeued held")
	}
	var recs []store.Record
	if err := c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d&dups=1&allusers=1", api.PathAccounting, id), nil, &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[0].Job.State != slurm.Requeued || len(recs[0].Job.Notes) == 0 ||
		!strings.HasPrefix(recs[0].Job.Notes[0], "launch failed requeued held: starting the job's supervisor: ") {
		t.Errorf("the failed launch's run in accounting: %+v; want REQUEUED with the note that says why", recs)
	}
	// Its owner (root here) releases it once the cause is fixed; it is
	// not, and max_batch_requeue (1) is reached: the job fails.
	d.Must("scontrol", "release", fmt.Sprint(id))
	waitUntil(t, 20*time.Second, "the job failed after its second failed launch", func() bool {
		j = job()
		return j.State == slurm.Failed
	})
	if j.ExitCode.String() != "0:53" || j.Reason != slurm.ReasonJobLaunchFailure || j.Restarts != 1 {
		t.Errorf("failed job: exit %s, reason %q, restarts %d; want 0:53, JobLaunchFailure, 1", j.ExitCode, j.Reason, j.Restarts)
	}
}

// A job whose supervisor starts and dies at once, leaving no status, is
// lost (NODE_FAIL) and requeued, as after a node failure; past
// max_batch_requeue such requeues it is held, JobHoldMaxRequeue, instead
// of being lost and requeued again many times a second.
func TestAJobLostAgainAndAgainIsHeld(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	dir := t.TempDir()
	sup := filepath.Join(dir, "dies-at-once")
	if err := os.WriteFile(sup, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, id := retryDaemon(t, dir, sup, "")
	c := d.Client
	var j api.Job
	waitUntil(t, 60*time.Second, "the job held after it was lost twice", func() bool {
		j = d.Job(id)
		return j.State == slurm.Pending && j.Hold == store.HoldMaxRequeue
	})
	var acct []store.Record
	if err := c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d&allusers=1", api.PathAccounting, id), nil, &acct); err != nil || len(acct) != 1 || acct[0].Job.Reason != slurm.ReasonJobHoldMaxRequeue {
		t.Errorf("accounting's record of the held job: %+v (%v), want its reason JobHoldMaxRequeue", acct, err)
	}
	if j.Reason != slurm.ReasonJobHoldMaxRequeue || j.Priority != 0 || j.Restarts != 2 {
		t.Errorf("held job: reason %q, priority %d, restarts %d; want JobHoldMaxRequeue, 0, 2", j.Reason, j.Priority, j.Restarts)
	}
	var recs []store.Record
	if err := c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d&dups=1&allusers=1", api.PathAccounting, id), nil, &recs); err != nil {
		t.Fatal(err)
	}
	var states []slurm.JobState
	for _, r := range recs {
		states = append(states, r.Job.State)
	}
	if want := []slurm.JobState{slurm.NodeFail, slurm.NodeFail, slurm.Pending}; fmt.Sprint(states) != fmt.Sprint(want) {
		t.Errorf("runs in accounting: %v, want %v", states, want)
	}
}

// copyFile copies the binary from to to (made executable).
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
