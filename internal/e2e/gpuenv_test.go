package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// gpuEnvDir holds what real Slurm 22.05 gives the batch step and each srun
// task for each GPU option (scripts/record-gpu-env recorded it).
var gpuEnvDir = filepath.Join("..", "..", "testdata", "gpuenv")

// TestGPUEnvMatchesSlurm runs testdata/gpuenv/*.txtar: every case of
// testdata/gpuenv/cases.txt submitted with the same show.sh to a real
// daemon with four simulated a100s, its GPU variables compared with the
// recording (the gpuenv command), and the GPU accounting around them.
func TestGPUEnvMatchesSlurm(t *testing.T) {
	t.Parallel() // beside the other groups of scripts (waitingTests)
	cmds := commands()
	cmds["gpuenv"] = cmdGPUEnv
	runScripts(t, testscript.Params{
		Dir:       "testdata/gpuenv",
		Cmds:      cmds,
		Condition: condition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("SLURM_LITE_CONF", "")
			env.Setenv("HOME", env.WorkDir)
			dir, err := filepath.Abs(gpuEnvDir)
			env.Setenv("GPUENV", dir)
			return err
		},
	})
}

// gpuenv DIR: submit every case of DIR/cases.txt ("NAME OPTIONS", the
// options split at blanks) as "sbatch --parsable -o NAME.out OPTIONS
// show.sh" with DIR's show.sh, wait for each to complete, and compare its
// output with DIR/NAME.txt (compareGPUEnv), one case after the other.
func cmdGPUEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gpuenv DIR")
	}
	dir := args[0]
	show, err := os.ReadFile(filepath.Join(dir, "show.sh"))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs("show.sh"), show, 0o755))
	cases, err := os.ReadFile(filepath.Join(dir, "cases.txt"))
	ts.Check(err)
	n := 0
	for _, line := range strings.Split(string(cases), "\n") {
		name, opts, _ := strings.Cut(strings.TrimSpace(line), " ")
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		if strings.ContainsAny(opts, `'"\$`) {
			ts.Fatalf("case %s: options with quotes or expansions need a shell; split at blanks here", name)
		}
		args := append([]string{"--parsable", "-o", name + ".out"}, strings.Fields(opts)...)
		ts.Check(ts.Exec("sbatch", append(args, "show.sh")...))
		id := strings.TrimSpace(ts.ReadFile("stdout"))
		cmdWaitJob(ts, false, []string{id, "COMPLETED"})
		rec, err := os.ReadFile(filepath.Join(dir, name+".txt"))
		ts.Check(err)
		got, err := os.ReadFile(ts.MkAbs(name + ".out"))
		ts.Check(err)
		_, want, _ := strings.Cut(string(rec), "\n") // after the "$ sbatch ..." line
		if err := compareGPUEnv(want, string(got)); err != nil {
			ts.Fatalf("case %s (sbatch %s, job %s): %v\nSlurm 22.05:\n%s\nslurm-lite:\n%s", name, opts, id, err, want, got)
		}
		ts.Logf("case %s (job %s): as Slurm 22.05", name, id)
		n++
	}
	if n == 0 {
		ts.Fatalf("no cases in %s", filepath.Join(dir, "cases.txt"))
	}
}

// gpuIndexVars are the variables whose values are GPU indices.
var gpuIndexVars = map[string]bool{
	"CUDA_VISIBLE_DEVICES": true, "GPU_DEVICE_ORDINAL": true, "ROCR_VISIBLE_DEVICES": true,
	"SLURM_JOB_GPUS": true, "SLURM_STEP_GPUS": true,
}

// compareGPUEnv compares show.sh's output (a "--- batch ---" section, then
// one per task, each "NAME=value" lines) with Slurm's. Everything must be
// the same but which GPUs were picked: the GPU indices must correspond
// one to one, the same way throughout (the batch sees as many distinct
// GPUs, each task its part of them, shared or disjoint as Slurm's are).
func compareGPUEnv(want, got string) error {
	ws, err := gpuEnvSections(want)
	if err != nil {
		return fmt.Errorf("the recording: %w", err)
	}
	gs, err := gpuEnvSections(got)
	if err != nil {
		return err
	}
	if len(ws) != len(gs) {
		return fmt.Errorf("%d sections, Slurm's has %d", len(gs), len(ws))
	}
	rename, taken := map[string]string{}, map[string]string{}
	for i, w := range ws {
		g := gs[i]
		if w.title != g.title {
			return fmt.Errorf("section %q, Slurm's is %q", g.title, w.title)
		}
		for k := range g.vars {
			if _, ok := w.vars[k]; !ok {
				return fmt.Errorf("%s: %s=%s, which Slurm's has not", g.title, k, g.vars[k])
			}
		}
		for k, wv := range w.vars {
			gv, ok := g.vars[k]
			switch {
			case !ok:
				return fmt.Errorf("%s: no %s (Slurm's: %s)", g.title, k, wv)
			case !gpuIndexVars[k]:
				if gv != wv {
					return fmt.Errorf("%s: %s=%s, Slurm's is %s", g.title, k, gv, wv)
				}
				continue
			}
			wl, gl := strings.Split(wv, ","), strings.Split(gv, ",")
			if len(wl) != len(gl) {
				return fmt.Errorf("%s: %s=%s names %d GPUs, Slurm's %s names %d", g.title, k, gv, len(gl), wv, len(wl))
			}
			for j, wi := range wl {
				gi := gl[j]
				if r, ok := rename[wi]; ok && r != gi {
					return fmt.Errorf("%s: %s=%s: GPU %s stands for Slurm's %s here, but for %s before", g.title, k, gv, gi, wi, r)
				}
				if o, ok := taken[gi]; ok && o != wi {
					return fmt.Errorf("%s: %s=%s: GPU %s stands for Slurm's %s here, but for %s before", g.title, k, gv, gi, wi, o)
				}
				rename[wi], taken[gi] = gi, wi
			}
		}
	}
	return nil
}

type gpuEnvSection struct {
	title string
	vars  map[string]string
}

func gpuEnvSections(text string) ([]gpuEnvSection, error) {
	var out []gpuEnvSection
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if t, ok := strings.CutPrefix(line, "--- "); ok {
			out = append(out, gpuEnvSection{title: strings.TrimSuffix(t, " ---"), vars: map[string]string{}})
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || len(out) == 0 {
			return nil, fmt.Errorf("line %q is neither a section nor NAME=value", line)
		}
		out[len(out)-1].vars[k] = v
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no section")
	}
	return out, nil
}

// TestCompareGPUEnv: the comparison lets only the choice of GPUs differ.
func TestCompareGPUEnv(t *testing.T) {
	slurm := "--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=2\n" +
		"--- task 0 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=1\nSLURM_STEP_GPUS=1\n"
	tests := []struct {
		name, got string
		ok        bool
	}{
		{"the same", slurm, true},
		{"other GPUs, one for one",
			"--- batch ---\nCUDA_VISIBLE_DEVICES=2,3\nSLURM_GPUS_ON_NODE=2\n" +
				"--- task 0 ---\nCUDA_VISIBLE_DEVICES=2\nSLURM_STEP_GPUS=2\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=3\nSLURM_STEP_GPUS=3\n", true},
		{"a task sees its neighbour's GPU too",
			"--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=2\n" +
				"--- task 0 ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_STEP_GPUS=0\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=1\nSLURM_STEP_GPUS=1\n", false},
		{"both tasks on one GPU where Slurm's had two",
			"--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=2\n" +
				"--- task 0 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n", false},
		{"a task on a GPU outside the batch's",
			"--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=2\n" +
				"--- task 0 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=2\nSLURM_STEP_GPUS=2\n", false},
		{"a variable Slurm's has not",
			"--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=2\nSLURM_GPU_BIND=none\n" +
				"--- task 0 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=1\nSLURM_STEP_GPUS=1\n", false},
		{"a count that differs",
			"--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=4\n" +
				"--- task 0 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n--- task 1 ---\nCUDA_VISIBLE_DEVICES=1\nSLURM_STEP_GPUS=1\n", false},
		{"a task missing", "--- batch ---\nCUDA_VISIBLE_DEVICES=0,1\nSLURM_GPUS_ON_NODE=2\n--- task 0 ---\nCUDA_VISIBLE_DEVICES=0\nSLURM_STEP_GPUS=0\n", false},
	}
	for _, tt := range tests {
		if err := compareGPUEnv(slurm, tt.got); (err == nil) != tt.ok {
			t.Errorf("%s: compareGPUEnv = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
