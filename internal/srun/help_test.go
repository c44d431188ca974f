package srun

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option srun's and salloc's help name
// is one they take (and salloc's usage; srun's names three that Slurm's
// srun no longer takes either: --slurmd_debug, --ctrl-comm-ifhn,
// --mpi-combine).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "srun", srunHelp, srunTable)
	clitest.HelpNamesOptions(t, "salloc", sallocHelp+sallocUsage, sallocTable)
}
