package sched_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// busyCluster builds a realistic saturated machine: gpus GPUs (8 per node),
// every GPU busy with running jobs of mixed limits, `pending` jobs queued by
// 20 users in two accounts with usage, a mix of 1-, 2- and 4-GPU jobs,
// GPU-memory jobs, time limits from ten minutes to a day, a few holds,
// dependencies and throttled arrays, and `history` finished jobs.
func busyCluster(gpus, pending, history int) sched.Snapshot {
	rng := rand.New(rand.NewPCG(1, 2))
	now := st.Epoch
	b := st.Snap().Configure(func(c *sched.Config) {
		c.Weights = sched.Weights{Age: 1000, FairShare: 10000, Partition: 1000, QOS: 1000}
	}).Part(st.Part("gpu").Default().MaxTime(7*24*time.Hour), st.Part("scavenger").Tier(0).Requeue()).
		QOS(st.QOS("normal"), sched.QOS{Name: "high", Priority: 10, UsageFactor: 2})
	var users [2][]sched.UserShare
	for u := range 20 {
		name := fmt.Sprintf("user%02d", u)
		users[u%2] = append(users[u%2], st.U(name, 1+u%3))
		b.Usage(fmt.Sprintf("acct%d", u%2), name, float64(rng.IntN(1_000_000)))
	}
	b.Account("acct0", "", 2, users[0]...).Account("acct1", "", 1, users[1]...)
	limits := []time.Duration{10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 24 * time.Hour}
	id := uint32(1)
	for n := range (gpus + 7) / 8 {
		name := fmt.Sprintf("gpu%02d", n)
		b.Node(st.Node(name).CPUs(64).Mem(512*st.GiB).GPUs(8, "a100", 80*st.GiB).NVLink([]int{0, 1, 2, 3}, []int{4, 5, 6, 7}))
		for g := 0; g < 8; g += 2 {
			lim := limits[rng.IntN(len(limits))]
			b.Job(st.Job(id).User(fmt.Sprintf("user%02d", rng.IntN(20))).GPUs(2).CPUs(8).Time(lim).
				Running(now.Add(-time.Duration(rng.Int64N(int64(lim)))), name, g, g+1).CPUIDs(g*8, g*8+1, g*8+2, g*8+3, g*8+4, g*8+5, g*8+6, g*8+7))
			id++
		}
	}
	for range history {
		b.Job(st.Job(id).User("user00").State(slurm.Completed, 0))
		id++
	}
	for i := range pending {
		j := st.Job(id).User(fmt.Sprintf("user%02d", rng.IntN(20))).CPUs(1 + rng.IntN(8)).Mem(int64(1+rng.IntN(32)) * st.GiB).
			Time(limits[rng.IntN(len(limits))]).Submitted(now.Add(-time.Duration(rng.IntN(86400)) * time.Second))
		switch r := rng.IntN(100); {
		case r < 55:
			j.GPUs(1)
		case r < 70:
			j.GPUs(2)
		case r < 78:
			j.GPUs(4)
		case r < 90:
			j.GPUMem(int64(8+rng.IntN(32)) * st.GiB)
		case r < 95:
			j.GPUs(1).Partition("scavenger")
		default:
			j.GPUs(1).QOS("high")
		}
		switch r := rng.IntN(100); {
		case r < 2:
			j.Hold()
		case r < 4 && i > 0:
			j.AfterOK(id - 1)
		case r < 8:
			j.Task(id-uint32(i%10), i%10, 2)
		}
		b.Job(j)
		id++
	}
	return b.Build()
}

func BenchmarkCycle(b *testing.B) {
	for _, gpus := range []int{8, 64} {
		for _, pending := range []int{1000, 10000} {
			snap := busyCluster(gpus, pending, 1000)
			b.Run(fmt.Sprintf("gpus=%d/pending=%d", gpus, pending), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sched.Cycle(snap)
				}
			})
		}
	}
}

// BenchmarkCycleHistory shows that finished jobs kept in the snapshot cost
// time to scan but no allocation per job.
func BenchmarkCycleHistory(b *testing.B) {
	for _, history := range []int{0, 100000} {
		snap := busyCluster(8, 1000, history)
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sched.Cycle(snap)
			}
		})
	}
}

// BenchmarkCheckSubmit is one submission's checks (the daemon runs them
// for every sbatch) against a queue of held jobs, the default account's
// users found from the jobs (no accounts configured), as BenchmarkSubmitAPI
// in internal/benchsys builds it.
func BenchmarkCheckSubmit(b *testing.B) {
	for _, queued := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("queued=%d", queued), func(b *testing.B) {
			sb := st.Snap().Part(st.Part("gpu").Default()).QOS(st.QOS("normal")).
				Node(st.Node("gpu00").CPUs(64).Mem(512*st.GiB).GPUs(8, "a100", 80*st.GiB))
			for i := range queued {
				sb.Job(st.Job(uint32(i + 1)).User("alice").GPUs(1).Hold())
			}
			snap := sb.Build()
			job := st.Job(uint32(queued + 1)).User("alice").GPUs(1).Hold().Build()
			b.ReportAllocs()
			for b.Loop() {
				if err := sched.CheckSubmit(job, snap); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
