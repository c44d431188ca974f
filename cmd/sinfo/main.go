// Command sinfo is Slurm's sinfo for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sinfo"
)

func main() { os.Exit(sinfo.Main(os.Args[1:], cmdio.Stdio())) }
