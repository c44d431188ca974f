package sched

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFirstSubset(t *testing.T) {
	cands := []int{7, 8, 9, 10}
	var tried [][]int
	record := func(set []int) bool {
		tried = append(tried, append([]int(nil), set...))
		return false
	}
	budget := 100
	if got := firstSubset(cands, 2, &budget, record); got != nil {
		t.Fatalf("firstSubset = %v, want nil: nothing passes", got)
	}
	want := [][]int{{7, 8}, {7, 9}, {7, 10}, {8, 9}, {8, 10}, {9, 10}}
	if diff := cmp.Diff(want, tried); diff != "" {
		t.Errorf("subsets tried, in lexicographic order (-want +got):\n%s", diff)
	}
	if budget != 100-6 {
		t.Errorf("budget = %d, want %d: one spent per subset tried", budget, 100-6)
	}

	tried, budget = nil, 2
	firstSubset(cands, 2, &budget, record)
	if len(tried) != 2 || budget != 0 {
		t.Errorf("with a budget of 2: tried %v, budget left %d; want two tries and none left", tried, budget)
	}

	budget = 100
	got := firstSubset(cands, 3, &budget, func(set []int) bool { return set[2] == 10 })
	if diff := cmp.Diff([]int{7, 8, 10}, got); diff != "" {
		t.Errorf("first passing subset (-want +got):\n%s", diff)
	}
}
