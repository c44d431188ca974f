package stepd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clockFileEnv names the file of the test supervisor's clock
// (STEPD_TEST_ROLE=stepd-clock): the machine's time plus the whole
// seconds the file holds, as the end-to-end tests' SLITE_TEST_CLOCK_FILE.
const clockFileEnv = "STEPD_TEST_CLOCK_FILE"

// fileClock is a Clock a test moves by writing seconds into a file.
type fileClock struct{ offset atomic.Int64 }

func newFileClock(path string) *fileClock {
	c := &fileClock{}
	read := func() {
		if b, err := os.ReadFile(path); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				c.offset.Store(int64(time.Duration(n) * time.Second))
			}
		}
	}
	read()
	go func() {
		for range time.Tick(10 * time.Millisecond) {
			read()
		}
	}()
	return c
}

func (c *fileClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *fileClock) NewTimer(d time.Duration) Timer {
	t := &fileTimer{c: make(chan time.Time, 1), stop: make(chan struct{})}
	at := c.Now().Add(d)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if now := c.Now(); !now.Before(at) {
				t.c <- now
				return
			}
			select {
			case <-t.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return t
}

type fileTimer struct {
	c    chan time.Time
	stop chan struct{}
	once sync.Once
}

func (t *fileTimer) C() <-chan time.Time { return t.c }
func (t *fileTimer) Stop()               { t.once.Do(func() { close(t.stop) }) }

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
