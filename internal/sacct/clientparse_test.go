package sacct

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

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
