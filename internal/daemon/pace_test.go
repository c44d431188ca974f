package daemon

import (
	"testing"
	"testing/synctest"
	"time"
)

// passPace counts the next pass's wait from the end of the last one, on
// the machine's clock (a Stopwatch): in a synctest bubble that clock moves
// only by the test's own waits, so each wait is exact: twice the last
// pass's cost after a job's end, eight times after a submission, less the
// time since it ended, and none for a pass too cheap to pace.
func TestPassPaceWaitsAMultipleOfTheLastPassFromItsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p passPace
		if w := p.wait(kickedPace); w != 0 {
			t.Errorf("before any pass: wait %v, want 0", w)
		}
		// A pass that plans for 10 ms, and then starts jobs for 30 ms more
		// (forks and the disk, which the pace does not ration): its wait
		// counts from its end, at its planning's cost.
		p.run(func() time.Duration {
			time.Sleep(40 * time.Millisecond)
			return 10 * time.Millisecond
		})
		for _, c := range []struct {
			after        time.Duration // since the pass ended
			ended, kickd time.Duration // the waits left
		}{
			{0, 20 * time.Millisecond, 80 * time.Millisecond},
			{15 * time.Millisecond, 5 * time.Millisecond, 65 * time.Millisecond},
			{20 * time.Millisecond, 0, 60 * time.Millisecond},
			{80 * time.Millisecond, -60 * time.Millisecond, 0},
		} {
			time.Sleep(c.after - p.ended.Elapsed())
			if got := p.wait(endedPace); got != c.ended {
				t.Errorf("%v after a 10ms pass, after a job's end: wait %v, want %v", c.after, got, c.ended)
			}
			if got := p.wait(kickedPace); got != c.kickd {
				t.Errorf("%v after a 10ms pass, after a submission: wait %v, want %v", c.after, got, c.kickd)
			}
		}
		// A cheap pass: eight times 50µs is worth a timer, twice is not.
		p.run(func() time.Duration { return 50 * time.Microsecond })
		if got := p.wait(endedPace); got != 0 {
			t.Errorf("after a 50µs pass, after a job's end: wait %v, want 0 (under minPassGap)", got)
		}
		if got := p.wait(kickedPace); got != 400*time.Microsecond {
			t.Errorf("after a 50µs pass, after a submission: wait %v, want 400µs", got)
		}
		p.run(func() time.Duration { return 20 * time.Microsecond })
		if got := p.wait(kickedPace); got != 0 {
			t.Errorf("after a 20µs pass, after a submission: wait %v, want 0 (160µs is under minPassGap)", got)
		}
	})
}
