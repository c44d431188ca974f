// Command sacct is Slurm's sacct for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sacct"
)

func main() { os.Exit(sacct.Main(os.Args[1:], cmdio.Stdio())) }
