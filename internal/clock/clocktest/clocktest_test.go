package clocktest_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock/clocktest"
)

// In a synctest bubble the machine's time is the bubble's, which moves
// only when every goroutine waits: the file clock's polling is exact
// there, and an hour takes no time.

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// fired says whether tm has fired, and when on the clock.
func fired(tm interface{ C() <-chan time.Time }) (time.Time, bool) {
	select {
	case at := <-tm.C():
		return at, true
	default:
		return time.Time{}, false
	}
}

// The file's seconds are read within one Poll of being written: the clock
// is then the machine's time plus them, to the nanosecond.
func TestFileClockReadsTheFileEveryPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "clock")
		start := time.Now()
		c := clocktest.NewFile(path) // no file yet: an offset of 0
		defer c.Close()
		if got := c.Now().Sub(start); got != 0 {
			t.Fatalf("no file: the clock is %v from the machine's, want 0", got)
		}
		write(t, path, "60")
		if got := c.Now().Sub(start); got != 0 {
			t.Errorf("before the next Poll: %v, want 0 (the file is read every Poll, not at each Now)", got)
		}
		time.Sleep(clocktest.Poll)
		synctest.Wait() // the reader, woken at the same instant, has read
		if got := c.Now().Sub(start); got != time.Minute+clocktest.Poll {
			t.Errorf("one Poll after the file said 60: %v from the start, want exactly 1m0.01s", got)
		}
		write(t, path, "not a number") // kept: the last offset stands
		time.Sleep(clocktest.Poll)
		synctest.Wait()
		if got := c.Now().Sub(start); got != time.Minute+2*clocktest.Poll {
			t.Errorf("after an unreadable file: %v from the start, want 1m0.02s (the last offset kept)", got)
		}
	})
}

// A timer fires when the clock reaches its time, by the file moving it or
// by real time passing, within a Poll; not a moment before; and never once
// stopped or once its clock is closed.
func TestFileClockTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "clock")
		write(t, path, "0")
		start := time.Now()
		c := clocktest.NewFile(path)
		defer c.Close()
		hour := c.NewTimer(time.Hour)
		stopped := c.NewTimer(time.Minute)
		stopped.Stop()
		// 3599 of the hour's seconds by the file: the last second is real
		// time's, which passes here in no time.
		write(t, path, "3599")
		time.Sleep(time.Second - clocktest.Poll)
		synctest.Wait()
		if at, ok := fired(hour); ok {
			t.Fatalf("the hour's timer fired at %v on the clock, before its hour", at.Sub(start))
		}
		time.Sleep(clocktest.Poll)
		synctest.Wait()
		at, ok := fired(hour)
		if !ok {
			t.Fatal("the hour's timer did not fire at 3599 s by the file and 1 s of real time")
		}
		if at.Sub(start) != time.Hour {
			t.Errorf("the hour's timer fired at %v on the clock, want exactly 1h0m0s", at.Sub(start))
		}
		if _, ok := fired(stopped); ok {
			t.Error("a stopped timer fired")
		}

		// Moved by the file at once: a day's timer fires within a Poll of
		// the file saying so.
		day := c.NewTimer(24 * time.Hour)
		write(t, path, "90000") // 25 hours
		time.Sleep(clocktest.Poll)
		synctest.Wait()
		if _, ok := fired(day); !ok {
			// The timer may have looked a moment before the reader read.
			time.Sleep(clocktest.Poll)
			synctest.Wait()
			if _, ok := fired(day); !ok {
				t.Fatal("the day's timer did not fire within two Polls of the file moving the clock past it")
			}
		}

		// Closed, the clock's timers never fire, and its goroutines end
		// (the bubble waits for them).
		late := c.NewTimer(time.Minute)
		c.Close()
		time.Sleep(time.Hour)
		if _, ok := fired(late); ok {
			t.Error("a timer of a closed clock fired")
		}
	})
}
