package gpu

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TypeName returns the GPU type name Slurm's AutoDetect=nvml gives a model:
// NVML's device name lower-cased, spaces turned into underscores
// ("NVIDIA A100-SXM4-80GB" -> "nvidia_a100-sxm4-80gb"). Slurm 22.05 does
// this in gpu_common_underscorify_tolower (src/plugins/gpu/common), called
// from _nvml_get_device_name in src/plugins/gpu/nvml/gpu_nvml.c.
func TypeName(model string) string {
	return strings.ReplaceAll(strings.ToLower(model), " ", "_")
}

// MatchType reports whether a configured type name (slurm.conf
// Gres=gpu:a100:4, gres.conf Type=a100) names a detected type. slurmd
// matches them case-insensitively as a substring (_find_type_in_gres_list
// in src/plugins/gres/gpu/gres_gpu.c), so "a100" names
// "nvidia_a100-sxm4-80gb". An empty configured type names any GPU.
//
// Note that real Slurm matches a job's --gres=gpu:TYPE exactly against the
// node's (configured) type; the substring match happens once, when slurmd
// maps detected GPUs onto the configured types.
func MatchType(configured, detected string) bool {
	return strings.Contains(strings.ToLower(detected), strings.ToLower(configured))
}

// resolveType returns the configured type that names the detected type,
// trying the longest first as slurmd does (so that "k20m1" wins over
// "k20m"), ties broken by name; the detected type itself when none does.
func resolveType(detected string, configured []string) string {
	best := ""
	for _, c := range configured {
		if c == "" || !MatchType(c, detected) {
			continue
		}
		if best == "" || len(c) > len(best) || (len(c) == len(best) && c < best) {
			best = c
		}
	}
	return cmp.Or(best, detected)
}

// Gres returns the node's Gres string as slurm.conf and scontrol show node
// write it: "gpu:TYPE:N" for each type, in the order the types first appear
// in the list (PCI bus order), joined by commas; "gpu:N" for GPUs without a
// type; "" when there are none. Gone and drained GPUs count: Slurm keeps
// the configured count and drains instead.
//
// With a configured short type this gives "gpu:a100:4", as the recorded
// cluster prints; without one it gives the detected name,
// "gpu:nvidia_a100-sxm4-80gb:8", which real Slurm with AutoDetect=nvml
// accepts as is (the name is a substring of itself).
func Gres(gpus []GPU) string {
	var order []string
	count := map[string]int{}
	for _, g := range gpus {
		if count[g.Type] == 0 {
			order = append(order, g.Type)
		}
		count[g.Type]++
	}
	parts := make([]string, 0, len(order))
	for _, t := range order {
		if t == "" {
			parts = append(parts, "gpu:"+strconv.Itoa(count[t]))
			continue
		}
		parts = append(parts, "gpu:"+t+":"+strconv.Itoa(count[t]))
	}
	return strings.Join(parts, ",")
}

// CUDAEnv returns the environment that makes CUDA number GPUs as this
// package does: CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA's default order is
// fastest first, which on a mixed machine is not NVML's order, and jobs
// then land on the wrong card) and CUDA_VISIBLE_DEVICES with the given
// indices ("0,1", as Slurm sets it).
func CUDAEnv(indices []int) []string {
	s := make([]string, len(indices))
	for i, n := range indices {
		s[i] = strconv.Itoa(n)
	}
	return []string{
		"CUDA_DEVICE_ORDER=PCI_BUS_ID",
		"CUDA_VISIBLE_DEVICES=" + strings.Join(s, ","),
	}
}

// busKey orders PCI bus ids "DDDDDDDD:BB:DD.F" numerically, as CUDA's
// PCI_BUS_ID order does (domain, bus, device, function). ok is false for
// an id that does not parse; those sort after the others, by text.
func busKey(id string) (key [4]uint64, ok bool) {
	dom, rest, ok1 := strings.Cut(id, ":")
	bus, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return key, false
	}
	for i, s := range []string{dom, bus, dev, fn} {
		n, err := strconv.ParseUint(s, 16, 32)
		if err != nil {
			return key, false
		}
		key[i] = n
	}
	return key, true
}

// comparePCI orders GPUs by PCI bus id, then NVML index, then UUID.
func comparePCI(a, b GPU) int {
	ka, oka := busKey(a.PCIBusID)
	kb, okb := busKey(b.PCIBusID)
	switch {
	case oka && okb:
		if c := slices.Compare(ka[:], kb[:]); c != 0 {
			return c
		}
	case oka != okb: // parsable ids first
		if oka {
			return -1
		}
		return 1
	default:
		if c := strings.Compare(a.PCIBusID, b.PCIBusID); c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(a.NVMLIndex, b.NVMLIndex), strings.Compare(a.UUID, b.UUID))
}

// formatSize prints a byte count compactly, powers of 1024 as Slurm:
// "80G", "79.5G", "512M".
func formatSize(b uint64) string {
	const mib, gib = 1 << 20, 1 << 30
	switch {
	case b >= gib && b%gib == 0:
		return fmt.Sprintf("%dG", b/gib)
	case b >= gib:
		return strconv.FormatFloat(float64(b)/gib, 'f', 1, 64) + "G"
	default:
		return fmt.Sprintf("%dM", (b+mib/2)/mib)
	}
}
