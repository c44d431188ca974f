package scontrol

import (
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// scontrol yield's one line, for a yield that stopped the job and for one
// that reached it after its script had ended by itself.
func TestYieldReport(t *testing.T) {
	for _, tc := range []struct {
		y    api.Yielded
		want string
	}{
		{api.Yielded{JobID: 42, GPUs: []int{0, 1}, Waited: true, StopSeconds: 14, Clean: true, Released: true, BatchSize: 16, NumGPUs: 1, For: 57},
			"Job 42 yielded 2 GPUs (0,1) in 14s, exited cleanly; requeued with BatchSize=16 Gpus=1; yielded for job 57"},
		{api.Yielded{JobID: 42, GPUs: []int{3}, Waited: true, Ended: "COMPLETED", Released: true, NumGPUs: 1},
			"Job 42 had already ended (COMPLETED) when the yield reached it: it was not requeued; it held 1 GPU (3)"},
	} {
		if got := yieldReport(tc.y); got != tc.want {
			t.Errorf("yieldReport(%+v)\n got %q\nwant %q", tc.y, got, tc.want)
		}
	}
}
