package benchsys_test

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/benchsys"
)

// bigQueue is the size of the large-queue benchmarks: real Slurm's
// default MaxJobCount, which both systems are given room beyond.
const bigQueue = 10000

// BenchmarkSqueueArray is `squeue -r` (whole process, default format, one
// line per task) over one held array of 10,000 tasks: slurm-lite keeps
// the tasks of a pending array as one job as Slurm does, and -r expands
// them on the way out.
func BenchmarkSqueueArray(b *testing.B) {
	setup := func(s *benchsys.System) error {
		script, err := s.Script("hold.sh", holdScript)
		if err != nil {
			return err
		}
		if _, _, err := s.Run("sbatch", "--hold", fmt.Sprintf("--array=0-%d", bigQueue-1), script); err != nil {
			return err
		}
		return wantLines(s, bigQueue, "squeue", "-r", "-h", "-o", "%i")
	}
	s := systemWith(b, "array10000", benchsys.Options{GPUs: 4, MaxJobs: bigQueue}, setup)
	var lat []time.Duration
	for b.Loop() {
		d, _, err := s.Run("squeue", "-r")
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	reportLatency(b, lat)
}

// BenchmarkSacct is `sacct -a -S <a day ago>` (whole process, default
// format) over 10,000 pending jobs, every one of them in accounting:
// slurm-lite's own, real Slurm's slurmdbd with MariaDB. The jobs are
// eligible and pending on a drained node, not held: Slurm's sacct leaves
// out of a time window the jobs that never became eligible, held ones
// among them. slurmctld sends each job to slurmdbd after its submission,
// so the benchmark waits until sacct lists them all.
func BenchmarkSacct(b *testing.B) {
	since := time.Now().Add(-24 * time.Hour).Format("2006-01-02T15:04:05")
	setup := func(s *benchsys.System) error {
		if _, _, err := s.Run("scontrol", "update", "nodename=gpu01", "state=drain", "reason=benchmark"); err != nil {
			return err
		}
		if err := fillWith(bigQueue)(s); err != nil {
			return err
		}
		return wantLines(s, bigQueue, "sacct", "-a", "-X", "-n", "-S", since, "-o", "JobID")
	}
	s := systemWith(b, "sacct10000", benchsys.Options{GPUs: 4, MaxJobs: bigQueue, Accounting: true}, setup)
	var lat []time.Duration
	for b.Loop() {
		d, _, err := s.Run("sacct", "-a", "-S", since)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	reportLatency(b, lat)
}

// wantLines waits until the command prints n lines (for real Slurm's
// accounting, which slurmdbd fills behind slurmctld), for at most 10
// minutes.
func wantLines(s *benchsys.System, n int, name string, args ...string) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		_, out, err := s.Run(name, args...)
		if err != nil {
			return err
		}
		got := bytes.Count(out, []byte("\n"))
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s lists %d lines after 10 minutes, want %s", name, got, strconv.Itoa(n))
		}
		// Each look at 10,000 lines costs real Slurm's database a
		// query: look every 2 s, not faster.
		time.Sleep(2 * time.Second)
	}
}

// room is the MaxJobs that n jobs need: none below the systems' default
// of 10,000, whose configuration then stays their default.
func room(n int) int {
	if n < bigQueue {
		return 0
	}
	return n
}
