package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/scancel"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// raceDaemon is a daemon without its loop, serving its routes on a socket
// of its own, whose jobs the test puts in the store and in their run
// directories as it likes: a job RUNNING in the store whose supervisor has
// written its status and gone is the moment between a job's end and the
// loop recording it, held for as long as the test needs.
func raceDaemon(t *testing.T) (d *Daemon, conf string) {
	t.Helper()
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	d = drainDaemon(t, state)
	d.jobsDir = filepath.Join(state, "jobs")
	sock := filepath.Join(dir, "d.sock")
	conf = filepath.Join(dir, "conf.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("SocketPath = %q\nStateSaveLocation = %q\n", sock, state)), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := localapi.Listen(sock, localapi.AccessFor(os.Geteuid()))
	if err != nil {
		t.Fatal(err)
	}
	srv := &localapi.Server{Routes: d.routes()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ln.Close()
	})
	return d, conf
}

// runningJob puts a RUNNING batch job of the test's user in the store and
// makes its run directory, with status (as its supervisor writes it at
// the end) if not nil; no supervisor runs for it.
func runningJob(t *testing.T, d *Daemon, status *stepd.Status) uint32 {
	t.Helper()
	ctx := context.Background()
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\ntrue\n"), Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	uid := uint32(os.Getuid())
	ids, err := d.st.Submit(ctx, []store.NewJob{{Job: store.Job{User: "me", UID: uid, GID: uint32(os.Getgid()), Account: "lab",
		Partition: "gpu", Name: "race", Request: *req, Requeue: true, State: slurm.Running, Start: time.Now().Add(-time.Minute)},
		Script: "#!/bin/sh\ntrue\n"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := d.runDir(ids[0], 0)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if status != nil {
		status.JobID = ids[0]
		b, err := json.Marshal(status)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, stepd.StatusFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ids[0]
}

// command runs a Slurm command of ours against the daemon, in process.
func command(t *testing.T, conf string, main func([]string, cmdio.IO) int, args ...string) (stderr string, code int) {
	t.Helper()
	t.Setenv("SLURM_LITE_CONF", conf)
	var out, errb bytes.Buffer
	env := map[string]string{"SLURM_LITE_CONF": conf}
	code = main(args, cmdio.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Now: time.Now, ReadFile: os.ReadFile})
	return errb.String(), code
}

// A yield, a requeue, a cancel or a signal that reaches a job just after it
// ended (its supervisor gone, its end not recorded yet) is answered in the
// user's terms: Slurm's words, then our line with the job's end and what
// follows; never the supervisor socket's path and errno (issue 23 item 6).
// A job whose supervisor died without a word is said to be lost.
func TestARequestThatRacesTheJobsEndIsToldInTheUsersTerms(t *testing.T) {
	d, conf := raceDaemon(t)
	ended := runningJob(t, d, &stepd.Status{State: slurm.Completed, ExitCode: "0:0", Start: time.Now().Add(-time.Minute), End: time.Now()})
	lost := runningJob(t, d, nil)
	id := func(n uint32) string { return fmt.Sprint(n) }
	for _, tc := range []struct {
		name string
		main func([]string, cmdio.IO) int
		args []string
		want string
		code int
	}{
		{"a yield", scontrol.Main, []string{"yield", id(ended)},
			"scontrol: error: Job/step already completing or completed\n" +
				"slurm-lite: job 1 ended while the yield was being sent (COMPLETED 0:0); nothing to yield\n", 1},
		{"a requeue", scontrol.Main, []string{"requeue", id(ended)},
			"Job can not be altered now, try again later for job 1\n" +
				"slurm-lite: job 1 ended while the requeue was being sent (COMPLETED 0:0); once its end is recorded, scontrol requeue 1 requeues it as an ended job\n", 1},
		{"a cancel: Slurm's ALREADY_DONE, said with -v only, and success", scancel.Main, []string{"-v", id(ended)},
			"scancel: Terminating job 1\n" +
				"scancel: error: Kill job error on job id 1: Job/step already completing or completed\n" +
				"slurm-lite: job 1 ended while the cancel was being sent (COMPLETED 0:0); nothing to cancel\n", 0},
		{"a cancel without -v says nothing", scancel.Main, []string{id(ended)}, "", 0},
		{"a signal", scancel.Main, []string{"-v", "--signal=USR1", id(ended)},
			"scancel: Signal 10 to job 1\n" +
				"scancel: error: Kill job error on job id 1: Job/step already completing or completed\n" +
				"slurm-lite: job 1 ended while the signal was being sent (COMPLETED 0:0); nothing to signal\n", int(slurm.ErrAlreadyDone & 0xff)},
		{"a yield of a job whose supervisor died without a word", scontrol.Main, []string{"yield", id(lost)},
			"scontrol: error: Job/step already completing or completed\n" +
				"slurm-lite: job 2's supervisor exited without recording how the job ended, while the yield was being sent: the job is lost, recorded as NODE_FAIL (and requeued if it may be); nothing to yield\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := command(t, conf, tc.main, tc.args...)
			if stderr != tc.want || code != tc.code {
				t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", tc.args, code, stderr, tc.code, tc.want)
			}
			if strings.Contains(stderr, stepd.SocketFile) {
				t.Errorf("the supervisor's socket reached the user: %s", stderr)
			}
		})
	}
	// Nothing was changed by any of them: the loop will record the end.
	for _, n := range []uint32{ended, lost} {
		j, err := d.st.Job(context.Background(), n)
		if err != nil || j.State != slurm.Running || j.Restarts != 0 {
			t.Errorf("job %d after the requests: %s, %d restarts, %v; want RUNNING as it was, for the loop to record", n, j.State, j.Restarts, err)
		}
	}
}

// A supervisor that is there but does not answer leaves the job as it was:
// try again. (Live, this takes the call's 10 s timeout; the sentence is
// checked here.)
func TestAMuteSupervisorIsToldAsTryAgain(t *testing.T) {
	u := &unreached{job: 7, err: fmt.Errorf("job supervisor at /x/stepd.sock: reading reply: i/o timeout")}
	if got, want := u.tell("yield", "nothing to yield"), "job 7's supervisor is running but did not answer the yield; nothing was changed: try again in a moment (the daemon's log has what the supervisor said)"; got != want {
		t.Errorf("tell:\n got %q\nwant %q", got, want)
	}
	if u.code() != slurm.ErrTransitionStateNoUpdate {
		t.Errorf("code %v, want ESLURM_TRANSITION_STATE_NO_UPDATE", u.code())
	}
	if !strings.Contains(u.Error(), "i/o timeout") {
		t.Errorf("the log's error lost the socket's words: %s", u.Error())
	}
}
