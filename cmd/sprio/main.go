// Command sprio is Slurm's sprio for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Sprio(os.Args[1:], cli.Stdio())) }
