package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// A job that asks for no memory gets DefMemPerCPU or DefMemPerNode at
// submission, in megabytes as slurmctld records it; a job that asks for
// any, in any form, keeps what it asked for; without either key nothing
// is added.
func TestDefaultMemoryIsGivenAtSubmission(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	type mem struct{ PerCPU, PerNode, PerGPU *uint64 }
	tests := []struct {
		name            string
		perCPU, perNode slurmsyntax.Bytes
		asked, want     mem
	}{
		{"no default: nothing", 0, 0, mem{}, mem{}},
		{"DefMemPerCPU=1000", 1000 * slurmsyntax.MiB, 0, mem{}, mem{PerCPU: u(1000)}},
		{"DefMemPerNode=8G", 0, 8 * slurmsyntax.GiB, mem{}, mem{PerNode: u(8192)}},
		{"--mem=4G keeps its own", 1000 * slurmsyntax.MiB, 0, mem{PerNode: u(4096)}, mem{PerNode: u(4096)}},
		{"--mem=0 keeps its own", 0, 8 * slurmsyntax.GiB, mem{PerNode: u(0)}, mem{PerNode: u(0)}},
		{"--mem-per-cpu keeps its own", 1000 * slurmsyntax.MiB, 0, mem{PerCPU: u(2000)}, mem{PerCPU: u(2000)}},
		{"--mem-per-gpu keeps its own", 1000 * slurmsyntax.MiB, 0, mem{PerGPU: u(10240)}, mem{PerGPU: u(10240)}},
		{"a size that is not whole megabytes rounds up", 1536 * slurmsyntax.KiB, 0, mem{}, mem{PerCPU: u(2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := jobscript.Request{MemPerCPU: tc.asked.PerCPU, MemPerNode: tc.asked.PerNode, MemPerGPU: tc.asked.PerGPU}
			defaultMemory(&r, &config.Config{DefMemPerCPU: tc.perCPU, DefMemPerNode: tc.perNode})
			got := mem{r.MemPerCPU, r.MemPerNode, r.MemPerGPU}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("request's memory (-want +got):\n%s", diff)
			}
		})
	}
}
