package clock

import (
	"testing"
	"time"
)

// A deadline passes when its time has come, and not before; a stopwatch
// counts from its start, and the zero one from long ago (srun's "no
// Ctrl-C yet").
func TestDeadlineAndStopwatch(t *testing.T) {
	if d := After(time.Hour); d.Passed() || d.Left() <= 59*time.Minute {
		t.Errorf("a deadline an hour away: passed %v, left %v", d.Passed(), d.Left())
	}
	if d := After(-time.Second); !d.Passed() || d.Left() > -time.Second {
		t.Errorf("a deadline a second ago: passed %v, left %v", d.Passed(), d.Left())
	}
	if e := Start().Elapsed(); e < 0 || e > time.Minute {
		t.Errorf("a stopwatch just started: %v", e)
	}
	var zero Stopwatch
	if zero.Elapsed() < 24*time.Hour {
		t.Errorf("the zero stopwatch: %v, want long ago", zero.Elapsed())
	}
}
