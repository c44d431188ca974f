package cli

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// allocRun is an interactive allocation srun or salloc holds: its client,
// its signals and the job's environment.
type allocRun struct {
	c    *localapi.Client
	sigs chan os.Signal
	env  []string
}

// runAllocation is srun outside a job.
func runAllocation(o *srunOpts, sio IO) int {
	fmt.Fprintln(sio.Stderr, "srun: error: srun outside a job is not available yet: submit with sbatch and call srun inside the job")
	return 1
}

// takeTerminal makes srun's process group the terminal's foreground again
// after a --pty task had it.
func takeTerminal(sio IO) {
	f := stdFile(sio.Stdin)
	if f == nil {
		return
	}
	_ = unix.IoctlSetPointerInt(int(f.Fd()), unix.TIOCSPGRP, syscall.Getpgrp())
}
