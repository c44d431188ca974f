package stepd

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// TestJobEnvProperties: whatever sbatch's environment holds, the job's
// environment has each name once, describes this job and no other, and
// passes on what --export asks and nothing else.
func TestJobEnvProperties(t *testing.T) {
	names := []string{"PATH", "HOME", "FOO", "BAR", "SHELL", "SLURM_CONF", "SLURM_JOB_ID", "SLURM_NTASKS",
		"SLURM_ARRAY_TASK_ID", "SLURM_RESTART_COUNT", "CUDA_VISIBLE_DEVICES", "SLURM_RLIMIT_NOFILE", "SLURM_UMASK",
		"SLURM_EXPORT_ENV", "TMPDIR", "SLITE_BATCH_SIZE"}
	rapid.Check(t, func(t *rapid.T) {
		var submit []string
		for range rapid.IntRange(0, 12).Draw(t, "vars") {
			name := rapid.SampledFrom(names).Draw(t, "name")
			submit = append(submit, name+"="+rapid.StringMatching(`[a-z0-9/:=]{0,6}`).Draw(t, "value"))
		}
		s := recordedJob(rapid.Uint32Range(1, 1<<31).Draw(t, "job"))
		s.GPUs = rapid.SliceOfDistinct(rapid.IntRange(0, 7), func(i int) int { return i }).Draw(t, "gpus")
		s.RestartCount = rapid.IntRange(0, 3).Draw(t, "restarts")
		if rapid.Bool().Draw(t, "array") {
			arrayTask(s, s.JobID-1, rapid.IntRange(0, 9).Draw(t, "task"), []int{0, 9}, "0-9")
		}
		export := rapid.SampledFrom([]string{"", "ALL", "NONE", "PATH,FOO", "FOO=x,BAR", "ALL,BAR=y"}).Draw(t, "export")
		if export != "" {
			s.Options.Export = parseExport(t, export)
		}
		env := JobEnv(s, submit)

		seen := map[string]bool{}
		for _, kv := range env {
			name, _, ok := strings.Cut(kv, "=")
			if !ok || seen[name] {
				t.Fatalf("entry %q: malformed or repeated", kv)
			}
			seen[name] = true
		}
		if !slices.IsSortedFunc(env, func(a, b string) int {
			an, _, _ := strings.Cut(a, "=")
			bn, _, _ := strings.Cut(b, "=")
			return strings.Compare(an, bn)
		}) {
			t.Fatalf("not sorted by name: %q", env)
		}
		get := func(k string) string { v, _ := lookup(env, k); return v }
		if get("SLURM_JOB_ID") != strconv.FormatUint(uint64(s.JobID), 10) {
			t.Fatalf("SLURM_JOB_ID=%s for job %d", get("SLURM_JOB_ID"), s.JobID)
		}
		if _, ok := lookup(env, "CUDA_VISIBLE_DEVICES"); ok != (len(s.GPUs) > 0) {
			t.Fatalf("CUDA_VISIBLE_DEVICES set %v with GPUs %v", ok, s.GPUs)
		}
		if _, ok := lookup(env, "SLURM_RESTART_COUNT"); ok != (s.RestartCount > 0) {
			t.Fatalf("SLURM_RESTART_COUNT set %v after %d restarts", ok, s.RestartCount)
		}
		if _, ok := lookup(env, "SLURM_ARRAY_TASK_ID"); ok != s.isArray() {
			t.Fatalf("SLURM_ARRAY_TASK_ID set %v for array %v", ok, s.isArray())
		}
		for _, k := range []string{"SLURM_NTASKS", "SLURM_RLIMIT_NOFILE", "SLURM_UMASK", "SLITE_BATCH_SIZE"} {
			if _, ok := lookup(env, k); ok {
				t.Fatalf("%s passed on from sbatch's environment", k)
			}
		}
		// What --export lets through from sbatch's environment.
		passes := func(name string) bool {
			switch {
			case export == "" || export == "ALL" || strings.HasPrefix(export, "ALL,"):
				return true
			case strings.HasPrefix(name, "SLURM_"):
				return true
			}
			return slices.Contains(strings.Split(export, ","), name)
		}
		for _, name := range []string{"FOO", "BAR"} {
			v, inJob := lookup(env, name)
			given := strings.Contains(export, name+"=")
			if _, inSubmit := lookup(submit, name); inJob && !given && (!inSubmit || !passes(name)) {
				t.Fatalf("%s=%s in the job with --export=%q and sbatch's environment %q", name, v, export, submit)
			}
		}
	})
}

func parseExport(t *rapid.T, v string) *jobscript.Export {
	cl, err := jobscript.ParseCommandLine([]string{"--export=" + v, "x.sh"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\n"), Command: cl})
	if err != nil {
		t.Fatal(err)
	}
	return r.Export
}
