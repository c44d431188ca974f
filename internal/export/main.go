// Package export writes a configuration for real Slurm from slurm-lite's.
package export

import (
	"fmt"
	"io"
)

// Main is `slurmd-lite export`.
func Main(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "slurmd-lite export: not built yet")
	return 1
}
