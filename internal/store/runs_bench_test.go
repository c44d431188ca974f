package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// BenchmarkRunsSince measures what a pass reads for budgets (GrpTRESMins):
// every run of 10,000 jobs that ended within the window, with their
// allocations.
func BenchmarkRunsSince(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	batch := make([]NewJob, 1000)
	for i := range batch {
		batch[i] = newJob(b, trainScript)
		batch[i].Job.State = slurm.Completed
		batch[i].Job.Start = t0.Add(time.Duration(i) * time.Minute)
		batch[i].Job.End = batch[i].Job.Start.Add(time.Hour)
		batch[i].Job.Alloc = Alloc{Node: "gpu01", CPUs: []int{0}, GPUs: []GPUAlloc{{UUID: "GPU-0", Index: 0}}}
	}
	for range 10 {
		if _, err := s.Submit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	f := Filter{Since: t0}
	b.ResetTimer()
	for b.Loop() {
		jobs, err := s.Runs(ctx, f)
		if err != nil || len(jobs) != 10000 {
			b.Fatalf("%d runs, %v", len(jobs), err)
		}
	}
}
