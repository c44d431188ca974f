package scancel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCancelIDs(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		want []cancelID
		ok   bool
	}{
		{"a job id", "12", []cancelID{{text: "12", job: 12, task: -1}}, true},
		{"an array task", "26383_0", []cancelID{{text: "26383_0", job: 26383, task: 0}}, true},
		{"every task of an array", "7_*", []cancelID{{text: "7_*", job: 7, task: allTasks}}, true},
		{"a task range goes whole", "7_[1-3]", []cancelID{{text: "7_[1-3]", job: 7, task: -1}}, true},
		{"a step", "12.0", []cancelID{{text: "12.0", job: 12, task: -1, step: true}}, true},
		{"comma-separated ids", "12,13_1", []cancelID{{text: "12", job: 12, task: -1}, {text: "13_1", job: 13, task: 1}}, true},
		{"not a number", "abc", nil, false},
		{"zero", "0", nil, false},
		{"trailing text", "12x", nil, false},
		{"an unclosed range", "7_[1-3", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseCancelIDs(tt.arg)
			if ok != tt.ok {
				t.Fatalf("parseCancelIDs(%q) ok = %v, want %v", tt.arg, ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(cancelID{})); diff != "" {
				t.Errorf("parseCancelIDs(%q) (-want +got):\n%s", tt.arg, diff)
			}
		})
	}
}
