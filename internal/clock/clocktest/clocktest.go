// Package clocktest is the clock a test moves from outside a process: the
// end-to-end tests' daemon and supervisors (SLITE_TEST_CLOCK_FILE) and the
// supervisor's own tests (STEPD_TEST_CLOCK_FILE) run on a File, which a
// script moves by writing whole seconds into a file, so that a one-minute
// time limit and its KillWait take no time.
//
// Only tests import it (internal/importrules checks it): no production
// binary can be put on a clock a file moves.
package clocktest

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
)

// Poll is how often a File reads its file again, and how often its timers
// look at the time.
const Poll = 10 * time.Millisecond

// File is a clock whose time is the machine's plus the whole seconds its
// file holds (a missing or unreadable file holds 0 until it can be read).
// It is a clock.Clock, and a stepd.Clock with its timers.
type File struct {
	path   string
	offset atomic.Int64
	closed chan struct{}
	once   sync.Once
}

// NewFile starts reading path, now and every Poll until Close.
func NewFile(path string) *File {
	c := &File{path: path, closed: make(chan struct{})}
	c.read()
	go func() {
		tick := time.NewTicker(Poll)
		defer tick.Stop()
		for {
			select {
			case <-c.closed:
				return
			case <-tick.C:
				c.read()
			}
		}
	}()
	return c
}

func (c *File) read() {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
		c.offset.Store(int64(time.Duration(n) * time.Second))
	}
}

// Close stops reading the file; the clock keeps its last offset, and its
// timers not yet fired never fire. A process that runs on the clock to
// its end need not call it; a test that ends before its process does
// (a synctest bubble waits for every goroutine) does.
func (c *File) Close() { c.once.Do(func() { close(c.closed) }) }

// Now is the machine's time plus the file's seconds.
func (c *File) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// NewTimer is a timer that fires once the clock has reached now plus d,
// whether by real time passing or by the file moving it; it looks every
// Poll, so it fires at most a Poll late.
func (c *File) NewTimer(d time.Duration) clock.Timer {
	t := &timer{c: make(chan time.Time, 1), stop: make(chan struct{})}
	at := c.Now().Add(d)
	go func() {
		tick := time.NewTicker(Poll)
		defer tick.Stop()
		for {
			if now := c.Now(); !now.Before(at) {
				t.c <- now
				return
			}
			select {
			case <-t.stop:
				return
			case <-c.closed:
				return
			case <-tick.C:
			}
		}
	}()
	return t
}

// timer is File's timer.
type timer struct {
	c    chan time.Time
	stop chan struct{}
	once sync.Once
}

func (t *timer) C() <-chan time.Time { return t.c }
func (t *timer) Stop()               { t.once.Do(func() { close(t.stop) }) }
