package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// TestPlaceStep checks placeStep's translation to and from
// sched.PlaceStep (whose own test has the rules).
func TestPlaceStep(t *testing.T) {
	job := jobRes{cpus: []int{4, 5, 6, 7}, gpus: []int{1, 3}, memMB: 2000}
	type out struct {
		P     placed
		Code  slurm.Errno
		Notes []string
	}
	tests := []struct {
		name string
		job  jobRes
		held []activeStep
		ask  api.StepRequest
		want out
	}{
		{"--gpus=N holds N of the job's GPUs beside a step that holds one",
			job, []activeStep{{gpus: []int{1}}}, api.StepRequest{NTasks: 1, Exact: true, GPUs: 1},
			out{P: placed{ntasks: 1, cpus: []int{4}, gpus: []int{3}, heldCPUs: []int{4}, heldGPUs: []int{3}}}},
		{"more GPUs than the job has are refused with Slurm's note",
			job, nil, api.StepRequest{NTasks: 1, GPUs: -1, GPUSpec: &jobscript.GPUSpec{PerTask: []jobscript.Gres{{Name: "gpu", Count: 3}}}},
			out{Code: slurm.ErrInvalidGRES, Notes: []string{"Step requested gres=gpu:3 is more than the job's gres=gpu:2"}}},
		{"more memory than the job has is refused",
			job, nil, api.StepRequest{NTasks: 1, MemMB: 3000, GPUs: -1},
			out{Code: slurm.ErrInvalidTaskMemory}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The job asked for its two GPUs with --gpus=2.
			need, err := stepGPUs(&jobscript.Request{GPUs: []jobscript.Gres{{Name: "gpu", Count: 2}}}, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			p, code, notes := placeStep(tt.job, tt.held, tt.ask, need)
			got := out{P: p, Code: code, Notes: notes}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(placed{})); diff != "" {
				t.Errorf("placeStep (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStepRefusal(t *testing.T) {
	tests := []struct {
		name  string
		code  slurm.Errno
		notes []string
		want  string
	}{
		{"Slurm's words alone", slurm.ErrTooManyRequestedCPUs, nil, "More processors requested than permitted"},
		{"notes come first, a line each", slurm.ErrInvalidGRES, []string{"a", "b"}, "a\nb\nInvalid generic resource (gres) specification"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := stepRefusal(tt.code, tt.notes...)
			if diff := cmp.Diff(tt.want, e.Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if e.Code != tt.code {
				t.Errorf("code %d, want %d", e.Code, tt.code)
			}
		})
	}
}
