package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/gpu/gputest"
)

func TestPickFreest(t *testing.T) {
	g := func(i int, free uint64, s gpu.State) gpu.GPU { return gpu.GPU{Index: i, MemoryFree: free, State: s} }
	tests := []struct {
		name   string
		gpus   []gpu.GPU
		want   int
		wantOK bool
	}{
		{"the most free memory wins", []gpu.GPU{g(0, 10, gpu.Up), g(1, 30, gpu.Up), g(2, 20, gpu.Up)}, 1, true},
		{"a tie goes to the lower index", []gpu.GPU{g(0, 30, gpu.Up), g(1, 30, gpu.Up)}, 0, true},
		{"drained, taken and lost GPUs are never picked", []gpu.GPU{g(0, 90, gpu.Drained), g(1, 80, gpu.Taken), g(-1, 99, gpu.Lost), g(2, 5, gpu.Up)}, 2, true},
		{"nothing to offer", []gpu.GPU{g(0, 90, gpu.Drained)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pickFreest(tt.gpus)
			if ok != tt.wantOK || (ok && got.Index != tt.want) {
				t.Errorf("pickFreest = GPU %d, %v; want GPU %d, %v", got.Index, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestRealJob runs the job check against a mock DGX A100 whose NVML shows
// the job's (real) process where the test says: on the GPU it was placed
// on, the check passes and times the release; on another one, it fails,
// as on a machine where CUDA numbers GPUs differently from NVML.
func TestRealJob(t *testing.T) {
	tests := []struct {
		name  string
		shown int // the mock GPU NVML shows the process on
		want  bool
		line  string
	}{
		{"the job is where it was placed", 2, true, "release:  confirmed"},
		{"the job landed on another GPU", 5, false, "ANOTHER GPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := gputest.DGXA100()
			inv := gpu.FromNVML(m.Lib(), gpu.Options{})
			defer inv.Close()
			snap := inv.Sample(time.Now(), nil)
			placed, ok := snap.Find(m.UUID(2))
			if !ok {
				t.Fatal("mock GPU 2 not in the inventory")
			}
			var out bytes.Buffer
			got := realJob(&out, inv, placed, "sleep 60", func(pid int) {
				m.RunLive(tt.shown, gputest.Proc(pid, 1<<30))
			})
			if got != tt.want || !strings.Contains(out.String(), tt.line) {
				t.Errorf("realJob = %v, want %v, with %q in:\n%s", got, tt.want, tt.line, out.String())
			}
		})
	}
}
