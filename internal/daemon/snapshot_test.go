package daemon

import (
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// The daemon's snapshot mapping counts each byte of a GPU once. For any
// shared jobs on one GPU (each with a reservation, and processes holding
// less, as much, or more than it), processes of no job, and the driver's
// own share, what the core then sees free is exactly the GPU's memory less
// what is held or reserved: a job of exactly that much starts there, and a
// job of one MiB more does not. (Counted twice, the first would wait;
// counted never, the second would start.)
func TestMappingCountsGPUMemoryOnce(t *testing.T) {
	const (
		gib   = int64(1) << 30
		mib   = int64(1) << 20
		total = 80 * gib
		base  = gib / 2 // the driver's own
		uuid  = "GPU-0"
	)
	cfg := config.Default()
	cfg.Node.NodeName, cfg.Node.CPUs, cfg.Node.RealMemory = "gpu01", 64, 256<<30
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 5).Draw(t, "jobs")
		foreign := rapid.Int64Range(0, 4).Draw(t, "foreignGiB") * gib
		held := base + foreign // by someone: the driver, foreign processes, jobs
		used := base + foreign // what the driver reports in use
		gs := gpu.Snapshot{Time: now, Jobs: map[string]gpu.JobSample{}}
		var jobs []*store.Job
		for i := range n {
			reserved := rapid.Int64Range(1, 16).Draw(t, "reservedGiB") * gib
			// Processes hold none of it, part, all, or more than that.
			touched := rapid.Int64Range(0, reserved/mib+4096).Draw(t, "touchedMiB") * mib
			if held+max(reserved, touched) > total {
				break
			}
			held += max(reserved, touched)
			used += touched
			id := uint32(i + 1)
			gs.Jobs[strconv.Itoa(int(id))] = gpu.JobSample{Memory: map[string]uint64{uuid: uint64(touched)}}
			jobs = append(jobs, &store.Job{ID: id, User: "alice", State: slurm.Running, Start: now.Add(-time.Minute),
				Request: jobscript.Request{NTasks: 1, GPUMem: slurmsyntax.Bytes(reserved)},
				Alloc:   store.Alloc{Node: "gpu01", CPUs: []int{i}, GPUs: []store.GPUAlloc{{UUID: uuid, Index: 0, Mem: reserved}}}})
		}
		gs.GPUs = []gpu.GPU{{Index: 0, UUID: uuid, Type: "a100", MemoryTotal: uint64(total), MemoryUsed: uint64(used),
			MemoryFree: uint64(total - used), Foreign: uint64(foreign), State: gpu.Up}}
		free := total - held
		if free < mib {
			t.Skip("no memory left to probe")
		}
		for _, probe := range []struct {
			mem  int64
			fits bool
		}{{free, true}, {free + mib, false}} {
			probeJob := &store.Job{ID: 100, User: "bob", State: slurm.Pending, Submit: now.Add(-time.Second),
				Request: jobscript.Request{NTasks: 1, GPUMem: slurmsyntax.Bytes(probe.mem)}}
			snap := mapSnapshot(cfg, gs, false, now, append(jobs[:len(jobs):len(jobs)], probeJob))
			plan := sched.Cycle(snap.Snapshot)
			started := len(plan.Starts) == 1 && plan.Starts[0].JobID == 100
			if started != probe.fits {
				t.Fatalf("a job of %d MiB beside %d jobs (driver %d MiB, foreign %d MiB, held in all %d of %d MiB): started %v, want %v; plan %+v",
					probe.mem/mib, len(jobs), base/mib, foreign/mib, held/mib, total/mib, started, probe.fits, plan.Pending)
			}
		}
	})
}
