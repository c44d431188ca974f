package slurm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrnoWordsAreSlurms checks the table against what real Slurm 22.05
// printed (testdata/golden): each line is the recording's, with the
// error's words where Error puts them.
func TestErrnoWordsAreSlurms(t *testing.T) {
	tests := []struct {
		file string
		line string // with %s where the words go
		code Errno
	}{
		{"sbatch_bad_partition.txt", "sbatch: error: Batch job submission failed: %s", ErrInvalidPartitionName},
		{"sbatch_no_association.txt", "sbatch: error: Batch job submission failed: %s", ErrInvalidAccount},
		{"sbatch_gpus_16.txt", "sbatch: error: Batch job submission failed: %s", ErrRequestedNodeConfigUnavailable},
		{"sbatch_dependency_bad_syntax.txt", "sbatch: error: Batch job submission failed: %s", ErrDependency},
		{"scancel_other_user_as_alice.txt", "scancel: error: Kill job error on job id 28: %s", ErrAccessDenied},
		{"scontrol_hold_other_users_job.txt", "slurm_suspend error: %s", ErrUserIDMissing},
		{"scontrol_show_job_unknown.txt", "slurm_load_jobs error: %s", ErrInvalidJobID},
		{"job_srun_n2_l_in_one_task_job.txt", "srun: error: Unable to create step for job 26401: %s", ErrTooManyRequestedCPUs},
		{"job_srun_ray_hostnames_background_step.txt", "srun: Job 26403 step creation temporarily disabled, retrying (%s)", ErrNodesBusy},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(tt.line, tt.code)
			for _, l := range strings.Split(string(b), "\n") {
				if l == want {
					return
				}
			}
			t.Errorf("no line %q in %s", want, tt.file)
		})
	}
}

func TestErrnoError(t *testing.T) {
	tests := []struct {
		code Errno
		want string
	}{
		{Success, "No error"},
		{ErrJobHeld, "Job is in held state, pending scheduler release"},
		{EINVAL, "Unknown error 22"},
		{Errno(2999), "Unknown error 2999"},
	}
	for _, tt := range tests {
		if got := tt.code.Error(); got != tt.want {
			t.Errorf("Errno(%d).Error() = %q, want %q", int(tt.code), got, tt.want)
		}
		if got := fmt.Sprint(tt.code); got != tt.want {
			t.Errorf("fmt.Sprint(Errno(%d)) = %q, want %q", int(tt.code), got, tt.want)
		}
	}
	if got := fmt.Sprintf("%d", ErrInvalidJobID); got != "2017" {
		t.Errorf("%%d of ErrInvalidJobID = %q, want 2017", got)
	}
}
