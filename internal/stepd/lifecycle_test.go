package stepd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// cancelLine matches slurmstepd's line for job id, with "DUE TO why" when
// why is not "".
func cancelLine(id uint32, why string) *regexp.Regexp {
	due := ""
	if why != "" {
		due = " DUE TO " + regexp.QuoteMeta(why)
	}
	return regexp.MustCompile(fmt.Sprintf(`(?m)^slurmstepd-gpu01: error: \*\*\* JOB %d ON gpu01 CANCELLED AT `+
		`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d%s \*\*\*$`, id, due))
}

// summary is what the lifecycle tests compare.
type summary struct {
	State, Exit, BatchState, BatchExit string
	ExitedAfterSignal, Killed          bool
}

func summarize(st Status) summary {
	return summary{string(st.State), st.ExitCode, string(st.Batch.State), st.Batch.ExitCode, st.ExitedAfterSignal, st.Killed}
}

// TestTimeLimit: the batch shell traps SIGTERM and its child ignores it;
// at the limit both get SIGCONT and SIGTERM, SIGKILL a KillWait later,
// and the job ends TIMEOUT with Slurm's line in its output, as in
// golden/job_timelimit_signals.txt.
func TestTimeLimit(t *testing.T) {
	t.Parallel()
	j := newJob(t, `#!/bin/bash
trap 'echo got SIGTERM' TERM
sh -c 'trap "" TERM; echo $$ > child.pid; while :; do sleep 0.05; done' &
echo start
while :; do sleep 0.05; done
`)
	j.spec.TimeLimit = 2 * time.Second
	j.start()
	st := j.wait()
	want := summary{"TIMEOUT", "0:9", "CANCELLED", "0:9", false, true}
	if diff := cmp.Diff(want, summarize(st)); diff != "" {
		t.Errorf("(-want +got):\n%s\nlog:\n%s", diff, j.log())
	}
	out := j.out()
	line := cancelLine(j.spec.JobID, "TIME LIMIT")
	loc := line.FindStringIndex(out)
	if loc == nil {
		t.Fatalf("no TIME LIMIT line in output:\n%s", out)
	}
	if !strings.Contains(out[loc[1]:], "got SIGTERM") {
		t.Errorf("the batch shell's SIGTERM trap did not run after the line:\n%s", out)
	}
	if st.Ending == nil || st.Ending.Why != WhyTimeLimit {
		t.Fatalf("ending = %+v, want the time limit", st.Ending)
	}
	if d := st.Ending.At.Sub(st.Start); d < 2*time.Second || d > 3*time.Second {
		t.Errorf("limit enforced %v after the start, want 2s", d)
	}
	if d := st.Batch.End.Sub(st.Ending.At); d < time.Second || d > 2*time.Second {
		t.Errorf("SIGKILL came %v after SIGTERM, want KillWait (1s)", d)
	}
	if !st.End.Equal(st.Ending.At) {
		t.Errorf("job end %v, want the time the limit hit (%v)", st.End, st.Ending.At)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(j.read("child.pid")))
	if child == 0 || alive(child) {
		t.Errorf("the child that ignored SIGTERM (pid %d) survived the job", child)
	}
}

// TestSignalBeforeLimit: --signal=B:USR1@N reaches only the batch shell N
// seconds before the limit; without B: it reaches the other processes
// and not the batch shell (golden/job_signal_*.txt, and doc.go).
func TestSignalBeforeLimit(t *testing.T) {
	script := `#!/bin/bash
trap 'echo batch shell got USR1; exit 0' USR1
sh -c 'trap "echo child got USR1; exit 0" USR1; while :; do sleep 0.05; done' &
echo start
wait
`
	tests := []struct {
		name  string
		batch bool
		want  []string // of "batch shell got USR1", "child got USR1"
	}{
		{"B:USR1 reaches the batch shell alone", true, []string{"batch shell got USR1"}},
		{"USR1 without B: reaches the steps, not the batch shell", false, []string{"child got USR1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, script)
			j.spec.TimeLimit = 30 * time.Second
			// @26: 4 s after the start, time enough for the batch shell to
			// have started its child on a loaded machine (at @29, 1 s,
			// make test-stress once found no child to signal yet).
			j.spec.Signal = &slurmsyntax.SignalSpec{Signal: syscall.SIGUSR1, Seconds: 26, Batch: tc.batch}
			j.start()
			st := j.wait()
			var got []string
			for _, line := range []string{"batch shell got USR1", "child got USR1"} {
				if strings.Contains(j.out(), line) {
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("who got the signal (-want +got):\n%s\noutput:\n%s\nlog:\n%s", diff, j.out(), j.log())
			}
			if st.State != slurm.Completed {
				t.Errorf("state %s, want COMPLETED", st.State)
			}
			if d := st.Batch.End.Sub(st.Start); d < 4*time.Second || d > 8*time.Second {
				t.Errorf("the signal came %v after the start, want 4s (30s limit, @26)", d)
			}
		})
	}
}

// TestCancel: a cancel from outside writes Slurm's line, sends SIGTERM,
// and the job is CANCELLED; a script that exits on SIGTERM needs no
// SIGKILL, and its batch step, which exited 0, is COMPLETED, as
// slurmdbd records such a step (golden/README.md, issue 24).
func TestCancel(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want summary
	}{
		{"a cancel by a user", Request{Op: OpCancel, By: ptr(uint32(1000))},
			summary{"CANCELLED", "0:0", "COMPLETED", "0:0", true, false}},
		{"a requeue", Request{Op: OpCancel, Why: WhyRequeue},
			summary{"CANCELLED", "0:0", "COMPLETED", "0:0", true, false}},
		{"a cancel with SIGUSR2 first, for a job that checkpoints on it", Request{Op: OpCancel, Signal: syscall.SIGUSR2},
			summary{"CANCELLED", "0:0", "COMPLETED", "0:0", true, false}},
		{"a cancel with SIGKILL at once", Request{Op: OpCancel, Kill: true},
			summary{"CANCELLED", "0:9", "CANCELLED", "0:9", false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, `#!/bin/bash
trap 'echo got SIGTERM; exit 0' TERM
trap 'echo got SIGUSR2; exit 0' USR2
echo start
while :; do sleep 0.05; done
`)
			j.spec.KillWait = time.Minute // a SIGKILL would show in the exit code
			j.start()
			j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "start\n")
			rep, err := Call(j.dir, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status == nil || rep.Status.Ending == nil || rep.Status.State != slurm.Running {
				t.Errorf("cancel replied %+v, want a running job that is ending", rep.Status)
			}
			st := j.wait()
			if diff := cmp.Diff(tc.want, summarize(st)); diff != "" {
				t.Errorf("(-want +got):\n%s\nlog:\n%s", diff, j.log())
			}
			if !cancelLine(j.spec.JobID, tc.req.Why).MatchString(j.out()) {
				t.Errorf("no cancel line in output:\n%s", j.out())
			}
			if st.Ending == nil || !cmp.Equal(st.Ending.By, tc.req.By) {
				t.Errorf("ending %+v, want by %v", st.Ending, tc.req.By)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestSignalRequest: scancel --signal without -b reaches the steps only,
// with -b the batch shell only (golden/job_scancel_signals.txt).
func TestSignalRequest(t *testing.T) {
	t.Parallel()
	j := newJob(t, `#!/bin/bash
trap 'echo batch shell got USR2' USR2
trap 'echo batch shell got HUP; exit 0' HUP
sh -c 'trap "echo step got USR2" USR2; trap "exit 0" HUP; echo step ready; while :; do sleep 0.05; done' &
echo start
while :; do sleep 0.05; done
`)
	j.start()
	name := fmt.Sprintf("slurm-%d.out", j.spec.JobID)
	// Both shells have set their traps once both have spoken (the step
	// runs in the background: under load it speaks after "start").
	j.waitOutput(name, "start\n")
	j.waitOutput(name, "step ready\n")
	rep, err := Call(j.dir, Request{Op: OpSignal, Signal: syscall.SIGUSR2, Target: TargetSteps})
	if err != nil {
		t.Fatal(err)
	}
	j.waitOutput(name, "step got USR2\n")
	if rep.Signalled < 1 {
		t.Errorf("signal reached %d processes, want the step and its sleep", rep.Signalled)
	}
	if _, err := Call(j.dir, Request{Op: OpSignal, Signal: syscall.SIGUSR2, Target: TargetBatch}); err != nil {
		t.Fatal(err)
	}
	j.waitOutput(name, "batch shell got USR2\n")
	if _, err := Call(j.dir, Request{Op: OpSignal, Signal: syscall.SIGHUP, Target: TargetAll}); err != nil {
		t.Fatal(err)
	}
	st := j.wait()
	if got := strings.Count(j.out(), "step got USR2"); got != 1 {
		t.Errorf("the step got USR2 %d times, want once:\n%s", got, j.out())
	}
	if st.State != slurm.Completed || st.Ending != nil {
		t.Errorf("state %s, ending %+v; want COMPLETED: a signal is not a cancel", st.State, st.Ending)
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/sh\necho start\nexec sleep 30\n").start()
	j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "start\n")
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Op: OpSignal, Signal: 0, Target: TargetAll}, "signal 0 is not a signal"},
		{Request{Op: OpSignal, Signal: syscall.SIGUSR1, Target: "everyone"}, `target "everyone" is not batch, steps or all`},
		{Request{Op: "suspend"}, `unknown operation "suspend"; want status, signal, cancel, limit, steps, adopt or finish`},
	} {
		_, err := Call(j.dir, tc.req)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.req, err, tc.want)
		}
	}
	rep, err := Call(j.dir, Request{Op: OpStatus})
	if err != nil || rep.Status.State != slurm.Running || !alive(rep.Status.JobPID) {
		t.Errorf("status: %+v, %v; want RUNNING with a live pid", rep.Status, err)
	}
	if _, err := Call(j.dir, Request{Op: OpCancel, Kill: true}); err != nil {
		t.Fatal(err)
	}
	j.wait()
	if _, err := os.Stat(filepath.Join(j.dir, SocketFile)); !os.IsNotExist(err) {
		t.Errorf("control socket still there after the job: %v", err)
	}
}

// TestRequeueAppends: a requeued job's second run appends to the first
// run's output, after the requeue line (golden/job_restart_count.txt).
func TestRequeueAppends(t *testing.T) {
	t.Parallel()
	script := `#!/bin/bash
trap 'exit 0' TERM
echo "run SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT-unset}"
[ -n "$SLURM_RESTART_COUNT" ] && exit 0
while :; do sleep 0.05; done
`
	first := newJob(t, script)
	first.spec.Output = filepath.Join(first.work, "restart-%j.out")
	first.start()
	name := fmt.Sprintf("restart-%d.out", first.spec.JobID)
	first.waitOutput(name, "unset\n")
	if _, err := Call(first.dir, Request{Op: OpCancel, Why: WhyRequeue}); err != nil {
		t.Fatal(err)
	}
	first.wait()

	second := newJob(t, script)
	spec := *first.spec
	spec.Script, spec.RestartCount = second.spec.Script, 1
	second.spec = &spec
	second.start()
	second.wait()
	out := first.read(name)
	var lines []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		// bash's report of its sleep killed by SIGTERM, as in Slurm's.
		if line != "Terminated" {
			lines = append(lines, line)
		}
	}
	if len(lines) != 3 || lines[0] != "run SLURM_RESTART_COUNT=unset" || !cancelLine(spec.JobID, WhyRequeue).MatchString(lines[1]) ||
		lines[2] != "run SLURM_RESTART_COUNT=1" {
		t.Errorf("output after a requeue:\n%s\nwant the first run, the requeue line, the second run", out)
	}
}

// TestLimitRequest: scontrol update TimeLimit= on a running job reaches
// its supervisor, which counts the new limit from the job's start: a
// raised limit lets the job run past the old one, a lowered one ends it
// early, TIMEOUT either way.
func TestLimitRequest(t *testing.T) {
	tests := []struct {
		name         string
		first, later time.Duration
		min, max     time.Duration // when the limit hit, after the start
	}{
		// The first limit leaves the script, under load, time to print
		// "start" before it passes.
		{"a raised limit: the job runs past its first", 4 * time.Second, 6 * time.Second, 6 * time.Second, 8 * time.Second},
		{"a lowered limit: the job ends early", time.Minute, 2 * time.Second, 2 * time.Second, 4 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, "#!/bin/sh\necho start\nwhile :; do sleep 0.05; done\n")
			j.spec.TimeLimit = tc.first
			j.start()
			j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "start\n")
			if _, err := Call(j.dir, Request{Op: OpLimit, Limit: tc.later}); err != nil {
				t.Fatal(err)
			}
			st := j.wait()
			if st.State != slurm.Timeout || st.Ending == nil {
				t.Fatalf("state %s, ending %+v; want TIMEOUT\nlog:\n%s", st.State, st.Ending, j.log())
			}
			if d := st.Ending.At.Sub(st.Start); d < tc.min || d > tc.max {
				t.Errorf("limit enforced %v after the start, want between %v and %v", d, tc.min, tc.max)
			}
		})
	}
	t.Run("refused once the job is ending", func(t *testing.T) {
		t.Parallel()
		j := newJob(t, "#!/bin/sh\ntrap '' TERM\necho start\nwhile :; do sleep 0.05; done\n")
		j.spec.KillWait = 2 * time.Second
		j.start()
		j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "start\n")
		if _, err := Call(j.dir, Request{Op: OpCancel}); err != nil {
			t.Fatal(err)
		}
		if _, err := Call(j.dir, Request{Op: OpLimit, Limit: time.Hour}); err == nil || !strings.Contains(err.Error(), "ending") {
			t.Errorf("a new limit for an ending job: got %v, want a refusal", err)
		}
		j.wait()
	})
}

// A supervisor whose run directory is removed under it (a test's temporary
// directory cleaned up, a lab starting over) exits when its job ends: it
// keeps a status it cannot write only while someone can still read it.
func TestRunDirectoryRemovedEndsTheSupervisor(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/bash\necho start\nwhile [ ! -e go ]; do sleep 0.05; done\n")
	j.start()
	j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "start\n")
	if err := os.RemoveAll(j.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(j.work, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_, _ = j.proc.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the supervisor still runs a minute after its job ended with its run directory gone")
	}
}
