package squeue

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: the long options squeue --help names are options squeue
// takes.
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "squeue", squeueHelp, squeueOptions)
}
