package sockclient

import (
	"io"
	"sync"
	"syscall"
)

// conn is one connection to the daemon: a blocking socket, read and
// written with the system calls alone. Why not an os.File: a command's
// first os.File on a socket sets up the runtime's network poller (an epoll
// instance, an eventfd, registrations) and parks its goroutine in it to
// wait for the answer. A blocking read is one call and fewer page faults;
// but while a goroutine waits in it the runtime's monitor thread wakes
// every 20 us, which it does not for one parked in the poller, so for
// sbatch the CPU came out the same within the noise (docs/bench.md, "The
// last tenths"). What it does gain is patience: MessageTimeout without a
// Go timer.
//
// What deadlines did, abort does: it shuts the socket down, so that a read
// or write blocked on it returns at once (end of file, or EPIPE), from
// another goroutine (a context's AfterFunc, the answer's watchdog). The
// lock keeps abort from touching a descriptor number that Close has given
// back and the process may have reused.
//
// A read or write that times out (the socket's timeouts are half
// MessageTimeout: patience) asks patience whether to wait on.
type conn struct {
	mu       sync.Mutex
	fd       int       // -1 once closed
	patience *patience // nil: no MessageTimeout
}

// waitOn says whether a read or write that returned err should be tried
// again: it was interrupted, or it timed out and the daemon still answers
// pings. A daemon that does not is the error returned.
func (c *conn) waitOn(err error) (bool, error) {
	switch {
	case err == syscall.EINTR:
		return true, nil
	case err == syscall.EAGAIN && c.patience != nil:
		if err := c.patience.stalled(); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, err
}

func (c *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(c.fd, p)
		switch {
		case err != nil:
			again, err := c.waitOn(err)
			if again {
				continue
			}
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p. MSG_NOSIGNAL: a daemon that hung up (a request
// over its budget is refused before it is read whole) is an EPIPE error
// here, not a SIGPIPE.
func (c *conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := syscall.SendmsgN(c.fd, p[done:], nil, nil, syscall.MSG_NOSIGNAL)
		if err != nil {
			again, err := c.waitOn(err)
			if again {
				continue
			}
			return done, err
		}
		done += n
	}
	return done, nil
}

// abort ends the connection's pending and future reads and writes.
func (c *conn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd >= 0 {
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
}

// Close closes the socket; abort does nothing after it.
func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return nil
	}
	err := syscall.Close(c.fd)
	c.fd = -1
	return err
}
