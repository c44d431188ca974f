// Command sacct is Slurm's sacct for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Sacct(os.Args[1:], cli.Stdio())) }
