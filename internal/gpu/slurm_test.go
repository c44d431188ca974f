package gpu

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Names as NVML reports them on real cards; Slurm lower-cases them and
// turns spaces into underscores, nothing else (gpu_common_underscorify_tolower).
func TestTypeName(t *testing.T) {
	tests := []struct{ model, want string }{
		{"NVIDIA A100-SXM4-80GB", "nvidia_a100-sxm4-80gb"},
		{"NVIDIA A100-PCIE-40GB", "nvidia_a100-pcie-40gb"},
		{"NVIDIA H100 80GB HBM3", "nvidia_h100_80gb_hbm3"},
		{"NVIDIA GeForce RTX 4090", "nvidia_geforce_rtx_4090"},
		{"Tesla V100-SXM2-16GB", "tesla_v100-sxm2-16gb"},
		{"NVIDIA RTX A6000", "nvidia_rtx_a6000"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			if got := TypeName(tt.model); got != tt.want {
				t.Errorf("TypeName(%q) = %q, want %q", tt.model, got, tt.want)
			}
		})
	}
}

func TestMatchType(t *testing.T) {
	tests := []struct {
		name                 string
		configured, detected string
		want                 bool
	}{
		{"a short type names the detected type as a substring", "a100", "nvidia_a100-sxm4-80gb", true},
		{"case does not matter", "A100", "nvidia_a100-sxm4-80gb", true},
		{"a longer configured name still matches", "a100-sxm4-80gb", "nvidia_a100-sxm4-80gb", true},
		{"the full detected name names itself", "nvidia_a100-sxm4-80gb", "nvidia_a100-sxm4-80gb", true},
		{"another model does not match", "h100", "nvidia_a100-sxm4-80gb", false},
		{"a substring is enough, even a surprising one: rtx matches an RTX A6000", "rtx", "nvidia_rtx_a6000", true},
		{"no configured type names any GPU", "", "nvidia_a100-sxm4-80gb", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchType(tt.configured, tt.detected); got != tt.want {
				t.Errorf("MatchType(%q, %q) = %v, want %v", tt.configured, tt.detected, got, tt.want)
			}
		})
	}
}

func TestResolveType(t *testing.T) {
	tests := []struct {
		name       string
		detected   string
		configured []string
		want       string
	}{
		{"no configured types: the detected name", "nvidia_a100-sxm4-80gb", nil, "nvidia_a100-sxm4-80gb"},
		{"the matching type", "nvidia_a100-sxm4-80gb", []string{"h100", "a100"}, "a100"},
		{"the longest matching type, as slurmd sorts them", "tesla_k20m1", []string{"k20m", "k20m1"}, "k20m1"},
		{"equal lengths: the first by name", "nvidia_rtx_a6000", []string{"rtx", "a60"}, "a60"},
		{"none matches: the detected name", "nvidia_b200", []string{"a100"}, "nvidia_b200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveType(tt.detected, tt.configured); got != tt.want {
				t.Errorf("resolveType = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGres(t *testing.T) {
	g := func(typ string) GPU { return GPU{Type: typ} }
	tests := []struct {
		name string
		gpus []GPU
		want string
	}{
		{"no GPUs: no Gres", nil, ""},
		{"four of a configured type, as the recorded cluster prints it", []GPU{g("a100"), g("a100"), g("a100"), g("a100")}, "gpu:a100:4"},
		{"two types, in the order they first appear", []GPU{g("t4"), g("a100"), g("t4")}, "gpu:t4:2,gpu:a100:1"},
		{"GPUs without a type", []GPU{g(""), g("")}, "gpu:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Gres(tt.gpus); got != tt.want {
				t.Errorf("Gres = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCUDAEnv(t *testing.T) {
	tests := []struct {
		name    string
		indices []int
		want    []string
	}{
		{"two GPUs, as Slurm sets them", []int{0, 1}, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0,1"}},
		{"order kept", []int{3, 1}, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=3,1"}},
		{"none", nil, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CUDAEnv(tt.indices)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestComparePCI(t *testing.T) {
	tests := []struct {
		name string
		a, b GPU
		want int
	}{
		{"bus numbers are hexadecimal numbers", GPU{PCIBusID: "00000000:0A:00.0"}, GPU{PCIBusID: "00000000:41:00.0"}, -1},
		{"the domain comes first", GPU{PCIBusID: "00000001:01:00.0"}, GPU{PCIBusID: "00000000:81:00.0"}, 1},
		{"short and long domains compare as numbers", GPU{PCIBusID: "0000:02:00.0"}, GPU{PCIBusID: "00000000:01:00.0"}, 1},
		{"the function counts", GPU{PCIBusID: "0000:01:00.1"}, GPU{PCIBusID: "0000:01:00.0"}, 1},
		{"a bus id that does not parse goes after", GPU{PCIBusID: "junk"}, GPU{PCIBusID: "0000:ff:00.0"}, 1},
		{"equal (simulated) bus ids: NVML index", GPU{NVMLIndex: 2}, GPU{NVMLIndex: 1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := comparePCI(tt.a, tt.b); got != tt.want {
				t.Errorf("comparePCI = %d, want %d", got, tt.want)
			}
			if got := comparePCI(tt.b, tt.a); got != -tt.want {
				t.Errorf("reversed: comparePCI = %d, want %d", got, -tt.want)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		bytes uint64
		want  string
	}{
		{80 * gib, "80G"},
		{79*gib + 512*mib, "79.5G"},
		{512 * mib, "512M"},
		{0, "0M"},
		{40960 * mib, "40G"},
	}
	for _, tt := range tests {
		if got := formatSize(tt.bytes); got != tt.want {
			t.Errorf("formatSize(%d) = %q, want %q", tt.bytes, got, tt.want)
		}
	}
}
