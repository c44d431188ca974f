package format

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCell(t *testing.T) {
	tests := []struct {
		name       string
		s          string
		width      int
		right, cut bool
		want       string
	}{
		{name: "a right-justified value is padded on the left", s: "27", width: 6, right: true, cut: true, want: "    27"},
		{name: "a left-justified value is padded on the right", s: "gpu", width: 9, want: "gpu      "},
		{name: "a left-justified value is cut to its width", s: "alicegpu-long", width: 8, want: "alicegpu"},
		{name: "a right-justified value is cut when cut is set", s: "Resources", width: 5, right: true, cut: true, want: "Resou"},
		{name: "a right-justified value is printed whole otherwise", s: "gpu[01-02]", width: 5, right: true, want: "gpu[01-02]"},
		{name: "width zero prints the value alone", s: "(Priority)", width: 0, want: "(Priority)"},
		{name: "a negative width prints the value and a space", s: "x", width: -3, want: "x "},
		{name: "NULL prints as (null)", s: Null, width: 8, right: true, cut: true, want: "  (null)"},
		{name: "NULL cut below six bytes prints nothing, as glibc does", s: Null, width: 4, want: "    "},
		{name: "NULL in a wide left column", s: Null, width: 7, want: "(null) "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cell(tt.s, tt.width, tt.right, tt.cut)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cell(%q, %d, %v, %v) (-want +got):\n%s", tt.s, tt.width, tt.right, tt.cut, diff)
			}
		})
	}
}

func TestConvertNum(t *testing.T) {
	tests := []struct {
		name       string
		num        float64
		orig, spec int
		mode       convertMode
		want       string
	}{
		{"whole MiB that are not a multiple of 512 stay in MiB", 1000, unitMega, NoUnits, convertExact, "1000M"},
		{"16000M stays 16000M", 16000, unitMega, NoUnits, convertExact, "16000M"},
		{"2048M is 2G", 2048, unitMega, NoUnits, convertExact, "2G"},
		{"halves are exact too", 1536, unitMega, NoUnits, convertExact, "1.50G"},
		{"1024M is 1G", 1024, unitMega, NoUnits, convertExact, "1G"},
		{"zero is 0 without a unit", 0, unitMega, NoUnits, convertExact, "0"},
		{"--noconvert keeps MiB", 2048, unitMega, NoUnits, convertNo, "2048M"},
		{"--units G converts with two decimals", 1000, unitMega, unitGiga, convertExact, "0.98G"},
		{"--units G of 100M", 100, unitMega, unitGiga, convertExact, "0.10G"},
		{"--units K goes down", 2, unitMega, unitKilo, convertExact, "2048K"},
		{"plain numbers take no unit letter", 16, unitNone, NoUnits, convertExact, "16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := convertNum(tt.num, tt.orig, tt.spec, tt.mode)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("convertNum(%v) (-want +got):\n%s", tt.num, diff)
			}
		})
	}
}

func TestBitFmt(t *testing.T) {
	tests := []struct {
		name string
		ids  []int
		want string
	}{
		{"ranges and single ids", []int{0, 1, 2, 3, 8}, "0-3,8"},
		{"unsorted ids with duplicates", []int{5, 3, 4, 3}, "3-5"},
		{"one id", []int{2}, "2"},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, BitFmt(tt.ids)); diff != "" {
				t.Errorf("BitFmt(%v) (-want +got):\n%s", tt.ids, diff)
			}
		})
	}
}

func TestCPUTime(t *testing.T) {
	tests := []struct {
		name string
		ms   int64
		want string
	}{
		{"nothing", 0, "00:00:00"},
		{"milliseconds under a minute", 16, "00:00.016"},
		{"whole seconds", 61000, "00:01:01"},
		{"hours drop the fraction", 3600500, "01:00:00"},
		{"days", 90061000, "1-01:01:01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cpuTime(msec(tt.ms))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cpuTime(%dms) (-want +got):\n%s", tt.ms, diff)
			}
		})
	}
}
