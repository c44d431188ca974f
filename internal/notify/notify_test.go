package notify

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func job(mail ...string) *jobrec.Job {
	j := &jobrec.Job{ID: 12, ArrayTaskID: jobrec.NoTask, Name: "train", User: "alice", UID: 1001, GID: 1001,
		Account: "lab", Partition: "gpu", State: slurm.Completed, Submit: t0, Start: t0.Add(5 * time.Second),
		End: t0.Add(65 * time.Second), SubmitDir: "/home/alice"}
	j.Request.MailType = mail
	j.Alloc.Node = "gpu01"
	j.Alloc.GPUs = []jobrec.GPUAlloc{{Index: 1, UUID: "GPU-1"}}
	return j
}

func TestSubject(t *testing.T) {
	failed := job()
	failed.State, failed.ExitCode = slurm.Failed, jobrec.ExitCode{Status: 3}
	cancelled := job()
	cancelled.State, cancelled.ExitCode = slurm.Cancelled, jobrec.ExitCode{Signal: 15}
	timeout := job()
	timeout.State, timeout.ExitCode = slurm.Timeout, jobrec.ExitCode{Signal: 15}
	long := job()
	long.End = long.Start.Add(26*time.Hour + 3*time.Minute + 4*time.Second)
	task := job()
	task.ID, task.ArrayJobID, task.ArrayTaskID = 14, 12, 2
	for _, tc := range []struct {
		name string
		j    *jobrec.Job
		kind string
		want string
	}{
		{"a start says how long the job waited", job(), Begin, "Slurm Job_id=12 Name=train Began, Queued time 00:00:05"},
		{"a completed job", job(), End, "Slurm Job_id=12 Name=train Ended, Run time 00:01:00, COMPLETED, ExitCode 0"},
		{"a failed job", failed, Fail, "Slurm Job_id=12 Name=train Failed, Run time 00:01:00, FAILED, ExitCode 3"},
		{"a signal leaves the exit code out", cancelled, End, "Slurm Job_id=12 Name=train Ended, Run time 00:01:00, CANCELLED"},
		{"a time limit is a failure", timeout, Fail, "Slurm Job_id=12 Name=train Failed, Run time 00:01:00, TIMEOUT"},
		{"days in the run time", long, End, "Slurm Job_id=12 Name=train Ended, Run time 1-02:03:04, COMPLETED, ExitCode 0"},
		{"a requeue has no state", job(), Requeue, "Slurm Job_id=12 Name=train Requeued, Run time 00:01:00"},
		{"90% of the time limit counts to now", job(), TimeLimit90, "Slurm Job_id=12 Name=train Reached 90% of time limit, Run time 00:00:55"},
		{"an array task", task, Begin, "Slurm Array Task Job_id=12_2 (14) Name=train Began, Queued time 00:00:05"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Subject(tc.j, tc.kind, t0.Add(time.Minute)); got != tc.want {
				t.Errorf("Subject:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestEndKind(t *testing.T) {
	for s, want := range map[slurm.JobState]string{slurm.Completed: End, slurm.Cancelled: End, slurm.Failed: Fail,
		slurm.Timeout: Fail, slurm.OutOfMemory: Fail, slurm.NodeFail: Fail, slurm.Preempted: Fail} {
		if got := EndKind(s); got != want {
			t.Errorf("EndKind(%s) = %s, want %s", s, got, want)
		}
	}
}

// A fake MailProg records its arguments and environment; only the kinds
// the job asked for are mailed, to --mail-user or the owner.
func TestMailProg(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "mail.log")
	prog := filepath.Join(dir, "mail")
	script := "#!/bin/sh\nprintf '%s|%s|%s|%s|%s\\n' \"$1\" \"$2\" \"$3\" \"$SLURM_JOB_MAIL_TYPE\" \"$SLURM_JOB_RUN_TIME$SLURM_JOB_QUEUED_TIME\" >> " + out + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	n := Start(Options{MailProg: prog, Cluster: "lab"})
	j := job("BEGIN", "END")
	j.Request.MailUser = "bob@example.org"
	n.Send(Event{Kind: Begin, Job: j, Time: t0})
	n.Send(Event{Kind: Requeue, Job: j, Time: t0}) // not asked for
	n.Send(Event{Kind: End, Job: j, Time: t0})
	n.Close(10 * time.Second)
	got, _ := os.ReadFile(out)
	want := "-s|Slurm Job_id=12 Name=train Began, Queued time 00:00:05|bob@example.org|Began|00:00:05\n" +
		"-s|Slurm Job_id=12 Name=train Ended, Run time 00:01:00, COMPLETED, ExitCode 0|bob@example.org|Ended|00:01:00\n"
	if string(got) != want {
		t.Errorf("mail log:\n%s\nwant:\n%s", got, want)
	}
}

// Close(0) stops at once (issue 23 item 6): the webhook request under way
// against a hook that never answers is cancelled, the queued events are
// dropped, and Close says how many were not delivered. The mail program
// under way, which hangs too, is killed.
func TestCloseStopsAtOnceAndCountsWhatItDrops(t *testing.T) {
	arrived := make(chan struct{}, 10)
	gone := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // read whole, so that the server notices the client leave
		arrived <- struct{}{}
		<-r.Context().Done() // never answers; only the client's giving up ends it
		gone <- struct{}{}
	}))
	defer srv.Close()
	dir := t.TempDir()
	// The mail program says it started through a FIFO: the test's read
	// returns when it has written, with no polling.
	started := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "hangmail")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho started > "+started+"\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mailStarted := make(chan error, 1)
	go func() { _, err := os.ReadFile(started); mailStarted <- err }()
	n := Start(Options{MailProg: prog, Hooks: []Hook{{URL: srv.URL, Events: []string{All}}}, Timeout: time.Hour})
	n.Send(Event{Kind: End, Job: job("END")}) // mailed, and posted
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook got no request")
	}
	select {
	case err := <-mailStarted:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("MailProg did not start")
	}
	// Queued behind the two under way: two more for the hook, one mail.
	n.Send(Event{Kind: Begin, Job: job()})
	n.Send(Event{Kind: End, Job: job("END")})
	// 2 under way (the post, the mail) + 2 queued posts + 1 queued mail.
	if got := n.Close(0); got != 5 {
		t.Errorf("Close dropped %d, want 5", got)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Error("the webhook request under way was not cancelled")
	}
	n.Send(Event{Kind: End, Job: job("END")}) // after Close: nothing, no panic
}

// The configuration checks [[Notify]] Events against its own list (it
// cannot import this package): the two must agree.
func TestConfigKnowsEveryKind(t *testing.T) {
	if !slices.Equal(config.NotifyEvents, Kinds) {
		t.Errorf("config.NotifyEvents %v\n       notify.Kinds %v", config.NotifyEvents, Kinds)
	}
}

func TestArraySubject(t *testing.T) {
	arr := job()
	arr.ID, arr.ArrayJobID, arr.ArrayTaskID, arr.Name = 20, 20, 3, "sweep"
	for _, tc := range []struct {
		name string
		kind string
		a    Array
		want string
	}{
		{"the first task's start", Begin, Array{}, "Slurm Array Summary Job_id=20_* (20) Name=sweep Began"},
		{"every task exited 0", End, Array{0, 0}, "Slurm Array Summary Job_id=20_* (20) Name=sweep Ended, COMPLETED, ExitCode [0-0]"},
		{"some failed", Fail, Array{0, 3 << 8}, "Slurm Array Summary Job_id=20_* (20) Name=sweep Failed, Mixed, ExitCode [0-3]"},
		{"all failed alike", Fail, Array{2 << 8, 2 << 8}, "Slurm Array Summary Job_id=20_* (20) Name=sweep Failed, COMPLETED, ExitCode [2-2]"},
		{"a signal is the largest", End, Array{0, 9}, "Slurm Array Summary Job_id=20_* (20) Name=sweep Ended, Mixed, MaxSignal [9]"},
		{"a signal and an exit code", Fail, Array{15, 1 << 8}, "Slurm Array Summary Job_id=20_* (20) Name=sweep Failed, Mixed, MaxExitCode [1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ArraySubject(arr, tc.kind, tc.a); got != tc.want {
				t.Errorf("ArraySubject:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// An array task mails on its own only with ARRAY_TASKS; the summary only
// without.
func TestArrayMailChoice(t *testing.T) {
	task := job("END")
	task.ArrayJobID, task.ArrayTaskID = 12, 1
	perTask := job("END", "ARRAY_TASKS")
	perTask.ArrayJobID, perTask.ArrayTaskID = 12, 1
	for _, tc := range []struct {
		ev   Event
		want bool
	}{
		{Event{Kind: End, Job: task}, false},
		{Event{Kind: End, Job: task, Array: &Array{}}, true},
		{Event{Kind: End, Job: perTask}, true},
		{Event{Kind: End, Job: perTask, Array: &Array{}}, false},
		{Event{Kind: Begin, Job: task, Array: &Array{}}, false}, // BEGIN not asked
	} {
		if got := wantsMail(tc.ev); got != tc.want {
			t.Errorf("wantsMail(%s, array=%v, %v) = %v", tc.ev.Kind, tc.ev.Array != nil, tc.ev.Job.Request.MailType, got)
		}
	}
}

// What Send costs the loop: queueing an event for a webhook whose worker
// is busy (the queue fills, then drops).
func BenchmarkSend(b *testing.B) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	n := Start(Options{Hooks: []Hook{{URL: srv.URL, Events: []string{All}}}})
	defer n.Close(0)
	j := job("END")
	b.ResetTimer()
	for range b.N {
		n.Send(Event{Kind: End, Job: j})
	}
}

// MailProg's environment is slurmctld's, and nothing else (no PATH, no
// HOME: the daemon's own environment does not leak to it).
func TestMailEnv(t *testing.T) {
	j := job("END")
	j.State, j.ExitCode, j.Restarts = slurm.Failed, jobrec.ExitCode{Status: 3}, 1
	j.Request.Comment = "lr sweep"
	want := []string{
		"SLURM_JOB_ACCOUNT=lab",
		"SLURM_JOB_DERIVED_EC=0",
		"SLURM_JOB_EXIT_CODE2=3:0",
		"SLURM_JOB_EXIT_CODE=768",
		"SLURM_CLUSTER_NAME=lab",
		"SLURM_JOB_COMMENT=lr sweep",
		"SLURM_JOB_GID=1001",
		"SLURM_JOB_GROUP=alice",
		"SLURM_JOBID=12",
		"SLURM_JOB_ID=12",
		"SLURM_JOB_NAME=train",
		"SLURM_JOB_NODELIST=gpu01",
		"SLURM_JOB_PARTITION=gpu",
		"SLURM_JOB_RESTART_COUNT=1",
		"SLURM_JOB_UID=1001",
		"SLURM_JOB_USER=alice",
		"SLURM_JOB_WORK_DIR=/home/alice",
		"SLURM_JOB_STATE=FAILED",
		"SLURM_JOB_MAIL_TYPE=Failed",
		"SLURM_JOB_RUN_TIME=00:01:00",
		"SLURM_JOB_EXIT_CODE_MAX=3",
	}
	if got := MailEnv(j, Fail, "lab", "alice", t0); !slices.Equal(got, want) {
		t.Errorf("MailEnv:\n got %q\nwant %q", got, want)
	}
}
