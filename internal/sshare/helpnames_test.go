package sshare

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/cli/clitest"
)

// TestHelpNamesOptions: every long option sshare's help names is one sshare
// takes (so that bash completion, made from the help, offers only those).
func TestHelpNamesOptions(t *testing.T) {
	clitest.HelpNamesOptions(t, "sshare", sshareUsage, sshareOptions)
}
