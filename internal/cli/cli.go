// Package cli holds the bodies of slurm-lite's commands. Each cmd/<name>/main.go
// is one call into here, e.g. os.Exit(cli.Sbatch(os.Args[1:], cli.Stdio())),
// so the commands can be driven in-process by tests and the mains stay tiny.
package cli

import "github.com/slurm-lite/slurm-lite/internal/cmdio"

// IO is what a command reads and writes: its streams, its environment and
// the clock. Tests fill it with buffers, a fixed map and a fixed time.
type IO = cmdio.IO

// Stdio is the process's own streams, environment and clock.
func Stdio() IO { return cmdio.Stdio() }
