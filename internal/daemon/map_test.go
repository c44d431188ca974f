package daemon

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

func u64(v uint64) *uint64 { return &v }

func TestSchedRequest(t *testing.T) {
	gib := int64(slurmsyntax.GiB)
	tests := []struct {
		name string
		req  jobscript.Request
		want sched.Request
	}{
		{
			name: "a plain job asks one CPU",
			req:  jobscript.Request{NTasks: 1},
			want: sched.Request{CPUs: 1, Tasks: 1},
		},
		{
			name: "--gres=gpu:a100:2 is two whole GPUs of that type",
			req:  jobscript.Request{NTasks: 1, Gres: []jobscript.Gres{{Name: "gpu", Type: "a100", Count: 2}}},
			want: sched.Request{GPUs: 2, GPUType: "a100", CPUs: 1, Tasks: 1},
		},
		{
			name: "--gres=shard:6 is six ShardSize units of GPU memory on one shared GPU",
			req:  jobscript.Request{NTasks: 1, Gres: []jobscript.Gres{{Name: "shard", Count: 6}}},
			want: sched.Request{GPUMem: 6 * gib, CPUs: 1, Tasks: 1},
		},
		{
			name: "--gpu-mem wins over shards",
			req:  jobscript.Request{NTasks: 1, GPUMem: 20 * slurmsyntax.GiB, Gres: []jobscript.Gres{{Name: "shard", Count: 6}}},
			want: sched.Request{GPUMem: 20 * gib, CPUs: 1, Tasks: 1},
		},
		{
			name: "--mem-per-cpu multiplies by tasks times CPUs per task",
			req:  jobscript.Request{NTasks: 2, CPUsPerTask: 4, MemPerCPU: u64(1024)},
			want: sched.Request{CPUs: 8, Mem: 8 * gib, Tasks: 2},
		},
		{
			name: "--mem-per-gpu multiplies by GPUs",
			req:  jobscript.Request{NTasks: 1, GPUs: []jobscript.Gres{{Name: "gpu", Count: 2}}, MemPerGPU: u64(2048)},
			want: sched.Request{GPUs: 2, CPUs: 1, Mem: 4 * gib, Tasks: 1},
		},
		{
			name: "--cpus-per-gpu raises the CPU count",
			req:  jobscript.Request{NTasks: 1, CPUsPerGPU: 3, GPUs: []jobscript.Gres{{Name: "gpu", Count: 2}}},
			want: sched.Request{GPUs: 2, CPUs: 6, Tasks: 1},
		},
		{
			name: "srun --resv-ports=3 for its allocation holds 3 ports, whatever its tasks",
			req:  jobscript.Request{NTasks: 2, ResvPorts: new(3)},
			want: sched.Request{CPUs: 2, Tasks: 2, Ports: 3, PortsAsked: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := schedRequest(&tt.req, slurmsyntax.GiB)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("schedRequest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExclusiveTakesTheWholeMachine(t *testing.T) {
	n := sched.Node{CPUs: 16, Mem: 64000 << 20, GPUs: make([]sched.GPU, 4)}
	u := func(v uint64) *uint64 { return &v }
	tests := []struct {
		name string
		r    jobscript.Request
		mem  int64
	}{
		{"no memory asked, no DefMemPer*: all of it", jobscript.Request{}, 64000 << 20},
		{"--mem=0: all of it", jobscript.Request{MemPerNode: u(0)}, 64000 << 20},
		{"DefMemPerCPU=1000 (or --mem-per-cpu=1000): 1000M x 16 CPUs", jobscript.Request{MemPerCPU: u(1000)}, 16000 << 20},
		{"--mem=4G: 4G", jobscript.Request{MemPerNode: u(4096)}, 4096 << 20},
		{"--mem-per-gpu=10G: 10G x 4 GPUs", jobscript.Request{MemPerGPU: u(10240)}, 40960 << 20},
		{"--mem-per-cpu=8000: held to the node's memory", jobscript.Request{MemPerCPU: u(8000)}, 64000 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := exclusive(sched.Request{CPUs: 1, GPUType: "a100", GPUMem: 1 << 30}, n, &tc.r)
			want := sched.Request{CPUs: 16, GPUs: 4, Mem: tc.mem}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("exclusive (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckpointDirIsStableAcrossRuns(t *testing.T) {
	pattern := "/var/lib/slurm-lite/ckpt/%u/%j"
	plain := store.Job{ID: 42, User: "alice", Restarts: 3}
	if got, want := checkpointDir(pattern, plain), "/var/lib/slurm-lite/ckpt/alice/42"; got != want {
		t.Errorf("plain job: %q, want %q", got, want)
	}
	// An array task keeps the id it got when split, run after run; %A_%a
	// names it by its array.
	task := store.Job{ID: 57, ArrayJobID: 50, ArrayTaskID: 3, User: "bob", Name: "sweep"}
	if got, want := checkpointDir(pattern, task), "/var/lib/slurm-lite/ckpt/bob/57"; got != want {
		t.Errorf("array task: %q, want %q", got, want)
	}
	if got, want := checkpointDir("/ckpt/%u/%x-%A_%a", task), "/ckpt/bob/sweep-50_3"; got != want {
		t.Errorf("array task by array: %q, want %q", got, want)
	}
	if got := checkpointDir("", plain); got != "" {
		t.Errorf("no CheckpointDir: %q, want none", got)
	}
}

func TestSubmitterLimits(t *testing.T) {
	umask, limits := submitterLimits([]string{"PATH=/bin", "SLURM_UMASK=0027", "SLURM_RLIMIT_NOFILE=1024", "SLURM_RLIMIT_CORE=unlimited", "SLURM_RLIMIT_AS=junk"})
	if umask == nil || *umask != 0o027 {
		t.Errorf("umask = %v, want 0027", umask)
	}
	want := map[string]uint64{"NOFILE": 1024, "CORE": ^uint64(0)}
	if diff := cmp.Diff(want, limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
}

func TestParseJobRef(t *testing.T) {
	tests := []struct {
		in   string
		want jobRef
		bad  bool
	}{
		{in: "12", want: jobRef{id: 12, task: -1}},
		{in: "12_3", want: jobRef{id: 12, task: 3}},
		{in: "12_[1-3]", want: jobRef{id: 12, task: -1, tasks: []int{1, 2, 3}}},
		{in: "0", bad: true},
		{in: "x", bad: true},
		{in: "12_-1", bad: true},
	}
	for _, tt := range tests {
		got, err := parseJobRef(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("parseJobRef(%q) error %v, want error %v", tt.in, err, tt.bad)
			continue
		}
		if !tt.bad && !cmp.Equal(tt.want, got, cmp.AllowUnexported(jobRef{})) {
			t.Errorf("parseJobRef(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestCUDAOOMReadsOnlyARegularFile(t *testing.T) {
	dir := t.TempDir()
	oom := filepath.Join(dir, "oom.err")
	big := make([]byte, 200<<10)
	for i := range big {
		big[i] = 'x'
	}
	os.WriteFile(oom, append(big, "\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"...), 0o644)
	if !cudaOOM(oom) {
		t.Error("the error at the end of a large file was not seen")
	}
	fine := filepath.Join(dir, "fine.err")
	os.WriteFile(fine, []byte("all good\n"), 0o644)
	if cudaOOM(fine) {
		t.Error("an ordinary error file was taken for CUDA OOM")
	}
	// A job's user could point the file elsewhere: a symlink is not
	// followed, and a FIFO is not waited on.
	link := filepath.Join(dir, "link.err")
	os.Symlink(oom, link)
	if cudaOOM(link) {
		t.Error("a symlink was followed")
	}
	fifo := filepath.Join(dir, "fifo.err")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil && cudaOOM(fifo) {
		t.Error("a FIFO was read")
	}
	if cudaOOM(filepath.Join(dir, "missing")) {
		t.Error("a missing file was taken for CUDA OOM")
	}
}

func TestStopFromStatus(t *testing.T) {
	tests := []struct {
		name string
		st   stepd.Status
		want stopKind
	}{
		{"a job that ended by itself", stepd.Status{}, stopOwn},
		{"a plain cancel", stepd.Status{Ending: &stepd.Ending{}}, stopOwn},
		{"the time limit", stepd.Status{Ending: &stepd.Ending{Why: stepd.WhyTimeLimit}}, stopOwn},
		{"a requeue (or a yield, whose plan died with the daemon)", stepd.Status{Ending: &stepd.Ending{Why: stepd.WhyRequeue}}, stopRequeue},
		{"a preemption", stepd.Status{Ending: &stepd.Ending{Why: stepd.WhyPreemption}}, stopPreempt},
		{"a lost GPU", stepd.Status{Ending: &stepd.Ending{Why: stepd.WhyNodeFail}}, stopNodeFail},
	}
	for _, tt := range tests {
		if got := stopFromStatus(tt.st); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSupervisorCommand(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "slurmd-lite")
	if diff := cmp.Diff([]string{exe, "stepd"}, supervisorCommand(exe)); diff != "" {
		t.Errorf("without slurmstepd-lite beside it (-want +got):\n%s", diff)
	}
	small := filepath.Join(dir, "slurmstepd-lite")
	if err := os.WriteFile(small, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{exe, "stepd"}, supervisorCommand(exe)); diff != "" {
		t.Errorf("with a slurmstepd-lite that is not executable (-want +got):\n%s", diff)
	}
	if err := os.Chmod(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{small}, supervisorCommand(exe)); diff != "" {
		t.Errorf("with slurmstepd-lite beside it (-want +got):\n%s", diff)
	}

	// The Debian package's layout: /usr/sbin/slurmd-lite,
	// /usr/lib/slurm-lite/slurmstepd-lite.
	usr := t.TempDir()
	sbin := filepath.Join(usr, "sbin", "slurmd-lite")
	lib := filepath.Join(usr, "lib", "slurm-lite", "slurmstepd-lite")
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{lib}, supervisorCommand(sbin)); diff != "" {
		t.Errorf("in the package's layout (-want +got):\n%s", diff)
	}
}

// A restarted daemon waits for a job's supervisor that may still be
// coming: it looks every 20 ms until supervisorStartGrace after the job's
// start. The looks (flock, stat) are system calls that never block, so
// the test runs in a synctest bubble, whose clock moves only by the
// waits between them: each verdict comes at its exact moment.
func TestSupervisorComing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		start := time.Now()
		took := func() time.Duration { d := time.Since(start); start = time.Now(); return d }
		fresh := store.Job{ID: 1, Start: start}
		if supervisorComing(fresh, dir, start) || took() != 0 {
			t.Error("no spec: the supervisor was never launched, yet it is said to be coming (or waited for)")
		}
		if err := os.WriteFile(filepath.Join(dir, stepd.SpecFile), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		old := store.Job{ID: 1, Start: start.Add(-time.Minute)}
		if supervisorComing(old, dir, start) || took() != 0 {
			t.Error("a job started a minute ago has no supervisor still coming, and is not waited for")
		}
		// Started 2 s ago, and its supervisor never comes: given up at
		// the grace's end, 3 s on.
		if supervisorComing(store.Job{ID: 1, Start: start.Add(-2 * time.Second)}, dir, start) {
			t.Error("a supervisor that never came is said to be coming")
		}
		if d := took(); d != supervisorStartGrace-2*time.Second {
			t.Errorf("gave up after %v, want %v: the grace from the job's start", d, supervisorStartGrace-2*time.Second)
		}
		// A supervisor that takes its lock (on the state directory) 110 ms
		// after the restarted daemon looks is seen at the next look.
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		time.AfterFunc(110*time.Millisecond, func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX) })
		fresh.Start = start
		if !supervisorComing(fresh, dir, start) {
			t.Error("a supervisor that locked its directory 110 ms later was not waited for")
		}
		if d := took(); d != 120*time.Millisecond {
			t.Errorf("saw the supervisor after %v, want 120ms: the first look after its lock", d)
		}
	})
}
