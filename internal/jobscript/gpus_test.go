package jobscript

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNodeGPUs: every GPU option adds up to what the job holds on the
// node, as real Slurm 22.05 allocated them on the golden cluster
// (testdata/gpuenv: SLURM_GPUS_ON_NODE of the batch step).
func TestNodeGPUs(t *testing.T) {
	tests := []struct {
		name, args string
		want       GPUNeed
	}{
		{"no GPU option asks none", "-n2", GPUNeed{}},
		{"--gpus", "--gpus=2", GPUNeed{GPUs: 2}},
		{"--gpus with a type", "--gpus=a100:3", GPUNeed{GPUs: 3, Type: "a100"}},
		{"--gres=gpu:N is per node, not per task", "--gres=gpu:2 -n2", GPUNeed{GPUs: 2}},
		{"--gpus-per-node", "--gpus-per-node=2 -n2", GPUNeed{GPUs: 2}},
		{"--gpus-per-task times the tasks sbatch derives from -N1 --ntasks-per-node", "-N1 --ntasks-per-node=2 --gpus-per-task=1", GPUNeed{GPUs: 2}},
		{"--gpus-per-task times -n", "-n2 --gpus-per-task=2", GPUNeed{GPUs: 4}},
		{"--gpus with --gpus-per-task is the same count, once", "--gpus=4 --gpus-per-task=1", GPUNeed{GPUs: 4}},
		{"--gpus-per-socket times --sockets-per-node", "--gpus-per-socket=1 --sockets-per-node=1", GPUNeed{GPUs: 1}},
		{"--gpus-per-socket over two sockets", "--gpus-per-socket=2 --sockets-per-node=2", GPUNeed{GPUs: 4}},
		{"one name and type twice: the last count", "--gres=gpu:1,gpu:2", GPUNeed{GPUs: 2}},
		{"--gres after --gpus-per-node for the same record wins", "--gpus-per-node=3 --gres=gpu:2", GPUNeed{GPUs: 2}},
		{"two types add up, naming both", "--gres=gpu:a100:1,gpu:v100:2", GPUNeed{GPUs: 3, Type: "a100,v100"}},
		{"shards are counted apart", "--gres=shard:30", GPUNeed{Shards: 30}},
		{"--exclusive asks nothing itself", "--exclusive", GPUNeed{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := run(append(strings.Fields(tt.args), "job.sh"), "#!/bin/sh\ntrue\n", nil)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if diff := cmp.Diff(tt.want, r.NodeGPUs()); diff != "" {
				t.Errorf("NodeGPUs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepGPUs: what a step takes of its job's GPUs, as slurmctld's
// step_create counts it; the recorded cases are testdata/gpuenv's steps
// (srun inherits the batch step's SLURM_GPUS* variables).
func TestStepGPUs(t *testing.T) {
	gpu := func(n uint64) []Gres { return []Gres{{Name: "gpu", Count: n}} }
	tests := []struct {
		name string
		job  string
		step *GPUSpec
		want StepNeed
		err  string
	}{
		{"no option: the job's --gpus", "--gpus=2", nil, StepNeed{GPUs: 2}, ""},
		{"no option: the job's --gres=gpu:2 per node (gres_gpu_2_n2)", "--gres=gpu:2 -n2", nil, StepNeed{GPUs: 2}, ""},
		{"no option in an --exclusive job: what it asked, not all it holds", "--exclusive --gpus-per-node=1", nil, StepNeed{GPUs: 1}, ""},
		{"no option in an --exclusive job that asked none: none", "--exclusive", nil, StepNeed{}, ""},
		{"no option: the job's per task, for the step's tasks", "-n2 --gpus-per-task=1", nil, StepNeed{PerTask: 1}, ""},
		{"no option: per task counts before --gpus", "--gpus=4 --gpus-per-task=1", nil, StepNeed{PerTask: 1}, ""},
		{"no option: a job of GPU memory shares its GPU", "--gres=shard:4", nil, StepNeed{All: true}, ""},
		{"inherited SLURM_GPUS_PER_NODE=1 (gpus_per_node_1_exclusive)", "--exclusive --gpus-per-node=1",
			&GPUSpec{PerNode: gpu(1)}, StepNeed{GPUs: 1}, ""},
		{"inherited SLURM_GPUS_PER_SOCKET alone: all the job's (gpus_per_socket_1)", "--gpus-per-socket=1 --sockets-per-node=1",
			&GPUSpec{PerSocket: gpu(1)}, StepNeed{All: true}, ""},
		{"per node counts before per task and per step", "--gpus=4",
			&GPUSpec{PerJob: gpu(4), PerNode: gpu(1), PerTask: gpu(2)}, StepNeed{GPUs: 1}, ""},
		{"--gpus=0: none", "--gpus=2", &GPUSpec{}, StepNeed{}, ""},
		{"more per step than the job's --gpus, in Slurm's words", "--gpus=2", &GPUSpec{PerJob: gpu(3)}, StepNeed{},
			"Step requested gres=gpu:3 is more than the job's gres=gpu:2"},
		{"more per node than the job's", "--gpus-per-node=1", &GPUSpec{PerNode: gpu(2)}, StepNeed{},
			"Step requested gres_per_node=gpu:2 is more than the job's gres_per_node=gpu:1"},
		{"more per task than the job's", "-n2 --gpus-per-task=1", &GPUSpec{PerTask: gpu(2)}, StepNeed{},
			"Step requested gres_per_task=gpu:2 is more than the job's gres_per_task=gpu:1"},
		{"GPUs in a job that asked for none", "--exclusive", &GPUSpec{PerJob: gpu(1)}, StepNeed{},
			"Step requested GRES but job doesn't have GRES"},
		{"a type the job did not ask for", "--gpus=a100:2", &GPUSpec{PerJob: []Gres{{Name: "gpu", Type: "v100", Count: 1}}}, StepNeed{},
			"Step requested GRES (gpu:v100) not found in the job"},
		{"an untyped step in a typed job", "--gpus=a100:2", &GPUSpec{PerJob: gpu(1)}, StepNeed{GPUs: 1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := run(append(strings.Fields(tt.job), "job.sh"), "#!/bin/sh\ntrue\n", nil)
			if err != nil {
				t.Fatalf("job refused: %v", err)
			}
			got, err := StepGPUs(r, tt.step)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("StepGPUs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBindGPUs follows _get_usable_gres (src/common/gres.c, 22.05) on a
// node of 4 GPUs whose gres.conf names no CPUs; the first rows are the
// recorded bindings of testdata/gpuenv.
func TestBindGPUs(t *testing.T) {
	tests := []struct {
		name  string
		bind  string
		step  []int
		tasks [][]int // each task's GPUs, in order
		bound bool
	}{
		{"per_task:1 (gpus_per_task_1_n2)", "gpu:per_task:1", []int{0, 1}, [][]int{{0}, {1}}, true},
		{"per_task:2 (gpus_per_task_2_n2)", "gpu:per_task:2", []int{0, 1, 2, 3}, [][]int{{0, 1}, {2, 3}}, true},
		{"single:1 (gpu_bind_single_1)", "gpu:single:1", []int{0, 1}, [][]int{{0}, {1}}, true},
		{"no binding: every task all of the step's (gres_gpu_2_n2)", "", []int{0, 1}, [][]int{{0, 1}, {0, 1}}, false},
		{"single:2: two tasks a GPU, wrapping", "gpu:single:2", []int{1, 3}, [][]int{{1}, {1}, {3}, {3}, {1}}, true},
		{"single:0 is single:1", "gpu:single:0", []int{2, 3}, [][]int{{2}, {3}}, true},
		{"per_task past the step's GPUs: the first one", "gpu:per_task:2", []int{0, 1, 2}, [][]int{{0, 1}, {2}, {0}}, true},
		{"per_task:0 binds nothing", "gpu:per_task:0", []int{0, 1}, [][]int{{0, 1}}, false},
		{"a typed --gpus-per-task binds nothing (slurm_atoul of \"a100:1\")", "gpu:per_task:a100:1", []int{0, 1}, [][]int{{0, 1}}, false},
		{"closest: all of the step's", "gpu:closest", []int{1, 2}, [][]int{{1, 2}, {1, 2}}, true},
		{"verbose, is read past", "gpu:verbose,per_task:1", []int{0, 1}, [][]int{{0}, {1}}, true},
		{"none binds nothing", "gpu:none", []int{0, 1}, [][]int{{0, 1}}, false},
		{"map_gpu repeats its list", "gpu:map_gpu:1,0", []int{0, 1}, [][]int{{1}, {0}, {1}}, true},
		{"map_gpu with counts", "gpu:map_gpu:1*2,0", []int{0, 1}, [][]int{{1}, {1}, {0}, {1}}, true},
		{"map_gpu outside the step: its first GPU", "gpu:map_gpu:3", []int{0, 1}, [][]int{{0}}, true},
		{"map_gpu beyond the node: its first GPU", "gpu:map_gpu:9", []int{2, 3}, [][]int{{2}}, true},
		{"mask_gpu in hexadecimal, within the step", "gpu:mask_gpu:0x3,0xc", []int{1, 2}, [][]int{{1}, {2}}, true},
		{"mask_gpu without 0x is decimal (strtol base 0)", "gpu:mask_gpu:10", []int{0, 1, 2, 3}, [][]int{{1, 3}}, true},
		{"mask_gpu beyond the node's GPUs is void", "gpu:mask_gpu:0x10", []int{1, 2}, [][]int{{1}}, true},
		{"a step without GPUs binds nothing", "gpu:per_task:1", nil, [][]int{nil}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for task, want := range tt.tasks {
				got, bound := BindGPUs(tt.bind, tt.step, 4, task)
				if diff := cmp.Diff(want, got); diff != "" || bound != tt.bound {
					t.Errorf("task %d: bound %v, want %v; GPUs (-want +got):\n%s", task, bound, tt.bound, diff)
				}
			}
		})
	}
}

func TestTresBind(t *testing.T) {
	for _, tt := range []struct{ bind, perTask, want string }{
		{"single:1", "2", "gpu:single:1"},
		{"", "1", "gpu:per_task:1"},
		{"", "", ""},
	} {
		if got := TresBind(tt.bind, tt.perTask); got != tt.want {
			t.Errorf("TresBind(%q, %q) = %q, want %q", tt.bind, tt.perTask, got, tt.want)
		}
	}
}

// TestGPUBindError follows tres_bind_verify_cmdline (src/common/tres_bind.c).
func TestGPUBindError(t *testing.T) {
	bad := func(v string) string { return "Invalid --gpu-bind argument: gpu:" + v }
	tests := []struct{ v, want string }{
		{"closest", ""},
		{"c", ""}, // Slurm looks at the first letter only
		{"none", ""},
		{"verbose,single:1", ""},
		{"per_task:2", ""},
		{"map_gpu:0,1*2", ""},
		{"map_gpu:1*", ""},
		{"mask_gpu:0x3,0xC", ""},
		{"single:-1", bad("single:-1")},
		{"per_task:-2", bad("per_task:-2")},
		{"foo", bad("foo")},
		{"map_gpu:0x1", "Failed to validate 0x1, offending character is x\n" + bad("map_gpu:0x1")},
		{"mask_gpu:0x3g", "Failed to validate 3g, offending character is g\n" + bad("mask_gpu:0x3g")},
		{"map_gpu:1*a", "Failed to validate 1*a, offending character is a\n" + bad("map_gpu:1*a")},
		{"map_gpu:1**2", bad("map_gpu:1**2")},
		{"closest;nic:closest", bad("closest;nic:closest")},
	}
	for _, tt := range tests {
		if got := GPUBindError(tt.v); got != tt.want {
			t.Errorf("GPUBindError(%q) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestGPUBindRefused: sbatch exits 255 on a --gpu-bind Slurm refuses,
// with its words.
func TestGPUBindRefused(t *testing.T) {
	_, err := run([]string{"--gpu-bind=foo", "job.sh"}, "#!/bin/sh\ntrue\n", nil)
	e := asError(t, err)
	if diff := cmp.Diff("sbatch: error: Invalid --gpu-bind argument: gpu:foo\n", e.Stderr("sbatch")); diff != "" || e.Exit != 255 {
		t.Errorf("exit %d; stderr (-want +got):\n%s", e.Exit, diff)
	}
}
