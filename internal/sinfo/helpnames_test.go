package sinfo

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option sinfo's help names is one sinfo
// takes (so that bash completion, made from the help, offers only those).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "sinfo", sinfoHelp+sinfoUsage, sinfoOptions)
}
