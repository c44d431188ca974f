package stepd

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
)

// Clock is what a supervisor counts a job's time limit, --signal's
// warning and KillWait on. In production it is the machine's monotonic
// clock (Go's timers, which do not move with the wall clock), counted
// from the supervision's start. The end-to-end test binary, whose
// `slurmd-lite stepd` is the test binary itself, gives its own (MainClock):
// the daemon's test clock, which a script moves by a minute at once, so
// that a one-minute limit and its KillWait take seconds. Nothing outside
// that test binary can give another clock: production's commands call
// Main, which takes none.
type Clock interface {
	// Now is the clock's time.
	Now() time.Time
	// NewTimer is a timer that fires once d has passed on the clock.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's timer (clock.Timer, so that the tests' clock,
// internal/clock/clocktest, serves the daemon and the supervisor alike).
type Timer = clock.Timer

// machineClock is the machine's monotonic clock (production's).
type machineClock struct{}

func (machineClock) Now() time.Time { return time.Now() }

func (machineClock) NewTimer(d time.Duration) Timer { return machineTimer{time.NewTimer(d)} }

type machineTimer struct{ t *time.Timer }

func (t machineTimer) C() <-chan time.Time { return t.t.C }
func (t machineTimer) Stop()               { t.t.Stop() }
