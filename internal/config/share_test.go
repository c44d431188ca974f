package config

import "testing"

func TestShareOf(t *testing.T) {
	for _, tc := range []struct {
		share Share
		of    int
		want  int
	}{
		{"50%", 10000, 5000},
		{"50%", 21, 10}, // rounded down
		{"1%", 10, 1},   // but never below one job
		{"100%", 7, 7},  // all of it
		{"5000", 10000, 5000},
		{"0", 10000, 0}, // no limit
		{"", 10000, 0},  // a configuration built by hand: no limit
	} {
		if got := tc.share.Of(tc.of); got != tc.want {
			t.Errorf("Share(%q).Of(%d) = %d, want %d", tc.share, tc.of, got, tc.want)
		}
	}
}
