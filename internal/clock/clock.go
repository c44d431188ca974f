// Package clock is where slurm-lite reads the machine's clock.
//
// A job's times (submit, eligible, start, end), its events and the
// schedule's "now" come from one clock: the daemon's, injected as a Clock
// (Real in production, a fake one in tests), as slurmctld's own time
// decides a job's times in Slurm. The other reads of the machine's clock
// only wait or measure real time (a socket's deadline, a process given
// two seconds to exit, a pass's cost): Deadline and Stopwatch do that and
// hand out durations and yes-or-no answers, never a time of day, so no
// such read can reach stored or shown data.
//
// internal/importrules' TestWallClockReads fails when time.Now,
// time.Since or time.Until is used outside the short list of files
// allowed to (this one among them).
package clock

import "time"

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Timer is a timer on a clock that a caller gives (stepd.Clock's): it
// fires once, when the clock has reached the time it was set for.
type Timer interface {
	// C receives once the timer fires.
	C() <-chan time.Time
	// Stop stops the timer; it does not fire after.
	Stop()
}

// Real is the machine's clock.
type Real struct{}

// Now is the machine's time.
func (Real) Now() time.Time { return time.Now() }

// Deadline is a moment a real wait gives up at, on the monotonic clock.
type Deadline struct{ at time.Time }

// After is the deadline d from now.
func After(d time.Duration) Deadline { return Deadline{time.Now().Add(d)} }

// Passed reports whether the deadline has come.
func (d Deadline) Passed() bool { return !time.Now().Before(d.at) }

// Left is the time until the deadline (negative once it has passed).
func (d Deadline) Left() time.Duration { return time.Until(d.at) }

// ForConn is the deadline as net.Conn's SetDeadline takes it (the one
// place a Deadline gives a time of day; a connection is not data).
func (d Deadline) ForConn() time.Time { return d.at }

// Stopwatch measures real time from its start, on the monotonic clock.
type Stopwatch struct{ from time.Time }

// Start starts a stopwatch.
func Start() Stopwatch { return Stopwatch{time.Now()} }

// Elapsed is the real time since the stopwatch started.
func (s Stopwatch) Elapsed() time.Duration { return time.Since(s.from) }
