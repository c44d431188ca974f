package e2e

import (
	"os"
	"os/exec"
	"strings"
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

// make unit on a terminal says which package is being tested as each
// starts and ends (the end-to-end package runs for minutes); piped (CI),
// it is go test's own output.
func TestUnitProgressOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in go test")
	}
	cmd := exec.Command("scripts/unit", "./scripts/testprogress")
	cmd.Dir = "../.."
	got, err := runOnPty(cmd)
	if err != nil {
		t.Fatalf("scripts/unit on a terminal: %v\n%s", err, got)
	}
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || lines[0] != "go test -count=1 ./scripts/testprogress: a line as each package starts and ends" ||
		lines[1] != "testing scripts/testprogress..." || !strings.HasPrefix(lines[2], "ok   scripts/testprogress ") || lines[3] != "" {
		t.Errorf("scripts/unit on a terminal printed:\n%s\nwant the command, then testing scripts/testprogress..., then ok   scripts/testprogress and its time", got)
	}
	cmd = exec.Command("scripts/unit", "./scripts/testprogress")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "go test -count=1 ./scripts/testprogress\nok  \tgithub.com/slurm-lite/slurm-lite/scripts/testprogress\t") {
		t.Errorf("scripts/unit piped: %v\n%s\nwant go test's own lines", err, out)
	}
}
