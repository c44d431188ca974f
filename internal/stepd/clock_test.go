package stepd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clockFileEnv names the file of the test supervisor's clock
// (STEPD_TEST_ROLE=stepd-clock, a clocktest.File): the machine's time
// plus the whole seconds the file holds, as the end-to-end tests'
// SLITE_TEST_CLOCK_FILE.
const clockFileEnv = "STEPD_TEST_CLOCK_FILE"

// TestLimitOnGivenClock: a supervisor given a clock (MainClock, as the
// end-to-end tests' daemon gives its test clock) counts the time limit
// from the job's start as the daemon recorded it (Spec.Start) on that
// clock, and KillWait on it too: an hour's limit and an hour's KillWait
// pass when the test moves the clock, not before, and the job ends
// TIMEOUT by SIGKILL within the wait's minute.
func TestLimitOnGivenClock(t *testing.T) {
	t.Parallel()
	j := newJob(t, `#!/bin/bash
trap 'echo got SIGTERM' TERM
echo start
while :; do sleep 0.05; done
`)
	clockFile := filepath.Join(t.TempDir(), "clock")
	move := func(seconds int) {
		t.Helper()
		if err := os.WriteFile(clockFile, []byte(strconv.Itoa(seconds)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	move(0)
	for _, kv := range supervisorEnv() {
		if !strings.HasPrefix(kv, roleEnv+"=") {
			j.env = append(j.env, kv)
		}
	}
	j.env = append(j.env, roleEnv+"=stepd-clock", clockFileEnv+"="+clockFile)
	j.spec.TimeLimit = time.Hour
	j.spec.KillWait = time.Hour
	// Started 50 minutes ago by the daemon's account: 10 minutes are left,
	// counted from that start, not from when the supervisor came up.
	j.spec.Start = time.Now().Add(-50 * time.Minute).Truncate(time.Second)
	j.start()
	out := fmt.Sprintf("slurm-%d.out", j.spec.JobID)
	j.waitOutput(out, "start")
	if j.ended() {
		t.Fatalf("the job ended before its clock moved; log:\n%s", j.log())
	}
	move(600)
	j.waitOutput(out, "got SIGTERM")
	if !cancelLine(j.spec.JobID, "TIME LIMIT").MatchString(j.out()) {
		t.Errorf("no TIME LIMIT line in output:\n%s", j.out())
	}
	if j.ended() {
		t.Fatalf("the job ended before its KillWait passed on its clock; log:\n%s", j.log())
	}
	move(600 + 3600)
	st := j.wait()
	want := summary{"TIMEOUT", "0:9", "CANCELLED", "0:9", false, true}
	if diff := cmp.Diff(want, summarize(st)); diff != "" {
		t.Errorf("(-want +got):\n%s\nlog:\n%s", diff, j.log())
	}
}
