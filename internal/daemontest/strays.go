package daemontest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// KillSupervisors ends what a test's jobs left running under root: every
// job supervisor whose launch spec lies below root (`... stepd run
// ROOT/.../spec.json`, the shape the daemon starts them in), with its
// descendants. Jobs outlive their daemon by design, so a script that
// fails half-way through, holding a job with a file it never creates,
// would otherwise leave that job looping long after its directories are
// gone. Only the test's own processes match: root is a directory made
// for it alone (a script's work directory, a daemon's state).
func KillSupervisors(root string) {
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
