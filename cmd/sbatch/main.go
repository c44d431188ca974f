// Command sbatch submits a batch job, as Slurm's sbatch does.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Sbatch(os.Args[1:], cli.Stdio())) }
