package sbatch_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sbatch's binary stays small and static (see the package comment): it
// links none of the packages that made it start in 3 ms instead of 1.
func TestSbatchLinksNothingHeavy(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/slurm-lite/slurm-lite/cmd/sbatch").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	var got []string
	for _, heavy := range []string{
		"net",                // and with it cgo's resolver
		"net/http",           // the daemon's server, srun's
		"os/user",            // cgo for NSS
		"runtime/cgo",        // a dynamic binary, started by ld.so
		"modernc.org/sqlite", // the store
		"github.com/slurm-lite/slurm-lite/internal/cli",
		"github.com/slurm-lite/slurm-lite/internal/store",
	} {
		if slices.Contains(deps, heavy) {
			got = append(got, heavy)
		}
	}
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("heavy packages linked into sbatch (-want +got):\n%s", diff)
	}
}
