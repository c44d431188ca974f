package srun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Interactive allocations: srun and salloc outside a job submit a job
// without a script (POST /v1/alloc), which waits in the queue as any job
// does, and wait for it (GET /v1/alloc, held a while each time):
//
//	srun: job 12 queued and waiting for resources      (only if it waits)
//	srun: job 12 has been allocated resources
//
// The daemon then adopts the caller into the job (its cgroup), so that the
// command srun or salloc runs is the job's, with the job's GPUs and
// environment. srun runs the command as step 0 of the job (srun_step.go);
// salloc runs it (the user's shell by default) as it is. Their end is the
// job's end (POST /v1/alloc/end, with the exit code). A signal while the
// job waits cancels it.

// allocRun is an interactive allocation srun holds: its client, its
// signals and the job's environment.
type allocRun struct {
	c    *sockclient.Client
	sigs chan os.Signal
	env  []string
}

// allocRequest is the job request of srun's or salloc's options: the
// options a job takes, given to sbatch's parser with the command as
// --wrap, so that values are checked with Slurm's words. name is the job
// name when none is given; getenv the SBATCH_* equivalents (salloc's
// SALLOC_*), nil for none.
func allocRequest(prog string, settings []jobscript.Setting, command []string, name string, getenv func(string) (string, bool), sio cli.IO) (*jobscript.Request, int) {
	all := append([]jobscript.Setting{{Name: "job-name", Value: name, HasValue: true}}, settings...)
	cl := jobscript.CommandLine{Settings: all, Wrap: strings.Join(command, " "), HasWrap: true}
	maxArray := 0
	if cfg, _, err := config.Find(""); err == nil {
		maxArray = cfg.MaxArraySize
	}
	req, err := jobscript.Parse(jobscript.Input{Command: cl, Env: getenv, Now: sio.Now(), MaxArraySize: maxArray})
	if err == nil && os.Geteuid() != 0 {
		err = req.RequireRoot()
	}
	if err != nil {
		return nil, sbatch.PrintJobError(prog, err, sio.Stderr)
	}
	if req.Array != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: --array is for batch jobs: submit it with sbatch\n", prog)
		return nil, 1
	}
	for _, w := range req.Warnings {
		fmt.Fprintf(sio.Stderr, "%s: %s\n", prog, w)
	}
	// The job runs the command itself, not a script: scontrol shows it as
	// the job's Command.
	req.Wrap, req.HasWrap, req.ScriptPath = "", false, strings.Join(command, " ")
	return req, 0
}

// runAllocation is srun outside a job: an allocation, then the command as
// its step 0.
func runAllocation(o *srunOpts, sio cli.IO) int {
	req, code := allocRequest("srun", o.allocSettings, o.command, o.stepName(), nil, sio)
	if req == nil {
		return code
	}
	// The job holds the ports its step 0 asks for (sbatch has no such
	// option; the daemon gives other jobs their tasks + 1).
	req.ResvPorts = o.resvPorts
	c, _, code := cli.Dial("srun", sio)
	if c == nil {
		return code
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, srunSignals...)
	defer signal.Stop(sigs)
	a, code := allocate(c, "srun", req, o.command, sio, sigs)
	if a == nil {
		return code
	}
	o.jobID = a.JobID
	rc := runStepIn(o, sio, false, &allocRun{c: c, sigs: sigs, env: a.Env})
	endAllocation(c, "srun", a.JobID, rc, sio)
	return rc
}

// endAllocation tells the daemon that the command ended with status rc
// (srun's or a shell's: above 128 for a signal).
func endAllocation(c *sockclient.Client, prog string, id uint32, rc int, sio cli.IO) {
	exit := jobrec.ExitCode{Status: rc}
	if rc > 128 {
		exit = jobrec.ExitCode{Signal: rc - 128}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	if err := c.Do(ctx, "POST", api.PathAllocEnd, api.AllocEnd{JobID: id, ExitCode: exit}, nil); err != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: Unable to clean up job allocation %d: %v\n", prog, id, err)
	}
}

// allocate submits the interactive job and waits until it runs, saying
// what srun (or salloc) says meanwhile. nil means the caller is done, with
// code.
func allocate(c *sockclient.Client, prog string, req *jobscript.Request, command []string, sio cli.IO, sigs chan os.Signal) (*api.Allocation, int) {
	if req.TestOnly {
		fmt.Fprintf(sio.Stderr, "%s: error: --test-only is for sbatch in slurm-lite: use sbatch --test-only\n", prog)
		return nil, 1
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: finding the current directory: %v\n", prog, err)
		return nil, 1
	}
	body := api.AllocRequest{Submit: api.Submit{Request: *req, Env: os.Environ(), Cwd: cwd}, Command: command, Salloc: prog == "salloc"}
	var sub api.Allocation
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	err = c.Do(ctx, "POST", api.PathAlloc, body, &sub)
	cancel()
	if err != nil {
		return nil, allocError(prog, err, sio)
	}
	id := sub.JobID
	queued := false
	for wait := 1; ; wait = 10 {
		a, sig, err := waitAllocation(c, id, wait, sigs)
		switch {
		case sig != 0:
			cancelJob(c, id)
			if prog == "salloc" {
				fmt.Fprintln(sio.Stderr, "salloc: Job aborted due to signal")
			} else {
				fmt.Fprintf(sio.Stderr, "srun: Job allocation %d has been revoked\n", id)
			}
			return nil, 1
		case err != nil:
			return nil, cli.DaemonError(prog, err, sio)
		case a.State == slurm.Pending:
			if !queued {
				queued = true
				if prog == "salloc" {
					fmt.Fprintf(sio.Stderr, "salloc: Pending job allocation %d\n", id)
				}
				fmt.Fprintf(sio.Stderr, "%s: job %d queued and waiting for resources\n", prog, id)
			}
			continue
		case a.State != slurm.Running:
			fmt.Fprintf(sio.Stderr, "%s: error: Job allocation %d has been revoked.\n", prog, id)
			return nil, 1
		}
		if queued {
			fmt.Fprintf(sio.Stderr, "%s: job %d has been allocated resources\n", prog, id)
		}
		return a, 0
	}
}

// allocError prints a refused allocation as srun and salloc do.
func allocError(prog string, err error, sio cli.IO) int {
	var le *sockclient.Error
	if !errors.As(err, &le) {
		return cli.DaemonError(prog, err, sio)
	}
	lines := strings.Split(le.Message, "\n")
	for _, note := range lines[:len(lines)-1] {
		fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, note)
	}
	what := "Unable to allocate resources"
	if prog == "salloc" {
		what = "Job submit/allocate failed"
	}
	fmt.Fprintf(sio.Stderr, "%s: error: %s: %s\n", prog, what, cli.Strerror(le.Code, lines[len(lines)-1]))
	cli.PrintHint(prog, le, sio)
	return 1
}

// waitAllocation asks once how the job stands, the daemon holding the
// question up to wait seconds while the job is pending; a signal that
// should end srun abandons it and is returned.
func waitAllocation(c *sockclient.Client, id uint32, wait int, sigs chan os.Signal) (*api.Allocation, syscall.Signal, error) {
	path := fmt.Sprintf("%s?job=%d&wait=%d", api.PathAlloc, id, wait)
	return untilSignal(sigs, func(ctx context.Context, a *api.Allocation) error {
		return c.Do(ctx, "GET", path, nil, a)
	})
}

// untilSignal runs ask, a request to the daemon, and returns its answer;
// a signal that should end srun (not SIGCONT, SIGUSR1, SIGUSR2, SIGALRM)
// abandons the request and is returned instead.
func untilSignal[T any](sigs chan os.Signal, ask func(context.Context, *T) error) (*T, syscall.Signal, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var v T
	done := make(chan error, 1)
	go func() { done <- ask(ctx, &v) }()
	for {
		select {
		case err := <-done:
			return &v, 0, err
		case s := <-sigs:
			switch s {
			case syscall.SIGCONT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM:
				continue
			}
			cancel()
			<-done
			return nil, s.(syscall.Signal), nil
		}
	}
}

// cancelJob cancels a job that is no longer wanted.
func cancelJob(c *sockclient.Client, id uint32) {
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	_ = c.Do(ctx, "POST", api.PathCancel, api.Cancel{Jobs: []string{strconv.FormatUint(uint64(id), 10)}}, nil)
}

// takeTerminal makes this process's group the terminal's foreground again
// after a command had it.
func takeTerminal(sio cli.IO) {
	f := stdFile(sio.Stdin)
	if f == nil {
		return
	}
	_ = unix.IoctlSetPointerInt(int(f.Fd()), unix.TIOCSPGRP, syscall.Getpgrp())
}
