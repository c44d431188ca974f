package gpu

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/google/go-cmp/cmp"
)

func TestForeignUseIsRealUse(t *testing.T) {
	const total = 81920 * mib // an H100 80GB
	tests := []struct {
		name  string
		procs []nvml.ProcessInfo
		users map[int]string
		jobs  []Job
		want  GPU // the fields below only
	}{
		{
			name:  "a foreign process holding 70 GB of an 80 GB GPU: counted, reported, the rest still offered",
			procs: []nvml.ProcessInfo{proc(4242, 70*gib)},
			users: map[int]string{4242: "mallory"},
			want: GPU{
				MemoryUsed: idleUsed + 70*gib, MemoryFree: total - idleUsed - 70*gib, Foreign: 70 * gib,
				Processes: []Process{{PID: 4242, User: "mallory", Memory: 70 * gib, Utilization: -1}},
				State:     Up,
			},
		},
		{
			name:  "a GPU fully taken by someone outside the scheduler is not offered",
			procs: []nvml.ProcessInfo{proc(4242, 79*gib+512*mib)},
			users: map[int]string{4242: "mallory"},
			want: GPU{
				MemoryUsed: total, MemoryFree: 0, Foreign: 79*gib + 512*mib,
				Processes: []Process{{PID: 4242, User: "mallory", Memory: 79*gib + 512*mib, Utilization: -1}},
				State:     Taken, Reason: "held outside the scheduler: pid 4242 (mallory) 79.5G",
			},
		},
		{
			name:  "several foreign processes, one whose owner /proc does not tell",
			procs: []nvml.ProcessInfo{proc(4243, 40*gib), proc(4242, 39*gib+512*mib)},
			users: map[int]string{4242: "mallory"},
			want: GPU{
				MemoryUsed: total, Foreign: 79*gib + 512*mib,
				Processes: []Process{
					{PID: 4242, User: "mallory", Memory: 39*gib + 512*mib, Utilization: -1},
					{PID: 4243, Memory: 40 * gib, Utilization: -1},
				},
				State: Taken, Reason: "held outside the scheduler: pid 4242 (mallory) 39.5G, pid 4243 (?) 40G",
			},
		},
		{
			name:  "a GPU full with our own job's memory is just full: still up",
			procs: []nvml.ProcessInfo{proc(100, 79*gib+512*mib)},
			users: map[int]string{100: "alice"},
			jobs:  []Job{{ID: "42", PIDs: []int{100}}},
			want: GPU{
				MemoryUsed: total,
				Processes:  []Process{{PID: 100, User: "alice", Memory: 79*gib + 512*mib, Utilization: -1, JobID: "42"}},
				State:      Up,
			},
		},
		{
			name:  "a GPU given to a job that has not started its processes yet stays up, whoever fills it",
			procs: []nvml.ProcessInfo{proc(4242, 79*gib+512*mib)},
			users: map[int]string{4242: "mallory"},
			jobs:  []Job{{ID: "42", GPUs: []string{"GPU 0"}}}, // UUID filled in below
			want: GPU{
				MemoryUsed: total, Foreign: 79*gib + 512*mib,
				Processes: []Process{{PID: 4242, User: "mallory", Memory: 79*gib + 512*mib, Utilization: -1}},
				State:     Up,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxh100.New())
			m.procs.users = tt.users
			m.run(0, tt.procs...)
			for i := range tt.jobs {
				if len(tt.jobs[i].GPUs) > 0 {
					tt.jobs[i].GPUs = []string{m.uuid(0)}
				}
			}

			g := m.inventory(Options{}).Sample(t0, tt.jobs).GPUs[0]

			got := GPU{
				MemoryUsed: g.MemoryUsed, MemoryFree: g.MemoryFree, Foreign: g.Foreign,
				Processes: g.Processes, State: g.State, Reason: g.Reason,
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GPU 0 (-want +got):\n%s", diff)
			}
			for _, p := range g.Processes {
				if p.Foreign() != (p.JobID == "") {
					t.Errorf("pid %d of job %q: Foreign() = %v", p.PID, p.JobID, p.Foreign())
				}
			}
			if g.Offered() != (tt.want.State == Up) {
				t.Errorf("Offered() = %v in state %s", g.Offered(), g.State)
			}
		})
	}
}

// At daemon start the daemon knows its jobs but not every process of
// theirs: processes are claimed through SLURM_JOB_ID in /proc, and those of
// no (known) job are foreign.
func TestProcessesMappedToJobsThroughProc(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	m.run(0, proc(100, gib), proc(101, gib), proc(102, gib), proc(103, gib))
	m.run(1, proc(104, gib), proc(100, gib))
	m.procs.users = map[int]string{100: "alice", 101: "mallory", 102: "bob", 103: "bob", 104: "carol"}
	m.procs.jobs = map[int]string{100: "42", 101: "43", 102: "77", 104: "44"}
	jobs := []Job{
		{ID: "42", User: "alice", GPUs: []string{m.uuid(0), m.uuid(1)}},
		{ID: "43", User: "bob", GPUs: []string{m.uuid(0)}},
		{ID: "44", GPUs: []string{m.uuid(1)}}, // owner unknown: not checked
	}

	s := m.inventory(Options{}).Sample(t0, jobs)

	got := map[int]string{}
	for _, g := range s.GPUs[:2] {
		for _, p := range g.Processes {
			got[p.PID] = p.JobID
		}
	}
	want := map[int]string{
		100: "42", // SLURM_JOB_ID=42, alice's, on both GPUs
		101: "",   // says job 43, but is mallory's, not bob's
		102: "",   // job 77 is not one of ours
		103: "",   // no job at all
		104: "44",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job of each PID (-want +got):\n%s", diff)
	}
	if s.GPUs[0].Foreign != 3*gib || s.GPUs[1].Foreign != 0 {
		t.Errorf("foreign memory %d, %d; want %d, 0", s.GPUs[0].Foreign, s.GPUs[1].Foreign, 3*gib)
	}
}

// /proc is read once per process while it stays on a GPU, not every sample.
func TestProcLookupsAreKeptWhileAProcessStays(t *testing.T) {
	m := newMachine(t, dgxa100.New())
	counting := &countingProcs{Procs: fakeProcs{users: map[int]string{100: "alice"}}}
	m.run(0, proc(100, gib))
	inv := FromNVML(m.srv, Options{Procs: counting})
	inv.Sample(t0, nil)
	inv.Sample(t0.Add(5*time.Second), nil)
	if counting.n != 2 { // one User, one JobID
		t.Errorf("%d /proc lookups for one process over two samples, want 2", counting.n)
	}
	m.run(0)
	inv.Sample(t0.Add(10*time.Second), nil)
	m.run(0, proc(100, gib)) // the PID came back: maybe another process
	inv.Sample(t0.Add(15*time.Second), nil)
	if counting.n != 4 {
		t.Errorf("%d lookups after the PID left and came back, want 4", counting.n)
	}
}

type countingProcs struct {
	Procs
	n int
}

func (c *countingProcs) User(pid int) (string, error)  { c.n++; return c.Procs.User(pid) }
func (c *countingProcs) JobID(pid int) (string, error) { c.n++; return c.Procs.JobID(pid) }

func TestJobUsage(t *testing.T) {
	type step struct {
		procs0, procs1 []nvml.ProcessInfo
		util0, util1   uint32                          // the GPUs' utilization
		perProc        []nvml.ProcessUtilizationSample // on GPU 0
		want           JobSample                       // Memory keyed by GPU number
	}
	tests := []struct {
		name      string
		job       Job // GPUs by number
		steps     []step
		wantUsage Usage
		asked     uint64
		wantNote  string
	}{
		{
			name: "a two-GPU job alone on its GPUs: memory per GPU, the GPUs' utilization",
			job:  Job{ID: "42", PIDs: []int{100, 101}},
			steps: []step{
				{procs0: []nvml.ProcessInfo{proc(100, 10*gib)}, procs1: []nvml.ProcessInfo{proc(101, 12*gib)}, util0: 50, util1: 70,
					want: JobSample{Memory: map[string]uint64{"0": 10 * gib, "1": 12 * gib}, PIDs: []int{100, 101}, Utilization: 60}},
				{procs0: []nvml.ProcessInfo{proc(100, 18*gib)}, procs1: []nvml.ProcessInfo{proc(101, 6*gib)}, util0: 100, util1: 90,
					want: JobSample{Memory: map[string]uint64{"0": 18 * gib, "1": 6 * gib}, PIDs: []int{100, 101}, Utilization: 95}},
			},
			wantUsage: Usage{Samples: 2, PeakMemory: 18 * gib, PeakTotal: 24 * gib, UtilSamples: 2, UtilSum: 155},
			asked:     40 * gib,
		},
		{
			name: "a job sharing its GPU: its own processes' utilization where NVML gives it per process",
			job:  Job{ID: "42", PIDs: []int{100, 102}},
			steps: []step{
				{procs0: []nvml.ProcessInfo{proc(100, 2*gib), proc(102, gib), proc(200, 5*gib)}, util0: 100,
					perProc: []nvml.ProcessUtilizationSample{
						{Pid: 100, TimeStamp: 1, SmUtil: 10}, {Pid: 100, TimeStamp: 2, SmUtil: 20},
						{Pid: 102, TimeStamp: 2, SmUtil: 5}, {Pid: 200, TimeStamp: 2, SmUtil: 75},
					},
					want: JobSample{Memory: map[string]uint64{"0": 3 * gib}, PIDs: []int{100, 102}, Utilization: 25}},
			},
			wantUsage: Usage{Samples: 1, PeakMemory: 3 * gib, PeakTotal: 3 * gib, UtilSamples: 1, UtilSum: 25},
			asked:     20 * gib,
			wantNote:  "peak GPU memory 3G of 20G asked per GPU",
		},
		{
			name: "a job that has not started anything on its GPU yet holds nothing and idles",
			job:  Job{ID: "42", PIDs: []int{100}},
			steps: []step{
				{want: JobSample{Memory: map[string]uint64{}, Utilization: 0}},
			},
			wantUsage: Usage{Samples: 1, UtilSamples: 1},
			asked:     20 * gib,
			wantNote:  "peak GPU memory 0M of 20G asked per GPU",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, dgxa100.New())
			inv := m.inventory(Options{})
			job := tt.job
			job.GPUs = []string{m.uuid(0), m.uuid(1)}
			if len(tt.steps[0].procs1) == 0 {
				job.GPUs = job.GPUs[:1]
			}
			var u Usage
			for i, st := range tt.steps {
				m.run(0, st.procs0...)
				m.run(1, st.procs1...)
				m.dev(0).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: st.util0}, nvml.SUCCESS }
				m.dev(1).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: st.util1}, nvml.SUCCESS }
				if st.perProc != nil {
					m.dev(0).GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return st.perProc, nvml.SUCCESS }
				}

				s := inv.Sample(t0.Add(time.Duration(i)*5*time.Second), []Job{job})

				got := s.Jobs["42"]
				want := st.want
				want.Memory = map[string]uint64{}
				for k, v := range st.want.Memory {
					want.Memory[map[string]string{"0": m.uuid(0), "1": m.uuid(1)}[k]] = v
				}
				if diff := cmp.Diff(want, got, equateEmpty); diff != "" {
					t.Errorf("sample %d (-want +got):\n%s", i, diff)
				}
				u = u.Add(got)
			}
			if diff := cmp.Diff(tt.wantUsage, u); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			if got := u.Note(tt.asked); got != tt.wantNote {
				t.Errorf("Note(%s) = %q, want %q", formatSize(tt.asked), got, tt.wantNote)
			}
		})
	}
}

func TestUsageAccumulator(t *testing.T) {
	tests := []struct {
		name     string
		samples  []JobSample
		asked    uint64
		wantMean float64
		wantOK   bool
		wantNote string
	}{
		{name: "no sample: nothing known, nothing to say", asked: 40 * gib},
		{
			name:    "utilization unknown in one sample: the mean counts the others",
			samples: []JobSample{{Utilization: 80}, {Utilization: -1}, {Utilization: 40}},
			asked:   40 * gib, wantMean: 60, wantOK: true,
			wantNote: "peak GPU memory 0M of 40G asked per GPU",
		},
		{
			name:    "a peak at a quarter of what was asked or more: nothing to say",
			samples: []JobSample{{Memory: map[string]uint64{"a": 10 * gib}, Utilization: -1}},
			asked:   40 * gib,
		},
		{
			name:    "a peak far below what was asked: a note",
			samples: []JobSample{{Memory: map[string]uint64{"a": 9 * gib, "b": 2 * gib}, Utilization: -1}},
			asked:   40 * gib, wantNote: "peak GPU memory 9G of 40G asked per GPU",
		},
		{
			name:    "nothing asked (the caller did not say): nothing to say",
			samples: []JobSample{{Memory: map[string]uint64{"a": gib}, Utilization: -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u Usage
			for _, s := range tt.samples {
				u = u.Add(s)
			}
			mean, ok := u.MeanUtilization()
			if mean != tt.wantMean || ok != tt.wantOK {
				t.Errorf("MeanUtilization() = %v, %v; want %v, %v", mean, ok, tt.wantMean, tt.wantOK)
			}
			if got := u.Note(tt.asked); got != tt.wantNote {
				t.Errorf("Note = %q, want %q", got, tt.wantNote)
			}
		})
	}
}
