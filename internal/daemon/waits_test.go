package daemon

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
)

// A route that must see the loop act (awaitSample after a GPU's drain,
// waitReleased in a yield) wakes the loop and waits, bounded by real
// time: Go's timers, which in a synctest bubble move only when every
// goroutine waits, so each bound and each poll is seen at its exact
// moment. The loop here is a stand-in: a goroutine that takes the wakes
// and acts when the test says.

// fakeLoop takes a daemon's wakes, noting when each came, and on each
// calls act with the time since start.
type fakeLoop struct {
	start time.Time
	mu    sync.Mutex
	wakes []time.Duration
	stop  chan struct{}
	done  chan struct{}
}

func runFakeLoop(d *Daemon, act func(since time.Duration)) *fakeLoop {
	l := &fakeLoop{start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			case <-d.kick:
				since := time.Since(l.start)
				l.mu.Lock()
				l.wakes = append(l.wakes, since)
				l.mu.Unlock()
				act(since)
			}
		}
	}()
	return l
}

// end stops the loop and returns when it was woken.
func (l *fakeLoop) end() []time.Duration {
	close(l.stop)
	<-l.done
	return slices.Clone(l.wakes)
}

func millis(ms ...int) []time.Duration {
	var d []time.Duration
	for _, m := range ms {
		d = append(d, time.Duration(m)*time.Millisecond)
	}
	return d
}

// awaitSample returns within a tick (10 ms) of a sample newer than its
// time; with none it gives up at 3 s exactly; a caller that leaves ends
// it at once.
func TestAwaitSampleWaitsForANewerSampleForThreeSeconds(t *testing.T) {
	at := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	publish := func(d *Daemon, t time.Time) {
		d.mu.Lock()
		d.gsnap = gpu.Snapshot{Time: t}
		d.mu.Unlock()
	}
	t.Run("a sample 45ms after the wake", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &Daemon{kick: make(chan struct{}, 1)}
			publish(d, at)
			l := runFakeLoop(d, func(time.Duration) {
				// The pass samples 45 ms after it is woken.
				time.AfterFunc(45*time.Millisecond, func() { publish(d, at.Add(time.Second)) })
			})
			start := time.Now()
			d.awaitSample(context.Background(), at)
			if took := time.Since(start); took != 50*time.Millisecond {
				t.Errorf("returned after %v, want 50ms: the first tick after the sample at 45ms", took)
			}
			if wakes := l.end(); !slices.Equal(wakes, millis(0)) {
				t.Errorf("the loop was woken at %v, want once, at once", wakes)
			}
		})
	})
	t.Run("no newer sample", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &Daemon{kick: make(chan struct{}, 1)}
			publish(d, at) // a fake clock that stands still: no sample is after it
			l := runFakeLoop(d, func(time.Duration) {})
			start := time.Now()
			d.awaitSample(context.Background(), at)
			if took := time.Since(start); took != 3*time.Second {
				t.Errorf("returned after %v, want 3s exactly", took)
			}
			l.end()
		})
	})
	t.Run("the caller leaves", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &Daemon{kick: make(chan struct{}, 1)}
			l := runFakeLoop(d, func(time.Duration) {})
			ctx, cancel := context.WithTimeout(context.Background(), 1234*time.Millisecond)
			defer cancel()
			start := time.Now()
			d.awaitSample(ctx, at)
			if took := time.Since(start); took != 1234*time.Millisecond {
				t.Errorf("returned after %v, want 1.234s, when its caller left", took)
			}
			l.end()
		})
	})
}

// waitReleased wakes the loop every 200 ms (each pass samples the GPUs)
// until the job's GPUs are released, and gives up at its limit exactly.
func TestWaitReleasedWakesEveryPassAndGivesUpAtItsLimit(t *testing.T) {
	t.Run("released by the pass at 450ms", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &Daemon{kick: make(chan struct{}, 1), releasing: map[uint32]gpu.Job{7: {ID: "7"}}}
			l := runFakeLoop(d, func(since time.Duration) {
				if since == 400*time.Millisecond {
					time.AfterFunc(50*time.Millisecond, func() {
						d.mu.Lock()
						delete(d.releasing, 7)
						d.mu.Unlock()
					})
				}
			})
			start := time.Now()
			if !d.waitReleased(context.Background(), 7, 30*time.Second) {
				t.Error("the released GPUs were not seen released")
			}
			if took := time.Since(start); took != 600*time.Millisecond {
				t.Errorf("returned after %v, want 600ms: the first look after the release at 450ms", took)
			}
			if wakes := l.end(); !slices.Equal(wakes, millis(0, 200, 400)) {
				t.Errorf("the loop was woken at %v, want every 200ms until the release", wakes)
			}
		})
	})
	t.Run("never released", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			d := &Daemon{kick: make(chan struct{}, 1), releasing: map[uint32]gpu.Job{7: {ID: "7"}}}
			l := runFakeLoop(d, func(time.Duration) {})
			start := time.Now()
			if d.waitReleased(context.Background(), 7, time.Second) {
				t.Error("GPUs never released were seen released")
			}
			if took := time.Since(start); took != time.Second {
				t.Errorf("gave up after %v, want its limit, 1s", took)
			}
			if wakes := l.end(); !slices.Equal(wakes, millis(0, 200, 400, 600, 800)) {
				t.Errorf("the loop was woken at %v, want every 200ms until the limit", wakes)
			}
		})
	})
}
