// Command sprio is Slurm's sprio for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sprio"
)

func main() { os.Exit(sprio.Main(os.Args[1:], cmdio.Stdio())) }
