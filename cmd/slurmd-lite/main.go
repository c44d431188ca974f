// Command slurmd-lite is the slurm-lite daemon and its admin tools.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/daemon"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

func main() {
	os.Exit(cli.SlurmdLite(os.Args[1:], cli.Stdio(), cli.Daemon{Run: daemon.Main, Stepd: stepd.Main}))
}
