// Package cli holds the bodies of slurm-lite's commands. Each cmd/<name>/main.go
// is one call into here, e.g. os.Exit(cli.Sbatch(os.Args[1:], cli.Stdio())),
// so the commands can be driven in-process by tests and the mains stay tiny.
package cli

import (
	"io"
	"os"
	"time"
)

// IO is what a command reads and writes: its streams, its environment and
// the clock. Tests fill it with buffers, a fixed map and a fixed time.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv looks up an environment variable.
	Getenv func(string) (string, bool)
	// Now is the wall clock.
	Now func() time.Time
	// ReadFile reads a named file (the job script).
	ReadFile func(string) ([]byte, error)
}

// Stdio is the process's own streams, environment and clock.
func Stdio() IO {
	return IO{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.LookupEnv,
		Now:      time.Now,
		ReadFile: os.ReadFile,
	}
}
