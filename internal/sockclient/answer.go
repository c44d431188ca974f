package sockclient

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// A daemon that is stopped (SIGSTOP, a debugger) or wedged still takes
// connections: the kernel queues them. Without a deadline a command would
// wait for it forever; with a plain one, a request that takes long by
// design (scontrol yield waits for NVML to see the GPUs released, srun for
// room for its step) would fail on a healthy daemon. So a command waits
// half of MessageTimeout (Slurm's name, 10 s by default) for its answer
// (or for room to write its request), and then asks the daemon's ping
// route on a connection of its own, each ping given the other half: while
// pings are answered it waits on, another half each time; the first that
// is not ends the request with a *NotAnsweringError, MessageTimeout after
// the daemon last answered.

// pingPath is the daemon's liveness route (api.PathPing; this package
// links nothing of the daemon's).
const pingPath = "/v1/ping"

// NotAnsweringError says that the daemon took the connection but answered
// neither the request nor a ping within Timeout.
type NotAnsweringError struct {
	Socket  string
	Timeout time.Duration
	// PID is the daemon's process (SO_PEERCRED of the connection), 0 when
	// unknown.
	PID int
}

func (e *NotAnsweringError) Error() string {
	pid := "PID"
	who := "slurmd-lite"
	if e.PID > 0 {
		pid = fmt.Sprint(e.PID)
		who = fmt.Sprintf("slurmd-lite (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s at %s is not answering (no reply within %s, MessageTimeout); "+
		"see whether it is stopped (T in: ps -o stat= -p %s; resume it with: kill -CONT %s) or busy (its log)",
		who, e.Socket, e.Timeout, pid, pid)
}

// SetMessageTimeout sets how long the client waits for an answer before it
// pings the daemon (see above); 0 waits as long as the request's context.
func (c *Client) SetMessageTimeout(d time.Duration) { c.answer = d }

// Ping asks the daemon whether it is there, waiting at most timeout: nil,
// a *NotAnsweringError, or why it cannot be reached (*UnreachableError).
func Ping(socket string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := New(socket)
	var pid int
	c.peer = func(p int) { pid = p }
	err := c.Do(ctx, "GET", pingPath, nil, nil)
	var ue *UnreachableError
	var le *api.Error
	switch {
	case err == nil, errors.As(err, &le):
		return nil // an answer, even a refusal, is an answer
	case errors.As(err, &ue):
		return err
	}
	// No answer: the deadline passed (the socket's deadline may fire a
	// moment before the context's, so the error is the read's timeout,
	// not the context's), or the connection broke.
	return &NotAnsweringError{Socket: socket, Timeout: timeout, PID: pid}
}

// patience is MessageTimeout on one connection, kept by the kernel: the
// socket's SO_RCVTIMEO and SO_SNDTIMEO are half of it, so that a read or
// write that waits that long with nothing returns EAGAIN, and conn calls
// stalled. Why not a timer, as before: a Go timer starts the runtime's
// network poller and wakes a thread to wait in it, in every command, for
// a watchdog that nearly never fires (docs/bench.md, "The last tenths").
type patience struct {
	timeout, half time.Duration
	// ping asks the daemon whether it is there, waiting at most wait.
	ping func(wait time.Duration) error
	// pid is the daemon's, for the error, when ping does not know it.
	pid int
	// dead is set once the daemon has not answered a ping.
	dead atomic.Pointer[NotAnsweringError]
}

func newPatience(socket string, timeout time.Duration, pid int) *patience {
	return &patience{timeout: timeout, half: max(timeout/2, time.Millisecond), pid: pid,
		ping: func(wait time.Duration) error { return Ping(socket, wait) }}
}

// arm sets the socket's timeouts to half MessageTimeout.
func (p *patience) arm(fd int) error {
	tv := syscall.NsecToTimeval(p.half.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return err
	}
	return syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
}

// stalled is called when a read or write has waited half MessageTimeout:
// it pings the daemon, giving the ping the other half. Answered (even by
// a refusal, or not reachable at all: a daemon gone closes the
// connection, which the read then sees), the caller waits on, another
// half; not answered, the daemon is declared not answering, MessageTimeout
// after it last answered, and every read and write fails from then on.
func (p *patience) stalled() error {
	if na := p.dead.Load(); na != nil {
		return na
	}
	var na *NotAnsweringError
	if err := p.ping(p.half); !errors.As(err, &na) {
		return nil
	}
	na.Timeout = p.timeout
	if na.PID == 0 {
		na.PID = p.pid
	}
	p.dead.Store(na)
	return na
}

// peerPID is the process at the other end of a connected Unix socket.
func peerPID(fd int) int {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0
	}
	return int(cred.Pid)
}
