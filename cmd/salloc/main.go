// Command salloc is Slurm's salloc for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/srun"
)

func main() { os.Exit(srun.Salloc(os.Args[1:], cmdio.Stdio())) }
