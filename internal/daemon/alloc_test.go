package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want procStat
		bad  bool
	}{
		{"a plain command",
			"4242 (sleep) S 4200 4242 4200 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 200 18446744073709551615",
			procStat{state: 'S', ppid: 4200, pgrp: 4242, start: 987654}, false},
		{"a name with spaces and parentheses",
			"7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0 0",
			procStat{state: 'R', ppid: 1, pgrp: 7, start: 55}, false},
		{"too short", "7 (x) R 1 7", procStat{}, true},
		{"no name", "7 x R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55", procStat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if (err != nil) != tt.bad {
				t.Fatalf("error %v, want error %v", err, tt.bad)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(procStat{})); diff != "" {
				t.Errorf("parseStat (-want +got):\n%s", diff)
			}
		})
	}
}

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
			if got := slurmtime.FormatRanges(tt.in); got != tt.want {
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
