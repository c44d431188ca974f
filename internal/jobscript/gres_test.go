package jobscript

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGresValidation follows gres_job_state_validate and _test_gres_cnt
// (src/common/gres.c), which sbatch runs on the job it is about to send.
// Every row was checked against real sbatch 22.05 on the golden cluster
// (the stderr byte for byte; the counts as scontrol showed them).
func TestGresValidation(t *testing.T) {
	type counts struct {
		NTasks        int
		NTasksSet     bool
		Nodes         NodeRange
		NodesSet      bool
		NTasksPerNode int
		CPUsPerTask   int
	}
	tests := []struct {
		name   string
		args   string
		want   counts // when accepted
		stderr string // when refused; the exit code is 1
	}{
		{name: "--gpus with --gpus-per-task sets the task count", args: "--gpus=2 --gpus-per-task=1",
			want: counts{NTasks: 2, NTasksSet: true, Nodes: NodeRange{Min: 1}}},
		{name: "--cpus-per-gpu with --gpus-per-task sets the CPUs per task", args: "--gpus-per-task=1 -n 2 --cpus-per-gpu=4",
			want: counts{NTasks: 2, NTasksSet: true, Nodes: NodeRange{Min: 1}, CPUsPerTask: 4}},
		{name: "--gpus-per-task on one fixed node is one task", args: "-N1 --gpus-per-task=1",
			want: counts{NTasks: 1, NTasksSet: true, Nodes: NodeRange{Min: 1, Max: 1}, NodesSet: true}},
		{name: "--gpus-per-task on one node with tasks per node", args: "-N1 --gpus-per-task=2 --ntasks-per-node=2",
			want: counts{NTasks: 2, NTasksSet: true, Nodes: NodeRange{Min: 1, Max: 1}, NodesSet: true, NTasksPerNode: 2}},
		{name: "--ntasks-per-gpu times the GPUs is the task count", args: "--ntasks-per-gpu=2 --gpus=2",
			want: counts{NTasks: 4, NTasksSet: true, Nodes: NodeRange{Min: 1}}},
		{name: "an untyped --cpus-per-gpu merges into typed GPUs", args: "--gpus=a100:2 --cpus-per-gpu=4",
			want: counts{NTasks: 1, Nodes: NodeRange{Min: 1}}},
		{name: "an untyped --mem-per-gpu merges into typed GPUs", args: "--gpus=a100:2 --mem-per-gpu=1G",
			want: counts{NTasks: 1, Nodes: NodeRange{Min: 1}}},
		{name: "--gpus-per-socket with --sockets-per-node", args: "--gpus-per-socket=1 --sockets-per-node=1",
			want: counts{NTasks: 1, Nodes: NodeRange{Min: 1}}},
		{name: "one name and type twice is one record", args: "--gres=gpu:1,gpu:2",
			want: counts{NTasks: 1, Nodes: NodeRange{Min: 1}}},

		{name: "--gpus-per-task alone", args: "--gpus-per-task=1",
			stderr: "Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks is not allowed."},
		{name: "--gpus-per-task with typed --gpus is another record", args: "--gpus=a100:2 --gpus-per-task=1",
			stderr: "Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks is not allowed."},
		{name: "--gpus-per-task with --gpus-per-node but no task count", args: "--gpus-per-node=4 --gpus-per-task=2",
			stderr: "Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks is not allowed."},
		{name: "--gpus-per-socket needs --sockets-per-node", args: "--gpus-per-socket=1",
			stderr: "--gpus-per-socket option requires --sockets-per-node specification"},
		{name: "--ntasks-per-gpu needs GPUs or a task count", args: "--ntasks-per-gpu=1",
			stderr: "gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification or a node/ntask specification"},
		{name: "--ntasks-per-tres the same", args: "--ntasks-per-tres=1",
			stderr: "gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU specification or a node/ntask specification"},
		{name: "--cpus-per-gpu excludes --cpus-per-task", args: "-c 2 --cpus-per-gpu=4 --gpus=1",
			stderr: "--cpus-per-gpu is mutually exclusive with --cpus-per-task"},
		{name: "--cpus-per-gpu excludes --cpus-per-task before the per-task product", args: "--gpus-per-task=1 -n2 -c3 --cpus-per-gpu=2",
			stderr: "--cpus-per-gpu is mutually exclusive with --cpus-per-task"},
		{name: "--gpus not a multiple of --gpus-per-node", args: "--gpus=3 --gpus-per-node=2",
			stderr: "Failed to validate job spec, --gpus is not multiple of --gres=gpu/--gpus-per-node"},
		{name: "--gpus below --gpus-per-node", args: "--gpus=1 --gpus-per-node=2",
			stderr: "Failed to ensure --gpus >= --gres=gpu/--gpus-per-node >= --gpus-per-socket"},
		{name: "the task count not a multiple of --ntasks-per-gpu", args: "-n 3 --ntasks-per-gpu=2",
			stderr: "Failed to validate job spec, -n/--ntasks has to be a multiple of --ntasks-per-gpu."},
		{name: "fewer GPUs than nodes", args: "--gpus=2 -N 3",
			stderr: "Failed to validate job spec, --gpus < -N"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := run(append(strings.Fields(tt.args), "job.sh"), "#!/bin/sh\ntrue\n", nil)
			if tt.stderr != "" {
				e := asError(t, err)
				want := "sbatch: error: " + tt.stderr + "\nsbatch: error: " + MsgInvalidGres + "\n"
				if diff := cmp.Diff(want, e.Stderr("sbatch")); diff != "" {
					t.Errorf("stderr (-want +got):\n%s", diff)
				}
				if e.Exit != 1 {
					t.Errorf("exit = %d, want 1", e.Exit)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			got := counts{r.NTasks, r.NTasksSet, r.Nodes, r.NodesSet, r.NTasksPerNode, r.CPUsPerTask}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGresTypeMix: a GRES asked for with and without a type fails with the
// text of ESLURM_INVALID_GRES_TYPE alone (sbatch prints slurm_strerror).
func TestGresTypeMix(t *testing.T) {
	for _, args := range [][]string{
		{"--gres=gpu:a100:2,gpu:1"},
		{"--gres=gpu:1", "--gpus=a100:1"},
	} {
		_, err := run(append(args, "job.sh"), "#!/bin/sh\ntrue\n", nil)
		e := asError(t, err)
		want := "sbatch: error: Invalid GRES specification (with and without type identification)\n"
		if diff := cmp.Diff(want, e.Stderr("sbatch")); diff != "" {
			t.Errorf("%q: stderr (-want +got):\n%s", args, diff)
		}
	}
}

// TestGresTwoNodesFromGPUs: "--gpus=4 --gpus-per-node=2" makes the job two
// nodes (real sbatch sends NumNodes=2-2), which slurm-lite then refuses.
func TestGresTwoNodesFromGPUs(t *testing.T) {
	_, err := run([]string{"--gpus=4", "--gpus-per-node=2", "job.sh"}, "#!/bin/sh\ntrue\n", nil)
	e := asError(t, err)
	if e.Kind != KindRejected || e.Msg != MsgNodeCount {
		t.Errorf("got %v %q, want the node count refusal", e.Kind, e.Msg)
	}
}
