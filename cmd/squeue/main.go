// Command squeue is Slurm's squeue for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Squeue(os.Args[1:], cli.Stdio())) }
