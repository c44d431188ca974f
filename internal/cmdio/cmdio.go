// Package cmdio is what a command reads and writes: its streams, its
// environment and the clock, in one value that tests fill with buffers, a
// fixed map and a fixed time. It is apart from internal/cli so that a
// command built without cli (sbatch, see internal/sbatch) takes the same.
package cmdio

import (
	"io"
	"os"
	"time"
)

// IO is a command's streams, environment and clock.
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
	// Terminal reports whether a stream is a terminal: progress lines
	// for a person watching (scontrol yield) go there and nowhere else.
	// nil: nothing is.
	Terminal func(io.Writer) bool
}

// IsTerminal reports whether w, one of the command's streams, is a
// terminal.
func (c IO) IsTerminal(w io.Writer) bool {
	return c.Terminal != nil && c.Terminal(w)
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
		Terminal: isTerminal,
	}
}
