// Command slurmstepd-lite is the per-job supervisor on its own: what
// `slurmd-lite stepd` runs, in a binary that links nothing else, so that
// starting one per job (and its launcher) costs a fraction of starting the
// daemon's binary. The daemon uses it when it lies beside slurmd-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

func main() { os.Exit(stepd.Main(os.Args[1:])) }
