// Command squeue is Slurm's squeue for slurm-lite.
package main

import (
	"os"
	"runtime/debug"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/squeue"
)

func main() {
	// squeue lives for milliseconds, and its heap is the job list it
	// prints: collecting garbage costs it more than the memory saved (a
	// tenth of its time with 10,000 jobs). The limit brings the collector
	// back for a huge queue or a long --iterate.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	os.Exit(squeue.Main(os.Args[1:], cmdio.Stdio()))
}
