package benchsys_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/benchsys"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// The benchmarks read their setting from the environment, which
// scripts/bench sets:
//
//	BENCH_BIN         slurm-lite's commands (default: built into a
//	                  temporary directory)
//	BENCH_REAL_SLURM  scripts/real-slurm: measure real Slurm instead
//	BENCH_SLURM_DIR   its --dir (default /tmp/rs-bench)
//	BENCH_PORT_BASE   its --port-base (default 7520)
//	BENCH_IDLE        how long BenchmarkIdleCPU watches (default 10s, so
//	                  that make bench-go stays short; scripts/bench
//	                  watches 60s)

var (
	binOnce sync.Once
	binDir  string
	binErr  error

	// current is the one system running: benchmarks that need another
	// kind stop it first (real Slurm's directory and ports are one).
	current    *benchsys.System
	currentKey string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if current != nil {
		current.Stop()
		if realSlurm() == "" {
			os.RemoveAll(current.Dir)
		}
	}
	if binDir != "" && os.Getenv("BENCH_BIN") == "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func realSlurm() string { return os.Getenv("BENCH_REAL_SLURM") }

func bin(b *testing.B) string {
	binOnce.Do(func() {
		if d := os.Getenv("BENCH_BIN"); d != "" {
			binDir = d
			return
		}
		binDir, binErr = os.MkdirTemp("", "benchsys-bin")
		if binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", binDir+"/", "github.com/slurm-lite/slurm-lite/cmd/...").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		b.Fatal(binErr)
	}
	return binDir
}

// system returns a running system for key, fresh the first time key is
// asked for; setup fills it.
func system(b *testing.B, key string, gpus int, setup func(*benchsys.System) error) *benchsys.System {
	b.Helper()
	return systemWith(b, key, benchsys.Options{GPUs: gpus}, setup)
}

// systemWith is system with more of the options (MaxJobs, Accounting) set:
// opts' Bin, Dir, RealSlurm and PortBase are filled here.
func systemWith(b *testing.B, key string, opts benchsys.Options, setup func(*benchsys.System) error) *benchsys.System {
	b.Helper()
	if current != nil && currentKey == key {
		return current
	}
	if current != nil {
		if err := current.Stop(); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(current.Dir)
		current = nil
	}
	opts.Bin, opts.RealSlurm = bin(b), realSlurm()
	if opts.RealSlurm != "" {
		opts.Dir = cmp(os.Getenv("BENCH_SLURM_DIR"), "/tmp/rs-bench")
		opts.PortBase, _ = strconv.Atoi(cmp(os.Getenv("BENCH_PORT_BASE"), "7520"))
	} else {
		d, err := os.MkdirTemp("", "benchsys")
		if err != nil {
			b.Fatal(err)
		}
		opts.Dir = d
	}
	s, err := benchsys.Start(opts)
	if err != nil {
		b.Fatal(err)
	}
	current, currentKey = s, key
	if setup != nil {
		if err := setup(s); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

const holdScript = "#!/bin/sh\ntrue\n"

// BenchmarkSbatch is sbatch as a user sees it: the whole process, from
// fork to exit, one after the other. The jobs are held, so that running
// them does not disturb the measure. Its output goes to files, as the
// floor's does (System.Quiet), so that the ratio of the two is the
// command's and not the harness's pipes'.
func BenchmarkSbatch(b *testing.B) {
	s := system(b, "submit", 4, nil)
	script, err := s.Script("hold.sh", holdScript)
	if err != nil {
		b.Fatal(err)
	}
	withFloor(b, func() (time.Duration, error) { return s.Quiet("sbatch", "--hold", script) })
}

// BenchmarkSubmitProcs is submissions per second by whole sbatch
// processes, from 1 and from 8 submitters at once; beside 8, the rate of
// 8 bare starts at a time in the same minutes (parallelWithFloor).
func BenchmarkSubmitProcs(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("submitters=%d", n), func(b *testing.B) {
			s := system(b, "submit", 4, nil)
			script, err := s.Script("hold.sh", holdScript)
			if err != nil {
				b.Fatal(err)
			}
			sbatch := func() error {
				_, err := s.Quiet("sbatch", "--hold", script)
				return err
			}
			if n == 1 {
				parallel(b, n, sbatch)
				return
			}
			parallelWithFloor(b, n, sbatch)
		})
	}
}

// BenchmarkSubmitAPI is the daemon's own rate: submissions through the
// API, with no process start-up, from 1 and 8 clients at once. Every one
// is committed (WAL, synced) before its answer.
func BenchmarkSubmitAPI(b *testing.B) {
	if realSlurm() != "" {
		b.Skip("real Slurm has no API here")
	}
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("submitters=%d", n), func(b *testing.B) {
			s := system(b, "submit", 4, nil)
			sub, err := submission(s, "--hold")
			if err != nil {
				b.Fatal(err)
			}
			c := sockclient.New(s.Socket)
			parallel(b, n, func() error {
				var resp api.Submitted
				return c.Do(context.Background(), "POST", api.PathJobs, sub, &resp)
			})
		})
	}
}

// submission is what `sbatch args... hold.sh` sends.
func submission(s *benchsys.System, args ...string) (api.Submit, error) {
	req, err := benchsys.Request([]byte(holdScript), append(args, "hold.sh")...)
	if err != nil {
		return api.Submit{}, err
	}
	return api.Submit{Request: *req, Env: os.Environ(), Cwd: s.Work}, nil
}

// parallel runs b.N calls of f from n goroutines and reports jobs/s.
func parallel(b *testing.B, n int, f func() error) {
	b.ResetTimer()
	r, err := rate(b.N, n, f)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r, "jobs/s")
}

// rate runs count calls of f from n goroutines and returns calls a
// second, or the first error.
func rate(count, n int, f func() error) (float64, error) {
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	t0 := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(count) {
				if err := f(); err != nil {
					failed.Store(&err)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	if e := failed.Load(); e != nil {
		return 0, *e
	}
	return float64(count) / el.Seconds(), nil
}

// fill brings the queue to n held jobs: through the API for slurm-lite,
// by sbatch from 8 submitters for real Slurm.
func fill(n int) func(*benchsys.System) error { return fillWith(n, "--hold") }

// fillWith brings the queue to n jobs submitted as `sbatch args...`.
func fillWith(n int, args ...string) func(*benchsys.System) error {
	return func(s *benchsys.System) error {
		have, err := s.Active()
		if err != nil {
			return err
		}
		var next atomic.Int64
		next.Store(int64(have))
		var first atomic.Pointer[error]
		var wg sync.WaitGroup
		var submit func() error
		if s.Socket != "" {
			sub, err := submission(s, args...)
			if err != nil {
				return err
			}
			c := sockclient.New(s.Socket)
			submit = func() error {
				var resp api.Submitted
				return c.Do(context.Background(), "POST", api.PathJobs, sub, &resp)
			}
		} else {
			script, err := s.Script("hold.sh", holdScript)
			if err != nil {
				return err
			}
			submit = func() error {
				_, _, err := s.Run("sbatch", append(args[:len(args):len(args)], script)...)
				return err
			}
		}
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(n) {
					if err := submit(); err != nil {
						first.Store(&err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if e := first.Load(); e != nil {
			return *e
		}
		return nil
	}
}

// BenchmarkSqueue is squeue's wall time (whole process, default output)
// with 1,000, 5,000 and 10,000 held jobs in the queue.
func BenchmarkSqueue(b *testing.B) {
	for _, n := range []int{1000, 5000, 10000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			// Real Slurm's MaxJobCount is 10,000 by default: room for
			// more (both systems, as for the other large queues).
			s := systemWith(b, fmt.Sprintf("squeue%d", n), benchsys.Options{GPUs: 4, MaxJobs: room(n)}, fill(n))
			var lat []time.Duration
			for b.Loop() {
				d, _, err := s.Run("squeue")
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, d)
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkTrivialJobs is 200 jobs of /bin/true, one GPU each, on 4 GPUs:
// from the first sbatch until squeue lists none of them.
func BenchmarkTrivialJobs(b *testing.B) {
	const jobs = 200
	for b.Loop() {
		s := system(b, fmt.Sprintf("trivial%d", time.Now().UnixNano()), 4, nil)
		script, err := s.Script("true.sh", "#!/bin/sh\n/bin/true\n")
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		for range jobs {
			if _, _, err := s.Run("sbatch", "--gpus=1", "-o", "/dev/null", script); err != nil {
				b.Fatal(err)
			}
		}
		for {
			n, err := s.Active()
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Since(t0) > 10*time.Minute {
				b.Fatalf("%d jobs still queued after 10 minutes", n)
			}
			// Each squeue costs a few milliseconds of CPU: polling
			// faster would slow the jobs it waits for.
			time.Sleep(50 * time.Millisecond)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "s/200jobs")
	}
}

// BenchmarkDaemonRSS is the daemon's resident memory: idle just after it
// started, and with 10,000 jobs queued.
func BenchmarkDaemonRSS(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			var setup func(*benchsys.System) error
			if n > 0 {
				setup = fill(n)
			}
			s := systemWith(b, fmt.Sprintf("rss%d", n), benchsys.Options{GPUs: 4, MaxJobs: room(n)}, setup)
			// Let a just-started daemon finish its first GPU sample and
			// scheduling pass, as an idle one would have.
			time.Sleep(2 * time.Second)
			var rss int64
			for b.Loop() {
				var err error
				if rss, err = s.RSS(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rss)/(1<<20), "MiB")
		})
	}
}

// BenchmarkIdleCPU is the CPU the idle daemon uses (user and system time
// over BENCH_IDLE, 10 s by default), in percent of one core.
func BenchmarkIdleCPU(b *testing.B) {
	watch := 10 * time.Second
	if v := os.Getenv("BENCH_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("BENCH_IDLE: %v", err)
		}
		watch = d
	}
	for b.Loop() {
		s := system(b, "idle", 4, nil)
		time.Sleep(2 * time.Second)
		c0, err := s.CPU()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		time.Sleep(watch)
		c1, err := s.CPU()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(100*(c1-c0).Seconds()/time.Since(t0).Seconds(), "%core")
	}
}

// BenchmarkFsync is a bare write and fdatasync of 4 KiB in a file beside
// the state (the temporary directory): the disk's floor for one
// submitter's commits.
func BenchmarkFsync(b *testing.B) {
	f, err := os.CreateTemp("", "benchsys-fsync")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 4096)
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := f.WriteAt(buf, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportLatency(b, lat)
}

// reportLatency adds the median and the 99th percentile, in ms.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		i := int(p * float64(len(lat)-1))
		return float64(lat[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}
