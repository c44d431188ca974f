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
	err := Run(context.Background(), Options{ConfigPath: configPath, Exe: selfPath(), Fresh: fresh, Rebuild: rebuild})
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
