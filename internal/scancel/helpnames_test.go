package scancel

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option scancel's help names is one scancel
// takes (so that bash completion, made from the help, offers only those).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "scancel", scancelHelp+scancelUsage, scancelOptions)
}
