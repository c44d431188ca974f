package sockclient

import (
	"errors"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The socket's own timeouts (patience.arm) time a stalled read or write;
// these tests give MessageTimeout 100 ms and a ping of their own, which
// answers by its number, and check what the connection does after each
// half: ping, wait on, or give up. Nothing here waits for a moment to pass
// but the kernel's timeouts, so no figure below depends on the machine's
// speed except the lower bounds the kernel guarantees.

// pair is a connected socket pair: the client's end as a conn with
// MessageTimeout timeout and ping, and the daemon's end.
func pair(t *testing.T, timeout time.Duration, ping func(n int) error) (c *conn, peer int, pings func() int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	p := &patience{timeout: timeout, half: timeout / 2, pid: 4242, ping: func(wait time.Duration) error {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		return ping(k)
	}}
	if err := p.arm(fds[0]); err != nil {
		t.Fatal(err)
	}
	c = &conn{fd: fds[0], patience: p}
	t.Cleanup(func() { c.Close(); syscall.Close(fds[1]) })
	return c, fds[1], func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func mute() error { return &NotAnsweringError{Socket: "d.sock"} }

// A daemon that answers three pings and then none: the read pings after
// each half MessageTimeout, and fails at the fourth, unanswered, with the
// daemon's pid and MessageTimeout in the error; a read after that fails
// at once, without another ping.
func TestAStalledReadIsDeclaredDeadAtTheFirstUnansweredPing(t *testing.T) {
	c, _, pings := pair(t, 100*time.Millisecond, func(n int) error {
		if n <= 3 {
			return nil
		}
		return mute()
	})
	start := time.Now()
	_, err := c.Read(make([]byte, 16))
	took := time.Since(start)
	var na *NotAnsweringError
	if !errors.As(err, &na) {
		t.Fatalf("read: %v, want a *NotAnsweringError", err)
	}
	if pings() != 4 {
		t.Errorf("%d pings, want 4 (three answered, the fourth not)", pings())
	}
	if na.Timeout != 100*time.Millisecond || na.PID != 4242 {
		t.Errorf("error %+v, want MessageTimeout 100ms and pid 4242", na)
	}
	if took < 200*time.Millisecond {
		t.Errorf("gave up after %v, before four halves of MessageTimeout (200ms)", took)
	}
	if _, err := c.Read(make([]byte, 16)); !errors.As(err, &na) || pings() != 4 {
		t.Errorf("a second read: %v after %d pings, want the same error and no new ping", err, pings())
	}
}

// An answer that comes while the daemon answers pings is read: here it is
// written when the second ping comes.
func TestAnAnswerAfterPingsIsRead(t *testing.T) {
	var peer int
	c, peer, pings := pair(t, 100*time.Millisecond, func(n int) error {
		if n == 2 {
			syscall.Write(peer, []byte("HTTP/1.1 200 OK\r\n"))
		}
		return nil
	})
	b := make([]byte, 64)
	n, err := c.Read(b)
	if err != nil || string(b[:n]) != "HTTP/1.1 200 OK\r\n" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	if pings() != 2 || c.patience.dead.Load() != nil {
		t.Errorf("%d pings, dead %v; want 2, and not dead", pings(), c.patience.dead.Load())
	}
}

// A request the daemon does not read (stopped with its socket's buffer
// full) stalls the write: the same pings, the same end.
func TestAStalledWriteIsDeclaredDead(t *testing.T) {
	c, _, pings := pair(t, 100*time.Millisecond, func(n int) error { return mute() })
	_, err := c.Write(make([]byte, 16<<20))
	var na *NotAnsweringError
	if !errors.As(err, &na) || pings() != 1 {
		t.Fatalf("write: %v after %d pings, want a *NotAnsweringError after 1", err, pings())
	}
}

// abort (a context done) ends a read, whether it is already blocked or
// not yet begun, and does nothing once the connection is closed.
func TestAbortEndsARead(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[1])
	c := &conn{fd: fds[0]}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 16))
		done <- err
	}()
	c.abort()
	if err := <-done; err != io.EOF {
		t.Errorf("read after abort: %v, want io.EOF", err)
	}
	c.Close()
	c.abort() // no descriptor left to shut down
}
