package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/daemontest"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/gpu/gputest"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

// TestMain lets the test binary be the job supervisor too: the daemon
// starts supervisors as `<its binary> stepd ...`, and in these tests its
// binary is the test binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "stepd" {
		os.Exit(stepd.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == asClientArg {
		os.Exit(asClientMain(os.Args[2:]))
	}
	code := m.Run()
	daemontest.RemoveBuilt() // the binaries daemontest.Start built
	os.Exit(code)
}

// nvmlDaemon is a real daemon (store, socket, supervisors, real job
// processes) whose GPUs are a go-nvml mock DGX A100 that the test drives:
// what NVML reports is what the test says, and the daemon acts on it.
type nvmlDaemon struct {
	t    testing.TB
	dir  string
	m    *gputest.Machine
	c    *sockclient.Client
	logs *syncBuffer
	// passes counts the loop's passes (Options.Passed).
	passes passCount
}

// passCount counts a daemon's passes (Options.Passed): a test that must
// see that nothing happens over a pass or two waits for them rather than
// for a time, which a loaded machine may fill with no pass at all.
type passCount struct {
	mu sync.Mutex
	n  uint64
	// passed is closed at the next pass (and then made anew by a waiter).
	passed chan struct{}
}

func (p *passCount) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.passed != nil {
		close(p.passed)
		p.passed = nil
	}
}

// wait waits (up to 20 s) for n whole passes that begin after the call:
// the pass under way at the call may have looked before the change. It
// is woken by each pass, not by polling.
func (p *passCount) wait(t testing.TB, n uint64, what string) {
	t.Helper()
	p.mu.Lock()
	want := p.n + n + 1
	p.mu.Unlock()
	limit := time.NewTimer(20 * time.Second)
	defer limit.Stop()
	for {
		p.mu.Lock()
		if p.n >= want {
			p.mu.Unlock()
			return
		}
		if p.passed == nil {
			p.passed = make(chan struct{})
		}
		passed := p.passed
		p.mu.Unlock()
		select {
		case <-passed:
		case <-limit.C:
			t.Fatalf("timed out waiting for %d passes (%s)", n, what)
		}
	}
}

// syncBuffer is a daemon's log, written by its goroutines while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote is closed at the next write (and then made anew by a waiter).
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

// await waits (up to 20 s) until the log holds text, woken by each write,
// not by polling.
func (s *syncBuffer) await(t testing.TB, text string) {
	t.Helper()
	limit := time.NewTimer(20 * time.Second)
	defer limit.Stop()
	for {
		s.mu.Lock()
		if strings.Contains(s.b.String(), text) {
			s.mu.Unlock()
			return
		}
		if s.wrote == nil {
			s.wrote = make(chan struct{})
		}
		wrote := s.wrote
		s.mu.Unlock()
		select {
		case <-wrote:
		case <-limit.C:
			t.Fatalf("the daemon's log has no %q after 20 s:\n%s", text, s.String())
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startNVMLDaemon(t *testing.T, policy string) *nvmlDaemon {
	t.Helper()
	return startNVMLDaemonWith(t, policy, nil)
}

// startNVMLDaemonWith lets prepare break the machine before the daemon
// first opens it.
func startNVMLDaemonWith(t *testing.T, policy string, prepare func(*gputest.Machine), extra ...string) *nvmlDaemon {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a daemon and real jobs")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf.toml")
	err := os.WriteFile(conf, []byte(fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q
KillWait          = 1
GPUSampleInterval = 1
GPUViolationPolicy = %q

[Node]
NodeName   = "gpu01"
CPUs       = 8
RealMemory = "8G"
GPUs       = "nvml"
`, filepath.Join(dir, "d.sock"), filepath.Join(dir, "state"), policy)+strings.Join(extra, "\n")), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nd := &nvmlDaemon{t: t, dir: dir, m: gputest.DGXA100(), logs: &syncBuffer{}}
	if prepare != nil {
		prepare(nd.m)
	}
	nd.run(Options{ConfigPath: conf, Exe: exe, OpenNVML: func(o gpu.Options) *gpu.Inventory {
		o.ReleaseTimeout = 5 * time.Second
		return gpu.FromNVML(nd.m.Lib(), o)
	}}, true)
	return nd
}

// waitFor polls cond for up to 20 s.
func (nd *nvmlDaemon) waitFor(cond func() bool, what string) {
	nd.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	nd.t.Fatalf("timed out waiting for %s", what)
}

// run starts the daemon in this process (Run: a test that gives it a fake
// clock or a go-nvml mock machine cannot give those to a process), with
// nd's log and (unless opts has its own) pass count, and waits for its
// socket in nd.dir. When the
// test ends it cancels the jobs still running, waiting for them to end
// when settle is set, stops the daemon and shows its log if the test
// failed. stop stops it sooner (then the jobs are left as they are); a
// daemon that stops by itself before it listens fails the test at once.
func (nd *nvmlDaemon) run(opts Options, settle bool) (stop func()) {
	t := nd.t
	t.Helper()
	opts.Log = nd.logs
	if opts.Passed == nil {
		opts.Passed = nd.passes.add
	}
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	var runErr error
	go func() { runErr = Run(ctx, opts); close(exited) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-exited
		if runErr != nil && !errors.Is(runErr, context.Canceled) {
			t.Errorf("daemon: %v", runErr)
		}
	}
	t.Cleanup(func() {
		// Jobs outlive a daemon by design: cancel them first.
		var jobs []api.Job
		if !stopped && nd.c != nil && nd.c.Do(context.Background(), "GET", api.PathJobs, nil, &jobs) == nil {
			for _, j := range jobs {
				if !j.State.Finished() {
					_ = nd.c.Do(context.Background(), "POST", api.PathCancel, api.Cancel{Jobs: []string{strconv.Itoa(int(j.ID))}}, nil)
				}
			}
			if settle {
				nd.waitFor(func() bool {
					_ = nd.c.Do(context.Background(), "GET", api.PathJobs, nil, &jobs)
					for _, j := range jobs {
						if !j.State.Finished() {
							return false
						}
					}
					return true
				}, "every job ended at cleanup")
			}
		}
		stop()
		if t.Failed() {
			t.Logf("daemon log:\n%s", nd.logs.String())
		}
	})
	sock := filepath.Join(nd.dir, "d.sock")
	nd.waitFor(func() bool {
		select {
		case <-exited:
			t.Fatalf("the daemon stopped before it listened: %v", runErr)
		default:
		}
		c := sockclient.New(sock)
		if c.Reach(context.Background()) != nil {
			return false
		}
		nd.c = c
		return true
	}, "the daemon's socket")
	return stop
}

// submit submits a batch script with sbatch's options and returns its id.
func (nd *nvmlDaemon) submit(script string, opts ...string) uint32 {
	nd.t.Helper()
	cl, err := jobscript.ParseCommandLine(append(opts, "job.sh"))
	if err != nil {
		nd.t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\n" + script + "\n"), Command: cl, Now: time.Now()})
	if err != nil {
		nd.t.Fatal(err)
	}
	var out api.Submitted
	if err := nd.c.Do(context.Background(), "POST", api.PathJobs,
		api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: nd.dir}, &out); err != nil {
		nd.t.Fatalf("submitting: %v", err)
	}
	return out.JobID
}

func (nd *nvmlDaemon) job(id uint32) api.Job {
	nd.t.Helper()
	var jobs []api.Job
	if err := nd.c.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d", api.PathJobs, id), nil, &jobs); err != nil || len(jobs) == 0 {
		nd.t.Fatalf("job %d: %v (%d rows)", id, err, len(jobs))
	}
	return jobs[0]
}

func (nd *nvmlDaemon) node() api.Node {
	nd.t.Helper()
	var n api.Node
	if err := nd.c.Do(context.Background(), "GET", api.PathNode, nil, &n); err != nil {
		nd.t.Fatal(err)
	}
	return n
}

func (nd *nvmlDaemon) waitState(id uint32, want slurm.JobState) api.Job {
	nd.t.Helper()
	var j api.Job
	nd.waitFor(func() bool { j = nd.job(id); return j.State == want }, fmt.Sprintf("job %d %s", id, want))
	return j
}

// devOf is the mock device index of the GPU with this UUID.
func (nd *nvmlDaemon) devOf(uuid string) int {
	for i := range nd.m.Server.Devices {
		if nd.m.UUID(i) == uuid {
			return i
		}
	}
	nd.t.Fatalf("no mock GPU %s", uuid)
	return -1
}

// readPID waits for a job to write its shell's pid into file.
func (nd *nvmlDaemon) readPID(file string) int {
	nd.t.Helper()
	var pid int
	nd.waitFor(func() bool {
		b, err := os.ReadFile(filepath.Join(nd.dir, file))
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, file)
	return pid
}

const gib = uint64(1) << 30

func TestNVMLViolationPolicyKill(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "kill")
	id := nd.submit("echo $$ > pid.txt; exec sleep 60", "--gpus=1")
	j := nd.waitState(id, slurm.Running)
	if len(j.Alloc.GPUs) != 1 {
		t.Fatalf("job holds %v, want one GPU", j.Alloc.GPUs)
	}
	pid := nd.readPID("pid.txt")
	// The job's process shows up on a GPU it was not given: the policy
	// cancels it and its record says why.
	other := (nd.devOf(j.Alloc.GPUs[0].UUID) + 3) % len(nd.m.Server.Devices)
	nd.m.RunLive(other, gputest.Proc(pid, 2*gib))
	j = nd.waitState(id, slurm.Cancelled)
	if !strings.Contains(strings.Join(j.Notes, "\n"), "GPUViolationPolicy=kill") {
		t.Errorf("job's notes %q do not name the policy", j.Notes)
	}
}

func TestNVMLViolationPolicyWarnLeavesTheJobRunning(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "warn")
	id := nd.submit("echo $$ > pid.txt; exec sleep 60", "--gpus=1")
	j := nd.waitState(id, slurm.Running)
	pid := nd.readPID("pid.txt")
	other := (nd.devOf(j.Alloc.GPUs[0].UUID) + 1) % len(nd.m.Server.Devices)
	nd.m.RunLive(other, gputest.Proc(pid, gib))
	nd.waitFor(func() bool { return len(nd.job(id).Notes) > 0 }, "a note on the job")
	// Three more samples (one a pass): still running, and noted once.
	nd.passes.wait(t, 3, "three more samples")
	j = nd.job(id)
	if j.State != slurm.Running || len(j.Notes) != 1 || !strings.Contains(j.Notes[0], "GPUViolationPolicy=warn") {
		t.Errorf("job %s with notes %q; want RUNNING with one warn note", j.State, j.Notes)
	}
}

func TestNVMLLostGPUEndsItsJobAsNodeFailAndRequeuesIt(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "warn")
	id := nd.submit("exec sleep 60", "--gpus=1", "--requeue")
	j := nd.waitState(id, slurm.Running)
	lost := j.Alloc.GPUs[0].UUID
	nd.m.Lose(nd.devOf(lost))
	// Requeued: it runs again, on another GPU, as its second run.
	nd.waitFor(func() bool {
		j = nd.job(id)
		return j.State == slurm.Running && j.Restarts == 1
	}, "the job running again after NODE_FAIL")
	if j.Alloc.GPUs[0].UUID == lost {
		t.Errorf("job restarted on the lost GPU %s", lost)
	}
	var state string
	for _, g := range nd.node().GPUs {
		if g.UUID == lost {
			state = g.State
		}
	}
	if state != "lost" && state != "drained" {
		t.Errorf("lost GPU's state is %q, want lost or drained", state)
	}
}

func TestNVMLSurvivorIsKilledBeforeTheGPUIsOfferedAgain(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "warn")
	id := nd.submit("while [ ! -e go ]; do sleep 0.05; done", "--gpus=8")
	j := nd.waitState(id, slurm.Running)
	// A process of the job that escaped its process tree (a daemonized
	// data loader): only its SLURM_JOB_ID ties it to the job.
	survivor := exec.Command("sleep", "120")
	survivor.Env = []string{"SLURM_JOB_ID=" + strconv.Itoa(int(id))}
	survivor.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := survivor.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- survivor.Wait() }()
	t.Cleanup(func() { _ = survivor.Process.Kill() })
	dev := nd.devOf(j.Alloc.GPUs[0].UUID)
	nd.m.RunLive(dev, gputest.Proc(survivor.Process.Pid, 10*gib))
	// A second job needs the whole machine: it may start only once the
	// survivor is gone.
	next := nd.submit("exit 0", "--gpus=8")
	if err := os.WriteFile(filepath.Join(nd.dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	nd.waitState(id, slurm.Completed)
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("the survivor exited on its own; want it killed")
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the survivor of job %d still runs", id)
	}
	nd.waitState(next, slurm.Completed)
}

func TestNVMLForeignProcessTakesAGPU(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "warn")
	// Someone outside the scheduler holds 39 of GPU 0's 40 GiB.
	foreign := exec.Command("sleep", "120")
	if err := foreign.Start(); err != nil {
		t.Fatal(err)
	}
	go foreign.Wait()
	t.Cleanup(func() { _ = foreign.Process.Kill() })
	nd.m.RunLive(0, gputest.Proc(foreign.Process.Pid, 39*gib))
	var g api.GPU
	nd.waitFor(func() bool {
		for _, x := range nd.node().GPUs {
			if x.UUID == nd.m.UUID(0) {
				g = x
			}
		}
		return g.State == "taken"
	}, "GPU 0 taken by a foreign process")
	if len(g.Processes) != 1 || g.Processes[0].PID != foreign.Process.Pid || g.Processes[0].JobID != "" || g.Processes[0].User == "" {
		t.Errorf("GPU 0's processes %+v; want the foreign pid %d with its user and no job", g.Processes, foreign.Process.Pid)
	}
	// A job asking for every GPU waits; one asking for seven runs beside.
	all := nd.submit("exit 0", "--gpus=8")
	seven := nd.submit("exit 0", "--gpus=7")
	nd.waitState(seven, slurm.Completed)
	if j := nd.job(all); j.State != slurm.Pending {
		t.Errorf("the 8-GPU job is %s, want PENDING while GPU 0 is taken", j.State)
	}
}

func TestNVMLXidDrainsOnlyForHardwareFaults(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "warn")
	gpuState := func(i int) (string, string) {
		for _, g := range nd.node().GPUs {
			if g.UUID == nd.m.UUID(i) {
				return g.State, g.Reason
			}
		}
		return "", ""
	}
	// Xid 13 (a CUDA program's illegal address) is the application's
	// fault: it never drains the card.
	nd.m.Xid(2, 13)
	// Xid 48 (a double-bit ECC error) is the card's: drained, with why.
	nd.m.Xid(5, 48)
	nd.waitFor(func() bool { s, _ := gpuState(5); return s == "drained" }, "GPU 5 drained after Xid 48")
	if _, why := gpuState(5); !strings.Contains(why, "48") {
		t.Errorf("GPU 5's reason %q does not name the Xid", why)
	}
	if s, why := gpuState(2); s != "up" && s != "" {
		t.Errorf("GPU 2 is %s (%s) after an application's Xid 13; want it still offered", s, why)
	}
	// Jobs go to the seven others.
	id := nd.submit("exit 0", "--gpus=7")
	j := nd.waitState(id, slurm.Completed)
	for _, g := range j.Alloc.GPUs {
		if g.UUID == nd.m.UUID(5) {
			t.Errorf("a job was given the drained GPU 5")
		}
	}
}

func TestNVMLDriverMismatchDrainsTheNode(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemonWith(t, "warn", func(m *gputest.Machine) { m.DriverMismatch() })
	n := nd.node()
	if n.State != "DRAIN" || n.Reason != "driver mismatch, reboot needed" {
		t.Errorf("node %s (%q); want DRAIN with the reason driver mismatch, reboot needed", n.State, n.Reason)
	}
	id := nd.submit("exit 0")
	nd.passes.wait(t, 2, "passes that could have started the job")
	if j := nd.job(id); j.State != slurm.Pending {
		t.Errorf("a job on a node drained for a driver mismatch is %s, want PENDING", j.State)
	}
}

// A job whose processes hold exactly what it reserved leaves the rest of
// its GPU offered: its memory is counted once (the driver's used memory),
// not again as a reservation. A100-40GB, of which the driver holds half a
// GiB: a 10G job holding its 10G leaves 29.5G, which a 29G job takes beside
// it rather than a GPU of its own (counted twice, 19.5G would be left).
func TestNVMLReservedMemoryHeldByTheJobIsCountedOnce(t *testing.T) {
	t.Parallel()
	nd := startNVMLDaemon(t, "warn")
	first := nd.submit("echo $$ > first.pid; exec sleep 60", "--gpu-mem=10G")
	j := nd.waitState(first, slurm.Running)
	if len(j.Alloc.GPUs) != 1 {
		t.Fatalf("job %d holds %v, want one shared GPU", first, j.Alloc.GPUs)
	}
	dev := nd.devOf(j.Alloc.GPUs[0].UUID)
	nd.m.RunLive(dev, gputest.Proc(nd.readPID("first.pid"), 10*gib))
	// The daemon sees the job's process hold its 10G, and nothing foreign.
	var seen api.GPU
	nd.waitFor(func() bool {
		for _, g := range nd.node().GPUs {
			if g.UUID == nd.m.UUID(dev) {
				seen = g
			}
		}
		return len(seen.Processes) == 1 && seen.Processes[0].JobID == strconv.Itoa(int(first))
	}, "the first job's 10G on its GPU")
	// The mock driver holds half a GiB of each GPU itself, as real ones do.
	if base := seen.MemoryUsed - 10*gib; base > gib {
		t.Fatalf("GPU %d uses %d bytes beside the job's 10G", dev, base)
	}
	second := nd.submit("exec sleep 60", "--gpu-mem=29G")
	s := nd.waitState(second, slurm.Running)
	if len(s.Alloc.GPUs) != 1 || s.Alloc.GPUs[0].UUID != j.Alloc.GPUs[0].UUID {
		t.Errorf("the 29G job went to %v; want GPU %d beside the 10G job (29.5 of 40G are free)", s.Alloc.GPUs, j.Alloc.GPUs[0].Index)
	}
	// A third, of 1G, no longer fits there.
	third := nd.submit("exec sleep 60", "--gpu-mem=1G")
	if g := nd.waitState(third, slurm.Running).Alloc.GPUs; len(g) != 1 || g[0].UUID == j.Alloc.GPUs[0].UUID {
		t.Errorf("the 1G job went to %v; GPU %d is full", g, j.Alloc.GPUs[0].Index)
	}
}
