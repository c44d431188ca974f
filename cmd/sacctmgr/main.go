// Command sacctmgr is Slurm's sacctmgr for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Sacctmgr(os.Args[1:], cli.Stdio())) }
