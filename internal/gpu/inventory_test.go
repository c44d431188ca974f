package gpu

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)

func TestInventoryOfMockMachines(t *testing.T) {
	tests := []struct {
		name                  string
		machine               func() *server.Server
		types                 []string
		model, autoType, typ  string
		memory                uint64
		wantGres, wantComment string
	}{
		{
			name:    "a DGX A100 with no configured type keeps the name Slurm's AutoDetect=nvml gives",
			machine: dgxa100.New,
			model:   "Mock NVIDIA A100-SXM4-40GB", autoType: "mock_nvidia_a100-sxm4-40gb", typ: "mock_nvidia_a100-sxm4-40gb",
			memory:      40960 * mib,
			wantGres:    "gpu:mock_nvidia_a100-sxm4-40gb:8",
			wantComment: "GPUs: nvml, driver 550.54.15 (8 x Mock NVIDIA A100-SXM4-40GB)",
		},
		{
			name:    "a DGX A100 with type a100 configured: the short type names it, as a substring",
			machine: dgxa100.New, types: []string{"a100"},
			model: "Mock NVIDIA A100-SXM4-40GB", autoType: "mock_nvidia_a100-sxm4-40gb", typ: "a100",
			memory:      40960 * mib,
			wantGres:    "gpu:a100:8",
			wantComment: "GPUs: nvml, driver 550.54.15 (8 x Mock NVIDIA A100-SXM4-40GB)",
		},
		{
			name:    "a DGX H100 where several configured types match: the longest wins, as in slurmd",
			machine: dgxh100.New, types: []string{"a100", "h100", "h100_80gb"},
			model: "NVIDIA H100 80GB HBM3", autoType: "nvidia_h100_80gb_hbm3", typ: "h100_80gb",
			memory:      81920 * mib,
			wantGres:    "gpu:h100_80gb:8",
			wantComment: "GPUs: nvml, driver 550.54.15 (8 x NVIDIA H100 80GB HBM3)",
		},
		{
			name:    "a DGX H200 with a configured type in capitals: matching ignores case",
			machine: dgxh200.New, types: []string{"H200"},
			model: "NVIDIA H200 141GB HBM3e", autoType: "nvidia_h200_141gb_hbm3e", typ: "H200",
			memory:      144384 * mib,
			wantGres:    "gpu:H200:8",
			wantComment: "GPUs: nvml, driver 550.54.15 (8 x NVIDIA H200 141GB HBM3e)",
		},
		{
			name:    "a DGX B200 whose configured type matches nothing keeps its detected name",
			machine: dgxb200.New, types: []string{"a100"},
			model: "NVIDIA B200 180GB HBM3e", autoType: "nvidia_b200_180gb_hbm3e", typ: "nvidia_b200_180gb_hbm3e",
			memory:   184320 * mib,
			wantGres: "gpu:nvidia_b200_180gb_hbm3e:8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, tt.machine())
			var want []GPU
			for i := range m.srv.Devices {
				var peers []string
				for k := range m.srv.Devices {
					if k != i {
						peers = append(peers, m.uuid(k))
					}
				}
				slices.Sort(peers)
				want = append(want, GPU{
					Index: i, NVMLIndex: i, UUID: m.uuid(i), PCIBusID: fmt.Sprintf("0000:%02x:00.0", i),
					Model: tt.model, AutoType: tt.autoType, Type: tt.typ,
					MemoryTotal: tt.memory, MemoryUsed: idleUsed, MemoryFree: tt.memory - idleUsed,
					Peers: peers, State: Up,
				})
			}

			snap := m.inventory(Options{Types: tt.types}).Sample(t0, nil)

			if diff := cmp.Diff(want, snap.GPUs); diff != "" {
				t.Errorf("GPUs (-want +got):\n%s", diff)
			}
			if got := Gres(snap.GPUs); got != tt.wantGres {
				t.Errorf("Gres = %q, want %q", got, tt.wantGres)
			}
			if tt.wantComment != "" && snap.Comment != tt.wantComment {
				t.Errorf("Comment = %q, want %q", snap.Comment, tt.wantComment)
			}
			if snap.Mode != ModeNVML || snap.Driver != m.srv.DriverVersion || snap.NodeDrain != "" {
				t.Errorf("Mode, Driver, NodeDrain = %q, %q, %q; want nvml, %q, none", snap.Mode, snap.Driver, snap.NodeDrain, m.srv.DriverVersion)
			}
		})
	}
}

// On a machine that mixes GPU models, CUDA's default order (fastest first)
// differs from PCI bus order, and from NVML's own order when the BIOS
// enumerates oddly. Jobs get CUDA_DEVICE_ORDER=PCI_BUS_ID, so the indices
// given out must be PCI ranks, whatever NVML's index says.
func TestIndicesFollowPCIBusOrder(t *testing.T) {
	tests := []struct {
		name   string
		gpus   []gpus.Config
		bus    []string // PCI bus id of the GPU at each NVML index
		want   []int    // NVML indices in the order CUDA (PCI_BUS_ID) numbers them
		models []string // models in that order
	}{
		{
			name: "NVML's order is PCI order: the indices agree",
			gpus: []gpus.Config{gpus.A100_PCIE_80GB, gpus.A100_PCIE_80GB, gpus.A100_PCIE_80GB},
			bus:  []string{"00000000:01:00.0", "00000000:41:00.0", "00000000:81:00.0"},
			want: []int{0, 1, 2},
		},
		{
			name:   "a mixed machine with the slow card on the first bus: CUDA's default would number the A100s first, PCI order numbers the A30 0",
			gpus:   []gpus.Config{gpus.A100_PCIE_80GB, gpus.A100_PCIE_80GB, gpus.A30_PCIE_24GB},
			bus:    []string{"00000000:41:00.0", "00000000:81:00.0", "00000000:01:00.0"},
			want:   []int{2, 0, 1},
			models: []string{"NVIDIA A30-PCIE-24GB", "NVIDIA A100-PCIE-80GB", "NVIDIA A100-PCIE-80GB"},
		},
		{
			name: "bus numbers compare as numbers, not text (0x0a before 0x41)",
			gpus: []gpus.Config{gpus.A30_PCIE_24GB, gpus.A30_PCIE_24GB},
			bus:  []string{"00000000:41:00.0", "00000000:0A:00.0"},
			want: []int{1, 0},
		},
		{
			name: "the PCI domain orders before the bus",
			gpus: []gpus.Config{gpus.A30_PCIE_24GB, gpus.A30_PCIE_24GB},
			bus:  []string{"00000001:01:00.0", "00000000:81:00.0"},
			want: []int{1, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.NewWithGPUs(tt.gpus...))
			for i, b := range tt.bus {
				m.dev(i).PciBusID = b
			}

			snap := m.inventory(Options{}).Sample(t0, nil)

			var got []int
			var models []string
			for i, g := range snap.GPUs {
				if g.Index != i {
					t.Errorf("GPU %s is listed at %d with Index %d", g.UUID, i, g.Index)
				}
				if g.PCIBusID != tt.bus[g.NVMLIndex] {
					t.Errorf("GPU at NVML index %d has bus id %q, want %q", g.NVMLIndex, g.PCIBusID, tt.bus[g.NVMLIndex])
				}
				got = append(got, g.NVMLIndex)
				models = append(models, g.Model)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NVML indices in CUDA order (-want +got):\n%s", diff)
			}
			if tt.models != nil {
				if diff := cmp.Diff(tt.models, models); diff != "" {
					t.Errorf("models in CUDA order (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A sample reads only what it is given: the jobs passed in are not changed.
func TestSampleLeavesItsInputAlone(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	m.run(0, proc(100, 5*gib), proc(4242, gib))
	m.run(1, proc(101, 7*gib))
	jobs := []Job{
		{ID: "42", PIDs: []int{101, 100}, GPUs: []string{m.uuid(1), m.uuid(0)}, MemPerGPU: 4 * gib},
		{ID: "43", GPUs: []string{m.uuid(0)}, Ended: t0},
	}
	before := cmp.Diff(nil, jobs) // a printed copy of the input
	inv := m.inventory(Options{})
	inv.Sample(t0, jobs)
	inv.Sample(t0.Add(time.Minute), jobs)
	if after := cmp.Diff(nil, jobs); after != before {
		t.Errorf("Sample changed its input: before\n%s\nafter\n%s", before, after)
	}
}

func TestFind(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	snap := m.inventory(Options{}).Sample(t0, nil)
	tests := []struct {
		name, id string
		want     string // UUID; "" when not found
	}{
		{"an index", "3", m.uuid(3)},
		{"a UUID", m.uuid(5), m.uuid(5)},
		{"a PCI bus id", "0000:06:00.0", m.uuid(6)},
		{"an index past the end", "8", ""},
		{"a negative index (gone GPUs have -1)", "-1", ""},
		{"an unknown name", "GPU-nope", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := snap.Find(tt.id)
			if ok != (tt.want != "") || g.UUID != tt.want {
				t.Errorf("Find(%q) = %q, %v; want %q", tt.id, g.UUID, ok, tt.want)
			}
		})
	}
}

var equateEmpty = cmpopts.EquateEmpty()

// Whatever PCI bus ids the GPUs have, in whatever order NVML lists them,
// the inventory numbers them 0..n-1 in PCI bus order.
func TestIndicesArePCIRanksProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(t, "n")
		buses := rapid.SliceOfNDistinct(rapid.IntRange(0, 255), n, n, rapid.ID).Draw(t, "buses")
		domains := rapid.SliceOfN(rapid.IntRange(0, 1), n, n).Draw(t, "domains")
		m := newMachine(t, dgxa100.NewWithGPUs(gpus.Multiple(n, gpus.A30_PCIE_24GB)...))
		for i := range n {
			m.dev(i).PciBusID = fmt.Sprintf("%08x:%02x:00.0", domains[i], buses[i])
		}

		s := m.inventory(Options{}).Sample(t0, nil)

		for i, g := range s.GPUs {
			if g.Index != i {
				t.Fatalf("GPU listed at %d has Index %d", i, g.Index)
			}
			if i > 0 {
				prev := s.GPUs[i-1]
				p := [2]int{domains[prev.NVMLIndex], buses[prev.NVMLIndex]}
				c := [2]int{domains[g.NVMLIndex], buses[g.NVMLIndex]}
				if p[0] > c[0] || (p[0] == c[0] && p[1] >= c[1]) {
					t.Fatalf("GPU %d (%s) listed after GPU %d (%s)", i, g.PCIBusID, i-1, prev.PCIBusID)
				}
			}
		}
		if len(s.GPUs) != n {
			t.Fatalf("%d GPUs, want %d", len(s.GPUs), n)
		}
	})
}
