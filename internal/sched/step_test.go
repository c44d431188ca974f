package sched_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestPlaceStep(t *testing.T) {
	job := sched.StepJob{CPUs: []int{4, 5, 6, 7}, GPUs: []int{1, 3}, MemMB: 2000}
	type out struct {
		P     sched.StepPlace
		Code  slurm.Errno
		Notes []string
	}
	tests := []struct {
		name string
		job  sched.StepJob
		held []sched.StepHeld
		ask  sched.StepAsk
		want out
	}{
		{"a step that is not exact holds all of an idle job's CPUs and sees its GPUs",
			job, nil, sched.StepAsk{NTasks: 1, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 1, CPUs: []int{4, 5, 6, 7}, GPUs: []int{1, 3}, HeldCPUs: []int{4, 5, 6, 7}}}},
		{"an exact step holds the CPUs its tasks ask for",
			job, nil, sched.StepAsk{NTasks: 2, CPUsPerTask: 1, Exact: true, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 2, CPUs: []int{4, 5}, GPUs: []int{1, 3}, HeldCPUs: []int{4, 5}}}},
		{"a step that is not exact waits while another holds any CPU",
			job, []sched.StepHeld{{CPUs: []int{4}}}, sched.StepAsk{NTasks: 1, GPUs: -1},
			out{Code: slurm.ErrNodesBusy}},
		{"an exact step takes the CPUs left free",
			job, []sched.StepHeld{{CPUs: []int{4, 6}}}, sched.StepAsk{NTasks: 2, Exact: true, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 2, CPUs: []int{5, 7}, GPUs: []int{1, 3}, HeldCPUs: []int{5, 7}}}},
		{"an exact step waits when too few CPUs are free",
			job, []sched.StepHeld{{CPUs: []int{4, 5, 6}}}, sched.StepAsk{NTasks: 2, Exact: true, GPUs: -1},
			out{Code: slurm.ErrNodesBusy}},
		{"more tasks than the job has CPUs are refused (job_srun_n2_l_in_one_task_job)",
			sched.StepJob{CPUs: []int{0}}, nil, sched.StepAsk{NTasks: 2, GPUs: -1},
			out{Code: slurm.ErrTooManyRequestedCPUs}},
		{"overcommit runs more tasks than CPUs",
			sched.StepJob{CPUs: []int{0}}, nil, sched.StepAsk{NTasks: 3, Overcommit: true, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 3, CPUs: []int{0}, GPUs: nil, HeldCPUs: []int{0}}}},
		{"-c without -n runs as many tasks as fit",
			job, nil, sched.StepAsk{CPUsPerTask: 2, Exact: true, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 2, CPUs: []int{4, 5, 6, 7}, GPUs: []int{1, 3}, HeldCPUs: []int{4, 5, 6, 7}}}},
		{"more GPUs than the job has are refused with Slurm's note",
			job, nil, sched.StepAsk{NTasks: 1, GPUs: 3},
			out{Code: slurm.ErrInvalidGRES, Notes: []string{"Step requested gres=gpu:3 is more than the job's gres=gpu:2"}}},
		{"--gpus=N holds N of the job's GPUs",
			job, []sched.StepHeld{{GPUs: []int{1}}}, sched.StepAsk{NTasks: 1, Exact: true, GPUs: 1},
			out{P: sched.StepPlace{NTasks: 1, CPUs: []int{4}, GPUs: []int{3}, HeldCPUs: []int{4}, HeldGPUs: []int{3}}}},
		{"--gpus=N waits while other steps hold the GPUs",
			job, []sched.StepHeld{{GPUs: []int{1, 3}}}, sched.StepAsk{NTasks: 1, Exact: true, GPUs: 1},
			out{Code: slurm.ErrNodesBusy}},
		{"--gpus-per-task holds that many for each task",
			job, nil, sched.StepAsk{NTasks: 2, Exact: true, GPUs: 0, GPUsPerTask: 1},
			out{P: sched.StepPlace{NTasks: 2, CPUs: []int{4, 5}, GPUs: []int{1, 3}, HeldCPUs: []int{4, 5}, HeldGPUs: []int{1, 3}}}},
		{"--gpus-per-task for more tasks than the job has GPUs is refused",
			job, nil, sched.StepAsk{NTasks: 3, Exact: true, GPUs: 0, GPUsPerTask: 1},
			out{Code: slurm.ErrInvalidGRES, Notes: []string{"Step requested gres=gpu:3 is more than the job's gres=gpu:2"}}},
		{"--gpus=0 sees no GPU",
			job, nil, sched.StepAsk{NTasks: 1, Exact: true, GPUs: 0},
			out{P: sched.StepPlace{NTasks: 1, CPUs: []int{4}, GPUs: []int{}, HeldCPUs: []int{4}, HeldGPUs: []int{}}}},
		{"more memory than the job has is refused",
			job, nil, sched.StepAsk{NTasks: 1, MemMB: 3000, GPUs: -1},
			out{Code: slurm.ErrInvalidTaskMemory}},
		{"memory is not checked for a job without a memory allocation",
			sched.StepJob{CPUs: []int{0}}, nil, sched.StepAsk{NTasks: 1, MemMB: 3000, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 1, CPUs: []int{0}, HeldCPUs: []int{0}}}},
		{"an overlapping step runs beside busy steps and holds nothing",
			job, []sched.StepHeld{{CPUs: []int{4, 5, 6, 7}, GPUs: []int{1, 3}}}, sched.StepAsk{NTasks: 1, Overlap: true, GPUs: -1},
			out{P: sched.StepPlace{NTasks: 1, CPUs: []int{4, 5, 6, 7}, GPUs: []int{1, 3}}}},
		{"an overlapping exact step sees the CPUs it asks for",
			job, nil, sched.StepAsk{NTasks: 1, Overlap: true, Exact: true, GPUs: 1},
			out{P: sched.StepPlace{NTasks: 1, CPUs: []int{4}, GPUs: []int{1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := append([]sched.StepHeld(nil), tt.held...)
			p, err := sched.PlaceStep(tt.job, tt.held, tt.ask)
			got := out{P: p}
			var se *sched.StepError
			if errors.As(err, &se) {
				got.Code, got.Notes = se.Code, se.Notes
			} else if err != nil {
				t.Fatalf("PlaceStep: %v, want a *StepError", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PlaceStep (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(held, tt.held); diff != "" {
				t.Errorf("PlaceStep changed the steps it was given (-before +after):\n%s", diff)
			}
		})
	}
}
