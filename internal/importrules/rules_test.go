package importrules

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/slurm-lite/slurm-lite"

// commands are Slurm's commands: short-lived processes whose start-up is
// most of their time. They talk to the daemon through internal/sockclient
// and link nothing of the daemon's.
var commands = []string{"sacct", "sacctmgr", "salloc", "sbatch", "scancel", "scontrol", "scrontab", "sinfo", "sprio", "sreport", "squeue", "srun", "sshare"}

// heavy is what a command must not link, and why.
var heavy = map[string]string{
	"modernc.org/sqlite":                 "the daemon's database",
	module + "/internal/store":           "the daemon's database",
	module + "/internal/daemon":          "the daemon",
	module + "/internal/gpu":             "NVML",
	"github.com/NVIDIA/go-nvml/pkg/nvml": "NVML",
	module + "/internal/localapi":        "the daemon's side of the socket (the commands use sockclient)",
	"net/http":                           "an HTTP stack (sockclient speaks the little HTTP the daemon needs on system calls)",
	"net":                                "the net package, whose resolver links cgo",
	"os/user":                            "cgo's NSS (internal/userdb reads the files)",
	"runtime/cgo":                        "cgo: a dynamically linked binary that starts slower",
	"github.com/alecthomas/kong":         "slurmd-lite's own command line (the Slurm commands parse as getopt_long does)",
	module + "/internal/web":             "the daemon's metrics and dashboard listener",
	"github.com/prometheus/client_golang/prometheus": "Prometheus' client (and protobuf under it)",
}

// goList runs go list in the module and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCommandsAreLean(t *testing.T) {
	for _, c := range commands {
		deps := goList(t, "-deps", "./cmd/"+c)
		for _, d := range deps {
			if why, bad := heavy[d]; bad {
				t.Errorf("cmd/%s links %s (%s); commands must not: see docs/architecture.md", c, d, why)
			}
		}
	}
	// sbatch is the hottest path (workflow tools run thousands): it does
	// not even link what squeue needs for its long answers.
	for _, d := range goList(t, "-deps", "./cmd/sbatch") {
		if d == "encoding/gob" {
			t.Errorf("cmd/sbatch links encoding/gob, whose initialisation costs every submission half a millisecond")
		}
	}
	// The supervisor is started once per job and must start fast too; it
	// listens on its control socket (net), and make builds it without cgo.
	for _, d := range goList(t, "-deps", "./cmd/slurmstepd-lite") {
		switch d {
		case "modernc.org/sqlite", module + "/internal/store", module + "/internal/daemon", module + "/internal/gpu",
			"github.com/NVIDIA/go-nvml/pkg/nvml", "net/http", "github.com/alecthomas/kong", "os/user":
			t.Errorf("cmd/slurmstepd-lite links %s", d)
		}
	}
}

// imports maps each of the module's packages (tests excluded) to its direct
// imports.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, l := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		f := strings.Fields(l)
		m[f[0]] = f[1:]
	}
	return m
}

func standard(t *testing.T) map[string]bool {
	t.Helper()
	std := map[string]bool{}
	for _, p := range goList(t, "std") {
		std[p] = true
	}
	return std
}

func TestPackageRules(t *testing.T) {
	all := imports(t)
	std := standard(t)
	// What the pure packages may import besides the standard library.
	pure := map[string][]string{
		// The scheduling core: no clock, disk, processes or NVML; all it
		// needs is passed in.
		module + "/internal/sched": {module + "/internal/slurm"},
		// Slurm's words: states, reasons, error numbers.
		module + "/internal/slurm": nil,
	}
	for pkg, allowed := range pure {
		imps, ok := all[pkg]
		if !ok {
			t.Errorf("package %s is gone: update the rules table", pkg)
			continue
		}
		for _, imp := range imps {
			if !std[imp] && !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import the standard library and %v only", pkg, imp, allowed)
			}
		}
	}
	// Who alone (with its own subpackages) may import a dependency.
	only := map[string]string{
		"github.com/NVIDIA/go-nvml/": module + "/internal/gpu",
		"modernc.org/sqlite":         module + "/internal/store",
		"github.com/alecthomas/kong": module + "/internal/slurmdcmd",
		// Prometheus' client brings protobuf: one package knows it.
		"github.com/prometheus/": module + "/internal/web",
	}
	// Packages for tests alone: no package's own code imports them
	// (imports lists code, not tests).
	testOnly := []string{module + "/internal/daemontest", module + "/internal/clock/clocktest"}
	for pkg, imps := range all {
		for _, imp := range imps {
			if slices.Contains(testOnly, imp) {
				t.Errorf("%s imports %s, which only tests may import", pkg, imp)
			}
			for prefix, owner := range only {
				if strings.HasPrefix(imp, prefix) && pkg != owner && !strings.HasPrefix(pkg, owner+"/") {
					t.Errorf("%s imports %s; only %s (and its subpackages) may", pkg, imp, owner)
				}
			}
		}
	}
}

// TestCommandsAreStatic builds a command as a user would (go build, cgo
// left on) and checks that the binary asks for no dynamic loader.
func TestCommandsAreStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	for _, c := range []string{"squeue", "sbatch"} {
		bin := filepath.Join(t.TempDir(), c)
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/"+c)
		cmd.Dir = moduleRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", c, err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s is dynamically linked (it has an interpreter): it links cgo", c)
			}
		}
		f.Close()
	}
}
