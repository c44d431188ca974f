package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/gpu/gputest"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sacctmgr"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// hookServer is a webhook receiver that refuses its first request.
type hookServer struct {
	mu     sync.Mutex
	calls  int
	bodies []notify.Body
}

func (h *hookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	if h.calls == 1 {
		http.Error(w, "not yet", http.StatusServiceUnavailable)
		return
	}
	var b notify.Body
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.bodies = append(h.bodies, b)
}

// of is what the hook received about job id, as "EVENT STATE EXIT".
func (h *hookServer) of(id uint32) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.bodies {
		if b.Job != nil && b.Job.ID == id {
			out = append(out, fmt.Sprintf("%s %s %s", b.Event, b.Job.State, b.Job.ExitCode))
		}
	}
	return out
}

// notifyDaemon is a real daemon with simulated GPUs, a fake MailProg that
// appends "SUBJECT|USER|SLURM_JOB_MAIL_TYPE|SLURM_JOB_ID" to mail.log, a
// webhook receiving every event, and its log in JSON.
func startNotifyDaemon(t *testing.T) (*nvmlDaemon, *hookServer, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a daemon and real jobs")
	}
	dir := t.TempDir()
	mailLog := filepath.Join(dir, "mail.log")
	prog := filepath.Join(dir, "fakemail")
	script := "#!/bin/sh\n[ \"$1\" = -s ] || exit 2\nprintf '%s|%s|%s|%s\\n' \"$2\" \"$3\" \"$SLURM_JOB_MAIL_TYPE\" \"$SLURM_JOB_ID\" >> " + mailLog + "\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := &hookServer{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	conf := filepath.Join(dir, "conf.toml")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q
KillWait          = 1
GPUSampleInterval = 1
MailProg          = %q
LogFormat         = "json"

[Node]
NodeName   = "gpu01"
CPUs       = 4
RealMemory = "4G"
GPUs       = "simulated"

[[Node.SimulatedGPU]]
Type   = "a100"
Memory = "40G"
Count  = 2

[[Notify]]
URL    = %q
Events = ["ALL"]
`, filepath.Join(dir, "d.sock"), filepath.Join(dir, "state"), prog, srv.URL)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nd := &nvmlDaemon{t: t, dir: dir, logs: &syncBuffer{}}
	nd.run(Options{ConfigPath: conf, Exe: exe, NotifyBackoff: 50 * time.Millisecond}, false)
	return nd, hook, mailLog
}

// record is a job's accounting record.
func (nd *nvmlDaemon) record(id uint32) store.Record {
	nd.t.Helper()
	var recs []store.Record
	if err := nd.c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d", api.PathAccounting, id), nil, &recs); err != nil || len(recs) == 0 {
		nd.t.Fatalf("accounting of job %d: %v", id, err)
	}
	return recs[len(recs)-1]
}

func hms(a, b time.Time) string {
	s := b.Unix() - a.Unix()
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// A job with --mail-type=BEGIN,END,FAIL gets Slurm's mails through
// MailProg; one with END,FAIL that fails gets the Failed mail alone; the
// webhook gets every event, its first refused delivery tried again; the
// log is JSON and each job's lines carry its id.
func TestMailWebhooksAndJSONLog(t *testing.T) {
	t.Parallel()
	nd, hook, mailLog := startNotifyDaemon(t)
	me := userdb.Name(uint32(os.Getuid()))

	ok := nd.submit("exit 0", "--job-name=fine", "--mail-type=BEGIN,END,FAIL")
	nd.waitState(ok, slurm.Completed)
	bad := nd.submit("exit 3", "--job-name=broken", "--mail-type=END,FAIL", "--mail-user=ops@example.org")
	nd.waitState(bad, slurm.Failed)
	quiet := nd.submit("exit 0", "--job-name=quiet")
	nd.waitState(quiet, slurm.Completed)

	r1, r2 := nd.record(ok).Job, nd.record(bad).Job
	var got string
	nd.waitFor(func() bool { b, _ := os.ReadFile(mailLog); got = string(b); return strings.Count(got, "\n") >= 3 }, "the three mails")
	// The Began mail counts the queued time to the start the daemon gave
	// the job, as slurmctld's does, and the record keeps that start (one
	// clock: issue 28 §1).
	began := hms(r1.Submit, r1.Start)
	want := fmt.Sprintf("Slurm Job_id=%d Name=fine Began, Queued time %s|%s|Began|%d\n", ok, began, me, ok) +
		fmt.Sprintf("Slurm Job_id=%d Name=fine Ended, Run time %s, COMPLETED, ExitCode 0|%s|Ended|%d\n", ok, hms(r1.Start, r1.End), me, ok) +
		fmt.Sprintf("Slurm Job_id=%d Name=broken Failed, Run time %s, FAILED, ExitCode 3|ops@example.org|Failed|%d\n", bad, hms(r2.Start, r2.End), bad)
	if got != want {
		t.Fatalf("mail log:\n%s\nwant:\n%s", got, want)
	}
	// A dependency that can never be satisfied: the Invalid dependency
	// mail, once.
	dep := nd.submit("exit 0", "--job-name=after", fmt.Sprintf("--dependency=afterok:%d", bad), "--mail-type=INVALID_DEPEND")
	want += fmt.Sprintf("Slurm Job_id=%d Name=after Invalid dependency|%s|Invalid dependency|%d\n", dep, me, dep)
	nd.waitFor(func() bool { b, _ := os.ReadFile(mailLog); got = string(b); return got == want }, "the Invalid dependency mail")
	nd.passes.wait(t, 2, "a pass or two more") // still once
	if b, _ := os.ReadFile(mailLog); string(b) != want {
		t.Errorf("mail log:\n%s\nwant:\n%s", b, want)
	}
	// An array without ARRAY_TASKS: one summary when its first task
	// starts, one when its last ends, with the range of exit codes.
	arr := nd.submit(`[ "$SLURM_ARRAY_TASK_ID" = 2 ] && exit 4; exit 0`, "--job-name=arr", "--array=1-3", "--mail-type=BEGIN,END,FAIL")
	want += fmt.Sprintf("Slurm Array Summary Job_id=%d_* (%d) Name=arr Began|%s|Began|%d\n", arr, arr, me, arr) +
		fmt.Sprintf("Slurm Array Summary Job_id=%d_* (%d) Name=arr Failed, Mixed, ExitCode [0-4]|%s|Failed|%d\n", arr, arr, me, arr)
	nd.waitFor(func() bool { b, _ := os.ReadFile(mailLog); got = string(b); return got == want }, "the array's two summaries")

	nd.waitFor(func() bool { return len(hook.of(quiet)) == 2 }, "the webhook's events of the last job")
	if got, want := strings.Join(hook.of(ok), "; "), "BEGIN RUNNING 0:0; END COMPLETED 0:0"; got != want {
		t.Errorf("webhook for job %d: %s, want %s", ok, got, want)
	}
	if got, want := strings.Join(hook.of(bad), "; "), "BEGIN RUNNING 0:0; FAIL FAILED 3:0"; got != want {
		t.Errorf("webhook for job %d: %s, want %s", bad, got, want)
	}
	hook.mu.Lock()
	calls, n := hook.calls, len(hook.bodies)
	hook.mu.Unlock()
	if calls != n+1 {
		t.Errorf("the webhook was called %d times for %d events: want one refused call tried again", calls, n)
	}
	if !strings.Contains(nd.logs.String(), `"msg":"webhook failed, trying again"`) {
		t.Errorf("the refused webhook call is not in the log")
	}

	// Every line is JSON; each job's start and end lines carry its id.
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(nd.logs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if job, ok := line["job"].(float64); ok {
			seen[fmt.Sprintf("%v %d", line["msg"], int(job))] = true
		}
	}
	for _, id := range []uint32{ok, bad, quiet} {
		for _, msg := range []string{"job submitted", "job started", "job ended"} {
			if !seen[fmt.Sprintf("%s %d", msg, id)] {
				t.Errorf("no %q log line with job=%d", msg, id)
			}
		}
	}
}

// sacctmgrRun runs sacctmgr against the daemon and answers its output.
func (nd *nvmlDaemon) sacctmgr(args ...string) string {
	nd.t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"SLURM_LITE_CONF": filepath.Join(nd.dir, "conf.toml")}
	nd.t.Setenv("SLURM_LITE_CONF", env["SLURM_LITE_CONF"]) // cli.Dial reads the process's
	code := sacctmgr.Main(args, cmdio.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Now: time.Now,
		ReadFile: os.ReadFile})
	if code != 0 || errb.Len() > 0 {
		nd.t.Fatalf("sacctmgr %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

func (nd *nvmlDaemon) events(q string) []api.Event {
	nd.t.Helper()
	var evs []api.Event
	if err := nd.c.Do(context.Background(), "GET", api.PathEvents+"?"+q, nil, &evs); err != nil {
		nd.t.Fatal(err)
	}
	return evs
}

// A yield, a cancel, a hold and release, a GPU's drain and resume: each
// is in the audit trail with who, when and why, which sacctmgr show event
// prints (Jobs= for a job's trail, Slurm's node events for the drain).
func TestAuditTrail(t *testing.T) {
	// Not parallel: nd.sacctmgr sets SLURM_LITE_CONF for the process.
	nd, hook, _ := startNotifyDaemon(t)
	me := userdb.Name(uint32(os.Getuid()))
	uid := os.Getuid()
	ctx := context.Background()

	// A yield of a running job, then its cancel once it runs again.
	y := nd.submit("sleep 300", "--job-name=yieldme", "--gpus=1")
	nd.waitState(y, slurm.Running)
	var yr api.Yielded
	if err := nd.c.Do(ctx, "POST", api.PathYield, api.Yield{Job: strconv.Itoa(int(y))}, &yr); err != nil {
		t.Fatal(err)
	}
	nd.waitFor(func() bool { j := nd.job(y); return j.State == slurm.Running && j.Restarts == 1 }, "the yielded job running again")
	if err := nd.c.Do(ctx, "POST", api.PathCancel, api.Cancel{Jobs: []string{strconv.Itoa(int(y))}}, nil); err != nil {
		t.Fatal(err)
	}
	nd.waitState(y, slurm.Cancelled)

	// A job submitted held, then released.
	h := nd.submit("exit 0", "--job-name=held", "--hold")
	if err := nd.c.Do(ctx, "POST", api.PathControl, api.Control{Action: api.ActionRelease, Jobs: []string{strconv.Itoa(int(h))}}, nil); err != nil {
		t.Fatal(err)
	}
	nd.waitState(h, slurm.Completed)

	// GPU 1 drained and resumed.
	for _, u := range []api.NodeUpdate{{Node: "gpu01", GPUs: []string{"1"}, State: api.NodeDrain, Reason: "fan noise"},
		{Node: "gpu01", GPUs: []string{"1"}, State: api.NodeResume}} {
		if err := nd.c.Do(ctx, "POST", api.PathNodeUpdate, u, nil); err != nil {
			t.Fatal(err)
		}
	}

	actions := func(evs []api.Event) string {
		var s []string
		for _, e := range evs {
			s = append(s, e.Action+" by "+e.ActorName)
		}
		return strings.Join(s, ", ")
	}
	ye := nd.events(fmt.Sprintf("job=%d", y))
	wantY := fmt.Sprintf("start by slurmd-lite, requeue by slurmd-lite, yield by %s, start by slurmd-lite, cancel by %s, end by slurmd-lite", me, me)
	if got := actions(ye); got != wantY {
		t.Errorf("job %d's trail: %s\nwant: %s", y, got, wantY)
	}
	he := nd.events(fmt.Sprintf("job=%d", h))
	if got, want := actions(he), fmt.Sprintf("release by %s, start by slurmd-lite, end by slurmd-lite", me); got != want {
		t.Errorf("job %d's trail: %s\nwant: %s", h, got, want)
	}

	// sacctmgr prints the trail as it is recorded.
	var wantOut strings.Builder
	fmt.Fprintf(&wantOut, "%19s %10s %-8s %-20s %-60s \n", "Time", "JobID", "Action", "User", "Reason")
	fmt.Fprintf(&wantOut, "%s %s %s %s %s \n", strings.Repeat("-", 19), strings.Repeat("-", 10), strings.Repeat("-", 8), strings.Repeat("-", 20), strings.Repeat("-", 60))
	for _, e := range ye {
		fmt.Fprintf(&wantOut, "%19s %10d %-8s %-20s %-60s \n", format.Time(e.Time), e.JobID, e.Action,
			cut(fmt.Sprintf("%s(%d)", e.ActorName, e.Actor), 20), cut(e.Detail, 60))
	}
	got := nd.sacctmgr("show", "event", fmt.Sprintf("jobs=%d", y))
	t.Logf("sacctmgr show event jobs=%d:\n%s", y, got)
	if got != wantOut.String() {
		t.Errorf("sacctmgr show event jobs=%d:\n%s\nwant:\n%s", y, got, wantOut.String())
	}
	// The yield says who, how it ended and what for.
	for _, e := range ye {
		if e.Action == "yield" && (e.Actor != uint32(uid) || !strings.HasPrefix(e.Detail, "stopped in ")) {
			t.Errorf("yield event: %+v", e)
		}
		if e.Action == "cancel" && e.Detail != "cancelled while RUNNING" {
			t.Errorf("cancel event: %+v", e)
		}
	}

	// The drain as Slurm lists node events, with the GPU's name.
	ne := nd.events("node=1")
	if len(ne) != 2 || ne[0].Action != "drain" || ne[1].Action != "resume" {
		t.Fatalf("node events: %+v", ne)
	}
	user := cut(fmt.Sprintf("%s(%d)", me, uid), 10)
	const line = "%10s %-15s %19s %19s %6s %30s %10s \n"
	wantNode := fmt.Sprintf(line, "Cluster", "NodeName", "TimeStart", "TimeEnd", "State", "Reason", "User") +
		fmt.Sprintf(line, strings.Repeat("-", 10), strings.Repeat("-", 15), strings.Repeat("-", 19), strings.Repeat("-", 19),
			strings.Repeat("-", 6), strings.Repeat("-", 30), strings.Repeat("-", 10)) +
		fmt.Sprintf(line, "lab", "gpu01/gpu1", format.Time(ne[0].Time), format.Time(ne[1].Time), "DRAIN", "fan noise", user)
	got = nd.sacctmgr("show", "event")
	t.Logf("sacctmgr show event:\n%s", got)
	if got != wantNode {
		t.Errorf("sacctmgr show event:\n%s\nwant:\n%s", got, wantNode)
	}
	if got := nd.sacctmgr("-nP", "show", "event", "format=NodeName,State,Reason,User"); got != fmt.Sprintf("gpu01/gpu1|DRAIN|fan noise|%s(%d)\n", me, uid) {
		t.Errorf("sacctmgr -nP show event format=...: %q", got)
	}

	// The webhook heard the yield, the cancel, the release and the drain.
	nd.waitFor(func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		var kinds []string
		for _, b := range hook.bodies {
			switch b.Event {
			case notify.Yield, notify.Cancel, notify.Release, notify.Drain, notify.Resume:
				kinds = append(kinds, b.Event)
			}
		}
		return strings.Join(kinds, " ") == "YIELD CANCEL RELEASE DRAIN RESUME"
	}, "YIELD CANCEL RELEASE DRAIN RESUME at the webhook")
}

// cut is print_fields' cut of a value wider than its column: the first
// width-1 characters and a '+'.
func cut(s string, width int) string {
	if len(s) > width {
		return s[:width-1] + "+"
	}
	return s
}

// A job whose GPU memory stayed far below its request is told as
// GPU_MEM_LOW, with the note sacct shows.
func TestGPUMemLowIsTold(t *testing.T) {
	t.Parallel()
	hook := &hookServer{calls: 1} // no refusal here
	srv := httptest.NewServer(hook)
	defer srv.Close()
	nd := startNVMLDaemonWith(t, "warn", nil, "[[Notify]]", fmt.Sprintf("URL = %q", srv.URL), `Events = ["GPU_MEM_LOW"]`)
	id := nd.submit("echo $$ > low.pid; sleep 4", "--gpu-mem=20G")
	j := nd.waitState(id, slurm.Running)
	nd.m.RunLive(nd.devOf(j.Alloc.GPUs[0].UUID), gputest.Proc(nd.readPID("low.pid"), gib))
	nd.waitState(id, slurm.Completed)
	notes := nd.record(id).Job.Notes
	if len(notes) != 1 || !strings.HasPrefix(notes[0], gpu.LowMemoryNote) {
		t.Fatalf("job %d's notes: %q, want its low peak GPU memory", id, notes)
	}
	nd.waitFor(func() bool {
		hook.mu.Lock()
		defer hook.mu.Unlock()
		return len(hook.bodies) == 1
	}, "GPU_MEM_LOW at the webhook")
	b := hook.bodies[0]
	if b.Event != notify.GPUMemLow || b.Job == nil || b.Job.ID != id || b.Reason != notes[0] {
		t.Errorf("webhook body: %+v, want GPU_MEM_LOW for job %d with reason %q", b, id, notes[0])
	}
}
