// Command sacctmgr is Slurm's sacctmgr for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sacctmgr"
)

func main() { os.Exit(sacctmgr.Main(os.Args[1:], cmdio.Stdio())) }
