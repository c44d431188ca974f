package benchsys_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/benchsys"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Issue 28 §5 asks sbatch to take at most 1.5 times a bare Go process
// start. Two floors say what any sbatch can reach on the machine, whatever
// its daemon does: the command's own start with nothing to do
// (BenchmarkSbatchVersion), and the least a durable answer costs
// (BenchmarkDurableAnswer): a server that does nothing but read the
// request, write 4 KiB and fdatasync them before it answers, as a daemon
// must before it gives out a job id that a power cut cannot take back.

// The machine's speed drifts over minutes (a bare start measured ten
// minutes apart from sbatch once came out slower than `sbatch --version`),
// so each ratio's floor is measured in the same benchmark as its command:
// a block of bare starts before the command's runs and one after
// (withFloor, parallelWithFloor), reported as bare-p50-ms and
// bare-jobs/s. Blocks, not one bare start between each two commands: a
// bare start right after a submission would share the CPU with the
// daemon's work on it, and flatter the ratio.

// settle is the pause before the floor's second block, for the daemon's
// work on the last submission (its pass, its log line) to end.
const settle = 200 * time.Millisecond

// withFloor times b.N runs of run one after the other (p50-ms, p99-ms),
// between two blocks of b.N/2 bare process starts (bare-p50-ms).
func withFloor(b *testing.B, run func() (time.Duration, error)) {
	exe := nothing(b)
	b.ResetTimer()
	var lat []time.Duration
	floor := bareStarts(b, exe, max(b.N/2, 1))
	for b.Loop() {
		d, err := run()
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	time.Sleep(settle)
	floor = append(floor, bareStarts(b, exe, max(b.N/2, 1))...)
	reportLatency(b, lat)
	slices.Sort(floor)
	b.ReportMetric(float64(floor[len(floor)/2])/float64(time.Millisecond), "bare-p50-ms")
}

// bareStarts times n runs of exe, one after the other.
func bareStarts(b *testing.B, exe string, n int) []time.Duration {
	lat := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if err := exec.Command(exe).Run(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

// parallelWithFloor is parallel (jobs/s) between two blocks of b.N/2 bare
// starts, n at a time (bare-jobs/s: their rate over both blocks).
func parallelWithFloor(b *testing.B, n int, f func() error) {
	exe := nothing(b)
	bare := func() error { return exec.Command(exe).Run() }
	half := max(b.N/2, 1)
	b.ResetTimer()
	r1, err := rate(half, n, bare)
	if err != nil {
		b.Fatal(err)
	}
	r, err := rate(b.N, n, f)
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(settle)
	r2, err := rate(half, n, bare)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(r, "jobs/s")
	// The rate over both blocks: their count over their summed times.
	b.ReportMetric(2*float64(half)/(float64(half)/r1+float64(half)/r2), "bare-jobs/s")
}

// BenchmarkSbatchVersion is `sbatch --version`: the command's start and
// end alone, run as BenchmarkSbatch runs sbatch, with its own floor.
func BenchmarkSbatchVersion(b *testing.B) {
	s := system(b, "submit", 4, nil)
	withFloor(b, func() (time.Duration, error) { return s.Quiet("sbatch", "--version") })
}

// BenchmarkSbatchVersionParallel is 8 `sbatch --version` at a time, in
// processes a second: the ceiling of 8 submitters, whose processes do at
// least this much (BenchmarkSubmitProcs).
func BenchmarkSbatchVersionParallel(b *testing.B) {
	s := system(b, "submit", 4, nil)
	parallelWithFloor(b, 8, func() error {
		_, err := s.Quiet("sbatch", "--version")
		return err
	})
}

// durableSource is the floor's server: net/http on a Unix socket, one
// write and fdatasync of 4 KiB before each answer, the answer sbatch reads.
const durableSource = `package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
)

func main() {
	ln, err := net.Listen("unix", os.Args[1])
	if err != nil {
		panic(err)
	}
	f, err := os.OpenFile(os.Args[2], os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	page := make([]byte, 4096)
	os.Stdout.WriteString("ready\n")
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if _, err := f.WriteAt(page, 0); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{\"job_id\":1}\n")
	}))
}
`

// BenchmarkDurableAnswer is the floor under a submission's answer: what
// sbatch sends (the same client, the same request), answered by the
// durable server above, one request at a time, from this process.
func BenchmarkDurableAnswer(b *testing.B) {
	if realSlurm() != "" {
		b.Skip("a floor of slurm-lite's, measured once")
	}
	dir := b.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(durableSource), 0o644); err != nil {
		b.Fatal(err)
	}
	exe := filepath.Join(dir, "durable")
	build := exec.Command("go", "build", "-o", exe, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "d.sock")
	srv := exec.Command(exe, sock, filepath.Join(dir, "page"))
	ready, err := srv.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	if _, err := ready.Read(make([]byte, 6)); err != nil {
		b.Fatalf("the durable server did not start: %v", err)
	}
	r, err := benchsys.Request([]byte(holdScript), "--hold", "hold.sh")
	if err != nil {
		b.Fatal(err)
	}
	req := api.Submit{Request: *r, Env: os.Environ(), Cwd: dir}
	c := sockclient.New(sock)
	c.SetMessageTimeout(10 * time.Second)
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		var resp api.Submitted
		if err := c.Do(context.Background(), "POST", api.PathJobs, req, &resp); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if resp.JobID != 1 {
			b.Fatalf("answer %+v", resp)
		}
	}
	reportLatency(b, lat)
}
