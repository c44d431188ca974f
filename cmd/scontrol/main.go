// Command scontrol is Slurm's scontrol for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
)

func main() { os.Exit(scontrol.Main(os.Args[1:], cmdio.Stdio())) }
