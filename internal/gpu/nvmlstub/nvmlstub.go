// Package nvmlstub builds, for tests, a stand-in for the NVIDIA driver's
// libnvidia-ml.so.1 (testdata/nvml_stub.c, in C): the NVML entry points
// slurm-lite calls, answered from a state file the test writes and may
// change while the daemon runs. With it the real path runs without a GPU:
// the daemon's binary loading the library by name through
// LD_LIBRARY_PATH, go-nvml's symbol lookups and versioned fallbacks,
// NVML's return codes, the event set for Xid errors.
//
// The state file's format is described at the top of the C source.
package nvmlstub

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

//go:embed testdata/nvml_stub.c
var source []byte

// Symbol sets: which versions of NVML's versioned calls the library has.
const (
	// Current: a current driver's (_v3 where one exists).
	Current = 3
	// OldDriver: a driver older than R510, with no _v3 symbol; go-nvml
	// must fall back to the _v2 calls.
	OldDriver = 2
)

// LibName is the name go-nvml dlopens.
const LibName = "libnvidia-ml.so.1"

// Build compiles the stub with the given symbol set into
// dir/libnvidia-ml.so.1 (dir is created) and returns dir, for
// LD_LIBRARY_PATH. It needs gcc; Missing says whether it is there.
func Build(dir string, api int) (string, error) {
	if api != Current && api != OldDriver {
		return "", fmt.Errorf("nvmlstub: symbol set %d: use Current or OldDriver", api)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("nvmlstub: %w", err)
	}
	src := filepath.Join(dir, "nvml_stub.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("nvmlstub: %w", err)
	}
	out, err := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
		fmt.Sprintf("-DNVML_STUB_API=%d", api), "-Wl,-soname,"+LibName,
		"-o", filepath.Join(dir, LibName), src, "-lpthread").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("nvmlstub: gcc: %v\n%s", err, out)
	}
	return dir, nil
}

// Missing says why the stub cannot be built here ("" when it can): tests
// skip with it.
func Missing() string {
	if _, err := exec.LookPath("gcc"); err != nil {
		return "gcc is not installed: the NVML stub is C"
	}
	return ""
}
