// Command sreport is Slurm's sreport for slurm-lite.
package main

import (
	"os"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/sreport"
)

func main() { os.Exit(sreport.Main(os.Args[1:], cmdio.Stdio())) }
