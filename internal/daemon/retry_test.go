package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A job whose supervisor cannot be started (the machine's fault: here its
// binary is gone) is requeued held, "launch failed requeued held", as
// slurmctld does when slurmd cannot launch a batch job, not failed and not
// looped; released, it is tried again, and past max_batch_requeue such
// requeues it fails (JobLaunchFailure, 0:53). A real daemon, real requests.
// retryDaemon starts a daemon whose supervisors start from exe, with
// max_batch_requeue = 1, submits a job, and returns a client and the job's
// id; the daemon stops when the test ends.
func retryDaemon(t *testing.T, exe func(dir string) string) (*sockclient.Client, uint32) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf.toml")
	sock := filepath.Join(dir, "d.sock")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q
KillWait          = 1

[SchedulerParameters]
max_batch_requeue = 1

[Node]
NodeName   = "gpu01"
CPUs       = 2
RealMemory = "2G"
GPUs       = "none"
`, sock, filepath.Join(dir, "state"))), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{ConfigPath: conf, Exe: exe(dir), Log: logs}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("daemon: %v", err)
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	var c *sockclient.Client
	waitUntil(t, 20*time.Second, "the daemon's socket", func() bool {
		c = sockclient.New(sock)
		return c.Reach(context.Background()) == nil
	})
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\ntrue\n"),
		Command: jobscript.CommandLine{Script: "job.sh"}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	req.Output = "/dev/null"
	var sub api.Submitted
	if err := c.Do(context.Background(), "POST", api.PathJobs, api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: dir}, &sub); err != nil {
		t.Fatal(err)
	}
	return c, sub.JobID
}

// retryJob is job id as the daemon shows it.
func retryJob(t *testing.T, c *sockclient.Client, id uint32) api.Job {
	t.Helper()
	var jobs []api.Job
	if err := c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d", api.PathJobs, id), nil, &jobs); err != nil || len(jobs) == 0 {
		t.Fatalf("job %d: %v (%d rows)", id, err, len(jobs))
	}
	return jobs[0]
}

func TestASupervisorThatCannotStartIsRequeuedHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	// No supervisor can start from a binary that is not there.
	c, id := retryDaemon(t, func(dir string) string { return filepath.Join(dir, "gone", "slurmd-lite") })
	job := func() api.Job { return retryJob(t, c, id) }

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
	var res api.Results
	if err := c.Do(context.Background(), "POST", api.PathControl, api.Control{Action: api.ActionRelease, Jobs: []string{fmt.Sprint(id)}}, &res); err != nil {
		t.Fatal(err)
	}
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
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	c, id := retryDaemon(t, func(dir string) string {
		sup := filepath.Join(dir, "dies-at-once")
		if err := os.WriteFile(sup, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return sup
	})
	var j api.Job
	waitUntil(t, 60*time.Second, "the job held after it was lost twice", func() bool {
		j = retryJob(t, c, id)
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
