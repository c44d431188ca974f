package gpu

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// BenchmarkSample measures one sample of a busy 8-GPU machine: on every GPU
// a job's process and a foreign one, per-process utilization, eight jobs
// (one of them ended and being released). The cost is this package's work
// plus the mock's, which records every call it gets (so memory per op
// includes the mock's bookkeeping); on real hardware NVML's own calls come
// on top (the check program times them).
func BenchmarkSample(b *testing.B) {
	m := newMachine(b, dgxa100.New())
	var jobs []Job
	for i := range m.srv.Devices {
		pid := 1000 + i
		m.run(i, proc(pid, 8*gib), proc(5000+i, 2*gib))
		m.procs.users[pid] = "alice"
		m.procs.users[5000+i] = "mallory"
		m.dev(i).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 80}, nvml.SUCCESS }
		samples := []nvml.ProcessUtilizationSample{{Pid: uint32(pid), TimeStamp: 1, SmUtil: 70}, {Pid: uint32(5000 + i), TimeStamp: 1, SmUtil: 10}}
		m.dev(i).GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return samples, nvml.SUCCESS }
		j := Job{ID: string(rune('A' + i)), User: "alice", PIDs: []int{pid}, GPUs: []string{m.uuid(i)}, MemPerGPU: 10 * gib}
		if i == 7 {
			j.Ended = t0
		}
		jobs = append(jobs, j)
	}
	inv := m.inventory(Options{})
	inv.Sample(t0, jobs)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := inv.Sample(t0.Add(time.Duration(i)*time.Second), jobs)
		if len(s.GPUs) != 8 {
			b.Fatal(len(s.GPUs))
		}
	}
}
