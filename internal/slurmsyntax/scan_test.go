package slurmsyntax

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStrtol(t *testing.T) {
	type out struct {
		V    int64
		Rest string
		OK   bool
	}
	const huge = "99999999999999999999"
	for _, tc := range []struct {
		name     string
		in       string
		overflow Overflow
		want     out
	}{
		{name: "digits, then the rest", in: "12_3", want: out{12, "_3", true}},
		{name: "leading white space and a sign, as C skips and reads them", in: " \t-7x", want: out{-7, "x", true}},
		{name: "no digit: 0 and all of s", in: "+x", want: out{0, "+x", false}},
		{name: "the largest int64 is no overflow", in: "9223372036854775807", overflow: OutOfRange, want: out{math.MaxInt64, "", true}},
		{name: "the smallest int64 is no overflow", in: "-9223372036854775808", overflow: Zero, want: out{math.MinInt64, "", true}},
		{name: "Saturate: LONG_MAX above", in: huge + ".1", overflow: Saturate, want: out{math.MaxInt64, ".1", true}},
		{name: "Saturate: LONG_MIN below", in: "-" + huge, overflow: Saturate, want: out{math.MinInt64, "", true}},
		{name: "OutOfRange: 1<<62 above", in: huge + "_2", overflow: OutOfRange, want: out{1 << 62, "_2", true}},
		{name: "OutOfRange: 1<<62 below too, so a job id reader refuses it as too large", in: "-" + huge, overflow: OutOfRange, want: out{1 << 62, "", true}},
		{name: "Zero: 0, as a format width", in: huge + "s", overflow: Zero, want: out{0, "s", true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got out
			got.V, got.Rest, got.OK = Strtol(tc.in, tc.overflow)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Strtol(%q, %d) (-want +got):\n%s", tc.in, tc.overflow, diff)
			}
		})
	}
}

func TestStrtoull(t *testing.T) {
	type out struct {
		V    uint64
		Rest string
		OK   bool
	}
	for _, tc := range []struct {
		name string
		in   string
		want out
	}{
		{"digits, then the rest", " +12k", out{12, "k", true}},
		{"a minus sign negates in unsigned arithmetic", "-1", out{math.MaxUint64, "", true}},
		{"the largest uint64 is no overflow", "18446744073709551615x", out{math.MaxUint64, "x", true}},
		{"past it: the largest, whatever the sign", "-18446744073709551616", out{math.MaxUint64, "", true}},
		{"no digit: 0 and all of s", "-", out{0, "-", false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got out
			got.V, got.Rest, got.OK = Strtoull(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Strtoull(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
