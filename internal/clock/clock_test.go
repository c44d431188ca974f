package clock

import (
	"testing"
	"testing/synctest"
	"time"
)

// A deadline passes when its time has come, and not a nanosecond before;
// a stopwatch counts from its start, exactly; the zero one counts from
// long ago (srun's "no Ctrl-C yet"). In a synctest bubble the machine's
// clock is the bubble's, which moves only by the waits below.
func TestDeadlineAndStopwatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := After(2 * time.Second)
		s := Start()
		if d.Passed() || d.Left() != 2*time.Second {
			t.Errorf("a deadline 2s away: passed %v, left %v", d.Passed(), d.Left())
		}
		time.Sleep(2*time.Second - time.Nanosecond)
		if d.Passed() || d.Left() != time.Nanosecond {
			t.Errorf("a nanosecond before the deadline: passed %v, left %v", d.Passed(), d.Left())
		}
		time.Sleep(time.Nanosecond)
		if !d.Passed() || d.Left() != 0 {
			t.Errorf("at the deadline: passed %v, left %v; want passed, 0 left", d.Passed(), d.Left())
		}
		time.Sleep(time.Second)
		if !d.Passed() || d.Left() != -time.Second {
			t.Errorf("a second past the deadline: passed %v, left %v", d.Passed(), d.Left())
		}
		if e := s.Elapsed(); e != 3*time.Second {
			t.Errorf("a stopwatch after 3s: %v", e)
		}
		if got := d.ForConn().Sub(time.Now()); got != -time.Second {
			t.Errorf("the deadline for a connection is %v from now, want -1s", got)
		}
		if d := After(-time.Second); !d.Passed() || d.Left() != -time.Second {
			t.Errorf("a deadline a second ago: passed %v, left %v", d.Passed(), d.Left())
		}
	})
	var zero Stopwatch
	if zero.Elapsed() < 24*time.Hour {
		t.Errorf("the zero stopwatch: %v, want long ago", zero.Elapsed())
	}
}
