package srun

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// sallocOnly are salloc's options that are not a job's.
var sallocOnly = map[string]bool{"bell": true, "no-bell": true, "kill-command": true, "no-shell": true, "immediate": true,
	"x11": true, "quiet": true, "verbose": true, "help": true, "usage": true, "version": true}

// Salloc is the salloc command: an interactive allocation in which it runs
// a command, the user's shell by default, with the job's environment and
// GPUs, in the caller's terminal.
func Salloc(args []string, sio cli.IO) int {
	var settings []jobscript.Setting
	cmdLine := &cli.Command{Name: "salloc", Table: sallocTable, Ordering: getopt.RequireOrder, Help: sallocHelp, Usage: sallocUsage, BadOption: 255}
	ops, code, done := cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		switch key := r.Option.Key(); key {
		case "no-shell":
			fmt.Fprintln(sio.Stderr, "salloc: error: --no-shell is not supported by slurm-lite: an allocation lives as long as its command")
			return 1, true
		default:
			if !sallocOnly[key] {
				settings = append(settings, jobscript.Setting{Name: key, Value: r.Value, HasValue: r.HasValue})
			}
		}
		return 0, false
	})
	if done {
		return code
	}
	command := ops
	if len(command) == 0 {
		shell, _ := sio.Getenv("SHELL")
		if shell == "" {
			shell = "/bin/sh"
		}
		command = []string{shell}
	}
	// salloc's SALLOC_* variables are sbatch's SBATCH_* ones.
	getenv := func(k string) (string, bool) {
		if rest, ok := strings.CutPrefix(k, "SBATCH_"); ok {
			return sio.Getenv("SALLOC_" + rest)
		}
		return "", false
	}
	req, code := allocRequest("salloc", settings, command, "interactive", getenv, sio)
	if req == nil {
		return code
	}
	c, _, code := cli.Dial("salloc", sio)
	if c == nil {
		return code
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, srunSignals...)
	defer signal.Stop(sigs)
	a, code := allocate(c, "salloc", req, command, sio, sigs)
	if a == nil {
		return code
	}
	fmt.Fprintf(sio.Stderr, "salloc: Granted job allocation %d\n", a.JobID)
	rc, revoked := runAllocCommand(c, a, command, sio, sigs)
	if !revoked {
		fmt.Fprintf(sio.Stderr, "salloc: Relinquishing job allocation %d\n", a.JobID)
	}
	endAllocation(c, "salloc", a.JobID, rc, sio)
	return rc
}

// runAllocCommand runs salloc's command in a process group of its own, in
// the terminal's foreground when there is one, and waits for it. revoked
// says that the job was ended under it (scancel, its time limit).
func runAllocCommand(c *sockclient.Client, a *api.Allocation, command []string, sio cli.IO, sigs chan os.Signal) (rc int, revoked bool) {
	path, err := lookPath(command[0], a.Env)
	if err != nil {
		fmt.Fprintf(sio.Stderr, "salloc: error: _fork_command: Unable to find command \"%s\"\n", command[0])
		return 1, false
	}
	cmd := &exec.Cmd{Path: path, Args: command, Env: a.Env, Stdin: sio.Stdin, Stdout: sio.Stdout, Stderr: sio.Stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if ownIsTTY(sio) {
		signal.Ignore(syscall.SIGTTOU, syscall.SIGTTIN, syscall.SIGTSTP)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
		defer takeTerminal(sio)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(sio.Stderr, "salloc: error: _fork_command: Unable to exec command \"%s\": %s\n", path, strerror2(err))
		return 1, false
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	endings := make(chan api.JobEnding, 4)
	for {
		select {
		case <-done:
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !revoked {
				// The job's end may have ended the command before salloc
				// read its own signal.
				if e := jobEnding(c, a.JobID); e.Ending {
					revoked = true
					revokedLine(sio, a.JobID, e)
				}
			}
			return exitStatus(ws), revoked
		case s := <-sigs:
			switch s {
			case syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
				go func() { endings <- jobEnding(c, a.JobID) }()
			case syscall.SIGCONT:
			default:
				_ = syscall.Kill(-cmd.Process.Pid, s.(syscall.Signal))
			}
		case e := <-endings:
			if !e.Ending {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGHUP)
				continue
			}
			if !revoked {
				revoked = true
				revokedLine(sio, a.JobID, e)
			}
		}
	}
}

// revokedLine is salloc's word that the job was ended under it.
func revokedLine(sio cli.IO, id uint32, e api.JobEnding) {
	if e.Why == "TIME LIMIT" {
		fmt.Fprintf(sio.Stderr, "salloc: Job %d has exceeded its time limit and its allocation has been revoked.\n", id)
	} else {
		fmt.Fprintf(sio.Stderr, "salloc: Job allocation %d has been revoked.\n", id)
	}
}

// lookPath finds a command in env's PATH, as execvp would.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, unix.Access(file, unix.X_OK)
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range strings.Split(v, ":") {
				if dir == "" {
					dir = "."
				}
				if p := dir + "/" + file; unix.Access(p, unix.X_OK) == nil {
					if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
						return p, nil
					}
				}
			}
			return "", exec.ErrNotFound
		}
	}
	return exec.LookPath(file)
}
