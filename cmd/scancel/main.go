// Command scancel is Slurm's scancel for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/scancel"
)

func main() { os.Exit(scancel.Main(os.Args[1:], cmdio.Stdio())) }
