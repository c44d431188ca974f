// Package sim replays a workload trace through the scheduling core on a
// simulated clock.
package sim

import (
	"fmt"
	"io"
)

// Main is `slurmd-lite simulate`.
func Main(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "slurmd-lite simulate: not built yet")
	return 1
}
