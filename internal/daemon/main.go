package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Main runs the daemon as `slurmd-lite [-f FILE] [--fresh|--rebuild]`
// does, until SIGTERM or SIGINT, and returns the process's exit status.
func Main(configPath string, fresh, rebuild bool) int {
	return MainOptions(Options{ConfigPath: configPath, Fresh: fresh, Rebuild: rebuild})
}

// MainOptions is Main with every option: the end-to-end tests' binary
// gives the daemon a clock the test moves (internal/e2e's
// testClockFileEnv). Exe "" is this binary.
func MainOptions(opts Options) int {
	if opts.Exe == "" {
		opts.Exe = selfPath()
	}
	err := Run(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "slurmd-lite: error: %v\n", err)
		return 1
	}
	return 0
}

// selfPath is the binary the supervisors are started from: the one this
// process was started as (argv[0], looked up in PATH), so that a
// supervisor runs the same build; /proc/self/exe otherwise.
func selfPath() string {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	p, _ := os.Executable()
	return p
}
