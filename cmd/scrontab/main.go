// Command scrontab is Slurm's scrontab for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/scrontab"
)

func main() { os.Exit(scrontab.Main(os.Args[1:], cmdio.Stdio())) }
