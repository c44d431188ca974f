package daemon

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

func TestCPURanges(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want string
	}{
		{"one", []int{3}, "3"},
		{"a run and a lone one, unsorted", []int{8, 1, 2, 0, 3}, "0-3,8"},
		{"two runs", []int{0, 1, 4, 5, 6}, "0-1,4-6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slurmsyntax.FormatRanges(tt.in); got != tt.want {
				t.Errorf("FormatRanges(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestInteractive(t *testing.T) {
	batch := store.Job{Request: jobscript.Request{Other: []jobscript.Setting{{Name: "contiguous"}}}}
	srun := store.Job{Request: jobscript.Request{Other: []jobscript.Setting{{Name: interactiveMark, Value: "bash", HasValue: true}}}}
	if interactive(batch) {
		t.Error("a batch job with other settings is taken for interactive")
	}
	if !interactive(srun) {
		t.Error("an interactive job is not recognized")
	}
}
