package stepd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

const goldenDir = "../../../shared/golden"

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if os.IsNotExist(err) {
		b, err = os.ReadFile(filepath.Join("/work/shared/golden", name))
	}
	if err != nil {
		t.Skipf("golden file %s not available: %v", name, err)
	}
	return string(b)
}

// goldenEnvs returns the "env | sort" sections of a recorded job, in order.
func goldenEnvs(text string) [][]string {
	var out [][]string
	var cur []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "--- ") {
			if in {
				out = append(out, cur)
			}
			in, cur = line == "--- env | sort ---", nil
			continue
		}
		if in && line != "" {
			cur = append(cur, line)
		}
	}
	if in {
		out = append(out, cur)
	}
	return out
}

// goldenSubmitEnv is the environment the recording gave sbatch: the
// "env -i NAME=value ..." of its command line.
func goldenSubmitEnv(text string) []string {
	first, _, _ := strings.Cut(text, "\n")
	var env []string
	for _, w := range strings.Fields(first)[3:] {
		if !strings.Contains(w, "=") {
			break
		}
		env = append(env, w)
	}
	return env
}

// recordedJob is a job as the recording's cluster ran it (golden/README.md:
// cluster anchor, node gpu01 on host vm, account lab, partition gpu, QOS
// normal, DefMemPerCPU=1000, one CPU per job), submitted by root from
// /srv/slurm/work/root/g.
func recordedJob(id uint32) *Spec {
	return &Spec{
		JobID:       id,
		Name:        "envdump",
		Partition:   "gpu",
		Account:     "lab",
		QOS:         "normal",
		User:        Credential{Name: "root", Home: "/root", Shell: "/bin/bash"},
		WorkDir:     "/srv/slurm/work/root/g",
		SubmitDir:   "/srv/slurm/work/root/g",
		SubmitHost:  "vm",
		NodeName:    "gpu01",
		ClusterName: "anchor",
		Options:     Options{MemPerCPU: 1000},
	}
}

// Variables of the recordings that JobEnv does not make: bash's own (PWD,
// SHLVL, _), the task's pid (the launcher's), and SLURM_WORKING_CLUSTER,
// which names a controller's address and port that slurm-lite does not
// have (see doc.go).
var notJobEnv = []string{"PWD", "SHLVL", "_", "SLURM_TASK_PID", "SLURM_WORKING_CLUSTER"}

// ours are the variables slurm-lite adds to every job.
var ours = []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID"}

func TestJobEnvMatchesRecordedJobs(t *testing.T) {
	tests := []struct {
		name   string
		golden string
		specs  []*Spec // one per env section
	}{
		{"a job without GPUs", "job_env_nogpu.txt", []*Spec{recordedJob(36)}},
		{"a job with --gpus=2 given GPUs 0 and 1", "job_env_gpus2.txt", []*Spec{
			with(recordedJob(35), func(s *Spec) { s.GPUs, s.Options.GPUs = []int{0, 1}, "2" }),
		}},
		{"a job with --gres=gpu:a100:1 given GPU 2 has no SLURM_GPUS", "job_env_gres_a100_1.txt", []*Spec{
			with(recordedJob(37), func(s *Spec) { s.GPUs = []int{2} }),
		}},
		{"the tasks of --array=0-1 --gpus=1", "job_env_array.txt", []*Spec{
			with(recordedJob(45), func(s *Spec) { arrayTask(s, 44, 0, []int{0, 1}, "0-1"); s.GPUs, s.Options.GPUs = []int{0}, "1" }),
			with(recordedJob(44), func(s *Spec) { arrayTask(s, 44, 1, []int{0, 1}, "0-1"); s.GPUs, s.Options.GPUs = []int{1}, "1" }),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := readGolden(t, tc.golden)
			envs := goldenEnvs(text)
			if len(envs) != len(tc.specs) {
				t.Fatalf("%s has %d environments, the test %d", tc.golden, len(envs), len(tc.specs))
			}
			for i, spec := range tc.specs {
				var want []string
				for _, kv := range envs[i] {
					name, _, _ := strings.Cut(kv, "=")
					if !slices.Contains(notJobEnv, name) {
						want = append(want, kv)
					}
				}
				want = append(want, ours...)
				slices.Sort(want)
				got := JobEnv(spec, goldenSubmitEnv(text))
				slices.Sort(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("job %d's environment (-want +got):\n%s", spec.JobID, diff)
				}
			}
		})
	}
}

func with(s *Spec, f func(*Spec)) *Spec {
	f(s)
	return s
}

// arrayTask makes s task id of array job arrayJob with the given tasks.
func arrayTask(s *Spec, arrayJob uint32, id int, tasks []int, spec string) {
	s.ArrayJobID, s.ArrayTaskID = arrayJob, id
	s.ArrayTaskCount, s.ArrayTaskMin, s.ArrayTaskMax = len(tasks), slices.Min(tasks), slices.Max(tasks)
	s.ArrayTaskStep = max(1, arrayStep(spec))
}

func arrayStep(spec string) int {
	_, step, ok := strings.Cut(spec, ":")
	if !ok {
		return 1
	}
	n := 0
	for _, c := range step {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// parseJob reads a recorded submission with jobscript, as sbatch would.
func parseJob(t *testing.T, script string, args ...string) *jobscript.Request {
	t.Helper()
	cl, err := jobscript.ParseCommandLine(args)
	if err != nil {
		t.Fatal(err)
	}
	r, err := jobscript.Parse(jobscript.Input{Script: []byte(script), Command: cl})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func envValue(env []string, name string) string {
	v, ok := lookup(env, name)
	if !ok {
		return "unset"
	}
	return v
}

// TestJobEnvExport checks the recorded --export cases: NONE gives the
// login environment and only sbatch's SLURM_* variables; a list gives the
// listed variables (golden/job_ood_stdin_export_none.txt,
// job_batchspawner_export_list_get_user_env.txt).
func TestJobEnvExport(t *testing.T) {
	sbatchPath := "/usr/local/bin:/usr/bin:/bin:/opt/from-sbatch-env"
	submitEnv := []string{"FOO=bar", "BAR=baz", "PATH=" + sbatchPath, "HOME=/root", "USER=root", "SLURM_CONF=/srv/slurm/etc/slurm.conf"}
	tests := []struct {
		name   string
		script string
		args   []string
		// FOO, BAR, SLURM_EXPORT_ENV, HOME, USER, SHELL, PATH, SLURM_CONF
		want []string
	}{
		{
			name:   "--export NONE gets the login environment and sbatch's SLURM_ variables",
			script: "#!/bin/bash\necho ood\n",
			args:   []string{"-J", "ood_job", "--export", "NONE", "ood.sh"},
			want:   []string{"unset", "unset", "NONE", "/root", "root", "/bin/bash", loginPathRoot, "/srv/slurm/etc/slurm.conf"},
		},
		{
			name:   "--export=PATH,FOO passes those two over the login environment",
			script: "#!/bin/bash\n#SBATCH --export=PATH,FOO\n#SBATCH --get-user-env=L\necho spawner\n",
			args:   []string{"spawner.sh"},
			want:   []string{"bar", "unset", "PATH,FOO", "/root", "root", "/bin/bash", sbatchPath, "/srv/slurm/etc/slurm.conf"},
		},
		{
			name:   "--export=ALL,BAR=qux passes everything, BAR changed",
			script: "#!/bin/bash\necho all\n",
			args:   []string{"--export=ALL,BAR=qux", "all.sh"},
			want:   []string{"bar", "qux", "ALL,BAR=qux", "/root", "root", "/bin/bash", sbatchPath, "/srv/slurm/etc/slurm.conf"},
		},
		{
			name:   "the default (ALL) passes sbatch's environment, SHELL not added, no SLURM_EXPORT_ENV",
			script: "#!/bin/bash\necho default\n",
			args:   []string{"default.sh"},
			want:   []string{"bar", "baz", "unset", "/root", "root", "unset", sbatchPath, "/srv/slurm/etc/slurm.conf"},
		},
		{
			name:   "--export=ALL is the default, without SLURM_EXPORT_ENV",
			script: "#!/bin/bash\necho default\n",
			args:   []string{"--export=all", "default.sh"},
			want:   []string{"bar", "baz", "unset", "/root", "root", "unset", sbatchPath, "/srv/slurm/etc/slurm.conf"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parseJob(t, tc.script, tc.args...)
			s := recordedJob(26397)
			s.Options.Export = r.Export
			env := JobEnv(s, submitEnv)
			var got []string
			for _, k := range []string{"FOO", "BAR", "SLURM_EXPORT_ENV", "HOME", "USER", "SHELL", "PATH", "SLURM_CONF"} {
				got = append(got, envValue(env, k))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FOO, BAR, SLURM_EXPORT_ENV, HOME, USER, SHELL, PATH, SLURM_CONF (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJobEnvVariables checks the variables that depend on the request.
func TestJobEnvVariables(t *testing.T) {
	names := []string{
		"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_TASKS_PER_NODE", "SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_TASK",
		"SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_RESTART_COUNT", "SLURM_ARRAY_TASK_STEP",
		"SLURM_LITE_CONF", "SLITE_CHECKPOINT_DIR", "SLITE_BATCH_SIZE", "SLURM_SHARDS_ON_NODE",
		"CUDA_VISIBLE_DEVICES", "SLURM_OPEN_MODE", "SLURM_JOB_DEPENDENCY", "SLURM_JOB_UID", "TMPDIR",
		"SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME",
	}
	tests := []struct {
		name      string
		spec      func(*Spec)
		submitEnv []string
		want      map[string]string // the others are unset
	}{
		{
			name: "-n 4 -c 2 on 8 CPUs with --mem=16G",
			spec: func(s *Spec) {
				s.CPUs = []int{0, 1, 2, 3, 4, 5, 6, 7}
				s.Options.NTasks, s.Options.NTasksSet, s.Options.CPUsPerTask = 4, true, 2
				s.Options.MemPerCPU, s.Options.MemPerNode = 0, 16384
			},
			want: map[string]string{"SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_TASKS_PER_NODE": "4",
				"SLURM_CPUS_ON_NODE": "8", "SLURM_CPUS_PER_TASK": "2", "SLURM_MEM_PER_NODE": "16384"},
		},
		{
			name: "without -n, as many tasks as CPUs per task fit: 16 CPUs, -c 4",
			spec: func(s *Spec) { s.CPUsOnNode, s.Options.CPUsPerTask = 16, 4 },
			want: map[string]string{"SLURM_TASKS_PER_NODE": "4", "SLURM_CPUS_ON_NODE": "16", "SLURM_CPUS_PER_TASK": "4"},
		},
		{
			name: "a requeued job has SLURM_RESTART_COUNT",
			spec: func(s *Spec) { s.RestartCount = 2 },
			want: map[string]string{"SLURM_RESTART_COUNT": "2"},
		},
		{
			name: "the first run has none, even if sbatch ran inside a restarted job",
			spec: func(s *Spec) {},
			submitEnv: []string{"SLURM_RESTART_COUNT=3", "SLURM_NTASKS=9", "CUDA_VISIBLE_DEVICES=3",
				"SLURM_ARRAY_TASK_STEP=2", "TMPDIR=/scratch"},
			want: map[string]string{"TMPDIR": "/scratch"},
		},
		{
			name: "the recorded start and the limit's end, in whole seconds (Slurm 23.02's names)",
			spec: func(s *Spec) { s.Start, s.TimeLimit = time.Unix(1764500000, 900e6), 90*time.Minute },
			want: map[string]string{"SLURM_JOB_START_TIME": "1764500000", "SLURM_JOB_END_TIME": "1764505400"},
		},
		{
			name: "no limit: a start and no end",
			spec: func(s *Spec) { s.Start, s.TimeLimit = time.Unix(1764500000, 0), slurmsyntax.Infinite },
			want: map[string]string{"SLURM_JOB_START_TIME": "1764500000"},
		},
		{
			name: "an array with a step",
			spec: func(s *Spec) { arrayTask(s, 7, 4, []int{0, 4, 8}, "0-8:4") },
			want: map[string]string{"SLURM_ARRAY_TASK_STEP": "4"},
		},
		{
			name: "slurm-lite's own, shards, open mode, dependency, another user",
			spec: func(s *Spec) {
				s.ConfPath, s.CheckpointDir, s.BatchSize = "/etc/slurm-lite/slurm-lite.toml", "/ckpt/job9", 64
				s.GPUs, s.Shards = []int{3}, 10
				s.Options.OpenMode, s.Options.Dependency = "append", "afterok:5"
				s.User.UID = 1001
			},
			want: map[string]string{"SLURM_LITE_CONF": "/etc/slurm-lite/slurm-lite.toml", "SLITE_CHECKPOINT_DIR": "/ckpt/job9",
				"SLITE_BATCH_SIZE": "64", "SLURM_SHARDS_ON_NODE": "10", "CUDA_VISIBLE_DEVICES": "3",
				"SLURM_OPEN_MODE": "a", "SLURM_JOB_DEPENDENCY": "afterok:5", "SLURM_JOB_UID": "1001"},
		},
	}
	defaults := map[string]string{"SLURM_TASKS_PER_NODE": "1", "SLURM_CPUS_ON_NODE": "1", "SLURM_MEM_PER_CPU": "1000",
		"SLURM_JOB_UID": "0", "TMPDIR": "/tmp"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := recordedJob(9)
			tc.spec(s)
			env := JobEnv(s, tc.submitEnv)
			want, got := map[string]string{}, map[string]string{}
			for _, k := range names {
				if v, ok := tc.want[k]; ok {
					want[k] = v
				} else if v, ok := defaults[k]; ok && !(k == "SLURM_MEM_PER_CPU" && s.Options.MemPerNode > 0) {
					want[k] = v
				}
				if v, ok := lookup(env, k); ok {
					got[k] = v
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestJobEnvLeavesInputsAlone(t *testing.T) {
	s := recordedJob(3)
	s.Options.Export = &jobscript.Export{Spec: "PATH,FOO", Vars: []jobscript.ExportVar{{Name: "PATH"}, {Name: "FOO"}}}
	env := []string{"PATH=/bin", "FOO=1", "SLURM_JOB_ID=2"}
	before := slices.Clone(env)
	spec := *s
	first := JobEnv(s, env)
	if diff := cmp.Diff(before, env); diff != "" {
		t.Errorf("JobEnv changed the submit environment (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(spec, *s); diff != "" {
		t.Errorf("JobEnv changed the spec (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(first, JobEnv(s, env)); diff != "" {
		t.Errorf("JobEnv is not deterministic (-first +second):\n%s", diff)
	}
}
