package stepd

import (
	"golang.org/x/sys/unix"

	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// The control socket (stepd.sock in the state directory) takes one JSON
// request per connection and answers one JSON reply. Only root and the
// supervisor's own user may connect (SO_PEERCRED): the daemon decides who
// may act on a job; the supervisor only obeys it.

// Operations.
const (
	OpStatus = "status" // the job's Status, State RUNNING while it runs
	OpSignal = "signal" // send Signal to Target's processes
	OpCancel = "cancel" // end the job: Signal (SIGTERM), KillWait, SIGKILL
	OpLimit  = "limit"  // a new time limit (Limit, from the job's start): scontrol update TimeLimit=
	OpSteps  = "steps"  // the job's running steps and their sruns (Steps): whom TargetSteps reaches
	// An interactive job's (Spec.Adopt): PID becomes one of the job's
	// processes, the first its caller, whose death ends the job; then the
	// caller's command ended with Exit, and the job ends (the reply comes
	// once the final status is written).
	OpAdopt  = "adopt"
	OpFinish = "finish"
)

// Targets of OpSignal.
const (
	// TargetBatch is the batch shell alone (scancel -b, --signal=B:).
	TargetBatch = "batch"
	// TargetSteps is the tasks of the job's running steps (what its sruns
	// started, not the sruns) or, while it has no step, every process of
	// the job but the batch shell (scancel --signal without -b, --signal
	// without B:). See doc.go.
	TargetSteps = "steps"
	// TargetAll is every process of the job (scancel --full).
	TargetAll = "all"
)

// Request is one control request.
type Request struct {
	Op string `json:"op"`
	// Signal is OpSignal's signal, or OpCancel's first signal (SIGTERM
	// when 0; a job that checkpoints on another signal gets that one).
	Signal syscall.Signal `json:"signal,omitempty"`
	Target string         `json:"target,omitempty"`
	// OpCancel: who asks (scontrol's "CANCELLED by UID"), why (WhyRequeue,
	// WhyPreemption, "" for a plain cancel), the grace before SIGKILL (0:
	// KillWait) or Kill for SIGKILL at once.
	By    *uint32       `json:"by,omitempty"`
	Why   string        `json:"why,omitempty"`
	Grace time.Duration `json:"grace,omitempty"`
	Kill  bool          `json:"kill,omitempty"`
	// Spare, on OpCancel, is the process that asked for it: the
	// `scontrol requeue` a job runs on itself (submitit's checkpoint
	// handler, or a wrapper's sh -c), which must get its answer and exit
	// 0, and its wrappers after it, before the job goes. A batch job's
	// supervisor takes the cancel at once and sends its line and first
	// signal once Spare and its ancestors in the job below the batch
	// shell have exited and the batch shell has moved on (the grace at
	// most; supervisor.go's asked); an interactive job's first signal
	// skips Spare. SIGKILL after the grace reaches everything.
	Spare int `json:"spare,omitempty"`
	// Steps are the job's running steps (OpSteps; on OpSignal, when not
	// nil, they replace what OpSteps last said).
	Steps []StepProc `json:"steps,omitempty"`
	// Limit is OpLimit's new time limit, counted from the job's start;
	// slurmsyntax.Infinite for none.
	Limit time.Duration `json:"limit,omitempty"`
	// PID is OpAdopt's process, or OpFinish's caller (spared the SIGKILL
	// that ends what its command left: it goes on to exit by itself).
	PID int `json:"pid,omitempty"`
	// Exit is OpFinish's exit code, Slurm's "code:signal".
	Exit string `json:"exit,omitempty"`
	// Run, when set, is the run the caller means: a supervisor of
	// another refuses the request (a run directory that someone else's
	// run holds must never take a signal meant for another job).
	Run *RunOwner `json:"run,omitempty"`
}

// StepProc is a running step and the srun that runs it.
type StepProc struct {
	Step int `json:"step"`
	PID  int `json:"pid"`
}

// Reply answers a Request.
type Reply struct {
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
	// Signalled is how many processes OpSignal reached.
	Signalled int `json:"signalled,omitempty"`
	// Adopted is how OpAdopt tracks the process: "cgroup" or
	// "process group".
	Adopted string `json:"adopted,omitempty"`
}

// maxRequest bounds a request's size.
const maxRequest = 64 << 10

// Call sends req to the supervisor of the job whose state directory is dir.
// An error from the supervisor comes back as an error too, with the reply.
func Call(dir string, req Request) (Reply, error) {
	path := filepath.Join(dir, SocketFile)
	name, done, err := unixName(path)
	if err != nil {
		return Reply{}, fmt.Errorf("job supervisor not reachable at %s: %w", path, err)
	}
	c, err := net.DialTimeout("unix", name, 5*time.Second)
	done()
	if err != nil {
		return Reply{}, fmt.Errorf("job supervisor not reachable at %s: %w", path, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return Reply{}, fmt.Errorf("job supervisor at %s: %w", path, err)
	}
	var rep Reply
	if err := json.NewDecoder(c).Decode(&rep); err != nil {
		return Reply{}, fmt.Errorf("job supervisor at %s: reading reply: %w", path, err)
	}
	if rep.Error != "" {
		return rep, errors.New(rep.Error)
	}
	return rep, nil
}

// call is a request on its way to the supervisor's loop.
type call struct {
	req   Request
	reply chan Reply
}

// listen opens the control socket. A socket left by a dead supervisor is
// removed first: the caller holds the state directory's lock, so no live
// supervisor owns it.
func listen(path string) (*net.UnixListener, error) {
	_ = os.Remove(path)
	name, done, err := unixName(path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	done()
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// Closing removes the socket by the name it was bound to, which
	// must be the path itself (cleanup removes it otherwise).
	ln.SetUnlinkOnClose(name == path)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// serve answers connections on ln through calls until done is closed or
// ln is.
// Each connection is counted in conns until its answer is written, so that
// the supervisor, once the job has ended, waits for the answers it gave
// (a cancel's, whose kill ends the job at once) before it exits.
func serve(ln *net.UnixListener, calls chan<- call, done <-chan struct{}, conns *sync.WaitGroup) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		conns.Go(func() { handleConn(c, calls, done) })
	}
}

func handleConn(c *net.UnixConn, calls chan<- call, done <-chan struct{}) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	enc := json.NewEncoder(c)
	if err := allowedPeer(c); err != nil {
		_ = enc.Encode(Reply{Error: err.Error()})
		return
	}
	var req Request
	if err := json.NewDecoder(bufio.NewReader(&limitedReader{c, maxRequest})).Decode(&req); err != nil {
		_ = enc.Encode(Reply{Error: fmt.Sprintf("bad request: %v", err)})
		return
	}
	cl := call{req: req, reply: make(chan Reply, 1)}
	select {
	case calls <- cl:
	case <-done:
		_ = enc.Encode(Reply{Error: "the job has ended"})
		return
	}
	select {
	case rep := <-cl.reply:
		_ = enc.Encode(rep)
	case <-done:
		// The job may have ended because of this very request: its
		// answer, if given, wins.
		select {
		case rep := <-cl.reply:
			_ = enc.Encode(rep)
		default:
			_ = enc.Encode(Reply{Error: "the job has ended"})
		}
	}
}

// allowedPeer admits root and the supervisor's own user.
func allowedPeer(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if credErr != nil {
		return fmt.Errorf("reading peer credentials: %w", credErr)
	}
	if cred.Uid != 0 && int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("uid %d may not control this job's supervisor; ask slurmd-lite", cred.Uid)
	}
	return nil
}

// limitedReader stops after n bytes, failing a request larger than that.
type limitedReader struct {
	c *net.UnixConn
	n int
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("request too large")
	}
	if len(p) > r.n {
		p = p[:r.n]
	}
	n, err := r.c.Read(p)
	r.n -= n
	return n, err
}

// maxSunPath is the longest path a Unix socket address holds (sun_path's
// 108 bytes, less the terminating NUL).
const maxSunPath = 107

// unixName is a name for the socket at path that bind and connect accept:
// path itself while it fits a socket address, else the same file reached
// through a descriptor of its directory, /proc/self/fd/N/NAME (a state
// directory deep in the file system made job supervisors fail to start,
// and their jobs loop through lost and requeued). done closes that
// descriptor once the socket is bound or connected.
func unixName(path string) (name string, done func(), err error) {
	if len(path) <= maxSunPath {
		return path, func() {}, nil
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("opening the directory of %s: %w", path, err)
	}
	name = fmt.Sprintf("/proc/self/fd/%d/%s", fd, filepath.Base(path))
	if len(name) > maxSunPath {
		unix.Close(fd)
		return "", nil, fmt.Errorf("socket name %s is too long for a Unix socket", filepath.Base(path))
	}
	return name, func() { unix.Close(fd) }, nil
}
