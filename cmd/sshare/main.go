// Command sshare is Slurm's sshare for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sshare"
)

func main() { os.Exit(sshare.Main(os.Args[1:], cmdio.Stdio())) }
