package daemontest

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// KillSupervisors ends a supervisor of this test's directory and what it
// started, and leaves another directory's alone.
func TestKillStraysEndsOnlyThisScriptsSupervisors(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash for exec -a")
	}
	start := func(root string) (*exec.Cmd, int) {
		spec := filepath.Join(root, "state", "jobs", "1", "run-0", "spec.json")
		// argv as a supervisor's: slurmstepd-lite ... run SPEC, with a
		// child of its own, as a job's script is.
		cmd := exec.Command(bash, "-c", `exec -a slurmstepd-lite /bin/sh -c 'sleep 600 & wait' run "$0"`, spec)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var child int
		for range 200 {
			if d := procfs.Descendants(cmd.Process.Pid); len(d) > 0 {
				child = d[0]
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if child == 0 {
			t.Fatal("the fake supervisor started no child")
		}
		return cmd, child
	}
	mine, other := t.TempDir(), t.TempDir()
	cmdMine, childMine := start(mine)
	cmdOther, childOther := start(other)
	defer func() {
		_ = cmdOther.Process.Kill()
		_ = syscall.Kill(childOther, syscall.SIGKILL)
		_ = cmdOther.Wait()
	}()

	KillSupervisors(mine)
	done := make(chan error, 1)
	go func() { done <- cmdMine.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("this test's supervisor still runs after KillSupervisors")
	}
	for range 200 {
		if !procfs.Alive(childMine) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if procfs.Alive(childMine) {
		t.Error("the supervisor's child still runs after KillSupervisors")
	}
	if !procfs.Alive(cmdOther.Process.Pid) || !procfs.Alive(childOther) {
		t.Error("KillSupervisors ended another directory's supervisor")
	}
}
