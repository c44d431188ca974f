// Command scancel is Slurm's scancel for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Scancel(os.Args[1:], cli.Stdio())) }
