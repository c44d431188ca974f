package daemon

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sacct"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/squeue"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A job's submit, eligible, start and end times are the daemon's clock's
// (issue 28 §1): on a fake clock that moves only when the test says, with
// real jobs held and released by files, sacct, squeue, scontrol show job
// and the Began/Ended mails show exactly the fake clock's moments, and a
// running job's time is exactly the clock's distance from its start. A
// job cancelled at one moment whose processes go at a later one ends at
// the cancel (its batch step at the later one), as slurmctld records it.
func TestJobTimesAreTheDaemonsClock(t *testing.T) {
	t0 := time.Date(2030, time.January, 7, 9, 0, 0, 0, time.Local)
	clock := &fakeClock{t: t0}
	td := startClockJobsDaemon(t, clock)
	hold := func(name string) string {
		return fmt.Sprintf("while [ ! -e %q ]; do sleep 0.02; done", filepath.Join(td.dir, name))
	}
	release := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(td.dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamp := func(at time.Time) string { return at.Format("2006-01-02T15:04:05") }
	begin := t0.Add(10 * time.Minute)

	// Submitted at t0, eligible at its --begin ten minutes later.
	a := td.submit(hold("a.release"), "--job-name=a", "--mail-type=BEGIN,END", "--begin="+stamp(begin))
	b := td.submit(`trap 'while [ ! -e `+filepath.Join(td.dir, "b.go")+` ]; do sleep 0.02; done; exit 0' TERM; `+hold("b.never"),
		"--job-name=b")
	td.waitState(b, slurm.Running)
	bStart := t0
	if got := td.job(a).State; got != slurm.Pending {
		t.Fatalf("job %d is %s before its --begin, want PENDING", a, got)
	}

	// The clock reaches the begin time: the next pass starts the job, at
	// that moment exactly (the clock stands still meanwhile).
	clock.advance(10 * time.Minute)
	t1 := clock.Now()
	td.waitState(a, slurm.Running)

	clock.advance(3*time.Minute + 7*time.Second)
	if got, want := td.run(squeue.Main, "-h", "-j", fmt.Sprint(a), "-o", "%V|%S|%M|%T"),
		fmt.Sprintf("%s|%s|3:07|RUNNING\n", stamp(t0), stamp(t1)); got != want {
		t.Errorf("squeue of running job %d:\n%q\nwant\n%q", a, got, want)
	}

	// b is cancelled at t3; its script takes until t4 to go (it waits
	// for a file on SIGTERM, then exits 0): its end is the cancel, its
	// batch step's the moment the daemon learned the script had gone.
	clock.advance(time.Minute)
	t3 := clock.Now()
	td.cancel(b)
	td.waitState(b, slurm.Completing)
	clock.advance(2 * time.Minute)
	t4 := clock.Now()
	release("b.go")
	td.waitState(b, slurm.Cancelled)

	// a ends when released: at the clock's moment when the daemon
	// learns of it.
	clock.advance(time.Minute)
	t2 := clock.Now()
	release("a.release")
	td.waitState(a, slurm.Completed)
	clock.advance(time.Minute) // an ended job's times no longer move (and squeue shows it for MinJobAge)

	got := td.run(sacct.Main, "-n", "-P", "-j", fmt.Sprintf("%d,%d", a, b), "-o", "JobID,Submit,Eligible,Start,End,Elapsed,State")
	want := fmt.Sprintf("%d|%s|%s|%s|%s|00:07:07|COMPLETED\n", a, stamp(t0), stamp(begin), stamp(t1), stamp(t2)) +
		fmt.Sprintf("%d.batch|%s|%s|%s|%s|00:07:07|COMPLETED\n", a, stamp(t1), stamp(t1), stamp(t1), stamp(t2)) +
		fmt.Sprintf("%d|%s|%s|%s|%s|00:14:07|CANCELLED by %d\n", b, stamp(t0), stamp(t0), stamp(bStart), stamp(t3), os.Getuid()) +
		fmt.Sprintf("%d.batch|%s|%s|%s|%s|00:16:07|COMPLETED\n", b, stamp(bStart), stamp(bStart), stamp(bStart), stamp(t4))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sacct (-want +got):\n%s", diff)
	}
	if got, want := td.run(squeue.Main, "-h", "-t", "all", "-j", fmt.Sprint(a), "-o", "%V|%S|%e|%M|%T"),
		fmt.Sprintf("%s|%s|%s|7:07|COMPLETED\n", stamp(t0), stamp(t1), stamp(t2)); got != want {
		t.Errorf("squeue of ended job %d:\n%q\nwant\n%q", a, got, want)
	}
	show := td.run(scontrol.Main, "show", "job", fmt.Sprint(a))
	for _, w := range []string{
		"RunTime=00:07:07 ",
		"SubmitTime=" + stamp(t0) + " EligibleTime=" + stamp(begin) + "\n",
		"StartTime=" + stamp(t1) + " EndTime=" + stamp(t2) + " ",
	} {
		if !strings.Contains(show, w) {
			t.Errorf("scontrol show job %d has no %q:\n%s", a, w, show)
		}
	}
	wantMail := fmt.Sprintf("Slurm Job_id=%d Name=a Began, Queued time 00:10:00\n", a) +
		fmt.Sprintf("Slurm Job_id=%d Name=a Ended, Run time 00:07:07, COMPLETED, ExitCode 0\n", a)
	var mail string
	td.waitFor(func() bool { b, _ := os.ReadFile(td.mailLog); mail = string(b); return strings.Count(mail, "\n") >= 2 }, "the two mails")
	if diff := cmp.Diff(wantMail, mail); diff != "" {
		t.Errorf("mails (-want +got):\n%s", diff)
	}
}

// awayEnd keeps a supervisor's end of a run no daemon saw end between the
// run's start and the moment a daemon found it; learnedEnd takes the
// daemon's moment, and a COMPLETING job's marked end.
func TestEndsTheDaemonDidAndDidNotSee(t *testing.T) {
	start := time.Date(2030, time.January, 7, 9, 0, 0, 0, time.UTC)
	found := start.Add(time.Hour)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	running := store.Job{State: slurm.Running, Start: start}
	marked := store.Job{State: slurm.Completing, Start: start, End: at(5 * time.Minute)}
	for _, tc := range []struct {
		name           string
		got            stepd.Status
		wantEnd, batch time.Time
	}{
		{"ended while away: the supervisor's end", awayEnd(running, stepd.Status{Start: at(time.Second), End: at(20 * time.Minute), Batch: stepd.StepStatus{End: at(20 * time.Minute)}}, found), at(20 * time.Minute), at(20 * time.Minute)},
		{"a supervisor's clock behind: not before the start", awayEnd(running, stepd.Status{End: at(-time.Minute), Batch: stepd.StepStatus{End: at(-time.Minute)}}, found), start, start},
		{"a supervisor's clock ahead: not after it was found", awayEnd(running, stepd.Status{End: at(2 * time.Hour)}, found), found, found},
		{"marked COMPLETING before the daemon went: that end", awayEnd(marked, stepd.Status{End: at(20 * time.Minute), Batch: stepd.StepStatus{End: at(21 * time.Minute)}}, found), at(5 * time.Minute), at(21 * time.Minute)},
		{"learned: the daemon's moment", learnedEnd(running, stepd.Status{Start: at(time.Second), End: at(20 * time.Minute)}, found), found, found},
		{"learned, marked COMPLETING: the mark", learnedEnd(marked, stepd.Status{End: at(20 * time.Minute)}, found), at(5 * time.Minute), found},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.got.Start.Equal(start) || !tc.got.End.Equal(tc.wantEnd) || !tc.got.Batch.End.Equal(tc.batch) {
				t.Errorf("start, end, batch end = %v, %v, %v; want %v, %v, %v",
					tc.got.Start, tc.got.End, tc.got.Batch.End, start, tc.wantEnd, tc.batch)
			}
		})
	}
}

// A run its time limit ended ends when the limit fell due on the daemon's
// clock (its start and limit), when the daemon learns of it later; any
// other end is when the daemon learns of it.
func TestATimeLimitEndsWhenItFellDue(t *testing.T) {
	d := newDaemon(Options{}, config.Default())
	start := time.Date(2030, time.January, 7, 9, 0, 0, 0, time.UTC)
	j := store.Job{State: slurm.Running, Start: start, TimeLimit: time.Minute}
	learned := start.Add(61500 * time.Millisecond)
	limit := &stepd.Ending{Why: stepd.WhyTimeLimit, At: start.Add(61 * time.Second)}
	for _, tc := range []struct {
		name string
		e    *stepd.Ending
		now  time.Time
		want time.Time
	}{
		{"the limit, learned late", limit, learned, start.Add(time.Minute)},
		{"the limit, on a clock not there yet", limit, start.Add(30 * time.Second), start.Add(30 * time.Second)},
		{"a cancel", &stepd.Ending{At: start.Add(61 * time.Second)}, learned, learned},
		{"the script's own end", nil, learned, learned},
	} {
		if got := d.endAt(j, tc.e, tc.now); !got.Equal(tc.want) {
			t.Errorf("%s: end %v, want %v", tc.name, got, tc.want)
		}
	}
}

// clockJobsDaemon is a real daemon on a fake clock with simulated GPUs
// that runs real jobs, and a MailProg that appends each mail's subject
// to mail.log.
type clockJobsDaemon struct {
	*nvmlDaemon
	conf    string
	mailLog string
	now     func() time.Time
}

func startClockJobsDaemon(t *testing.T, clock Clock) *clockJobsDaemon {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a daemon and real jobs")
	}
	dir := t.TempDir()
	mailLog := filepath.Join(dir, "mail.log")
	prog := filepath.Join(dir, "fakemail")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nprintf '%s\\n' \"$2\" >> "+mailLog+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "conf.toml")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q
KillWait          = 30
GPUSampleInterval = 1
MailProg          = %q

[Node]
NodeName   = "gpu01"
CPUs       = 4
RealMemory = "4G"
GPUs       = "simulated"

[[Node.SimulatedGPU]]
Type   = "a100"
Memory = "40G"
Count  = 1
`, filepath.Join(dir, "d.sock"), filepath.Join(dir, "state"), prog)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nd := &nvmlDaemon{t: t, dir: dir, logs: &syncBuffer{}}
	nd.run(Options{ConfigPath: conf, Exe: exe, Clock: clock}, false)
	return &clockJobsDaemon{nvmlDaemon: nd, conf: conf, mailLog: mailLog, now: clock.Now}
}

// submit is nvmlDaemon.submit with the script's times read on the fake
// clock.
func (td *clockJobsDaemon) submit(script string, opts ...string) uint32 {
	td.t.Helper()
	cl, err := jobscript.ParseCommandLine(append(opts, "job.sh"))
	if err != nil {
		td.t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\n" + script + "\n"), Command: cl, Now: td.now()})
	if err != nil {
		td.t.Fatal(err)
	}
	var out api.Submitted
	if err := td.c.Do(context.Background(), "POST", api.PathJobs,
		api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: td.dir}, &out); err != nil {
		td.t.Fatalf("submitting: %v", err)
	}
	return out.JobID
}

func (td *clockJobsDaemon) cancel(id uint32) {
	td.t.Helper()
	if err := td.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{fmt.Sprint(id)}}, nil); err != nil {
		td.t.Fatalf("cancelling job %d: %v", id, err)
	}
}

// run runs a command's Main against the daemon with the fake clock as
// its own, and answers its output; it fails the test on an error.
func (td *clockJobsDaemon) run(main func([]string, cmdio.IO) int, args ...string) string {
	td.t.Helper()
	td.t.Setenv("SLURM_LITE_CONF", td.conf) // cli.Dial reads the process's
	var out, errb bytes.Buffer
	env := map[string]string{"SLURM_LITE_CONF": td.conf}
	code := main(args, cmdio.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Now: td.now, ReadFile: os.ReadFile})
	if code != 0 || errb.Len() > 0 {
		td.t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}
