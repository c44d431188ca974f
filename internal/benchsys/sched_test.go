package benchsys_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

// labSnapshot is a saturated lab: nodes of 8 GPUs, every GPU busy with a
// 2-GPU job of a random limit, and pending jobs of 20 users in two accounts
// asking 1, 2 or 4 GPUs (a few held). It is the daemon's pass at its
// hardest: nothing fits, so every pending job gets a reservation and a
// reason. (internal/sched's BenchmarkCycle has a richer mix; it reports the
// mean, this one each pass's time.)
func labSnapshot(gpus, pending int) sched.Snapshot {
	rng := rand.New(rand.NewPCG(7, 8))
	now := st.Epoch
	b := st.Snap().Configure(func(c *sched.Config) {
		c.Weights = sched.Weights{Age: 1000, FairShare: 10000, Partition: 1000, QOS: 1000}
	}).Part(st.Part("gpu").Default().MaxTime(7 * 24 * time.Hour)).QOS(st.QOS("normal"))
	var users [2][]sched.UserShare
	for u := range 20 {
		name := fmt.Sprintf("user%02d", u)
		users[u%2] = append(users[u%2], st.U(name, 1+u%3))
		b.Usage(fmt.Sprintf("acct%d", u%2), name, float64(rng.IntN(1_000_000)))
	}
	b.Account("acct0", "", 2, users[0]...).Account("acct1", "", 1, users[1]...)
	limits := []time.Duration{10 * time.Minute, time.Hour, 4 * time.Hour, 24 * time.Hour}
	id := uint32(1)
	for n := range (gpus + 7) / 8 {
		name := fmt.Sprintf("gpu%02d", n)
		b.Node(st.Node(name).CPUs(64).Mem(512*st.GiB).GPUs(8, "a100", 80*st.GiB))
		for g := 0; g < 8; g += 2 {
			lim := limits[rng.IntN(len(limits))]
			b.Job(st.Job(id).User(fmt.Sprintf("user%02d", rng.IntN(20))).GPUs(2).CPUs(8).Time(lim).
				Running(now.Add(-time.Duration(rng.Int64N(int64(lim)))), name, g, g+1))
			id++
		}
	}
	for range pending {
		j := st.Job(id).User(fmt.Sprintf("user%02d", rng.IntN(20))).CPUs(1 + rng.IntN(8)).
			Time(limits[rng.IntN(len(limits))]).Submitted(now.Add(-time.Duration(rng.IntN(86400)) * time.Second)).
			GPUs([]int{1, 1, 1, 2, 2, 4}[rng.IntN(6)])
		if rng.IntN(50) == 0 {
			j.Hold()
		}
		b.Job(j)
		id++
	}
	return b.Build()
}

// BenchmarkSchedPass is one scheduling pass (sched.Cycle) over 1,000 and
// 10,000 pending jobs on 64 GPUs, each pass timed: p50 and p99.
func BenchmarkSchedPass(b *testing.B) {
	for _, pending := range []int{1000, 10000} {
		snap := labSnapshot(64, pending)
		b.Run(fmt.Sprintf("gpus=64/pending=%d", pending), func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				sched.Cycle(snap)
				lat = append(lat, time.Since(t0))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkProcessStart is the floor under every command: starting and
// ending a Go program that does nothing, from the same harness.
func BenchmarkProcessStart(b *testing.B) {
	exe := nothing(b)
	b.ResetTimer()
	reportLatency(b, bareStarts(b, exe, b.N))
}

// BenchmarkProcessStartParallel is the floor under 8 submitters at once:
// starts per second of the program that does nothing, 8 at a time.
func BenchmarkProcessStartParallel(b *testing.B) {
	exe := nothing(b)
	parallel(b, 8, func() error { return exec.Command(exe).Run() })
}

// nothing builds a Go program that does nothing, as the commands are built
// (static, without cgo), and returns its path.
func nothing(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(dir, "nothing")
	cmd := exec.Command("go", "build", "-o", exe, src)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}
