package benchsys_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// BenchmarkSbatchVersion is `sbatch --version`: the command's start and
// end alone, run as BenchmarkSbatch runs sbatch.
func BenchmarkSbatchVersion(b *testing.B) {
	s := system(b, "submit", 4, nil)
	var lat []time.Duration
	for b.Loop() {
		d, err := s.Quiet("sbatch", "--version")
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	reportLatency(b, lat)
}

// BenchmarkSbatchVersionParallel is 8 `sbatch --version` at a time, in
// processes a second: the ceiling of 8 submitters, whose processes do at
// least this much (BenchmarkSubmitProcs).
func BenchmarkSbatchVersionParallel(b *testing.B) {
	s := system(b, "submit", 4, nil)
	parallel(b, 8, func() error {
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
