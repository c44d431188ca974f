package export

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// DefMemPerCPU and DefMemPerNode are written as set, in megabytes; with
// neither, the node's share per CPU stands in, so that a job without
// --mem does not take the whole node on Slurm.
func TestDefMemIsExportedAsSet(t *testing.T) {
	tests := []struct {
		name, conf string
		want       map[string]string
	}{
		{"DefMemPerCPU", "DefMemPerCPU = 1000\n", map[string]string{"DefMemPerCPU": "1000", "DefMemPerNode": ""}},
		{"DefMemPerNode", "DefMemPerNode = \"8G\"\n", map[string]string{"DefMemPerCPU": "", "DefMemPerNode": "8192"}},
		{"neither: the node's share of memory per CPU", "", map[string]string{"DefMemPerCPU": "4096", "DefMemPerNode": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parsed(t, "two.toml", tt.conf+twoTypes)
			gpus, _ := simulatedGPUs(t, cfg)
			_, conf, _ := generated(t, cfg, Input{GPUs: gpus})
			got := map[string]string{"DefMemPerCPU": conf.Globals["DefMemPerCPU"], "DefMemPerNode": conf.Globals["DefMemPerNode"]}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("slurm.conf (-want +got):\n%s", diff)
			}
		})
	}
}
