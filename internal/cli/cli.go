// Package cli is what Slurm's commands share: the daemon's socket and the
// questions they ask it (Dial, GetJobs, Post, Get), Slurm's words for its
// error numbers (Strerror, DaemonError), the -u and -M arguments they read
// alike (UserMatch, UserNames, KnownClusters), and the I/O they run with.
// Each command is a package of its own (internal/squeue, internal/srun,
// ...), whose Main its cmd/<name>/main.go calls, e.g.
// os.Exit(squeue.Main(os.Args[1:], cmdio.Stdio())), so that its binary
// links what it uses and tests can drive it in-process; internal/e2e runs
// them all against a daemon.
package cli

import (
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// IO is what a command reads and writes: its streams, its environment and
// the clock. Tests fill it with buffers, a fixed map and a fixed time.
type IO = cmdio.IO

// Stdio is the process's own streams, environment and clock.
func Stdio() IO { return cmdio.Stdio() }

// SlurmVersion is the Slurm release whose behaviour and output we follow;
// every command's --version prints it because tools check it.
const SlurmVersion = slurm.Version
