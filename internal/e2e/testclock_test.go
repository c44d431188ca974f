package e2e

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

// The fake daemons' scenarios are the days the golden files were recorded
// (2026-11-29), and the commands' default windows (sacct's "since
// midnight", squeue's elapsed times) are read from their clock. So that
// the client tests pass on any date and at any hour, the fake daemons and
// the commands they answer share one clock: real time shifted by the
// offset in testClockEnv, which puts "now" just after the recordings at
// the start of each script. Only this test binary reads the variable; the
// real commands' clock is time.Now.
const testClockEnv = "SLITE_TEST_CLOCK_OFFSET"

// recordedNow is the moment the client scripts start at: on the recording
// day, after the last recorded run (10:01:02), in local time as the
// scenarios' times are.
func recordedNow() time.Time {
	return time.Date(2026, 11, 29, 10, 2, 0, 0, time.Local)
}

// clockOffset is what to add to time.Now to be at recordedNow.
func clockOffset() time.Duration { return time.Until(recordedNow()) }

// shiftedNow is a clock shifted by an offset.
func shiftedNow(offset time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(offset) }
}

// testStdio is the commands' I/O in this test binary: the process's own,
// with the clock shifted when the script set testClockEnv.
func testStdio() cmdio.IO {
	io := cli.Stdio()
	if s := os.Getenv(testClockEnv); s != "" {
		off, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			panic("bad " + testClockEnv + ": " + s)
		}
		io.Now = shiftedNow(time.Duration(off))
	}
	return io
}

// testClockFileEnv names a file that moves the live daemon's clock in the
// scripts that run one (scrontab's minutes): the daemon's time is the
// machine's plus the whole seconds the file holds, read again every few
// milliseconds, so `exec sh -c 'echo 60 > $CLOCK'` makes a minute pass
// at once. Only this test binary's daemon and its supervisors read it
// (daemonMain, stepdMain); the real slurmd-lite's and its supervisors'
// clock is the machine's.
const testClockFileEnv = "SLITE_TEST_CLOCK_FILE"

// fileClock is the clock testClockFileEnv describes.
type fileClock struct{ offset atomic.Int64 }

func (c *fileClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// NewTimer is a timer on the clock (the supervisor's, stepd.Clock): it
// fires once the clock has reached now plus d, whether by real time
// passing or by the file moving it; it looks as often as the file is read.
func (c *fileClock) NewTimer(d time.Duration) stepd.Timer {
	t := &fileTimer{c: make(chan time.Time, 1), stop: make(chan struct{})}
	at := c.Now().Add(d)
	go func() {
		tick := time.NewTicker(fileClockPoll)
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

// fileTimer is fileClock's timer.
type fileTimer struct {
	c    chan time.Time
	stop chan struct{}
	once sync.Once
}

func (t *fileTimer) C() <-chan time.Time { return t.c }
func (t *fileTimer) Stop()               { t.once.Do(func() { close(t.stop) }) }

// fileClockPoll is how often the clock's file is read and its timers look.
const fileClockPoll = 10 * time.Millisecond

// newFileClock starts reading path; a missing or unreadable file is an
// offset of 0 until it can be read.
func newFileClock(path string) *fileClock {
	c := &fileClock{}
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			c.offset.Store(int64(time.Duration(n) * time.Second))
		}
	}
	read()
	go func() {
		for range time.Tick(fileClockPoll) {
			read()
		}
	}()
	return c
}
