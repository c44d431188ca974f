package daemon

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// --test-only refuses a job that no time would start, with the error
// number that goes with its reason, and leaves the others to "Unknown".
func TestNeverStarts(t *testing.T) {
	tests := []struct {
		name     string
		est      sched.Estimate
		code     slurm.Errno
		wantHint string
	}{
		{"over MaxTime", sched.Estimate{Reason: slurm.ReasonPartitionTimeLimit, Detail: "time limit 3-00:00:00 exceeds partition gpu's MaxTime 2-00:00:00"},
			slurm.ErrInvalidTimeLimit, "the job could never start: it would pend with reason PartitionTimeLimit (time limit 3-00:00:00 exceeds partition gpu's MaxTime 2-00:00:00)"},
		{"a dependency never met", sched.Estimate{Reason: slurm.ReasonDependencyNeverSatisfied},
			slurm.ErrDependency, "the job could never start: it would pend with reason DependencyNeverSatisfied"},
		{"waiting for a dependency: may start", sched.Estimate{Reason: slurm.ReasonDependency}, 0, ""},
		{"waiting for resources: may start", sched.Estimate{Reason: slurm.ReasonResources}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := neverStarts(tt.est)
			if tt.code == 0 {
				if e != nil {
					t.Fatalf("neverStarts = %v (%s), want nil", e, e.Hint)
				}
				return
			}
			if e == nil || e.Code != tt.code || e.Message != tt.code.Error() || e.Hint != tt.wantHint {
				t.Fatalf("neverStarts = %+v, want code %d, message %q, hint %q", e, tt.code, tt.code.Error(), tt.wantHint)
			}
		})
	}
}
