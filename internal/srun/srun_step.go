package srun

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// stepAbortTime is Slurm's STEP_ABORT_TIME: srun waits KillWait plus this
// for an aborted step's tasks.
const stepAbortTime = 2 * time.Second

// stepRequest is the step srun asks for.
func stepRequest(o *srunOpts, join bool, env []string) api.StepRequest {
	n := o.ntasks
	switch {
	case n > 0:
	case o.ntasksPerNode > 0:
		n = o.ntasksPerNode // one node
	case o.cpusPerTask > 0 && o.exactImplied:
		n = 0 // as many as the job's CPUs hold
	default:
		n = 1
	}
	req := api.StepRequest{JobID: o.jobID, NTasks: n, CPUsPerTask: o.cpusPerTask, Overcommit: o.overcommit,
		Exact: o.exact || o.exactImplied, Overlap: o.overlap, MemMB: o.memMB, GPUs: -1, GPUSpec: o.gpuSpec(),
		Name: o.stepName(), Join: join, ResvPorts: o.resvPorts}
	if join {
		req.Env = env
	}
	return req
}

// runStep runs srun's command as a step of job o.jobID; join is srun
// --jobid from outside the job.
func runStep(o *srunOpts, sio cli.IO, join bool) int {
	return runStepIn(o, sio, join, nil)
}

// runStepIn is runStep with the client and signals of an allocation
// already made (nil: its own).
func runStepIn(o *srunOpts, sio cli.IO, join bool, a *allocRun) int {
	var c *sockclient.Client
	sigs := make(chan os.Signal, 16)
	if a != nil {
		c, sigs = a.c, a.sigs
	} else {
		var code int
		if c, _, code = cli.Dial("srun", sio); c == nil {
			return code
		}
		signal.Notify(sigs, srunSignals...)
		defer signal.Stop(sigs)
	}
	base := os.Environ()
	st, code := createStep(c, o, sio, join, base, sigs)
	if st == nil {
		return code
	}
	if st.Env != nil {
		base = st.Env
	}
	if a != nil {
		base = a.env
	}
	info := stepInfo{jobID: st.JobID, stepID: st.StepID, ntasks: st.NTasks, node: st.Node, cpus: len(st.CPUs), ports: st.Ports,
		gpus: st.GPUs, jobHasGPUs: len(st.JobGPUs) > 0, nodeGPUs: st.NodeGPUs, tresBind: jobscript.TresBind(o.gpuBind, o.gpusPerTask),
		umask: umask(), jobName: o.stepName(), user: callerName()}
	if o.cpusPerTask > 0 {
		info.cpusPerTask = o.cpusPerTask
	}
	tr := &taskRun{o: o, sio: sio, st: *st, info: info, forward: interactiveEnv(base)}
	rc, state := tr.run(c, base, sigs)
	end := api.StepEnd{JobID: st.JobID, StepID: st.StepID, Run: st.Run, State: state, ExitCode: exitCodeOf(rc),
		UserCPU: time.Duration(tr.userCPU.Load()), SystemCPU: time.Duration(tr.sysCPU.Load())}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	if err := c.Do(ctx, "POST", api.PathStepsEnd, end, nil); err != nil {
		fmt.Fprintf(sio.Stderr, "srun: error: recording the end of step %d.%d: %v\n", st.JobID, st.StepID, err)
	}
	return exitStatus(rc)
}

// interactiveEnv says whether a job's environment is an interactive job's
// (a batch job's has ENVIRONMENT=BATCH): there the daemon signals a job's
// tasks without srun, and srun sends on the signals it gets.
func interactiveEnv(env []string) bool {
	for _, kv := range env {
		if kv == "ENVIRONMENT=BATCH" {
			return false
		}
	}
	return true
}

// createStep asks the daemon for the step, waiting while the job's CPUs
// are busy, and prints what srun prints. nil means srun is done, with code.
//
// Like srun's step_ctx_create_timeout, a busy answer is followed by a
// wait for room (here a held request), and only then does srun say that
// step creation is "temporarily disabled", before it says the step was
// created, or "still disabled" when the wait ran out.
func createStep(c *sockclient.Client, o *srunOpts, sio cli.IO, join bool, env []string, sigs chan os.Signal) (*api.Step, int) {
	req := stepRequest(o, join, env)
	id := o.jobID
	said := 0 // "disabled" messages printed
	busy := func(words string) {
		verb := "temporarily"
		if said > 0 {
			verb = "still"
		}
		said++
		fmt.Fprintf(sio.Stderr, "srun: Job %d step creation %s disabled, retrying (%s)\n", id, verb, words)
	}
	for {
		st, sig, err := askStep(c, req, sigs)
		if sig != 0 {
			fmt.Fprintf(sio.Stderr, "srun: Cancelled pending job step with signal %d\n", sig)
			fmt.Fprintf(sio.Stderr, "srun: error: Unable to create step for job %d: %s\n", id, cli.Strerror(slurm.ErrAlreadyDone, ""))
			return nil, 1
		}
		if err == nil {
			if req.Wait {
				if said == 0 {
					busy(cli.Strerror(slurm.ErrNodesBusy, "Requested nodes are busy"))
				}
				fmt.Fprintf(sio.Stderr, "srun: Step created for job %d\n", id)
			}
			return st, 0
		}
		var le *sockclient.Error
		if !errors.As(err, &le) || le.Code == 0 {
			return nil, cli.DaemonError("srun", err, sio)
		}
		lines := strings.Split(le.Message, "\n")
		words := cli.Strerror(le.Code, lines[len(lines)-1])
		switch le.Code {
		case slurm.ErrNodesBusy:
			if o.immediate {
				break
			}
			if req.Wait {
				busy(words)
			}
			req.Wait = true
			continue
		case slurm.ErrInvalidJobID, slurm.ErrJobPending:
			fmt.Fprintf(sio.Stderr, "srun: error: Unable to confirm allocation for job %d: %s\n", id, words)
			fmt.Fprintf(sio.Stderr, "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job %d\n", id)
			return nil, 1
		case slurm.ErrAlreadyDone:
			if !req.Wait {
				fmt.Fprintf(sio.Stderr, "srun: error: Slurm job %d has expired\n", id)
				fmt.Fprintf(sio.Stderr, "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job %d\n", id)
				return nil, 1
			}
		}
		for _, note := range lines[:len(lines)-1] {
			fmt.Fprintf(sio.Stderr, "srun: error: %s\n", note)
		}
		fmt.Fprintf(sio.Stderr, "srun: error: Unable to create step for job %d: %s\n", id, words)
		return nil, 1
	}
}

// askStep sends one step request; a signal that would end srun (not
// SIGCONT, SIGUSR1, SIGUSR2, SIGALRM) abandons it and is returned.
func askStep(c *sockclient.Client, req api.StepRequest, sigs chan os.Signal) (*api.Step, syscall.Signal, error) {
	return untilSignal(sigs, func(ctx context.Context, st *api.Step) error {
		return c.Do(ctx, "POST", api.PathSteps, req, st)
	})
}

// run starts the tasks and sees them to their end: exits reported as srun
// reports them, signals handled as srun's signal thread does. It returns
// the tasks' worst status and the step's state for accounting.
func (tr *taskRun) run(c *sockclient.Client, base []string, sigs chan os.Signal) (syscall.WaitStatus, slurm.JobState) {
	pipes := make(chan os.Signal, 4)
	// srun's output may be a pipe that closes (srun | head): the write
	// fails with EPIPE, which labelLines handles; the signal itself must
	// not kill srun before it can kill its tasks.
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	if tr.o.pty && ownIsTTY(tr.sio) {
		// The task takes the terminal; srun must be able to take it back.
		signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN)
		defer takeTerminal(tr.sio)
	}
	if err := tr.start(base); err != nil {
		return syscall.WaitStatus(1 << 8), slurm.Failed
	}
	var rc syscall.WaitStatus
	var all []taskExit
	left := tr.info.ntasks
	quiet := false   // srun or the job's end killed the tasks: no "Killed" lines
	forced := false  // srun forced the termination itself
	aborted := false // "Job step aborted" said

	var lastIntr clock.Stopwatch // from the last Ctrl-C (none: long ago)
	endings := make(chan api.JobEnding, 4)
	stepName := fmt.Sprintf("StepId=%d.%d", tr.info.jobID, tr.info.stepID)
	terminate := func() {
		if !forced {
			fmt.Fprintln(tr.sio.Stderr, "srun: forcing job termination")
		}
		forced, quiet = true, true
		tr.signalTasks(syscall.SIGKILL)
	}
	asking := 0 // questions to the daemon about the job's end not answered yet
	for left > 0 || asking > 0 {
		select {
		case e := <-tr.exits:
			batch := []taskExit{e}
			// Exits reaped together are reported together, as slurmstepd
			// sends the exits one waitpid loop collects in one message:
			// tasks that end at the same moment share a line ("tasks
			// 0-1: Exited with exit code 3"). Each task's end reaches srun
			// through its own goroutine, which a busy machine may run
			// late, and a task may still be starting (srun's own binary,
			// not yet its command) when another has ended: the batch
			// stays open while exits keep coming within exitGather of
			// each other, and while a task is still starting (up to
			// launchGather), since it cannot have ended apart.
			timer := time.NewTimer(exitGather)
			started := clock.Start()
		gather:
			for len(batch) < left {
				select {
				case e := <-tr.exits:
					batch = append(batch, e)
					timer.Reset(exitGather)
				case <-timer.C:
					if started.Elapsed() < launchGather && tr.launching(append(all, batch...)) {
						timer.Reset(exitGather)
						continue
					}
					break gather
				}
			}
			timer.Stop()
			left -= len(batch)
			all = append(all, batch...)
			if !quiet && killedTask(batch) {
				// Killed by the job's end, whose signal srun may not have
				// read yet? Then their deaths are the step's abort.
				if e := jobEnding(c, tr.info.jobID); e.Ending {
					quiet = true
					if !aborted {
						aborted = true
						tr.printAbort(e)
					}
				}
			}
			for _, g := range groupExits(batch) {
				if line := exitLine(tr.info.node, g, quiet); line != "" {
					fmt.Fprintln(tr.sio.Stderr, line)
				}
				rc = worse(rc, g.ws)
				if tr.o.killBadExit && !(g.ws.Exited() && g.ws.ExitStatus() == 0) && left > 0 {
					quiet = true
					tr.signalTasks(syscall.SIGKILL)
				}
			}
		case <-pipes:
		case s := <-sigs:
			switch s {
			case syscall.SIGINT:
				switch {
				case tr.o.quitOnIntr || lastIntr.Elapsed() < time.Second:
					fmt.Fprintf(tr.sio.Stderr, "srun: sending Ctrl-C to %s\n", stepName)
					tr.signalTasks(syscall.SIGINT)
					terminate()
				case tr.o.disableStatus:
					fmt.Fprintf(tr.sio.Stderr, "srun: sending Ctrl-C to %s\n", stepName)
					tr.signalTasks(syscall.SIGINT)
				case !forced:
					fmt.Fprintln(tr.sio.Stderr, "srun: interrupt (one more within 1 sec to abort)")
					tr.printStatus(all, stepName)
				}
				lastIntr = clock.Start()
			case syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP:
				if s == syscall.SIGQUIT {
					fmt.Fprintln(tr.sio.Stderr, "srun: Quit")
				}
				asking++
				go func() { endings <- jobEnding(c, tr.info.jobID) }()
			case syscall.SIGCONT:
				fmt.Fprintln(tr.sio.Stderr, "srun: got SIGCONT")
			default:
				if tr.forward {
					tr.signalTasks(s.(syscall.Signal))
				}
			}
		case e := <-endings:
			asking--
			if !e.Ending {
				if left > 0 {
					terminate()
				}
				continue
			}
			quiet = true
			if !aborted {
				aborted = true
				tr.printAbort(e)
			}
		}
	}
	// A SIGTERM read too late to matter to the tasks still says whether
	// the job's end took the step.
	for drained := false; !drained && !aborted; {
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM || s == syscall.SIGHUP || s == syscall.SIGQUIT {
				if e := jobEnding(c, tr.info.jobID); e.Ending {
					aborted = true
					tr.printAbort(e)
				}
			}
		default:
			drained = true
		}
	}
	// The job's SIGTERM may not have reached sigs yet (signal delivery is
	// asynchronous) when tasks that exit on it were quicker: ask once more,
	// so that a step ended by its job's end says so, as Slurm's does.
	if !aborted && !forced {
		if e := jobEnding(c, tr.info.jobID); e.Ending {
			aborted = true
			tr.printAbort(e)
		}
	}
	tr.finish()
	if !forced && !aborted {
		for _, e := range all {
			if e.ws.Signaled() && (e.ws.Signal() == syscall.SIGTERM || e.ws.Signal() == syscall.SIGKILL) {
				fmt.Fprintf(tr.sio.Stderr, "srun: Force Terminated %s\n", stepName)
				break
			}
		}
	}
	return rc, stepState(rc)
}

// killedTask says whether a task of exits was killed by a signal that
// ends jobs (SIGTERM, SIGKILL, SIGINT, SIGHUP).
func killedTask(exits []taskExit) bool {
	for _, e := range exits {
		if e.ws.Signaled() {
			switch e.ws.Signal() {
			case syscall.SIGTERM, syscall.SIGKILL, syscall.SIGINT, syscall.SIGHUP:
				return true
			}
		}
	}
	return false
}

// printAbort says that the job's end took the step with it, as slurmstepd
// and srun say it.
func (tr *taskRun) printAbort(e api.JobEnding) {
	at := e.At
	if at.IsZero() {
		at = tr.sio.Now()
	}
	why := ""
	if e.Why != "" {
		why = " DUE TO " + e.Why
	}
	fmt.Fprintf(tr.sio.Stderr, "slurmstepd-%s: error: *** STEP %d.%d ON %s CANCELLED AT %s%s ***\n",
		tr.info.node, tr.info.jobID, tr.info.stepID, tr.info.node, at.Local().Format("2006-01-02T15:04:05"), why)
	fmt.Fprintf(tr.sio.Stderr, "srun: Job step aborted: Waiting up to %d seconds for job step to finish.\n",
		int((e.KillWait+stepAbortTime)/time.Second))
}

// printStatus prints the tasks' states, as srun does on a first Ctrl-C.
func (tr *taskRun) printStatus(exited []taskExit, stepName string) {
	var running, normal, abnormal []int
	done := map[int]taskExit{}
	for _, e := range exited {
		done[e.task] = e
	}
	for i := range tr.info.ntasks {
		e, ok := done[i]
		switch {
		case !ok:
			running = append(running, i)
		case e.ws.Exited() && e.ws.ExitStatus() == 0:
			normal = append(normal, i)
		default:
			abnormal = append(abnormal, i)
		}
	}
	for _, g := range []struct {
		ids  []int
		what string
	}{{running, "running"}, {abnormal, "exited abnormally"}, {normal, "exited"}} {
		if len(g.ids) == 0 {
			continue
		}
		s := ""
		if len(g.ids) > 1 {
			s = "s"
		}
		fmt.Fprintf(tr.sio.Stderr, "srun: %s task%s %s: %s\n", stepName, s, slurmtime.FormatRanges(g.ids), g.what)
	}
}

// jobEnding asks the daemon whether the job is being ended; when it cannot
// say, the answer is no.
func jobEnding(c *sockclient.Client, id uint32) api.JobEnding {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var e api.JobEnding
	q := url.Values{"job": {strconv.FormatUint(uint64(id), 10)}}
	if err := c.Do(ctx, "GET", api.PathSteps+"?"+q.Encode(), nil, &e); err != nil {
		return api.JobEnding{}
	}
	return e
}

// stepState is a step's state in accounting from its tasks' worst status:
// killed by SIGKILL, SIGTERM, SIGINT or SIGHUP is CANCELLED, another
// failure FAILED.
func stepState(ws syscall.WaitStatus) slurm.JobState {
	switch {
	case ws.Signaled():
		switch ws.Signal() {
		case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
			return slurm.Cancelled
		}
		return slurm.Failed
	case ws.ExitStatus() != 0:
		return slurm.Failed
	}
	return slurm.Completed
}

// exitCodeOf is Slurm's "status:signal" of a wait status.
func exitCodeOf(ws syscall.WaitStatus) jobrec.ExitCode {
	if ws.Signaled() {
		return jobrec.ExitCode{Signal: int(ws.Signal())}
	}
	return jobrec.ExitCode{Status: ws.ExitStatus()}
}

// umask is the process's umask (SLURM_UMASK).
func umask() int {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return m
}

// callerName is the calling user's name, for %u.
func callerName() string {
	if n := userdb.Name(uint32(os.Getuid())); n != "" {
		return n
	}
	return strconv.Itoa(os.Getuid())
}
