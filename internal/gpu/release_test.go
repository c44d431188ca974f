package gpu

import (
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/google/go-cmp/cmp"
)

// Job 42 ran on GPU 0 with process 100 holding 10G; then it ended (or was
// yielded) at t0. Each case is what NVML shows some time later.
func TestReleaseConfirmation(t *testing.T) {
	tests := []struct {
		name       string
		after      time.Duration
		then       func(m *machine)
		want       Release // UUIDs as GPU numbers
		wantState  State
		wantReason string
	}{
		{
			name:      "its processes are gone and its memory is back: released, offered again",
			after:     2 * time.Second,
			then:      func(m *machine) { m.run(0) },
			want:      Release{Released: true},
			wantState: Up,
		},
		{
			name:      "a process that survives its job is returned for the daemon to kill",
			after:     5 * time.Second,
			then:      func(m *machine) {},
			want:      Release{Survivors: []int{100}, Pending: []string{"0"}},
			wantState: Up,
		},
		{
			name:  "a survivor the daemon never knew about is found through SLURM_JOB_ID",
			after: 5 * time.Second,
			then: func(m *machine) {
				m.procs.jobs[150] = "42"
				m.run(0, proc(150, 2*gib))
			},
			want:      Release{Survivors: []int{150}, Pending: []string{"0"}},
			wantState: Up,
		},
		{
			name:  "a survivor on a GPU the job was not given is still a survivor",
			after: 5 * time.Second,
			then: func(m *machine) {
				m.run(0)
				m.run(1, proc(100, gib))
			},
			want:      Release{Survivors: []int{100}},
			wantState: Up,
		},
		{
			name:       "a survivor that outlives the bound: the GPU is drained",
			after:      31 * time.Second,
			then:       func(m *machine) {},
			want:       Release{Survivors: []int{100}, Drained: []string{"0"}},
			wantState:  Drained,
			wantReason: "memory of job 42 not released after 30s",
		},
		{
			name:  "no process left but the memory stays used (a driver leak): not back yet",
			after: 5 * time.Second,
			then: func(m *machine) {
				m.run(0)
				m.dev(0).MemoryInfo.Used = idleUsed + 10*gib
			},
			want:      Release{Pending: []string{"0"}},
			wantState: Up,
		},
		{
			name:  "memory that never comes back drains the GPU",
			after: 45 * time.Second,
			then: func(m *machine) {
				m.run(0)
				m.dev(0).MemoryInfo.Used = idleUsed + 10*gib
			},
			want:       Release{Drained: []string{"0"}},
			wantState:  Drained,
			wantReason: "memory of job 42 not released after 30s",
		},
		{
			name:  "memory back within the slack (the driver's own use wobbles): released",
			after: 5 * time.Second,
			then: func(m *machine) {
				m.run(0)
				m.dev(0).MemoryInfo.Used = idleUsed + 100*mib
			},
			want:      Release{Released: true},
			wantState: Up,
		},
		{
			name:  "another job's memory on the same GPU does not hold the release up",
			after: 5 * time.Second,
			then: func(m *machine) {
				m.run(0, proc(200, 20*gib))
			},
			want:      Release{Released: true},
			wantState: Up,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			inv := m.inventory(Options{})
			job := Job{ID: "42", PIDs: []int{100}, GPUs: []string{m.uuid(0)}}
			other := Job{ID: "43", PIDs: []int{200}, GPUs: []string{m.uuid(0)}, MemPerGPU: 20 * gib}
			m.run(0, proc(100, 10*gib))
			inv.Sample(t0.Add(-5*time.Second), []Job{job})

			tt.then(m)
			job.Ended = t0
			s := inv.Sample(t0.Add(tt.after), []Job{job, other})

			want := tt.want
			want.Pending, want.Drained = uuids(m, tt.want.Pending), uuids(m, tt.want.Drained)
			got := s.Releases["42"]
			if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
				t.Errorf("release (-want +got):\n%s", diff)
			}
			if got.Done() != (len(want.Pending) == 0) {
				t.Errorf("Done() = %v with %d pending", got.Done(), len(want.Pending))
			}
			if g := s.GPUs[0]; g.State != tt.wantState || g.Reason != tt.wantReason {
				t.Errorf("GPU 0 %s %q, want %s %q", g.State, g.Reason, tt.wantState, tt.wantReason)
			}
			if _, ok := s.Jobs["42"]; ok {
				t.Errorf("an ended job got a usage sample")
			}
		})
	}
}

// The check program's case: a job with no processes on idle GPUs is
// released at once.
func TestReleaseOfAJobWithNoProcesses(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	inv := m.inventory(Options{})
	s := inv.Sample(t0, []Job{{ID: "check", GPUs: []string{m.uuid(7)}, Ended: t0}})
	if diff := cmp.Diff(Release{Released: true}, s.Releases["check"], equateEmpty); diff != "" {
		t.Errorf("release (-want +got):\n%s", diff)
	}
}

func uuids(m *machine, nums []string) []string {
	var out []string
	for _, n := range nums {
		out = append(out, m.uuid(int(n[0]-'0')))
	}
	return out
}

func TestJobsThatBreakTheirWord(t *testing.T) {
	// Jobs 42 and 43 share GPU 0, 10G each; job 44 has GPU 1 to itself.
	tests := []struct {
		name  string
		procs map[int][]nvml.ProcessInfo // by GPU
		drop  string                     // a job left out of the list
		want  []Violation                // GPU as a number; Text checked as is
	}{
		{
			name:  "jobs within what they asked for: nothing",
			procs: map[int][]nvml.ProcessInfo{0: {proc(100, 8*gib), proc(200, 10*gib)}, 1: {proc(300, 39*gib)}},
		},
		{
			name:  "a job over what it asked for on a GPU it shares is flagged",
			procs: map[int][]nvml.ProcessInfo{0: {proc(100, 14*gib), proc(200, 9*gib)}},
			want: []Violation{{
				JobID: "42", Kind: OverMemory, GPU: "0", Index: 0, PIDs: []int{100}, Memory: 14 * gib, Asked: 10 * gib,
				Text: "job 42 holds 14G on GPU 0, over the 10G it asked for, while sharing it with job 43",
			}},
		},
		{
			name:  "over what it asked for, counting all its processes on the GPU",
			procs: map[int][]nvml.ProcessInfo{0: {proc(100, 6*gib), proc(101, 6*gib)}},
			want: []Violation{{
				JobID: "42", Kind: OverMemory, GPU: "0", Index: 0, PIDs: []int{100, 101}, Memory: 12 * gib, Asked: 10 * gib,
				Text: "job 42 holds 12G on GPU 0, over the 10G it asked for, while sharing it with job 43",
			}},
		},
		{
			name:  "over what it asked for but alone on the GPU: harms nobody, not flagged",
			procs: map[int][]nvml.ProcessInfo{0: {proc(100, 14*gib)}},
			drop:  "43",
		},
		{
			name:  "beside a foreign process only: not flagged (the foreigner is the problem)",
			procs: map[int][]nvml.ProcessInfo{0: {proc(100, 14*gib), proc(4242, 5*gib)}},
			drop:  "43",
		},
		{
			name:  "a whole-GPU job may use all of its GPU",
			procs: map[int][]nvml.ProcessInfo{1: {proc(300, 39*gib)}},
		},
		{
			name:  "processes on a GPU it was not given are flagged",
			procs: map[int][]nvml.ProcessInfo{1: {proc(300, 20*gib)}, 2: {proc(301, 3*gib), proc(300, gib)}},
			want: []Violation{{
				JobID: "44", Kind: WrongGPU, GPU: "2", Index: 2, PIDs: []int{300, 301}, Memory: 4 * gib,
				Text: "job 44 has processes on GPU 2 (GPU 2), which it was not given: pids 300, 301",
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			for gpu, ps := range tt.procs {
				m.run(gpu, ps...)
			}
			var jobs []Job
			for _, j := range []Job{
				{ID: "42", PIDs: []int{100, 101}, GPUs: []string{m.uuid(0)}, MemPerGPU: 10 * gib},
				{ID: "43", PIDs: []int{200}, GPUs: []string{m.uuid(0)}, MemPerGPU: 10 * gib},
				{ID: "44", PIDs: []int{300, 301}, GPUs: []string{m.uuid(1)}},
			} {
				if j.ID != tt.drop {
					jobs = append(jobs, j)
				}
			}

			s := m.inventory(Options{}).Sample(t0, jobs)

			var want []Violation
			for _, v := range tt.want {
				n := int(v.GPU[0] - '0')
				v.GPU = m.uuid(n)
				v.Text = strings.ReplaceAll(v.Text, "(GPU 2)", "("+m.uuid(2)+")")
				want = append(want, v)
			}
			if diff := cmp.Diff(want, s.Violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// Where NVML will not say what each process holds (NVML_VALUE_NOT_AVAILABLE,
// as in some containers), memory cannot be balanced against processes: the
// processes being gone is what releases a GPU.
func TestReleaseWhenProcessMemoryIsNotAvailable(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	inv := m.inventory(Options{})
	m.run(0, proc(100, 10*gib))
	job := Job{ID: "42", PIDs: []int{100}, GPUs: []string{m.uuid(0)}}
	inv.Sample(t0, []Job{job})

	job.Ended = t0
	m.run(0, proc(100, ^uint64(0)), proc(4242, ^uint64(0)))
	m.dev(0).MemoryInfo.Used = idleUsed + 12*gib
	s := inv.Sample(t0.Add(5*time.Second), []Job{job})
	want := Release{Survivors: []int{100}, Pending: []string{m.uuid(0)}}
	if diff := cmp.Diff(want, s.Releases["42"], equateEmpty); diff != "" {
		t.Errorf("while the process lives (-want +got):\n%s", diff)
	}
	if p := s.GPUs[0].Processes[0]; p.Memory != 0 {
		t.Errorf("unknown memory shown as %d, want 0", p.Memory)
	}

	m.run(0, proc(4242, ^uint64(0)))
	m.dev(0).MemoryInfo.Used = idleUsed + 12*gib // the foreigner's, not ours
	s = inv.Sample(t0.Add(10*time.Second), []Job{job})
	if diff := cmp.Diff(Release{Released: true}, s.Releases["42"], equateEmpty); diff != "" {
		t.Errorf("once it is gone (-want +got):\n%s", diff)
	}
}
