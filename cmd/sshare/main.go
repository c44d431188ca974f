// Command sshare is Slurm's sshare for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cli"
)

func main() { os.Exit(cli.Sshare(os.Args[1:], cli.Stdio())) }
