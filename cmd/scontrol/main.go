// Command scontrol is Slurm's scontrol for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Scontrol(os.Args[1:], cli.Stdio())) }
