package sbatch

import (
	"os"
	"path/filepath"
	"testing"
)

// The Command= real Slurm 22.05 printed for the same script operands
// (testdata/showjob: script_*), with job.sh in the submission directory.
func TestCommandPath(t *testing.T) {
	dir := t.TempDir()
	bin := t.TempDir()
	for _, f := range []string{filepath.Join(dir, "job.sh"), filepath.Join(bin, "tool.sh")} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, chdir, want string }{
		{"job.sh", "", dir + "/job.sh"},
		{"./job.sh", "", "./job.sh"},
		{"sub/../job.sh", "", dir + "/sub/../job.sh"},
		{"job.sh", "sub", "job.sh"}, // not in sub, nor in $PATH
		{"tool.sh", "", bin + "/tool.sh"},
		{"sub", "", "sub"}, // a directory is no script
		{"missing.sh", "", "missing.sh"},
	} {
		if got := commandPath(tt.name, fullChdir(dir, tt.chdir), "/nonexistent:"+bin); got != tt.want {
			t.Errorf("%s (-D %q): %s, want %s", tt.name, tt.chdir, got, tt.want)
		}
	}
	if got, want := fullChdir("/w", "./sub"), "/w/./sub"; got != want {
		t.Errorf("fullChdir: %s, want %s", got, want)
	}
}
