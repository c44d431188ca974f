package e2e

import (
	"os"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
)

// The fake daemons' scenarios are the days the golden files were recorded
// (2026-11-29), and the commands' default windows (sacct's "since
// midnight", squeue's elapsed times) are read from their clock. So that
// the client tests pass on any date and at any hour, the fake daemons and
// the commands they answer share one clock, stopped at the instant
// testClockEnv holds (recordedNow, in Unix nanoseconds): a scenario's job
// "started 9 s ago" shows 0:09 in squeue however long the machine took
// between the fake daemon's answer and squeue's formatting (with a
// clock that ran, the two read it apart, and a second's turn between
// them showed 0:10: seen under a CPU hog). Only this test binary reads
// the variable; the real commands' clock is time.Now.
const testClockEnv = "SLITE_TEST_CLOCK_AT"

// testClockOffsetEnv shifts a command's running clock by the nanoseconds
// it holds, for the live daemon's scripts whose commands look from hours
// ahead (sreport_usage) or from the minutes a script moved its daemon
// (scrontab). testClockEnv, where set, wins.
const testClockOffsetEnv = "SLITE_TEST_CLOCK_OFFSET"

// recordedNow is the moment the client scripts run at: on the recording
// day, after the last recorded run (10:01:02), in local time as the
// scenarios' times are.
func recordedNow() time.Time {
	return time.Date(2026, 11, 29, 10, 2, 0, 0, time.Local)
}

// shiftedNow is a clock shifted by an offset.
func shiftedNow(offset time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(offset) }
}

// stoppedAt is a clock stopped at ns (Unix nanoseconds), in local time.
func stoppedAt(ns int64) func() time.Time {
	at := time.Unix(0, ns)
	return func() time.Time { return at }
}

// testStdio is the commands' I/O in this test binary: the process's own,
// with the clock stopped where the script set testClockEnv, or shifted
// by testClockOffsetEnv.
func testStdio() cmdio.IO {
	io := cli.Stdio()
	if s := os.Getenv(testClockEnv); s != "" {
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			panic("bad " + testClockEnv + ": " + s)
		}
		io.Now = stoppedAt(ns)
	} else if s := os.Getenv(testClockOffsetEnv); s != "" {
		off, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			panic("bad " + testClockOffsetEnv + ": " + s)
		}
		io.Now = shiftedNow(time.Duration(off))
	}
	return io
}

// testClockFileEnv names a file that moves the live daemon's clock in the
// scripts that run one (scrontab's minutes): the daemon's time is the
// machine's plus the whole seconds the file holds, read again every few
// milliseconds, so `exec sh -c 'echo 60 > $CLOCK'` makes a minute pass
// at once (a clocktest.File). Only this test binary's daemon and its
// supervisors read it (daemonMain, stepdMain); the real slurmd-lite's and
// its supervisors' clock is the machine's.
const testClockFileEnv = "SLITE_TEST_CLOCK_FILE"
