package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobmap"
)

// fromText is a configuration read from text, the host applied.
func fromText(t *testing.T, text string) *config.Config {
	t.Helper()
	return loaded(t, writeConfig(t, text))
}

const node = `
ClusterName = "lab"
[Node]
NodeName = "gpu01"
CPUs = 8
RealMemory = "16G"
GPUs = "simulated"
[[Node.SimulatedGPU]]
Type = "a100"
Memory = "80G"
Count = 2
`

// Export writes nothing silently (issue 24): each of [[Route]], [Web],
// JobMappingDir, [[Notify]] and [Yield] brings the file that carries it
// and a note that says what it does, or that Slurm has no equivalent and
// what a lab loses; without them, neither.
func TestExtrasFollowConfig(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		files      []string // besides the four always written
		conf, lack []string // lines of slurm.conf (notes and keys) it has, and lacks
	}{
		{"none of them", node, nil, []string{"- --mail-type: "},
			[]string{"JobSubmitPlugins", "Prolog=", "[Yield]", "The dashboard", "[[Notify]]", "[[Route]]", "Fillers' free fair share"}},
		{"routes", node + `
[[Partition]]
PartitionName = "gpu"
Default = true
[[Partition]]
PartitionName = "short"
[[Route]]
MaxTime = "0:30:00"
Partition = "short"
`, []string{JobSubmitLua}, []string{"JobSubmitPlugins=lua", "- [[Route]] (1): job_submit.lua routes a job without -p by its time limit"}, nil},
		{"the scheduler's yields", node + `
[Yield]
Shrink = true
Payback = true
`, nil, []string{"- [Yield] Shrink = true, Payback = true, Own = false (the scheduler's own shrinks and stops): none;",
			"A lab loses: short jobs started at once"}, nil},
		{"a free filler QOS", node + `
[[QOS]]
Name = "normal"
[[QOS]]
Name = "filler"
UsageFactor = 0.0
`, nil, []string{"- Fillers' free fair share (a QOS with UsageFactor = 0)"}, nil},
		{"the dashboard and /metrics", node + "[Web]\nListen = \"127.0.0.1:9341\"\n", []string{Prometheus},
			[]string{`- The dashboard ([Web] Listen = "127.0.0.1:9341"): none;`, "- /metrics: prometheus.yml",
				"- Metrics: prometheus.yml scrapes prometheus-slurm-exporter and dcgm-exporter"},
			[]string{"Prolog="}},
		{"the job mapping", "JobMappingDir = \"/run/dcgm-job-map\"\n" + node, []string{Prometheus, JobMapProlog, JobMapEpilog},
			[]string{"Prolog=/etc/slurm/jobmap-prolog.sh", "Epilog=/etc/slurm/jobmap-epilog.sh",
				`- JobMappingDir = "/run/dcgm-job-map": jobmap-prolog.sh and jobmap-epilog.sh`},
			[]string{"The dashboard"}},
		{"a webhook of drains", node + `
[[Notify]]
URL = "https://chat.example.org/hooks/gpu"
Events = ["END", "DRAIN"]
`, []string{Strigger, Webhook}, []string{"- [[Notify]] webhooks (1): a drain runs strigger.sh's trigger",
			"- [[Notify]] DRAIN: strigger.sh sets strigger --drained triggers"}, nil},
		{"a webhook of job events only", node + `
[[Notify]]
URL = "https://chat.example.org/hooks/gpu"
Events = ["END", "FAIL"]
`, nil, []string{"- [[Notify]] webhooks (1):", "A lab loses: a message"}, []string{"- [[Notify]] DRAIN:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, _, _ := generated(t, fromText(t, tt.text), Input{GPUs: fourA100()})
			var extra []string
			for name := range files {
				if !slices.Contains([]string{SlurmConf, GresConf, CgroupConf, Sacctmgr}, name) {
					extra = append(extra, name)
				}
			}
			slices.Sort(extra)
			want := slices.Clone(tt.files)
			slices.Sort(want)
			if diff := cmp.Diff(want, extra); diff != "" {
				t.Errorf("files besides the four (-want +got):\n%s", diff)
			}
			for _, s := range tt.conf {
				if !strings.Contains(files[SlurmConf], s) {
					t.Errorf("slurm.conf lacks %q", s)
				}
			}
			for _, s := range tt.lack {
				if strings.Contains(files[SlurmConf], s) {
					t.Errorf("slurm.conf has %q", s)
				}
			}
			if t.Failed() {
				t.Logf("slurm.conf:\n%s", files[SlurmConf])
			}
		})
	}
}

// job_submit.lua lists the routes in the configuration's order (the first
// that matches wins), each with its MaxTime in seconds.
func TestJobSubmitLuaListsTheRoutes(t *testing.T) {
	cfg := fromText(t, node+`
[[Partition]]
PartitionName = "gpu"
Default = true
[[Partition]]
PartitionName = "short"
[[Partition]]
PartitionName = "scavenger"
[[Route]]
MaxTime = "0:10:00"
Partition = "short"
[[Route]]
MaxTime = "1-00:00:00"
Partition = "scavenger"
`)
	files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
	var got []string
	for _, l := range strings.Split(files[JobSubmitLua], "\n") {
		if strings.Contains(l, "max_seconds =") {
			got = append(got, strings.TrimSpace(l))
		}
	}
	want := []string{
		`{ max_seconds = 600, partition = "short" }, -- MaxTime = "10:00"`,
		`{ max_seconds = 86400, partition = "scavenger" }, -- MaxTime = "1-00:00:00"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	for _, s := range []string{"function slurm_job_submit(job_desc, part_list, submit_uid)",
		"function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)", "limit == slurm.NO_VAL", "limit * 60 <= r.max_seconds"} {
		if !strings.Contains(files[JobSubmitLua], s) {
			t.Errorf("job_submit.lua lacks %q", s)
		}
	}
}

// The exported Prolog and Epilog leave JobMappingDir as the daemon's
// writer (internal/jobmap) does for the same jobs on the same GPUs: run
// by sh as slurmd runs them, they are compared with jobmap.Writer's
// directory after each step. (scripts/test-slurm runs them under real
// Slurm.)
func TestJobMapScriptsAgreeWithTheDaemon(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock (util-linux) here")
	}
	dir := t.TempDir()
	scripts := filepath.Join(dir, "scripts")
	mapDir := filepath.Join(dir, "map")
	cfg := fromText(t, "JobMappingDir = \""+mapDir+"\"\n"+node)
	files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
	os.Mkdir(scripts, 0o755)
	for _, n := range []string{JobMapProlog, JobMapEpilog} {
		if err := os.WriteFile(filepath.Join(scripts, n), []byte(files[n]), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	daemonDir := filepath.Join(dir, "daemon")
	w := jobmap.New(daemonDir)
	on := map[int][]string{}
	// run runs a script as slurmd would, with env; then the daemon's writer
	// is told the same, and the two directories must agree.
	run := func(script string, env ...string) {
		t.Helper()
		cmd := exec.Command("/bin/sh", filepath.Join(scripts, script))
		cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Fatalf("%s %v: %v, output %q", script, env, err, out)
		}
		if err := w.Sync(on); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(gpuFiles(t, daemonDir), gpuFiles(t, mapDir)); diff != "" {
			t.Errorf("after %s %v, the directory (-daemon +script):\n%s", script, env, diff)
		}
	}
	// Job 7 holds GPUs 0 and 2; job 8 shares GPU 2 (a shard job: only
	// CUDA_VISIBLE_DEVICES); job 9 has no GPU.
	on = map[int][]string{0: {"7"}, 2: {"7"}}
	run(JobMapProlog, "SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0,2", "CUDA_VISIBLE_DEVICES=0,2")
	on = map[int][]string{0: {"7"}, 2: {"7", "8"}}
	run(JobMapProlog, "SLURM_JOB_ID=8", "CUDA_VISIBLE_DEVICES=2")
	run(JobMapProlog, "SLURM_JOB_ID=9")
	run(JobMapProlog, "SLURM_JOB_ID=8", "CUDA_VISIBLE_DEVICES=2") // again: listed once
	on = map[int][]string{2: {"8"}}
	run(JobMapEpilog, "SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0,2", "CUDA_VISIBLE_DEVICES=0,2")
	on = map[int][]string{}
	run(JobMapEpilog, "SLURM_JOB_ID=8", "CUDA_VISIBLE_DEVICES=2")
	run(JobMapEpilog, "SLURM_JOB_ID=8", "CUDA_VISIBLE_DEVICES=2") // again: nothing to do
}

// gpuFiles are dir's GPU files (named by index) and what each holds.
func gpuFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".") {
			continue // the scripts' lock
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := e.Info()
		out[e.Name()] = st.Mode().Perm().String() + " " + string(b)
	}
	return out
}

// strigger.sh sets one trigger per webhook asking for drains, running
// webhook.sh with the event and the URL; webhook.sh posts the cluster's
// name with them.
func TestStriggerLines(t *testing.T) {
	cfg := fromText(t, node+`
[[Notify]]
URL = "https://chat.example.org/hooks/gpu"
Events = ["DRAIN", "END"]
[[Notify]]
URL = "https://ops.example.org/it's"
Events = ["ALL"]
[[Notify]]
URL = "https://jobs.example.org/x"
Events = ["END"]
`)
	files, _, _ := generated(t, cfg, Input{GPUs: fourA100()})
	var got []string
	for _, l := range strings.Split(files[Strigger], "\n") {
		if strings.HasPrefix(l, "set_trigger ") {
			got = append(got, l)
		}
	}
	want := []string{
		"set_trigger --drained DRAIN https://chat.example.org/hooks/gpu",
		`set_trigger --drained DRAIN 'https://ops.example.org/it'\''s'`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	if !strings.Contains(files[Webhook], `"$event" "$now" lab "$nodes")`) {
		t.Errorf("webhook.sh does not post the cluster's name:\n%s", files[Webhook])
	}
	for _, n := range []string{Strigger, Webhook} {
		if out, err := exec.Command("/bin/sh", "-n", "-c", files[n]).CombinedOutput(); err != nil {
			t.Errorf("%s is not sh: %v %s", n, err, out)
		}
	}
}

// The package keeps no copy of an export: one went stale once, tracked
// and checked by nothing (issue 24).
func TestNoExportCopiesInThePackage(t *testing.T) {
	files, _, _ := generated(t, fromText(t, "JobMappingDir = \"/run/m\"\n"+node+`
[Web]
Listen = "127.0.0.1:9341"
[[Notify]]
URL = "https://chat.example.org/hooks/gpu"
Events = ["DRAIN"]
`), Input{GPUs: fourA100()})
	for name := range files {
		if _, err := os.Stat(name); err == nil {
			t.Errorf("internal/export holds a copy of %s: generate it with slurmd-lite export instead", name)
		}
	}
}

// The exported Prolog runs as root: a JobMappingDir that another user
// could write (or a link in its place) is not written, and what a link
// points at is left alone; the job runs all the same (exit 0).
func TestJobMapScriptsRefuseADirectoryOthersCanWrite(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock (util-linux) here")
	}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("root's\n"), 0o600)
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	for _, tc := range []struct{ name, mapDir string }{
		{"a directory all may write", open},
		{"below a directory all may write", filepath.Join(open, "map")},
		{"a link in its place", filepath.Join(dir, "link")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Symlink(other, filepath.Join(dir, "link"))
			// A planted link where the script writes its temporary file.
			os.Symlink(secret, filepath.Join(other, ".0.tmp"))
			os.Symlink(secret, filepath.Join(open, ".0.tmp"))
			files, _, _ := generated(t, fromText(t, "JobMappingDir = \""+tc.mapDir+"\"\n"+node), Input{GPUs: fourA100()})
			script := filepath.Join(dir, "prolog.sh")
			os.WriteFile(script, []byte(files[JobMapProlog]), 0o755)
			cmd := exec.Command("/bin/sh", script)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "SLURM_JOB_ID=7", "SLURM_JOB_GPUS=0"}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "is not root's alone") {
				t.Errorf("prolog: %v, output %q; want exit 0 and a refusal", err, out)
			}
			if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
				t.Errorf("the linked file now holds %q", b)
			}
			for _, d := range []string{other, open} {
				if _, err := os.Stat(filepath.Join(d, "0")); err == nil {
					t.Errorf("a mapping file was written in %s", d)
				}
			}
		})
	}
}
