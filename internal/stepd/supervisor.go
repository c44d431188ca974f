package stepd

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Times the supervisor waits for processes to go.
const (
	// pollEvery is how often it looks for the job's last processes once
	// the batch script has ended; it looks first after firstPoll, then
	// twice as long each time up to pollEvery: the processes that were
	// killed with the script are usually gone within a millisecond, and a
	// trivial job's end (and so the start of the next one) waited for a
	// whole pollEvery, twice, for nothing.
	pollEvery = 20 * time.Millisecond
	firstPoll = time.Millisecond
	// unkillable is how long after SIGKILL it waits for processes that do
	// not die (stuck in the kernel) before it writes the status anyway.
	unkillable = 30 * time.Second
)

// Run supervises one job in the calling process, which it takes over: its
// standard output and error become the log in the job's state directory,
// it becomes a child subreaper and reaps every child. specPath is the
// launch spec in the state directory. It returns once the job's final
// status is written, or with an error if it could not start supervising
// (another supervisor holds the directory, an unreadable spec): then no
// status is written and the daemon reads the log.
func Run(specPath string) error { return runOn(specPath, nil) }

// runOn is Run with the supervisor's timers on clk (nil: the machine's).
func runOn(specPath string, clk Clock) error {
	dir := filepath.Dir(specPath)
	logf, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening supervisor log: %w", err)
	}
	// A panic's trace goes to the log, never to the daemon's terminal.
	_ = syscall.Dup3(int(logf.Fd()), 1, 0)
	_ = syscall.Dup3(int(logf.Fd()), 2, 0)
	lg := log.New(logf, fmt.Sprintf("stepd[%d] ", os.Getpid()), log.LstdFlags|log.Lmicroseconds)

	// The lock is held until the process ends (its descriptor is closed
	// on exec, so the job never holds it): a second supervisor for the
	// same job gives up here, whoever started it. It is a flock of the
	// state directory itself: a lock file was one more file to make per
	// job, and making files is much of what a trivial job costs.
	lock, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("opening lock: %w", err)
	}
	defer runtime.KeepAlive(lock)
	if err := lockWithin(lock, lockPatience); err != nil {
		lg.Printf("another supervisor holds %s: %v", dir, err)
		return fmt.Errorf("another supervisor holds %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, StatusFile)); err == nil {
		lg.Printf("the job has a final status already; not running it again")
		return nil
	}
	spec, err := ReadSpec(specPath)
	if err != nil {
		lg.Print(err)
		return err
	}
	sv, err := newSupervisor(spec, dir, lg)
	if err != nil {
		lg.Print(err)
		return err
	}
	if clk != nil {
		sv.clock, sv.daemonsClock = clk, true
	}
	return sv.run()
}

// lockPatience is how long a supervisor tries for the state directory's
// lock: a daemon's Supervised probe holds it for an instant.
const lockPatience = time.Second

// lockWithin takes an exclusive flock on f, trying for up to patience.
func lockWithin(f *os.File, patience time.Duration) error {
	deadline := time.Now().Add(patience)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Supervised reports whether a supervisor holds the job's state
// directory: one that is running, or starting and not yet recorded in
// stepd.json. The lock dies with its process, so this cannot be fooled
// by a reused pid; but it only says "now".
//
// It also asks the stepd.lock file that supervisors of earlier versions
// locked, so that a daemon upgraded under running jobs still sees them.
func Supervised(dir string) bool {
	return locked(dir) || locked(filepath.Join(dir, LockFile))
}

// locked reports whether another process holds a flock on path.
func locked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// supervisor is one job's supervision; its fields belong to the loop.
type supervisor struct {
	spec *Spec
	dir  string
	log  *log.Logger
	id   Identity
	tr   *tracker
	// spare is the process a cancel's first signal skips (Request.Spare),
	// in an interactive job; a batch job's cancel waits for it and the
	// processes it runs under instead (asking, below).
	spare int
	// steps are the job's running steps (Request.Steps): TargetSteps is
	// their sruns' tasks. cancelled are the steps whose "*** STEP ...
	// CANCELLED ***" line was written.
	steps     []StepProc
	cancelled map[int]bool
	umask     uint32

	ln    *net.UnixListener
	calls chan call
	done  chan struct{}
	conns sync.WaitGroup // control connections not yet answered
	chld  chan os.Signal
	sigs  chan os.Signal

	spool  string
	errOut *os.File // the job's standard error, for slurmstepd's lines
	start  time.Time

	mainPID  int
	mainDone bool
	mainWS   syscall.WaitStatus
	mainEnd  time.Time

	// The time limit's timers, from loopStart on clock (the machine's
	// monotonic clock but in the end-to-end tests, see Clock); OpLimit
	// re-arms them. daemonsClock: clock is the daemon's (a test's), on
	// which the limit counts from the job's start as the daemon recorded
	// it, the start its end is counted from (One clock), not from when
	// this process came to count: the script that moves the clock once
	// the job runs cannot know when that was.
	clock         Clock
	daemonsClock  bool
	loopStart     time.Time
	limitT, warnT Timer
	limitC, warnC <-chan time.Time
	// warned: --signal's warning was sent; as slurmctld's WARN_SENT, a
	// later limit does not send it again.
	warned bool

	ending *Ending
	// While a cancel waits for the processes that asked for it (asking,
	// see askers and asked): the timer of the next look, the wait's end,
	// the grace to give once the signal goes. signalled: the ending's
	// line and first signal went out.
	asking    []askingProc
	askT      *time.Timer
	askC      <-chan time.Time
	askUntil  time.Time
	askGrace  time.Duration
	signalled bool
	killT     Timer
	killC     <-chan time.Time
	killAt    time.Time
	killedAt  time.Time
	lastGone  time.Time

	// An interactive job's (Spec.Adopt, adopt.go): its caller, a report
	// of the caller's end, and the ticks that note its process groups.
	adopt      *adoption
	callerGone chan int
	groupsC    <-chan time.Time
}

func newSupervisor(spec *Spec, dir string, lg *log.Logger) (*supervisor, error) {
	sv := &supervisor{spec: spec, dir: dir, log: lg, calls: make(chan call), done: make(chan struct{}), clock: machineClock{}}
	// Our own session: the daemon's end, its terminal's hangup or a
	// signal to its process group do not reach us.
	_, _ = syscall.Setsid()
	// Caught, not ignored: an ignored signal would stay ignored in the job.
	sv.sigs = make(chan os.Signal, 8)
	signal.Notify(sv.sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGPIPE)
	sv.chld = make(chan os.Signal, 64)
	signal.Notify(sv.chld, syscall.SIGCHLD)
	// Every file the supervisor makes gets its mode from the code, and
	// the job's files the job's umask.
	sv.umask = uint32(syscall.Umask(0))
	if spec.Umask != nil {
		sv.umask = *spec.Umask & 0o777
	}

	var err error
	if sv.id, err = selfIdentity(spec.JobID); err != nil {
		return nil, err
	}
	sv.id.Socket = filepath.Join(dir, SocketFile)
	// stepd.json is written once, in startJob, when it can name the job's
	// pid and cgroup; until then the lock says that a supervisor is
	// starting (Supervised).
	if sv.ln, err = listen(sv.id.Socket); err != nil {
		return nil, err
	}
	if sv.tr, err = newTracker(spec); err != nil {
		sv.ln.Close()
		return nil, err
	}
	lg.Printf("job %d: %s", spec.JobID, sv.tr.describe())
	return sv, nil
}

func (sv *supervisor) run() error {
	go serve(sv.ln, sv.calls, sv.done, &sv.conns)
	defer sv.cleanup()
	if err := sv.startJob(); err != nil {
		sv.log.Printf("job %d: launch failed: %v", sv.spec.JobID, err)
		return sv.finish(err)
	}
	sv.loop()
	return sv.finish(nil)
}

// startJob prepares the job's files and starts the launcher, which
// becomes the batch script.
func (sv *supervisor) startJob() error {
	s := sv.spec
	if s.Adopt {
		return sv.startAdopted()
	}
	sv.start = time.Now()
	spool, script, err := makeSpool(s)
	if err != nil {
		return err
	}
	sv.spool = spool
	files, err := openStd(s.User, StdPaths(s), s.appendOutput(), sv.umask)
	if err != nil {
		return fmt.Errorf("opening the job's files: %w", err)
	}
	defer files.Close()
	if sv.errOut, err = dupFile(files.Err); err != nil {
		return err
	}
	if os.Geteuid() != 0 && s.User.UID != uint32(os.Geteuid()) {
		sv.warn("the job runs as uid %d, the supervisor's, not as %s (uid %d): only a root supervisor switches users",
			os.Geteuid(), s.User.Name, s.User.UID)
	}
	if s.CheckpointDir != "" {
		if err := asUser(s.User, func() error { return mkdirAllMode(s.CheckpointDir, 0o777&^os.FileMode(sv.umask)) }); err != nil {
			sv.warn("checkpoint directory not made: %v", err)
		}
	}
	l := launch{
		Path:    script,
		Argv:    append([]string{script}, s.Args...),
		Env:     JobEnv(s, s.SubmitEnv),
		Dir:     s.WorkDir,
		SetUser: os.Geteuid() == 0,
		UID:     s.User.UID,
		GID:     s.User.GID,
		Groups:  s.User.Groups,
		Umask:   sv.umask,
		Rlimits: s.Rlimits,
		CPUs:    s.CPUs,
		Node:    s.NodeName,
		Login:   newLoginRequest(s),
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pw.Close()
	// The launcher waits for its instructions, so it runs nothing before
	// it is in the job's cgroup (forkExec), nor before stepd.json names
	// that cgroup (a daemon that finds this supervisor dead kills what it
	// holds).
	pid, err := sv.tr.forkExec("/proc/self/exe", append(append([]string(nil), selfArgs...), "exec"), &syscall.ProcAttr{
		Dir:   "/",
		Env:   os.Environ(),
		Files: []uintptr{files.In.Fd(), files.Out.Fd(), files.Err.Fd(), pr.Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	pr.Close()
	if err != nil {
		return fmt.Errorf("starting the launcher: %w", err)
	}
	sv.mainPID = pid
	sv.id.JobPID, sv.id.Tracking, sv.id.Cgroup = pid, sv.tr.mode(), sv.tr.cgroup
	if err := writeIdentity(sv.dir, sv.id); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return err
	}
	if err := json.NewEncoder(pw).Encode(l); err != nil {
		return fmt.Errorf("instructing the launcher: %w", err)
	}
	sv.log.Printf("job %d: batch script %s started as pid %d", s.JobID, script, pid)
	return nil
}

func dupFile(f *os.File) (*os.File, error) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, fmt.Errorf("keeping the job's error file: %w", err)
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// loop runs the job to its end: it reaps children, enforces the time
// limit on the monotonic clock (Go's timers do not move with the wall
// clock; the test clock in the end-to-end tests, see Clock), delivers
// --signal, and answers the control socket. It returns when the batch
// script and every process it left are gone.
func (sv *supervisor) loop() {
	s := sv.spec
	var pollC <-chan time.Time
	var pollT *time.Timer
	pollWait := firstPoll
	sv.loopStart = sv.clock.Now()
	if sv.daemonsClock && !s.Start.IsZero() {
		sv.loopStart = s.Start
	}
	sv.armLimit()
	sv.reap() // a SIGCHLD may have come before Notify saw it
	for {
		if sv.mainDone {
			sv.stopLimit()
			if pollC == nil {
				if sv.ending == nil {
					// As slurmstepd: once the batch script ends, whatever it
					// left behind is killed. After a cancel or the time limit
					// they keep their grace (see doc.go).
					sv.kill()
				}
				pollT = time.NewTimer(pollWait)
				defer pollT.Stop()
				pollC = pollT.C
			}
			if sv.gone() {
				if sv.ending != nil && !sv.signalled {
					// Everything ended while the ending waited for its
					// askers: its line still says what became of the job.
					sv.stopAsking()
					sv.signalled = true
					sv.stepdError(sv.endingLine())
				}
				return
			}
		}
		select {
		case <-sv.chld:
			sv.reap()
		case <-pollC:
			sv.reap()
			pollWait = min(2*pollWait, pollEvery)
			pollT.Reset(pollWait)
		case <-sv.warnC:
			sv.warnC = nil
			sv.warnSignal()
		case <-sv.limitC:
			sv.limitC = nil
			sv.end(Ending{Why: WhyTimeLimit, Signal: syscall.SIGTERM}, s.killWait(), false)
		case <-sv.killC:
			sv.killC = nil
			sv.kill()
		case <-sv.askC:
			if sv.asked() || !time.Now().Before(sv.askUntil) {
				sv.signalEnding()
			} else {
				// A timer, not a ticker: looks at least askPoll apart.
				sv.askT.Reset(askPoll)
			}
		case c := <-sv.calls:
			if c.req.Op == OpFinish {
				sv.finishAdopted(c)
				continue
			}
			c.reply <- sv.handle(c.req)
		case pid := <-sv.callerGone:
			sv.callerEnded(pid)
		case <-sv.groupsC:
			sv.tr.noteGroups()
		case sig := <-sv.sigs:
			sv.log.Printf("ignoring %v: the supervisor is controlled through %s", sig, sv.id.Socket)
		}
	}
}

// armLimit sets the time limit's timers for spec.TimeLimit counted from
// loopStart: the limit, and --signal's warning before it. A limit already
// passed fires at once; a warning already due is not sent again.
func (sv *supervisor) armLimit() {
	sv.stopLimit()
	s := sv.spec
	if !s.limited() {
		return
	}
	left := s.TimeLimit - sv.clock.Now().Sub(sv.loopStart)
	sv.limitT = sv.clock.NewTimer(max(left, 0))
	sv.limitC = sv.limitT.C()
	if s.Signal != nil && !sv.warned {
		sv.warnT = sv.clock.NewTimer(max(left-time.Duration(s.Signal.Seconds)*time.Second, 0))
		sv.warnC = sv.warnT.C()
	}
}

func (sv *supervisor) stopLimit() {
	if sv.limitT != nil {
		sv.limitT.Stop()
	}
	if sv.warnT != nil {
		sv.warnT.Stop()
	}
	sv.limitT, sv.warnT, sv.limitC, sv.warnC = nil, nil, nil, nil
}

// gone reports whether every process of the job has ended; after SIGKILL
// it keeps killing (a process may have forked meanwhile) and gives up on
// processes that outlive unkillable.
func (sv *supervisor) gone() bool {
	pids := sv.jobPIDs()
	if len(pids) == 0 {
		sv.lastGone = time.Now()
		return true
	}
	if !sv.killedAt.IsZero() {
		if time.Since(sv.killedAt) > unkillable {
			sv.warn("processes %v did not die %v after SIGKILL", pids, unkillable)
			sv.lastGone = time.Now()
			return true
		}
		sv.killJob()
	}
	return false
}

// reap collects every child that has ended: the batch script, and the
// orphans of the job that the kernel gave to this subreaper.
func (sv *supervisor) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if pid == sv.mainPID && !sv.mainDone {
			sv.mainDone, sv.mainWS, sv.mainEnd = true, ws, time.Now()
			sv.log.Printf("job %d: batch script ended: %s", sv.spec.JobID, exitCode(ws))
		}
	}
}

// end starts ending the job: the "*** JOB ... CANCELLED ***" line in its
// error file, SIGCONT and e.Signal to every process (a stopped process
// must wake to see the signal), and SIGKILL after grace; with kill,
// SIGKILL at once. A second request may only bring SIGKILL closer; the
// first reason stays.
//
// A batch job's cancel that a process of the job asked for (Request.Spare:
// `scontrol requeue $SLURM_JOB_ID` in the script, or in a wrapper the
// script runs) is answered first and carried out after, as slurmctld
// answers before slurmd stops the job: the ending is taken at once (the
// status says so from now on, so the requeue holds whatever happens to
// the daemon), and its line and first signal wait until the process that
// asked, and the processes it runs under up to the batch shell, have had
// their answer (askers, asked), for grace at most. So `sh -c 'scontrol
// requeue $SLURM_JOB_ID; echo rc=$?'` prints rc=0 before the job is
// stopped, and the script that ran it sees the wrapper's 0.
func (sv *supervisor) end(e Ending, grace time.Duration, kill bool) {
	if sv.mainDone || (kill && sv.ending != nil) {
		// The script ended by itself (the job is over whatever is asked),
		// or a forced kill follows a cancel.
		if sv.ending != nil && !sv.signalled {
			sv.stopAsking()
			sv.signalled = true
			sv.stepdError(sv.endingLine())
		}
		sv.kill()
		return
	}
	if sv.ending != nil {
		if !sv.signalled {
			// A second request (a cancel, the time limit) while the
			// first waits for its askers: no more waiting.
			sv.signalEnding()
		}
		if now := sv.clock.Now(); sv.killC != nil && now.Add(grace).Before(sv.killAt) {
			sv.killT.Stop()
			sv.killT = sv.clock.NewTimer(grace)
			sv.killC = sv.killT.C()
			sv.killAt = now.Add(grace)
		}
		return
	}
	e.At = time.Now()
	sv.ending = &e
	sv.askGrace = grace
	if kill {
		sv.signalled = true
		sv.stepdError(sv.endingLine())
		e.Signal = syscall.SIGKILL
		sv.log.Printf("job %d: ending (%s): SIGKILL", sv.spec.JobID, cmp.Or(e.Why, "cancel"))
		sv.kill()
		return
	}
	if sv.adopt == nil {
		if sv.asking = sv.askers(sv.spare); len(sv.asking) > 0 {
			sv.askUntil = e.At.Add(grace)
			sv.askT = time.NewTimer(askPoll)
			sv.askC = sv.askT.C
			sv.log.Printf("job %d: ending (%s) once the processes that asked for it have had the answer: %v, for %v at most",
				sv.spec.JobID, cmp.Or(e.Why, "cancel"), askingPIDs(sv.asking), grace)
			return
		}
	}
	sv.signalEnding()
}

// askPoll is the time between two looks at the processes a cancel waits
// for.
const askPoll = 20 * time.Millisecond

// endingLine is the "*** JOB ... CANCELLED AT ... ***" line of the ending.
func (sv *supervisor) endingLine() string {
	line := fmt.Sprintf("*** JOB %d ON %s CANCELLED AT %s", sv.spec.JobID, sv.spec.NodeName, time.Now().Format(timeFormat))
	if sv.ending.Why != "" {
		line += " DUE TO " + sv.ending.Why
	}
	return line + " ***"
}

// signalEnding carries out the ending taken by end: its line, SIGCONT and
// its first signal to every process (an interactive job's spare one
// aside), SIGKILL after its grace.
func (sv *supervisor) signalEnding() {
	sv.stopAsking()
	sv.signalled = true
	e := sv.ending
	sv.stepdError(sv.endingLine())
	pids := sv.tr.pids()
	if sv.adopt != nil {
		pids = slices.DeleteFunc(pids, func(pid int) bool { return pid == sv.spare && pid > 1 })
	}
	signalPIDs(pids, syscall.SIGCONT)
	n := signalPIDs(pids, e.Signal)
	grace := sv.askGrace
	sv.log.Printf("job %d: ending (%s): SIG%s to %d processes, SIGKILL in %v",
		sv.spec.JobID, cmp.Or(e.Why, "cancel"), slurmsyntax.SignalName(e.Signal), n, grace)
	sv.killT = sv.clock.NewTimer(grace)
	sv.killC = sv.killT.C()
	sv.killAt = sv.clock.Now().Add(grace)
}

// askingProc is one process a cancel waits for: its pid and start time,
// so that a pid used again is not taken for it.
type askingProc struct {
	pid   int
	start uint64
	// sleeping counts the looks in a row (asked) that found it sleeping.
	sleeping int
}

func askingPIDs(a []askingProc) []int {
	pids := make([]int, len(a))
	for i, p := range a {
		pids[i] = p.pid
	}
	return pids
}

// askers are the processes a cancel asked by pid waits for: pid itself
// and its ancestors in the job, up to the batch shell; none when pid is
// not the job's (a user's terminal).
func (sv *supervisor) askers(pid int) []askingProc {
	if pid <= 1 || pid == sv.mainPID {
		return nil
	}
	job := sv.tr.pids()
	var out []askingProc
	for pid > 1 && pid != os.Getpid() && slices.Contains(job, pid) {
		st, err := procfs.ReadStat(pid)
		if err != nil || !st.Live() {
			break
		}
		out = append(out, askingProc{pid: pid, start: st.StartTime})
		if pid == sv.mainPID {
			break
		}
		pid = st.PPID
	}
	return out
}

// asked reports whether the processes that asked for the cancel have had
// their answer: the one that asked, and each process it runs under up to
// the batch shell (the wrappers: sh -c, a program's subprocess), have
// exited and been reaped, so each has passed on what it got; and the batch
// shell, when it ran them, has moved on: it was seen sleeping (state S:
// waiting for a child it started since, for input, for time) at two looks
// in a row, askPoll apart, or it has exited too. A zombie's parent has not
// yet collected its exit status; a running (R) batch shell may still be
// acting on it (`echo "wrapper rc=$?"`). Two looks, because a process that
// has just reaped its child may sleep for an instant before it goes on
// (seen with dash under load); the wrappers are waited for to the end for
// the same reason. A wrapper that goes on running after the answer (a
// program that requeues its job and carries on) holds the stop for the
// grace time at most.
func (sv *supervisor) asked() bool {
	for i, p := range sv.asking {
		st, err := procfs.ReadStat(p.pid)
		if err != nil || st.StartTime != p.start {
			continue // reaped
		}
		if i == 0 || p.pid != sv.mainPID || st.State != 'S' {
			sv.asking[i].sleeping = 0
			return false
		}
		sv.asking[i].sleeping++
		return sv.asking[i].sleeping >= 2
	}
	return true
}

func (sv *supervisor) stopAsking() {
	if sv.askT != nil {
		sv.askT.Stop()
	}
	sv.askT, sv.askC, sv.asking = nil, nil, nil
}

// timeFormat is slurm_make_time_str's default.
const timeFormat = "2006-01-02T15:04:05"

// kill sends SIGKILL to every process of the job.
func (sv *supervisor) kill() {
	if len(sv.jobPIDs()) == 0 {
		return
	}
	if sv.killedAt.IsZero() {
		sv.killedAt = time.Now()
	}
	sv.killJob()
}

// warnSignal delivers --signal: to the batch shell with "B:", else to the
// job's other processes (its steps), then SIGCONT to the same.
func (sv *supervisor) warnSignal() {
	sv.warned = true
	spec := sv.spec.Signal
	target := TargetSteps
	if spec.Batch {
		target = TargetBatch
	}
	pids := sv.targets(target)
	n := signalPIDs(pids, spec.Signal)
	signalPIDs(pids, syscall.SIGCONT)
	sv.log.Printf("job %d: --signal=%s: reached %d processes", sv.spec.JobID, spec, n)
}

// targets lists the processes a target names.
func (sv *supervisor) targets(target string) []int {
	if sv.adopt != nil {
		return sv.adoptedTargets(target)
	}
	if target == TargetSteps {
		if tasks, live := sv.stepTasks(); len(live) > 0 {
			return tasks
		}
	}
	all := sv.tr.pids()
	var out []int
	for _, p := range all {
		isMain := p == sv.mainPID && !sv.mainDone
		if target == TargetAll || (target == TargetBatch) == isMain {
			out = append(out, p)
		}
	}
	return out
}

// stepTasks lists the processes the job's running steps started: the
// descendants of their live sruns, not the sruns themselves, which end
// their steps when a SIGTERM reaches them, as Slurm's srun does. live are
// the steps whose srun lives; none means the job has no step now. An srun
// joined from outside the job (srun --jobid) counts too: its tasks are its
// children wherever it runs.
func (sv *supervisor) stepTasks() (tasks []int, live []int) {
	for _, s := range sv.steps {
		if !procfs.Alive(s.PID) {
			continue
		}
		live = append(live, s.Step)
		tasks = append(tasks, procfs.Descendants(s.PID)...)
	}
	return tasks, live
}

// signalSteps sends sig to the tasks of the job's steps (TargetSteps). As
// slurmstepd does, SIGTERM or SIGKILL writes "*** STEP N.S ON NODE
// CANCELLED AT T ***" to the job's error file, once per step; the tasks
// may trap it and go on, and srun hears nothing.
func (sv *supervisor) signalSteps(sig syscall.Signal) int {
	tasks, live := sv.stepTasks()
	if len(live) == 0 {
		return signalPIDs(sv.targets(TargetSteps), sig)
	}
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		for _, id := range live {
			if sv.cancelled[id] {
				continue
			}
			if sv.cancelled == nil {
				sv.cancelled = map[int]bool{}
			}
			sv.cancelled[id] = true
			sv.stepdError(fmt.Sprintf("*** STEP %d.%d ON %s CANCELLED AT %s ***",
				sv.spec.JobID, id, sv.spec.NodeName, time.Now().Format(timeFormat)))
		}
	}
	return signalPIDs(tasks, sig)
}

// handle answers a control request.
func (sv *supervisor) handle(r Request) Reply {
	if w := r.Run; w != nil && (w.JobID != sv.spec.JobID || w.Run != sv.spec.RestartCount || w.UID != sv.spec.User.UID) {
		return Reply{Error: fmt.Sprintf("this supervisor runs job %d run %d of uid %d, not job %d run %d of uid %d: refused",
			sv.spec.JobID, sv.spec.RestartCount, sv.spec.User.UID, w.JobID, w.Run, w.UID)}
	}
	switch r.Op {
	case OpStatus:
		st := sv.status(nil)
		return Reply{Status: &st}
	case OpSignal:
		if r.Signal <= 0 || r.Signal > 64 {
			return Reply{Error: fmt.Sprintf("signal %d is not a signal", r.Signal)}
		}
		if r.Target != TargetBatch && r.Target != TargetSteps && r.Target != TargetAll {
			return Reply{Error: fmt.Sprintf("target %q is not batch, steps or all", r.Target)}
		}
		if r.Steps != nil {
			sv.steps = r.Steps
		}
		var n int
		if r.Target == TargetSteps && sv.adopt == nil {
			n = sv.signalSteps(r.Signal)
		} else {
			n = signalPIDs(sv.targets(r.Target), r.Signal)
		}
		sv.log.Printf("job %d: SIG%s to %s: reached %d processes", sv.spec.JobID, slurmsyntax.SignalName(r.Signal), r.Target, n)
		return Reply{Signalled: n}
	case OpCancel:
		sig := r.Signal
		if sig == 0 {
			sig = syscall.SIGTERM
		}
		if sig < 0 || sig > 64 {
			return Reply{Error: fmt.Sprintf("signal %d is not a signal", sig)}
		}
		grace := r.Grace
		if grace <= 0 {
			grace = sv.spec.killWait()
		}
		sv.spare = r.Spare
		sv.end(Ending{Why: r.Why, By: r.By, Signal: sig}, grace, r.Kill)
		st := sv.status(nil)
		return Reply{Status: &st}
	case OpSteps:
		sv.steps = r.Steps
		return Reply{}
	case OpLimit:
		if r.Limit <= 0 {
			return Reply{Error: fmt.Sprintf("time limit %v is not a limit", r.Limit)}
		}
		if sv.mainDone || sv.ending != nil {
			return Reply{Error: "the job is ending: its time limit no longer applies"}
		}
		sv.spec.TimeLimit = r.Limit
		sv.armLimit()
		sv.log.Printf("job %d: time limit now %s", sv.spec.JobID, slurmsyntax.FormatDuration(r.Limit))
		st := sv.status(nil)
		return Reply{Status: &st}
	case OpAdopt:
		if sv.adopt == nil {
			return Reply{Error: "not an interactive job: it adopts no process"}
		}
		if r.PID <= 1 || !procfs.Alive(r.PID) {
			return Reply{Error: fmt.Sprintf("pid %d is not a live process", r.PID)}
		}
		if sv.mainDone {
			return Reply{Error: "the job is ending: it adopts no process"}
		}
		return Reply{Adopted: sv.adoptPID(r.PID)}
	}
	return Reply{Error: fmt.Sprintf("unknown operation %q; want status, signal, cancel, limit, steps, adopt or finish", r.Op)}
}

// status is the job as it stands: RUNNING, COMPLETING once the batch
// script has ended and its processes are going, else final.
func (sv *supervisor) status(launchErr error) Status {
	st := Status{
		JobID:    sv.spec.JobID,
		State:    slurm.Running,
		Start:    sv.start,
		JobPID:   sv.mainPID,
		Tracking: sv.tr.mode(),
		// Copies: the reply is encoded on the connection's goroutine.
		Warnings: slices.Clone(sv.tr.warnings),

		TrackingDetail:     sv.tr.describe(),
		MemLimitUnenforced: sv.spec.MemLimit > 0 && !sv.tr.memory,
	}
	if sv.ending != nil {
		e := *sv.ending
		st.Ending = &e
	}
	switch {
	case launchErr != nil:
		now := time.Now()
		st.State, st.ExitCode, st.Batch = final(outcome{launchErr: launchErr})
		st.Start, st.End, st.Batch.End = cmp.Or(sv.start, now), now, now
		st.Reason, st.Error = slurm.ReasonJobLaunchFailure, launchErr.Error()
		return st
	case !sv.mainDone:
		return st
	case sv.lastGone.IsZero():
		st.State = slurm.Completing
		return st
	}
	st.OOMKills = sv.tr.oomKills()
	o := outcome{wait: sv.mainWS, ending: sv.ending, oomKills: st.OOMKills}
	if sv.adopt != nil {
		o = sv.adoptedOutcome()
		o.oomKills = st.OOMKills
	}
	st.State, st.ExitCode, st.Batch = final(o)
	st.Batch.End, st.End = sv.mainEnd, sv.mainEnd
	if sv.ending != nil {
		st.End = sv.ending.At
		st.ExitedAfterSignal = sv.killedAt.IsZero() || sv.mainEnd.Before(sv.killedAt)
		st.StopTime = sv.lastGone.Sub(sv.ending.At)
	}
	st.Killed = !sv.killedAt.IsZero()
	st.PeakRSS = sv.tr.peakRSS()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		st.Batch.UserCPU, st.Batch.SystemCPU = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
	}
	return st
}

// finish writes the job's final status.
func (sv *supervisor) finish(launchErr error) error {
	st := sv.status(launchErr)
	if st.OOMKills > 0 {
		sv.stepdError(fmt.Sprintf("Detected %d oom-kill event(s) in StepId=%d.batch. "+
			"Some of your processes may have been killed by the cgroup out-of-memory handler.", st.OOMKills, sv.spec.JobID))
	}
	// The status is the job's end as it happened (its exit code, why it
	// ended): the daemon has no other source. A disk with no room for it
	// must not turn the job into a lost one (NODE_FAIL, requeued, run a
	// second time), so the supervisor keeps it, answering its control
	// socket with it, and writes it as soon as it can.
	for attempt := 0; ; attempt++ {
		err := writeStatus(sv.dir, st)
		if err == nil {
			break
		}
		// A run directory that is gone (its state directory removed: a
		// test's, or a lab starting over) has no reader any more: keeping
		// the status would keep this process for ever.
		if _, serr := os.Stat(sv.dir); errors.Is(serr, fs.ErrNotExist) {
			sv.log.Printf("job %d: its run directory %s is gone, so no daemon can read its final status (%s %s): giving up", sv.spec.JobID, sv.dir, st.State, st.ExitCode)
			sv.answerFinish(st)
			return nil
		}
		if attempt == 0 {
			sv.log.Printf("job %d: cannot write its final status (%v): keeping it, and trying again every %v", sv.spec.JobID, err, statusRetry)
		}
		timer := time.NewTimer(statusRetry)
	wait:
		for {
			select {
			case c := <-sv.calls:
				c.reply <- Reply{Status: &st}
			case <-timer.C:
				break wait
			}
		}
	}
	sv.log.Printf("job %d: %s %s", sv.spec.JobID, st.State, st.ExitCode)
	sv.answerFinish(st)
	return nil
}

// statusRetry is how often a final status that could not be written is
// tried again.
const statusRetry = time.Second

// cleanup closes the control socket (answering late callers that the job
// has ended) and removes the cgroup and the spool directory.
func (sv *supervisor) cleanup() {
	close(sv.done)
	sv.ln.Close()
	_ = os.Remove(sv.id.Socket) // bound through /proc when its path is long (unixName)
	// Let the answers already given reach their callers (a cancel that
	// killed the job at once is answered after the job ended), for a
	// moment at most: a caller that does not read must not hold the
	// supervisor.
	answered := make(chan struct{})
	go func() { sv.conns.Wait(); close(answered) }()
	select {
	case <-answered:
	case <-time.After(time.Second):
	}
	if sv.errOut != nil {
		sv.errOut.Close()
	}
	sv.awaitCaller(callerPatience)
	// The cgroup is busy until the kernel has let go of its last process,
	// usually a moment after it was reaped: try again soon, then less
	// often, for about a second.
	deadline := time.Now().Add(time.Second)
	for wait := firstPoll; ; wait = min(2*wait, pollEvery) {
		err := sv.tr.remove()
		if err == nil || errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			sv.log.Printf("removing cgroup: %v", err)
			break
		}
		time.Sleep(wait)
	}
	if sv.spool != "" {
		if err := os.RemoveAll(sv.spool); err != nil {
			sv.log.Printf("removing spool directory: %v", err)
		}
	}
}

// stepdError writes one of slurmstepd's lines into the job's error file.
func (sv *supervisor) stepdError(msg string) {
	if sv.errOut == nil {
		return
	}
	if _, err := fmt.Fprintf(sv.errOut, "slurmstepd-%s: error: %s\n", sv.spec.NodeName, msg); err != nil {
		sv.log.Printf("writing to the job's error file: %v", err)
	}
}

// warn records something the supervisor could not do, in the log and the
// status.
func (sv *supervisor) warn(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	sv.log.Print(msg)
	sv.tr.warnings = append(sv.tr.warnings, msg)
}
