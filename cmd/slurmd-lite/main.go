// Command slurmd-lite is the slurm-lite daemon and its admin tools.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/daemon"
	"github.com/slurm-lite/slurm-lite/internal/livereplay"
	"github.com/slurm-lite/slurm-lite/internal/slurmdcmd"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

func main() {
	os.Exit(slurmdcmd.Main(os.Args[1:], cmdio.Stdio(), slurmdcmd.Daemon{
		Run:   daemon.Main,
		Stepd: stepd.Main,
		Live:  livereplay.Runner,
	}))
}
