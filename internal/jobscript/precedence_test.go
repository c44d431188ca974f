package jobscript

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestPrecedence follows process_options_second_pass (src/sbatch/opt.c):
// script, then SBATCH_* variables, then the command line, each overriding
// the one before.
func TestPrecedence(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		script string
		check  func(*Request) any
		want   any
	}{
		{
			name:   "the environment overrides the script",
			env:    map[string]string{"SBATCH_PARTITION": "env"},
			script: "-p script",
			check:  func(r *Request) any { return r.Partition }, want: "env",
		},
		{
			name:   "the command line overrides the environment",
			args:   []string{"-p", "cli"},
			env:    map[string]string{"SBATCH_PARTITION": "env"},
			script: "-p script",
			check:  func(r *Request) any { return r.Partition }, want: "cli",
		},
		{
			name:  "SLURM_CLUSTERS and SBATCH_CLUSTERS: the later in sbatch's table wins",
			env:   map[string]string{"SBATCH_CLUSTERS": "a", "SLURM_CLUSTERS": "b"},
			check: func(r *Request) any { return r.Clusters }, want: "b",
		},
		{
			name:  "SBATCH_HINT comes after SLURM_HINT",
			env:   map[string]string{"SLURM_HINT": "a", "SBATCH_HINT": "b"},
			check: func(r *Request) any { v, _ := r.OtherValue("hint"); return v }, want: "b",
		},
		{
			name:  "SBATCH_MEM_PER_NODE is --mem",
			env:   map[string]string{"SBATCH_MEM_PER_NODE": "2G"},
			check: func(r *Request) any { return *r.MemPerNode }, want: uint64(2048),
		},
		{
			name:   "a script --mem silences SBATCH_MEM_PER_CPU (_validate_memory_options)",
			env:    map[string]string{"SBATCH_MEM_PER_CPU": "1G"},
			script: "--mem=8G",
			check:  func(r *Request) any { return []any{*r.MemPerNode, r.MemPerCPU == nil} }, want: []any{uint64(8192), true},
		},
		{
			name:  "a command-line --mem-per-gpu silences a --mem from the environment",
			args:  []string{"--mem-per-gpu=4G", "--gpus=1"},
			env:   map[string]string{"SBATCH_MEM_PER_NODE": "8G"},
			check: func(r *Request) any { return []any{r.MemPerNode == nil, *r.MemPerGPU} }, want: []any{true, uint64(4096)},
		},
		{
			name:  "SBATCH_DEBUG overrides -v on the command line (-v is read in the first pass)",
			args:  []string{"-vvv"},
			env:   map[string]string{"SBATCH_DEBUG": "1"},
			check: func(r *Request) any { return r.Verbose }, want: 1,
		},
		{
			name:  "SBATCH_DEBUG=0 resets verbosity",
			args:  []string{"-v"},
			env:   map[string]string{"SBATCH_DEBUG": "0"},
			check: func(r *Request) any { return r.Verbose }, want: 0,
		},
		{
			name:   "SBATCH_NO_REQUEUE overrides a script --requeue",
			env:    map[string]string{"SBATCH_NO_REQUEUE": "yes"},
			script: "--requeue",
			check:  func(r *Request) any { return *r.Requeue }, want: false,
		},
		{
			name:  "SBATCH_GET_USER_ENV empty is the option without a value",
			env:   map[string]string{"SBATCH_GET_USER_ENV": ""},
			check: func(r *Request) any { return *r.GetUserEnv }, want: GetUserEnv{},
		},
		{
			name:   "a command-line --gpu-mem overrides #SLITE",
			args:   []string{"--gpu-mem=2G"},
			script: "-p x\n#SLITE --gpu-mem=8G",
			check:  func(r *Request) any { return int64(r.GPUMem) }, want: int64(2 << 30),
		},
		{
			name:  "the job name from the environment beats the script's base name",
			env:   map[string]string{"SBATCH_JOB_NAME": "named"},
			check: func(r *Request) any { return r.JobName }, want: "named",
		},
		{
			name:   "the last of several directives wins, across lines",
			script: "-t 10\n#SBATCH -t 20\n#SBATCH --time=30",
			check:  func(r *Request) any { return r.TimeLimit.String() }, want: "30m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := "#!/bin/sh\n"
			if tt.script != "" {
				script += "#SBATCH " + tt.script + "\n"
			}
			r, err := run(append(tt.args, "job.sh"), script+"true\n", tt.env)
			if err != nil {
				t.Fatal(stderrOf(err))
			}
			if diff := cmp.Diff(tt.want, tt.check(r)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrecedenceProperty: for any choice of places that set --time, the
// result is the command line's value if given, else the environment's, else
// the last directive's.
func TestPrecedenceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nScript := rapid.IntRange(0, 3).Draw(t, "directives")
		inEnv := rapid.Bool().Draw(t, "env")
		nCLI := rapid.IntRange(0, 2).Draw(t, "command line")
		minutes := 1
		next := func() string { minutes++; return strconv.Itoa(minutes) }
		want := 0
		script := "#!/bin/sh\n"
		for range nScript {
			v := next()
			script += "#SBATCH --time=" + v + "\n"
			want = minutes
		}
		env := map[string]string{}
		if inEnv {
			env["SBATCH_TIMELIMIT"] = next()
			want = minutes
		}
		var args []string
		for range nCLI {
			args = append(args, "-t", next())
			want = minutes
		}
		r, err := run(append(args, "job.sh"), script+"true\n", env)
		if err != nil {
			t.Fatal(stderrOf(err))
		}
		got := int(r.TimeLimit.Duration().Minutes())
		if got != want {
			t.Fatalf("time limit %d min, want %d (script %d, env %v, cli %d)", got, want, nScript, inEnv, nCLI)
		}
	})
}
