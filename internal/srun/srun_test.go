package srun

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// fakeIO is an IO over buffers and a fixed environment.
func fakeIO(env map[string]string) (cli.IO, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return cli.IO{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Now:    func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) },
	}, &out, &errb
}

func TestParseSrun(t *testing.T) {
	type got struct {
		Req     api.StepRequest
		JobID   uint32
		Label   bool
		Output  string
		Command []string
		Alloc   []jobscript.Setting
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want got
	}{
		{"the golden -n2 -l in a job", map[string]string{"SLURM_JOB_ID": "12"}, []string{"-n2", "-l", "echo", "hi"},
			got{Req: api.StepRequest{JobID: 12, NTasks: 2, GPUs: -1, Name: "echo"}, JobID: 12, Label: true, Command: []string{"echo", "hi"},
				Alloc: []jobscript.Setting{{Name: "ntasks", Value: "2", HasValue: true}}}},
		{"SLURM_NTASKS gives the default task count; the command line wins",
			map[string]string{"SLURM_JOB_ID": "3", "SLURM_NTASKS": "4"}, []string{"hostname"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 4, GPUs: -1, Name: "hostname"}, JobID: 3, Command: []string{"hostname"}}},
		{"--ntasks-per-node without -n runs that many tasks (submitit)",
			map[string]string{"SLURM_JOB_ID": "3", "SLURM_NTASKS_PER_NODE": "2"}, []string{"-o", "%j_%t.out", "bash", "-c", "x"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 2, GPUs: -1, Name: "bash"}, JobID: 3, Output: "%j_%t.out", Command: []string{"bash", "-c", "x"}}},
		{"-c on the command line implies --exact; without -n the daemon fits tasks",
			map[string]string{"SLURM_JOB_ID": "3"}, []string{"-c", "2", "a.out"},
			got{Req: api.StepRequest{JobID: 3, CPUsPerTask: 2, Exact: true, GPUs: -1, Name: "a.out"}, JobID: 3, Command: []string{"a.out"},
				Alloc: []jobscript.Setting{{Name: "cpus-per-task", Value: "2", HasValue: true}}}},
		{"SLURM_MEM_PER_CPU from the job does not make steps exact",
			map[string]string{"SLURM_JOB_ID": "3", "SLURM_MEM_PER_CPU": "1000"}, []string{"true"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 1, GPUs: -1, Name: "true"}, JobID: 3, Command: []string{"true"}}},
		{"--mem and --gpus ask the step for them; -J names it",
			map[string]string{"SLURM_JOB_ID": "3"}, []string{"--mem=2G", "--gpus=a100:1", "-J", "train", "--overlap", "python", "t.py"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 1, MemMB: 2048, GPUs: -1, Exact: true, Overlap: true, Name: "train",
				GPUSpec: &jobscript.GPUSpec{PerJob: []jobscript.Gres{{Name: "gpu", Type: "a100", Count: 1}}}}, JobID: 3,
				Command: []string{"python", "t.py"}, Alloc: []jobscript.Setting{{Name: "mem", Value: "2G", HasValue: true},
					{Name: "gpus", Value: "a100:1", HasValue: true}, {Name: "job-name", Value: "train", HasValue: true}}}},
		{"options after the command are the command's", nil, []string{"-t", "10", "cmd", "-n", "3"},
			got{Req: api.StepRequest{NTasks: 1, GPUs: -1, Name: "cmd"}, Command: []string{"cmd", "-n", "3"},
				Alloc: []jobscript.Setting{{Name: "time", Value: "10", HasValue: true}}}},
		{"--gres asks per node, other GRES with the GPUs", map[string]string{"SLURM_JOB_ID": "3"}, []string{"--gres=gpu:a100:2,shard:4", "x"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 1, GPUs: -1, Name: "x",
				GPUSpec: &jobscript.GPUSpec{PerNode: []jobscript.Gres{{Name: "gpu", Type: "a100", Count: 2}, {Name: "shard", Count: 4}}}},
				JobID: 3, Command: []string{"x"}, Alloc: []jobscript.Setting{{Name: "gres", Value: "gpu:a100:2,shard:4", HasValue: true}}}},
		{"the batch script's SLURM_GPUS_PER_* are the step's own request; the command line wins",
			map[string]string{"SLURM_JOB_ID": "3", "SLURM_GPUS_PER_NODE": "1", "SLURM_GPUS_PER_TASK": "2", "SLURM_GPUS": "4"},
			[]string{"--gpus=3", "x"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 1, GPUs: -1, Name: "x", GPUSpec: &jobscript.GPUSpec{
				PerJob:  []jobscript.Gres{{Name: "gpu", Count: 3}},
				PerNode: []jobscript.Gres{{Name: "gpu", Count: 1}},
				PerTask: []jobscript.Gres{{Name: "gpu", Count: 2}}}},
				JobID: 3, Command: []string{"x"}, Alloc: []jobscript.Setting{{Name: "gpus", Value: "3", HasValue: true}}}},
		{"--gres=none asks for no GPU, whatever else is inherited",
			map[string]string{"SLURM_JOB_ID": "3", "SLURM_GPUS": "2"}, []string{"--gres=none", "x"},
			got{Req: api.StepRequest{JobID: 3, NTasks: 1, GPUs: -1, Name: "x", GPUSpec: &jobscript.GPUSpec{}},
				JobID: 3, Command: []string{"x"}, Alloc: []jobscript.Setting{{Name: "gres", Value: "none", HasValue: true}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sio, _, errb := fakeIO(tt.env)
			o, code, done := parseSrun(tt.args, sio)
			if done {
				t.Fatalf("parseSrun stopped with %d: %s", code, errb)
			}
			g := got{Req: stepRequest(o, false, nil), JobID: o.jobID, Label: o.label, Output: o.output, Command: o.command, Alloc: o.allocSettings}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("parseSrun (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSrunRefusals(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"an unknown option, as getopt and srun say it", []string{"--foo"}, 255,
			"srun: unrecognized option '--foo'\nTry \"srun --help\" for more information\n"},
		{"an ambiguous prefix lists srun's candidates, cpu_bind folded into cpu-bind", []string{"--cpu", "x"}, 255,
			"srun: option '--cpu' is ambiguous; possibilities: '--cpu-bind' '--cpu-freq' '--cpus-per-gpu' '--cpus-per-task'\nTry \"srun --help\" for more information\n"},
		{"a task count that is not a number", []string{"-n", "abc", "true"}, 1,
			"srun: error: Invalid numeric value \"abc\" for --ntasks.\n"},
		{"zero tasks", []string{"-n", "0", "true"}, 1,
			"srun: error: Invalid numeric value \"0\" for --ntasks.\n"},
		{"a job id that is not a number", []string{"--jobid=abc", "true"}, 1,
			"srun: error: Invalid numeric value \"abc\" for --jobid.\n"},
		{"a bad time limit exits 255", []string{"-t", "bad", "true"}, 255,
			"srun: error: Invalid --time specification\n"},
		{"a GPU count that does not parse", []string{"--gpus-per-task=a100:x", "true"}, 1,
			"srun: error: Invalid generic resource (gres) specification\n"},
		{"a --gpu-bind Slurm does not know exits 255", []string{"--gpu-bind=foo", "true"}, 255,
			"srun: error: Invalid --gpu-bind argument: gpu:foo\n"},
		{"a map_gpu with a letter, as tres_bind_verify_cmdline says it", []string{"--gpu-bind=map_gpu:0,x1", "true"}, 255,
			"srun: error: Failed to validate x1, offending character is x\nsrun: error: Invalid --gpu-bind argument: gpu:map_gpu:0,x1\n"},
		{"a flag given a value", []string{"--label=3", "true"}, 255,
			"srun: option '--label' doesn't allow an argument\nTry \"srun --help\" for more information\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sio, _, errb := fakeIO(nil)
			_, code, done := parseSrun(tt.args, sio)
			if !done {
				t.Fatalf("parseSrun accepted %q", tt.args)
			}
			if diff := cmp.Diff(tt.wantStderr, errb.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
		})
	}
}

func TestSrunWithoutCommand(t *testing.T) {
	sio, _, errb := fakeIO(map[string]string{"SLURM_JOB_ID": "3"})
	if code := Main([]string{"-l"}, sio); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if diff := cmp.Diff("srun: fatal: No command given to execute.\n", errb.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

func TestSrunCPUBind(t *testing.T) {
	sio, _, errb := fakeIO(map[string]string{"SLURM_JOB_ID": "3"})
	if code := Main([]string{"--cpu-bind=foo", "true"}, sio); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	want := "srun: cluster configuration lacks support for cpu binding\n" +
		"srun: error: unrecognized --cpu-bind argument \"foo\"\n" +
		"srun: fatal: Failed to parse --cpu-bind= values.\n"
	if diff := cmp.Diff(want, errb.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}

func TestTaskEnv(t *testing.T) {
	base := []string{"PATH=/bin", "SLURM_JOB_ID=7", "SLURM_NTASKS=4", "SLURM_TASK_PID=99", "CUDA_VISIBLE_DEVICES=0,1",
		"SLURM_JOB_NAME=train", "SLURMD_NODENAME=gpu01", "SLURM_NODELIST=gpu01", "SLURM_JOB_NODELIST=gpu01"}
	s := stepInfo{jobID: 7, stepID: 2, ntasks: 2, node: "gpu01", cpus: 3, gpus: []int{1}, jobHasGPUs: true, umask: 0o22}
	got := taskEnv(base, "", s, 1)
	want := []string{
		"CUDA_VISIBLE_DEVICES=1", "GPU_DEVICE_ORDINAL=1", "PATH=/bin", "ROCR_VISIBLE_DEVICES=1",
		"SLURMD_NODENAME=gpu01", "SLURM_CPUS_ON_NODE=3", "SLURM_DISTRIBUTION=block",
		"SLURM_GPUS_ON_NODE=1", "SLURM_GTIDS=0,1", "SLURM_JOB_ID=7", "SLURM_JOB_NAME=train", "SLURM_JOB_NODELIST=gpu01",
		"SLURM_LOCALID=1", "SLURM_NODEID=0", "SLURM_NODELIST=gpu01", "SLURM_NPROCS=2", "SLURM_NTASKS=2", "SLURM_PROCID=1",
		"SLURM_STEPID=2", "SLURM_STEP_GPUS=1", "SLURM_STEP_ID=2", "SLURM_STEP_NODELIST=gpu01", "SLURM_STEP_NUM_NODES=1",
		"SLURM_STEP_NUM_TASKS=2", "SLURM_STEP_TASKS_PER_NODE=2", "SLURM_TASKS_PER_NODE=2", "SLURM_UMASK=0022",
		"ZE_AFFINITY_MASK=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("taskEnv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PATH=/bin", "SLURM_JOB_ID=7", "SLURM_NTASKS=4", "SLURM_TASK_PID=99", "CUDA_VISIBLE_DEVICES=0,1",
		"SLURM_JOB_NAME=train", "SLURMD_NODENAME=gpu01", "SLURM_NODELIST=gpu01", "SLURM_JOB_NODELIST=gpu01"}, base); diff != "" {
		t.Errorf("taskEnv changed its base (-before +after):\n%s", diff)
	}
}

func TestTaskEnvGPUs(t *testing.T) {
	tests := []struct {
		name string
		s    stepInfo
		want string // CUDA_VISIBLE_DEVICES, "unset" when absent
	}{
		{"a step without GPUs in a GPU job sees none", stepInfo{ntasks: 1, jobHasGPUs: true}, ""},
		{"a job without GPUs sets nothing", stepInfo{ntasks: 1}, "unset"},
		{"a step's GPUs as physical indices", stepInfo{ntasks: 1, gpus: []int{2, 3}, jobHasGPUs: true}, "2,3"},
		{"per_task:1 binds task 0 to the step's first GPU", stepInfo{ntasks: 2, gpus: []int{2, 3}, jobHasGPUs: true, tresBind: "gpu:per_task:1"}, "2"},
		{"closest binds to all of the step's", stepInfo{ntasks: 2, gpus: []int{2, 3}, jobHasGPUs: true, tresBind: "gpu:closest"}, "2,3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := "unset"
			for _, kv := range taskEnv([]string{"PATH=/bin"}, "", tt.s, 0) {
				if v, ok := strings.CutPrefix(kv, "CUDA_VISIBLE_DEVICES="); ok {
					got = v
				}
			}
			if got != tt.want {
				t.Errorf("CUDA_VISIBLE_DEVICES %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTaskEnvBinding: each task of a step bound per task sees its own GPU
// in every GPU variable, SLURM_GPUS_ON_NODE counts the step's, and
// SLURMD_TRES_BIND says the binding (testdata/gpuenv/gpus_per_task_1_n2.txt).
func TestTaskEnvBinding(t *testing.T) {
	s := stepInfo{ntasks: 2, gpus: []int{0, 1}, jobHasGPUs: true, nodeGPUs: 4, tresBind: "gpu:per_task:1"}
	for task, want := range []string{"0", "1"} {
		env := map[string]string{}
		for _, kv := range taskEnv([]string{"SLURMD_TRES_BIND=gpu:old", "SLURM_JOB_GPUS=0,1"}, "", s, task) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		for _, k := range []string{"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "SLURM_STEP_GPUS"} {
			if env[k] != want {
				t.Errorf("task %d: %s=%q, want %q", task, k, env[k], want)
			}
		}
		if env["SLURM_GPUS_ON_NODE"] != "2" || env["SLURMD_TRES_BIND"] != "gpu:per_task:1" || env["SLURM_JOB_GPUS"] != "0,1" {
			t.Errorf("task %d: SLURM_GPUS_ON_NODE=%q SLURMD_TRES_BIND=%q SLURM_JOB_GPUS=%q, want 2, gpu:per_task:1, 0,1",
				task, env["SLURM_GPUS_ON_NODE"], env["SLURMD_TRES_BIND"], env["SLURM_JOB_GPUS"])
		}
	}
	// Without a binding, an inherited SLURMD_TRES_BIND is not the step's.
	for _, kv := range taskEnv([]string{"SLURMD_TRES_BIND=gpu:old"}, "", stepInfo{ntasks: 1}, 0) {
		if strings.HasPrefix(kv, "SLURMD_TRES_BIND=") {
			t.Errorf("a step without binding has %s", kv)
		}
	}
}

func TestExportFilter(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "SLURM_JOB_ID=3", "TOKEN=x"}
	tests := []struct {
		name, export string
		want         []string
	}{
		{"ALL keeps everything", "ALL", env},
		{"NONE keeps SLURM_* alone", "NONE", []string{"SLURM_JOB_ID=3"}},
		{"a list keeps its names and SLURM_*, and sets values", "PATH,FOO=bar", []string{"PATH=/bin", "SLURM_JOB_ID=3", "FOO=bar"}},
		{"ALL in a list keeps everything and adds", "ALL,FOO=bar", append(append([]string(nil), env...), "FOO=bar")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, exportFilter(env, tt.export)); diff != "" {
				t.Errorf("exportFilter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseIO(t *testing.T) {
	tests := []struct {
		name, v string
		want    ioSpec
	}{
		{"nothing is all", "", ioSpec{kind: ioAll}},
		{"all", "all", ioSpec{kind: ioAll}},
		{"none", "none", ioSpec{kind: ioNone}},
		{"a task number below the count", "1", ioSpec{kind: ioOne, task: 1}},
		{"a number past the tasks is a file name", "5", ioSpec{kind: ioFile, pattern: "5"}},
		{"a pattern", "out-%t.log", ioSpec{kind: ioFile, pattern: "out-%t.log"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseIO(tt.v, 2), cmp.AllowUnexported(ioSpec{})); diff != "" {
				t.Errorf("parseIO(%q) (-want +got):\n%s", tt.v, diff)
			}
		})
	}
}

func TestExpandFileName(t *testing.T) {
	f := fileFields{step: stepInfo{jobID: 128, stepID: 0, node: "gpu01", user: "alice"}, envJobName: "train"}
	tests := []struct {
		name, pattern string
		task          int
		want          string
	}{
		{"the man page's %J", "job%J.out", 0, "job128.0.out"},
		{"a width pads with zeros", "job%4j.out", 0, "job0128.out"},
		{"a task number, padded", "job%j-%2t.out", 1, "job128-01.out"},
		{"submitit's pattern", "sit/%j_%t_log.out", 1, "sit/128_1_log.out"},
		{"node, user, name, step and a percent sign", "%N-%u-%x-%s-%%", 0, "gpu01-alice-train-0-%"},
		{"no array: %A is the job, %a is NO_VAL", "%A_%a", 0, "128_4294967294"},
		{"a backslash turns expansion off", `a\%j`, 0, "a%j"},
		{"an unknown field stays", "%q%", 0, "%q%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.expand(tt.pattern, tt.task); got != tt.want {
				t.Errorf("expand(%q, %d) = %q, want %q", tt.pattern, tt.task, got, tt.want)
			}
		})
	}
}

func TestLabelLines(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"each line labelled", "a\nb\n", "0: a\n0: b\n"},
		{"a last line without newline gets one", "a\nb", "0: a\n0: b\n"},
		{"nothing in, nothing out", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var mu sync.Mutex
			if err := labelLines(strings.NewReader(tt.in), &out, &mu, "0: "); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("labelLines (-want +got):\n%s", diff)
			}
		})
	}
	for n, want := range map[int]int{1: 1, 10: 1, 11: 2, 101: 3} {
		if got := labelWidth(n); got != want {
			t.Errorf("labelWidth(%d) = %d, want %d", n, got, want)
		}
	}
}

// exited and signalled are wait statuses.
func exited(code int) syscall.WaitStatus              { return syscall.WaitStatus(code << 8) }
func signalled(sig syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(sig) }

func TestExitReports(t *testing.T) {
	tests := []struct {
		name     string
		exits    []taskExit
		quiet    bool
		want     []string
		wantExit int
	}{
		{"tasks that fail alike share a line",
			[]taskExit{{task: 1, ws: exited(3)}, {task: 0, ws: exited(3)}}, false,
			[]string{"srun: error: gpu01: tasks 0-1: Exited with exit code 3"}, 3},
		{"different codes get a line each; the highest is srun's",
			[]taskExit{{task: 0, ws: exited(2)}, {task: 1, ws: exited(3)}}, false,
			[]string{"srun: error: gpu01: task 0: Exited with exit code 2", "srun: error: gpu01: task 1: Exited with exit code 3"}, 3},
		{"a signal beats an exit code and shows as 128 plus it",
			[]taskExit{{task: 0, ws: exited(5)}, {task: 1, ws: signalled(syscall.SIGKILL)}}, false,
			[]string{"srun: error: gpu01: task 0: Exited with exit code 5", "srun: error: gpu01: task 1: Killed"}, 137},
		{"deaths srun caused are not reported", []taskExit{{task: 0, ws: signalled(syscall.SIGKILL)}}, true, nil, 137},
		{"clean exits say nothing", []taskExit{{task: 0, ws: exited(0)}, {task: 2, ws: exited(0)}}, false, nil, 0},
		{"task ranges as Slurm prints them",
			[]taskExit{{task: 0, ws: exited(1)}, {task: 1, ws: exited(1)}, {task: 2, ws: exited(1)}, {task: 5, ws: exited(1)}}, false,
			[]string{"srun: error: gpu01: tasks 0-2,5: Exited with exit code 1"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			var rc syscall.WaitStatus
			for _, g := range groupExits(tt.exits) {
				if l := exitLine("gpu01", g, tt.quiet); l != "" {
					lines = append(lines, l)
				}
				rc = worse(rc, g.ws)
			}
			if diff := cmp.Diff(tt.want, lines); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if got := exitStatus(rc); got != tt.wantExit {
				t.Errorf("srun exits %d, want %d", got, tt.wantExit)
			}
		})
	}
}

func TestStepState(t *testing.T) {
	tests := []struct {
		name string
		ws   syscall.WaitStatus
		want string
	}{
		{"all exited 0", exited(0), "COMPLETED 0:0"},
		{"an exit code", exited(3), "FAILED 3:0"},
		{"killed", signalled(syscall.SIGKILL), "CANCELLED 0:9"},
		{"terminated", signalled(syscall.SIGTERM), "CANCELLED 0:15"},
		{"a crash", signalled(syscall.SIGSEGV), "FAILED 0:11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(stepState(tt.ws)) + " " + exitCodeOf(tt.ws).String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTaskEnvShowsOnlyTheStepsGPUs: whatever the step's GPUs and its
// binding (any --gpu-bind srun takes, or none), a task's GPU variables
// name only GPUs of its step, and at least one of them when the step has
// any.
func TestTaskEnvShowsOnlyTheStepsGPUs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ngpu := rapid.IntRange(1, 8).Draw(t, "node-gpus")
		var gpus []int
		for g := range ngpu {
			if rapid.Bool().Draw(t, "in-step") {
				gpus = append(gpus, g)
			}
		}
		bind := rapid.SampledFrom([]string{"", "closest", "none", "single:1", "single:3", "per_task:1", "per_task:2",
			"map_gpu:0,1*2,3", "map_gpu:7", "mask_gpu:0x3,0xc", "mask_gpu:0xff", "verbose,per_task:1"}).Draw(t, "bind")
		s := stepInfo{ntasks: rapid.IntRange(1, 6).Draw(t, "tasks"), gpus: gpus, jobHasGPUs: true, nodeGPUs: ngpu,
			tresBind: jobscript.TresBind(bind, "")}
		for task := range s.ntasks {
			for _, kv := range taskEnv([]string{"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"}, "", s, task) {
				k, v, _ := strings.Cut(kv, "=")
				if !slices.Contains(gpuVars, k) {
					continue
				}
				if v == "" && len(gpus) > 0 {
					t.Fatalf("step GPUs %v, binding %q: task %d has %s empty", gpus, bind, task, k)
				}
				for _, id := range strings.Split(v, ",") {
					if n, err := strconv.Atoi(id); v != "" && (err != nil || !slices.Contains(gpus, n)) {
						t.Fatalf("step GPUs %v, binding %q: task %d has %s=%s", gpus, bind, task, k, v)
					}
				}
			}
		}
	})
}
