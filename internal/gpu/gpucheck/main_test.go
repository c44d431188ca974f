package main

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/gpu"
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
