// Command slurmd-lite is the slurm-lite daemon and its admin tools.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.SlurmdLite(os.Args[1:], cli.Stdio())) }
