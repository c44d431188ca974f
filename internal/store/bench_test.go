package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// BenchmarkSubmit measures one-job submissions per second, from one
// submitter and from 16 at once, with synchronous=FULL (what Open uses) and
// NORMAL (for comparison: NORMAL skips the sync at each commit, and loses
// the last commits to a power cut). jobs/commit shows group commit at work.
func BenchmarkSubmit(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		for _, submitters := range []int{1, 16} {
			b.Run(fmt.Sprintf("sync=%s/submitters=%d", sync, submitters), func(b *testing.B) {
				benchSubmit(b, sync, submitters)
			})
		}
	}
}

// BenchmarkSubmitCached is BenchmarkSubmit as the daemon runs the store:
// with the job cache on, which each commit brings up to date.
func BenchmarkSubmitCached(b *testing.B) {
	for _, submitters := range []int{1, 16} {
		b.Run(fmt.Sprintf("submitters=%d", submitters), func(b *testing.B) {
			benchSubmitWith(b, "FULL", submitters, true)
		})
	}
}

func benchSubmit(b *testing.B, synchronous string, submitters int) {
	benchSubmitWith(b, synchronous, submitters, false)
}

func benchSubmitWith(b *testing.B, synchronous string, submitters int, cached bool) {
	s, err := open(filepath.Join(b.TempDir(), "state"), options{synchronous: synchronous, migrations: migrations})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if cached {
		if err := s.CacheJobs(ctx, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	nj := newJob(b, trainScript)
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ResetTimer()
	var wg sync.WaitGroup
	for range submitters {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := s.Submit(ctx, []NewJob{nj}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(b.N)/float64(s.commits.Load()), "jobs/commit")
}

// BenchmarkJobsActive is squeue's query: the pending and running jobs among
// many finished ones.
func BenchmarkJobsActive(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := make([]NewJob, 1000)
	for i := range batch {
		batch[i] = newJob(b, trainScript)
		batch[i].Job.State = slurm.Completed
		if i%100 == 0 {
			batch[i].Job.State = slurm.Running
		}
	}
	for range 10 { // 10,000 jobs, 100 of them running
		if _, err := s.Submit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	f := Filter{States: []slurm.JobState{slurm.Pending, slurm.Running}}
	b.ResetTimer()
	for b.Loop() {
		jobs, err := s.Jobs(ctx, f)
		if err != nil || len(jobs) != 100 {
			b.Fatalf("%d jobs, %v", len(jobs), err)
		}
	}
}

// BenchmarkOpen measures opening a state of 50,000 finished jobs: the
// header check, quick_check and the readers' first connection.
func BenchmarkOpen(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]NewJob, 1000)
	for i := range batch {
		batch[i] = newJob(b, trainScript)
	}
	for range 50 {
		if _, err := s.Submit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	b.ResetTimer()
	for b.Loop() {
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.NextJobID(ctx); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
