// Command srun is Slurm's srun for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/srun"
)

func main() { os.Exit(srun.Main(os.Args[1:], cmdio.Stdio())) }
