package sprio

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option sprio's help names is one sprio
// takes (so that bash completion, made from the help, offers only those).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "sprio", sprioHelp+sprioUsage, sprioOptions)
}
