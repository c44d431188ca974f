package sockclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// A daemon that is stopped (SIGSTOP, a debugger) or wedged still takes
// connections: the kernel queues them. Without a deadline a command would
// wait for it forever; with a plain one, a request that takes long by
// design (scontrol yield waits for NVML to see the GPUs released, srun for
// room for its step) would fail on a healthy daemon. So a command waits
// half of MessageTimeout (Slurm's name, 10 s by default) for its answer,
// and then asks the daemon's ping route on a connection of its own, every
// half MessageTimeout, each ping given the other half: while pings are
// answered it waits on; the first that is not ends the request with a
// *NotAnsweringError, MessageTimeout after the daemon last answered.

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

// Watch pings the daemon every half timeout until stop is called, each
// ping given the other half; when a ping is not answered it calls dead
// once, and stops. It waits on a timer, not in a goroutine of its own:
// every command's request is watched, and nearly every one is answered
// before the first ping, so the goroutine (and the thread woken to start
// it) would be a cost of every command (docs/bench.md, "The fast paths").
func Watch(socket string, timeout time.Duration, dead func(*NotAnsweringError)) (stop func()) {
	return watch(timeout, func(wait time.Duration) error { return Ping(socket, wait) }, dead)
}

// watch is Watch with the ping given: its timing is all here, and a test
// times it with a ping of its own, in memory (synctest).
func watch(timeout time.Duration, ping func(wait time.Duration) error, dead func(*NotAnsweringError)) (stop func()) {
	w := &watcher{ping: ping, timeout: timeout, half: max(timeout/2, time.Millisecond), dead: dead}
	w.mu.Lock()
	w.t = time.AfterFunc(w.half, w.pingOnce)
	w.mu.Unlock()
	return w.stop
}

// watcher is one Watch.
type watcher struct {
	ping          func(wait time.Duration) error
	timeout, half time.Duration
	dead          func(*NotAnsweringError)

	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

// pingOnce is the timer's: one ping, then the next one armed, or dead
// called.
func (w *watcher) pingOnce() {
	var na *NotAnsweringError
	err := w.ping(w.half)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if errors.As(err, &na) {
		na.Timeout = w.timeout
		w.stopped = true
		w.dead(na)
		return
	}
	w.t.Reset(w.half)
}

func (w *watcher) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.t.Stop()
}

// peerPID is the process at the other end of a connected Unix socket.
func peerPID(fd int) int {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return 0
	}
	return int(cred.Pid)
}
