// Command salloc is Slurm's salloc for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Salloc(os.Args[1:], cli.Stdio())) }
