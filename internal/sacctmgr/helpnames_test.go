package sacctmgr

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option sacctmgr's help names is one sacctmgr
// takes (so that bash completion, made from the help, offers only those).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "sacctmgr", sacctmgrUsage, sacctmgrOptions)
}
