package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

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
		{"a step that is not exact holds all of an idle job's CPUs and sees its GPUs",
			job, nil, api.StepRequest{NTasks: 1, GPUs: -1},
			out{P: placed{ntasks: 1, cpus: []int{4, 5, 6, 7}, gpus: []int{1, 3}, heldCPUs: []int{4, 5, 6, 7}}}},
		{"an exact step holds the CPUs its tasks ask for",
			job, nil, api.StepRequest{NTasks: 2, CPUsPerTask: 1, Exact: true, GPUs: -1},
			out{P: placed{ntasks: 2, cpus: []int{4, 5}, gpus: []int{1, 3}, heldCPUs: []int{4, 5}}}},
		{"a step that is not exact waits while another holds any CPU",
			job, []activeStep{{cpus: []int{4}}}, api.StepRequest{NTasks: 1, GPUs: -1},
			out{Code: slurm.ErrNodesBusy}},
		{"an exact step takes the CPUs left free",
			job, []activeStep{{cpus: []int{4, 6}}}, api.StepRequest{NTasks: 2, Exact: true, GPUs: -1},
			out{P: placed{ntasks: 2, cpus: []int{5, 7}, gpus: []int{1, 3}, heldCPUs: []int{5, 7}}}},
		{"an exact step waits when too few CPUs are free",
			job, []activeStep{{cpus: []int{4, 5, 6}}}, api.StepRequest{NTasks: 2, Exact: true, GPUs: -1},
			out{Code: slurm.ErrNodesBusy}},
		{"more tasks than the job has CPUs are refused (job_srun_n2_l_in_one_task_job)",
			jobRes{cpus: []int{0}}, nil, api.StepRequest{NTasks: 2, GPUs: -1},
			out{Code: slurm.ErrTooManyRequestedCPUs}},
		{"overcommit runs more tasks than CPUs",
			jobRes{cpus: []int{0}}, nil, api.StepRequest{NTasks: 3, Overcommit: true, GPUs: -1},
			out{P: placed{ntasks: 3, cpus: []int{0}, gpus: nil, heldCPUs: []int{0}}}},
		{"-c without -n runs as many tasks as fit",
			job, nil, api.StepRequest{CPUsPerTask: 2, Exact: true, GPUs: -1},
			out{P: placed{ntasks: 2, cpus: []int{4, 5, 6, 7}, gpus: []int{1, 3}, heldCPUs: []int{4, 5, 6, 7}}}},
		{"more GPUs than the job has are refused with Slurm's note",
			job, nil, api.StepRequest{NTasks: 1, GPUs: 3},
			out{Code: slurm.ErrInvalidGRES, Notes: []string{"Step requested gres=gpu:3 is more than the job's gres=gpu:2"}}},
		{"--gpus=N holds N of the job's GPUs",
			job, []activeStep{{gpus: []int{1}}}, api.StepRequest{NTasks: 1, Exact: true, GPUs: 1},
			out{P: placed{ntasks: 1, cpus: []int{4}, gpus: []int{3}, heldCPUs: []int{4}, heldGPUs: []int{3}}}},
		{"--gpus=N waits while other steps hold the GPUs",
			job, []activeStep{{gpus: []int{1, 3}}}, api.StepRequest{NTasks: 1, Exact: true, GPUs: 1},
			out{Code: slurm.ErrNodesBusy}},
		{"--gpus=0 sees no GPU",
			job, nil, api.StepRequest{NTasks: 1, Exact: true, GPUs: 0},
			out{P: placed{ntasks: 1, cpus: []int{4}, gpus: []int{}, heldCPUs: []int{4}, heldGPUs: []int{}}}},
		{"more memory than the job has is refused",
			job, nil, api.StepRequest{NTasks: 1, MemMB: 3000, GPUs: -1},
			out{Code: slurm.ErrInvalidTaskMemory}},
		{"memory is not checked for a job without a memory allocation",
			jobRes{cpus: []int{0}}, nil, api.StepRequest{NTasks: 1, MemMB: 3000, GPUs: -1},
			out{P: placed{ntasks: 1, cpus: []int{0}, heldCPUs: []int{0}}}},
		{"an overlapping step runs beside busy steps and holds nothing",
			job, []activeStep{{cpus: []int{4, 5, 6, 7}, gpus: []int{1, 3}}}, api.StepRequest{NTasks: 1, Overlap: true, GPUs: -1},
			out{P: placed{ntasks: 1, cpus: []int{4, 5, 6, 7}, gpus: []int{1, 3}}}},
		{"an overlapping exact step sees the CPUs it asks for",
			job, nil, api.StepRequest{NTasks: 1, Overlap: true, Exact: true, GPUs: 1},
			out{P: placed{ntasks: 1, cpus: []int{4}, gpus: []int{1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := append([]activeStep(nil), tt.held...)
			p, code, notes := placeStep(tt.job, tt.held, tt.ask)
			got := out{P: p, Code: code, Notes: notes}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(placed{})); diff != "" {
				t.Errorf("placeStep (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(held, tt.held, cmp.AllowUnexported(activeStep{})); diff != "" {
				t.Errorf("placeStep changed the steps it was given (-before +after):\n%s", diff)
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
