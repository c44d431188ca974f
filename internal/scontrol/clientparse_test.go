package scontrol

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitJobList(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		want []string
		ok   bool
	}{
		{"one id", "27", []string{"27"}, true},
		{"commas and blanks separate", "27,28 29", []string{"27", "28", "29"}, true},
		{"commas inside brackets do not", "7_[1,3-5],8", []string{"7_[1,3-5]", "8"}, true},
		{"a name is not an id", "Name=foo", nil, false},
		{"a stray dash", "7-9", nil, false},
		{"two underscores", "7_1_2", nil, false},
		{"unbalanced brackets", "7_[1-3", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := splitJobList(tt.arg)
			if ok != tt.ok {
				t.Fatalf("splitJobList(%q) ok = %v, want %v", tt.arg, ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("splitJobList(%q) (-want +got):\n%s", tt.arg, diff)
			}
		})
	}
}

func TestKeyword(t *testing.T) {
	tests := []struct {
		tag, word string
		min       int
		want      bool
	}{
		{"show", "show", 3, true},
		{"sho", "show", 3, true},
		{"sh", "show", 3, false},
		{"SHOW", "show", 3, true},
		{"shows", "show", 3, false},
		{"hostname", "hostnames", 5, true},
		{"holdu", "hold", 4, false},
		{"requeuehold", "requeue", 3, false},
	}
	for _, tt := range tests {
		if got := keyword(tt.tag, tt.word, tt.min); got != tt.want {
			t.Errorf("keyword(%q, %q, %d) = %v, want %v", tt.tag, tt.word, tt.min, got, tt.want)
		}
	}
}
