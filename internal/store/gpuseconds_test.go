package store

import (
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// GPU-seconds count every run of every job by account: ended runs, a
// requeued job's earlier run, running jobs up to now; pending jobs and
// jobs without GPUs count nothing.
func TestGPUSecondsByAccount(t *testing.T) {
	s, _ := openT(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	nj := func(account string) NewJob {
		n := newJob(t, trainScript)
		n.Job.Account = account
		return n
	}
	ids, err := s.Submit(ctx, []NewJob{nj("lab"), nj("lab"), nj("vision"), nj("vision"), nj("lab")})
	if err != nil {
		t.Fatal(err)
	}
	gpus := func(n int) Alloc {
		var a Alloc
		for i := range n {
			a.GPUs = append(a.GPUs, GPUAlloc{UUID: "GPU-" + string(rune('0'+i)), Index: i})
		}
		return a
	}
	err = s.Update(ctx, func(tx *Tx) error {
		set := func(id uint32, state slurm.JobState, start, end time.Time, a Alloc) error {
			j, err := tx.Job(id)
			if err != nil {
				return err
			}
			j.State, j.Start, j.End, j.Alloc = state, start, end, a
			return tx.PutJob(j)
		}
		// lab: 2 GPUs for an hour, ended.
		if err := set(ids[0], slurm.Completed, t0, t0.Add(time.Hour), gpus(2)); err != nil {
			return err
		}
		// lab: 1 GPU for 10 minutes, requeued, then running 1 GPU since t0+1h.
		if err := set(ids[1], slurm.Running, t0, t0.Add(10*time.Minute), gpus(1)); err != nil {
			return err
		}
		if _, err := tx.Requeue(ids[1], t0.Add(10*time.Minute)); err != nil {
			return err
		}
		if err := set(ids[1], slurm.Running, t0.Add(time.Hour), time.Time{}, gpus(1)); err != nil {
			return err
		}
		// vision: 4 GPUs for 30 minutes; a job without GPUs; lab: one pending.
		if err := set(ids[2], slurm.Timeout, t0, t0.Add(30*time.Minute), gpus(4)); err != nil {
			return err
		}
		return set(ids[3], slurm.Completed, t0, t0.Add(time.Hour), Alloc{CPUs: []int{0}})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GPUSeconds(ctx, t0.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"lab": 2*3600 + 600 + 3600, "vision": 4 * 1800}
	if len(got) != len(want) || got["lab"] != want["lab"] || got["vision"] != want["vision"] {
		t.Errorf("GPU-seconds by account: %v, want %v", got, want)
	}
}
