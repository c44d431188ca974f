package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// killStrays ends what a script's jobs left running under root: every
// job supervisor whose launch spec lies below root (`... stepd run
// ROOT/.../spec.json`, the shape the daemon starts them in), with its
// descendants. Jobs outlive their daemon by design, so a script that
// fails half-way through, holding a job with a file it never creates,
// would otherwise leave that job looping long after its directories are
// gone. Only this script's own processes match: root is a directory made
// for it alone.
func killStrays(root string) {
	if root == "" {
		return
	}
	prefix := filepath.Clean(root) + string(filepath.Separator)
	for _, pid := range procfs.PIDs() {
		b, err := os.ReadFile(filepath.Join("/proc", itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if !isSupervisorOf(argv, prefix) {
			continue
		}
		for _, d := range procfs.Descendants(pid) {
			_ = syscall.Kill(d, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// isSupervisorOf reports whether argv is a supervisor's (`slurmd-lite
// stepd run SPEC` or `slurmstepd-lite run SPEC`) with SPEC under prefix.
func isSupervisorOf(argv []string, prefix string) bool {
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "run" && strings.HasPrefix(argv[i+1], prefix) && strings.HasSuffix(argv[i+1], "spec.json") {
			base := filepath.Base(argv[0])
			return base == "slurmstepd-lite" || (base == "slurmd-lite" && i > 0 && argv[i-1] == "stepd")
		}
	}
	return false
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// killStrays ends a supervisor of this script's directory and what it
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

	killStrays(mine)
	done := make(chan error, 1)
	go func() { done <- cmdMine.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("this script's supervisor still runs after killStrays")
	}
	for range 200 {
		if !procfs.Alive(childMine) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if procfs.Alive(childMine) {
		t.Error("the supervisor's child still runs after killStrays")
	}
	if !procfs.Alive(cmdOther.Process.Pid) || !procfs.Alive(childOther) {
		t.Error("killStrays ended another directory's supervisor")
	}
}
