package scontrol

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: the long options scontrol --help names are options scontrol
// takes.
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "scontrol", scontrolHelp, scontrolOptions)
}
