package sim

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"no values give 0", nil, 99, 0},
		{"the median of an odd count is the middle value", []float64{5, 1, 3}, 50, 3},
		{"the median of an even count is the lower middle value (nearest rank)", []float64{4, 1, 3, 2}, 50, 2},
		{"p99 of 100 values is the 99th smallest", seq(100), 99, 99},
		{"p99 of 10 values is the largest", seq(10), 99, 10},
		{"p100 is the maximum", []float64{7, 9, 8}, 100, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.xs, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
			}
		})
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(n - i) // descending: Percentile must sort
	}
	return out
}

func TestBoundedSlowdown(t *testing.T) {
	tests := []struct {
		name         string
		jct, runtime float64
		want         float64
	}{
		{"a job that never waited has slowdown 1", 100, 100, 1},
		{"waiting as long as running doubles it", 200, 100, 2},
		{"runtimes under 10 s count as 10 s", 50, 2, 5},
		{"it is never below 1", 5, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := BoundedSlowdown(tc.jct, tc.runtime); got != tc.want {
				t.Errorf("BoundedSlowdown(%v, %v) = %v, want %v", tc.jct, tc.runtime, got, tc.want)
			}
		})
	}
}

func TestMaxMinFair(t *testing.T) {
	tests := []struct {
		name     string
		demand   []int
		shares   []float64
		capacity float64
		want     []float64
	}{
		{"equal shares, everyone asks for more: equal split", []int{10, 10}, []float64{1, 1}, 8, []float64{4, 4}},
		{"a small demand is met, the rest goes to the others", []int{1, 10, 10}, []float64{1, 1, 1}, 9, []float64{1, 4, 4}},
		{"settling cascades", []int{1, 3, 20}, []float64{1, 1, 1}, 12, []float64{1, 3, 8}},
		{"shares weigh the split", []int{10, 10}, []float64{3, 1}, 8, []float64{6, 2}},
		{"no demand, nothing", []int{0, 5}, []float64{1, 1}, 8, []float64{0, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := MaxMinFair(tc.demand, tc.shares, tc.capacity)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("MaxMinFair (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFairGap(t *testing.T) {
	tests := []struct {
		name         string
		held, demand []int
		capacity     int
		want         float64
		wantOK       bool
	}{
		{"demand within capacity counts no gap", []int{2, 2}, []int{2, 3}, 8, 0, false},
		{"fair holdings have no gap", []int{4, 4}, []int{10, 10}, 8, 0, true},
		{"one account holding everything is a gap of one half", []int{8, 0}, []int{10, 10}, 8, 0.5, true},
		// fair is (1, 4, 4) of 9; held (0, 9, 0): |0-1|+|9-4|+|0-4| = 10, /9/2.
		{"three accounts", []int{0, 9, 0}, []int{1, 10, 10}, 9, 10.0 / 18, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FairGap(tc.held, tc.demand, []float64{1, 1, 1}[:len(tc.held)], tc.capacity)
			if ok != tc.wantOK || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("FairGap = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	// Two jobs of account a and one of b on a 4-GPU lab over a 100 s window.
	r := &Run{
		Policy: Policy{Name: "P9"}, Capacity: 4, WindowStart: 0, WindowEnd: 100,
		BusyGPUSeconds: 200, GapIntegral: 5, GapTime: 50, Preemptions: 1,
		FillerGPUSeconds: 3600,
		Outcomes: []Outcome{
			{Account: "a", Submit: 0, FirstStart: 0, End: 100, Runtime: 100, GPUs: 1, GPUSeconds: 100},
			{Account: "a", Submit: 10, FirstStart: 40, End: 60, Runtime: 20, GPUs: 2, GPUSeconds: 3600, LostGPUSeconds: 360},
			{Account: "b", Submit: 20, FirstStart: 5000, End: 5005, Runtime: 5, GPUs: 1, GPUSeconds: 5},
		},
	}
	got := Summarize(r)
	want := Metrics{
		Policy: "P9", Jobs: 3,
		AvgJCT:    (100 + 50 + 4985) / 3.0,
		MedianJCT: 100, P99JCT: 4985,
		AvgWait: (0 + 30 + 4980) / 3.0,
		P99Wait: 4980, P99WaitShort: 4980,
		// 1, 50/20, 4985/10
		AvgBSld:    (1 + 2.5 + 498.5) / 3,
		Makespan:   5005,
		UtilWindow: 0.5, FairGap: 0.1,
		GPUHours: (100 + 3600 + 5) / 3600.0, FillerGPUHours: 1,
		Preemptions: 1, LostGPUHours: 0.1, LostFrac: 0.1 / ((100 + 3600 + 5) / 3600.0),
		Accounts: []Account{
			{Account: "a", Jobs: 2, AvgJCT: 75, AvgWait: 15, GPUHours: 3700 / 3600.0},
			{Account: "b", Jobs: 1, AvgJCT: 4985, AvgWait: 4980, GPUHours: 5 / 3600.0},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}
