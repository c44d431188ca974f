package e2e

import (
	"os"
	"os/exec"
	"testing"
)

// TestMakeBuildingOnTerminal: make build (and so make demo and make
// install) says "building..." before a build that may compile for
// minutes, on a terminal only; piped, its output is as before.
func TestMakeBuildingOnTerminal(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	env := append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=")
	cmd := exec.Command(makeBin, "--no-print-directory", "building")
	cmd.Dir, cmd.Env = "../..", env
	got, err := runOnPty(cmd)
	if err != nil || got != "building...\n" {
		t.Errorf("make building on a terminal: %q, %v; want %q", got, err, "building...\n")
	}
	cmd = exec.Command(makeBin, "--no-print-directory", "building")
	cmd.Dir, cmd.Env = "../..", env
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Errorf("make building piped: %q, %v; want nothing", out, err)
	}
}
