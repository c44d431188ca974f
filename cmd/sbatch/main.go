// Command sbatch submits a batch job, as Slurm's sbatch does.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
)

// internal/sbatch alone keeps the binary small and static, so that it
// starts in a millisecond (see internal/sbatch).
func main() { os.Exit(sbatch.Main(os.Args[1:], cmdio.Stdio())) }
