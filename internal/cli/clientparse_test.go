package cli

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
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

func TestParseAcctSels(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		want []acctSel
		ok   bool
	}{
		{"ids", "26390,26383", []acctSel{{id: 26390, task: -1}, {id: 26383, task: -1}}, true},
		{"a task and a step", "8_3,26390.0", []acctSel{{id: 8, task: 3}, {id: 26390, task: -1, step: "0"}}, true},
		{"the batch step", "7.batch", []acctSel{{id: 7, task: -1, step: "batch"}}, true},
		{"not an id", "x", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseAcctSels(tt.arg)
			if ok != tt.ok {
				t.Fatalf("parseAcctSels(%q) ok = %v, want %v", tt.arg, ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(acctSel{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSacctWindow(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 30, 0, 0, time.Local)
	midnight := time.Date(2026, 11, 29, 0, 0, 0, 0, time.Local)
	tests := []struct {
		name       string
		a          sacctArgs
		start, end time.Time
	}{
		{"neither -j nor -s: since midnight", sacctArgs{}, midnight, now},
		{"-j alone: all time", sacctArgs{jobs: []acctSel{{id: 1, task: -1}}}, time.Time{}, now},
		{"-s alone: this moment", sacctArgs{states: []slurm.JobState{slurm.Completed}}, now, now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			a.window(now, false, false)
			if !a.start.Equal(tt.start) || !a.end.Equal(tt.end) {
				t.Errorf("window = [%v, %v], want [%v, %v]", a.start, a.end, tt.start, tt.end)
			}
		})
	}
}
