// Command srun is Slurm's srun for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Srun(os.Args[1:], cli.Stdio())) }
