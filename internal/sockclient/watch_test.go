package sockclient

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The watch's timing (answer.go) runs on Go's timers: in a synctest
// bubble, with a ping in memory, a MessageTimeout of seconds passes in no
// time and every ping comes at its exact moment.

// fakePing answers the watch's pings as answer says (by the ping's
// number, from 1, and the wait it is given), noting when each came.
type fakePing struct {
	start  time.Time
	answer func(n int, wait time.Duration) error

	mu   sync.Mutex
	at   []time.Duration
	dead []time.Duration
	na   *NotAnsweringError
}

func (f *fakePing) ping(wait time.Duration) error {
	f.mu.Lock()
	f.at = append(f.at, time.Since(f.start))
	n := len(f.at)
	f.mu.Unlock()
	return f.answer(n, wait)
}

func (f *fakePing) died(na *NotAnsweringError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead = append(f.dead, time.Since(f.start))
	f.na = na
}

func (f *fakePing) seen() (pings, dead []time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.at), slices.Clone(f.dead)
}

func secs(s ...float64) []time.Duration {
	var d []time.Duration
	for _, x := range s {
		d = append(d, time.Duration(x*float64(time.Second)))
	}
	return d
}

// unanswered is a ping that waits out its time and gets no answer.
func unanswered(wait time.Duration) error {
	time.Sleep(wait)
	return &NotAnsweringError{Socket: "d.sock"}
}

// A daemon that answers three pings and then none is declared dead
// MessageTimeout after it last answered, to the nanosecond: pings every
// half MessageTimeout (5, 10, 15 s), the fourth (20 s) given the other
// half, dead at 25 s; and then it is pinged no more.
func TestWatchDeclaresDeadMessageTimeoutAfterTheLastAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakePing{start: time.Now(), answer: func(n int, wait time.Duration) error {
			if n <= 3 {
				return nil
			}
			return unanswered(wait)
		}}
		stop := watch(10*time.Second, f.ping, f.died)
		defer stop()
		time.Sleep(time.Hour)
		pings, dead := f.seen()
		if want := secs(5, 10, 15, 20); !slices.Equal(pings, want) {
			t.Errorf("pings at %v, want %v", pings, want)
		}
		if want := secs(25); !slices.Equal(dead, want) {
			t.Errorf("declared dead at %v, want once, at %v", dead, want)
		}
		if f.na == nil || f.na.Timeout != 10*time.Second {
			t.Errorf("the error %+v, want MessageTimeout 10s in it", f.na)
		}
	})
}

// A ping answered late, within its half, keeps the request waiting; the
// next ping comes a half after that answer. Stopped, the watch pings no
// more and declares nothing.
func TestWatchWaitsOnWhileAnsweredAndStopsWhenTold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakePing{start: time.Now(), answer: func(n int, wait time.Duration) error {
			if n == 1 {
				time.Sleep(wait - time.Second) // answered a second before its time
			}
			return nil
		}}
		stop := watch(10*time.Second, f.ping, f.died)
		time.Sleep(16 * time.Second)
		stop()
		time.Sleep(time.Hour)
		pings, dead := f.seen()
		if want := secs(5, 14); !slices.Equal(pings, want) {
			t.Errorf("pings at %v, want %v (the second a half after the first's answer at 9s)", pings, want)
		}
		if len(dead) != 0 {
			t.Errorf("declared dead at %v, want never", dead)
		}
	})
}

// A request that ends while a ping is unanswered (stop during the ping)
// is not declared dead after it.
func TestWatchStoppedDuringAPingDeclaresNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakePing{start: time.Now(), answer: func(_ int, wait time.Duration) error { return unanswered(wait) }}
		stop := watch(10*time.Second, f.ping, f.died)
		time.Sleep(7 * time.Second) // the ping at 5s waits until 10s
		stop()
		time.Sleep(time.Hour)
		if pings, dead := f.seen(); !slices.Equal(pings, secs(5)) || len(dead) != 0 {
			t.Errorf("pings at %v, dead at %v; want one ping, and never dead", pings, dead)
		}
	})
}
