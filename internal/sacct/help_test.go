package sacct

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: the long options sacct --help names are options sacct
// takes.
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "sacct", sacctHelp, sacctOptions)
}
