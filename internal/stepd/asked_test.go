package stepd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// askerScript is a job whose script runs, through a wrapper (sh -c), a
// process that stands for `scontrol requeue $SLURM_JOB_ID`: it writes its
// pid to asker.pid and waits for the file "answer" (the daemon's answer),
// then exits 0. The wrapper and the script print the exit codes they see.
const askerScript = `#!/bin/bash
echo start
sh -c './asker.sh; echo "wrapper: asker rc=$?"'
echo "script: wrapper rc=$?"
sleep 30
echo "not stopped"
`

const askerSh = `#!/bin/sh
echo $$ > asker.pid
while [ ! -e answer ]; do sleep 0.02; done
exit 0
`

// TestACancelAskedFromInsideTheJobWaitsForTheAnswer: a requeue asked by a
// process of the job (scontrol in a wrapper) is taken at once (the status
// says the job is ending, for a requeue) and carried out once the asker
// has exited and its callers have heard it: the wrapper prints the rc it
// got, the script the wrapper's, and only then come slurmstepd's line and
// the SIGTERM, as on real Slurm (golden/job_requeue_wrapper.txt).
func TestACancelAskedFromInsideTheJobWaitsForTheAnswer(t *testing.T) {
	t.Parallel()
	j := newJob(t, askerScript)
	j.spec.KillWait = time.Minute // the wait is bounded by it; it must not be what ends the wait
	writeExec(t, filepath.Join(j.work, "asker.sh"), askerSh)
	j.start()
	j.waitFor("asker.pid", func() bool { return strings.TrimSpace(j.read("asker.pid")) != "" })
	asker, err := strconv.Atoi(strings.TrimSpace(j.read("asker.pid")))
	if err != nil {
		t.Fatal(err)
	}

	rep, err := Call(j.dir, Request{Op: OpCancel, Why: WhyRequeue, Spare: asker})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status == nil || rep.Status.Ending == nil || rep.Status.Ending.Why != WhyRequeue || rep.Status.State != slurm.Running {
		t.Fatalf("the cancel replied %+v, want a running job ending for a requeue", rep.Status)
	}
	// While the asker has not had its answer, nothing is signalled and
	// the job's output has no line of the ending. (What must not happen
	// cannot be waited for: a moment's look, which a regression fails
	// most of the time.)
	time.Sleep(200 * time.Millisecond)
	if !alive(asker) || strings.Contains(j.out(), "CANCELLED") {
		t.Fatalf("the job was stopped before the asker had its answer; output:\n%s\nlog:\n%s", j.out(), j.log())
	}
	if st, err := Call(j.dir, Request{Op: OpStatus}); err != nil || st.Status.Ending == nil {
		t.Fatalf("status while waiting: %+v, %v; want the ending", st.Status, err)
	}

	writeExec(t, filepath.Join(j.work, "answer"), "")
	st := j.wait()
	if st.Ending == nil || st.Ending.Why != WhyRequeue {
		t.Errorf("final status's ending %+v, want a requeue's", st.Ending)
	}
	out := j.out()
	lines := []string{"start", "wrapper: asker rc=0", "script: wrapper rc=0"}
	at := 0
	for _, l := range lines {
		i := strings.Index(out[at:], l+"\n")
		if i < 0 {
			t.Fatalf("output lacks %q after byte %d:\n%s\nlog:\n%s", l, at, out, j.log())
		}
		at += i + len(l) + 1
	}
	if !cancelLine(j.spec.JobID, WhyRequeue).MatchString(out[at:]) {
		t.Errorf("no requeue line after the script's:\n%s", out)
	}
	if strings.Contains(out, "not stopped") {
		t.Errorf("the job was not stopped:\n%s", out)
	}
	if st.Killed {
		t.Errorf("the job needed SIGKILL: the SIGTERM did not come at once after the answer; log:\n%s", j.log())
	}
}

// TestACancelWhoseAskerNeverExitsGoesAfterTheGrace: an asker that never
// ends holds the stop for the grace time at most; then the job gets its
// SIGTERM, the asker included.
func TestACancelWhoseAskerNeverExitsGoesAfterTheGrace(t *testing.T) {
	t.Parallel()
	j := newJob(t, askerScript)
	j.spec.KillWait = time.Second
	writeExec(t, filepath.Join(j.work, "asker.sh"), askerSh)
	j.start()
	j.waitFor("asker.pid", func() bool { return strings.TrimSpace(j.read("asker.pid")) != "" })
	asker, _ := strconv.Atoi(strings.TrimSpace(j.read("asker.pid")))
	if _, err := Call(j.dir, Request{Op: OpCancel, Why: WhyRequeue, Spare: asker}); err != nil {
		t.Fatal(err)
	}
	st := j.wait()
	if st.Ending == nil || st.Ending.Why != WhyRequeue {
		t.Errorf("ending %+v, want a requeue's", st.Ending)
	}
	out := j.out()
	if strings.Contains(out, "rc=0") || !cancelLine(j.spec.JobID, WhyRequeue).MatchString(out) {
		t.Errorf("want the requeue's line and no answer heard:\n%s", out)
	}
	if alive(asker) {
		t.Errorf("the asker %d outlived its job", asker)
	}
}

// TestACancelFromOutsideTheJobIsNotHeld: a cancel asked by a process that
// is not the job's (a user at a terminal) signals at once.
func TestACancelFromOutsideTheJobIsNotHeld(t *testing.T) {
	t.Parallel()
	j := newJob(t, "#!/bin/bash\necho start\nsleep 30\necho not stopped\n")
	j.spec.KillWait = time.Minute
	j.start()
	j.waitOutput(fmt.Sprintf("slurm-%d.out", j.spec.JobID), "start\n")
	if _, err := Call(j.dir, Request{Op: OpCancel, Why: WhyRequeue, Spare: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	st := j.wait()
	if st.Killed || !cancelLine(j.spec.JobID, WhyRequeue).MatchString(j.out()) || st.Ending == nil {
		t.Errorf("want a requeue ended by its SIGTERM: %+v\n%s\nlog:\n%s", st, j.out(), j.log())
	}
}

// TestATimeLimitDuringTheWaitSignalsAtOnce: the time limit while a
// cancel waits for its asker ends the wait: SIGTERM goes; the first
// reason (the requeue) stays.
func TestATimeLimitDuringTheWaitSignalsAtOnce(t *testing.T) {
	t.Parallel()
	j := newJob(t, askerScript)
	j.spec.KillWait = time.Minute
	j.spec.TimeLimit = 3 * time.Second
	writeExec(t, filepath.Join(j.work, "asker.sh"), askerSh)
	j.start()
	j.waitFor("asker.pid", func() bool { return strings.TrimSpace(j.read("asker.pid")) != "" })
	asker, _ := strconv.Atoi(strings.TrimSpace(j.read("asker.pid")))
	if _, err := Call(j.dir, Request{Op: OpCancel, Why: WhyRequeue, Spare: asker}); err != nil {
		t.Fatal(err)
	}
	st := j.wait()
	if st.Ending == nil || st.Ending.Why != WhyRequeue {
		t.Errorf("ending %+v, want the requeue's", st.Ending)
	}
	if st.Killed {
		t.Errorf("SIGKILL was needed: the limit did not send SIGTERM; log:\n%s", j.log())
	}
}

func writeExec(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
