// Command sinfo is Slurm's sinfo for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Sinfo(os.Args[1:], cli.Stdio())) }
