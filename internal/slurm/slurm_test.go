package slurm

import "testing"

func TestFormatRanges(t *testing.T) {
	for _, tc := range []struct {
		ids  []int
		want string
	}{
		{nil, ""},
		{[]int{7}, "7"},
		{[]int{0, 1, 2, 3, 7, 9, 10}, "0-3,7,9-10"},
		{[]int{12000, 12001, 12005}, "12000-12001,12005"},
	} {
		if got := FormatRanges(tc.ids); got != tc.want {
			t.Errorf("FormatRanges(%v) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}
