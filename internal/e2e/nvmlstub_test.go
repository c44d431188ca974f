package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/gpu/nvmlstub"
)

// TestNVMLStub runs the scripts of testdata/nvml: the shipped slurmd-lite,
// built here with cgo as make build builds it, reads its GPUs through a
// stub libnvidia-ml.so.1 (internal/gpu/nvmlstub) that it finds through
// LD_LIBRARY_PATH, as it would find the driver's. The scripts drive the
// stub's state file: GPUs, processes (a foreign one among them),
// utilization NVML does not support, Xid events, a lost GPU, an older
// driver's symbol set, no library at all. The commands are this test
// binary, as in TestScripts.
//
// The scripts see:
//
//	$NVMLSTUB     a directory with the stub, a current driver's symbols
//	$NVMLSTUB_OLD the stub with an older driver's (no _v3 symbol)
//	$NOLIB        a directory without libnvidia-ml.so.1
//	$SLURMD_BIN   the directory of the built slurmd-lite, first on PATH
//	$REPO         the repository, for scripts/gpu-check
func TestNVMLStub(t *testing.T) {
	t.Parallel() // beside the other groups of scripts (waitingTests)
	if testing.Short() {
		t.Skip("builds slurmd-lite and starts daemons and real jobs")
	}
	if why := nvmlstub.Missing(); why != "" {
		t.Skip(why)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is needed to build the shipped slurmd-lite")
	}
	if out, err := exec.Command(goTool, "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("cgo is off: slurmd-lite without cgo has no NVML to load")
	}
	dir := t.TempDir()
	stub, err := nvmlstub.Build(filepath.Join(dir, "nvml"), nvmlstub.Current)
	if err != nil {
		t.Fatal(err)
	}
	old, err := nvmlstub.Build(filepath.Join(dir, "nvml-old"), nvmlstub.OldDriver)
	if err != nil {
		t.Fatal(err)
	}
	nolib := filepath.Join(dir, "nolib")
	if err := os.Mkdir(nolib, 0o755); err != nil {
		t.Fatal(err)
	}
	// The daemon as make build builds it (cgo, for NVML), and the small
	// supervisor it starts jobs with when it finds it beside itself.
	bin := filepath.Join(dir, "bin")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ pkg, cgo string }{{"./cmd/slurmd-lite", "1"}, {"./cmd/slurmstepd-lite", "0"}} {
		cmd := exec.Command(goTool, "build", "-o", bin+"/", b.pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	realLib := systemHasNVML()
	// scripts/gpu-check builds with go: give it this build's caches (the
	// scripts' HOME is their work directory, where go would start afresh).
	goEnv, err := exec.Command(goTool, "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	goDirs := strings.Fields(string(goEnv))
	runScripts(t, testscript.Params{
		Dir:  "testdata/nvml",
		Cmds: commands(),
		Condition: func(cond string) (bool, error) {
			if cond == "realnvml" {
				return realLib, nil
			}
			return condition(cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("SLURM_LITE_CONF", "")
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("SLURMD_BIN", bin)
			env.Setenv("NVMLSTUB", stub)
			env.Setenv("NVMLSTUB_OLD", old)
			env.Setenv("NOLIB", nolib)
			env.Setenv("REPO", root)
			for i, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
				if i < len(goDirs) {
					env.Setenv(name, goDirs[i])
				}
			}
			return nil
		},
	})
}

// systemHasNVML reports whether the dynamic loader finds a real
// libnvidia-ml.so.1 without LD_LIBRARY_PATH: then "no driver" cannot be
// shown here.
func systemHasNVML() bool {
	out, err := exec.Command("ldconfig", "-p").Output()
	return err == nil && strings.Contains(string(out), nvmlstub.LibName)
}
