package benchsys_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/benchsys"
)

// The jobs of these benchmarks tell the harness where they are through a
// FIFO in the system's work directory, which the harness holds open for
// reading and writing: a job's write never blocks, and the harness's read
// wakes on it, with no polling and no daemon call in between.

// fifo makes the FIFO name in s's work directory and opens it.
func fifo(b *testing.B, s *benchsys.System, name string) (string, *os.File, *bufio.Reader) {
	b.Helper()
	p := filepath.Join(s.Work, name)
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o666); err != nil {
		b.Fatal(err)
	}
	// The jobs may run as another user than the harness (real Slurm's).
	if err := os.Chmod(p, 0o666); err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); os.Remove(p) })
	return p, f, bufio.NewReader(f)
}

// readLine reads the next line the jobs wrote, waiting at most wait.
func readLine(f *os.File, r *bufio.Reader, wait time.Duration) (string, error) {
	if err := f.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "", fmt.Errorf("no line from a job in %v", wait)
	}
	return strings.TrimSpace(line), err
}

// waitIdle waits until squeue lists no job, polling every 10 ms.
func waitIdle(s *benchsys.System, wait time.Duration) error {
	t0 := time.Now()
	for {
		n, err := s.Active()
		if err != nil || n == 0 {
			return err
		}
		if time.Since(t0) > wait {
			return fmt.Errorf("%d jobs still queued after %v", n, wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkFirstLine is the time from starting sbatch to the job's first
// line, one job at a time on an idle GPU: the submission's round trip,
// the scheduling pass, the launch (supervisor, launcher, the job's
// files), the script's shell, and its first command, which writes its
// job id into a FIFO the harness reads. Between jobs the harness waits
// until squeue lists none, so each meets an idle node and daemon.
func BenchmarkFirstLine(b *testing.B) {
	s := system(b, "firstline", 4, nil)
	p, f, r := fifo(b, s, "firstline.fifo")
	script, err := s.Script("firstline.sh", "#!/bin/sh\necho \"$SLURM_JOB_ID\" >'"+p+"'\n")
	if err != nil {
		b.Fatal(err)
	}
	one := func() (time.Duration, error) {
		cmd := s.Command("sbatch", "--parsable", "--gpus=1", "-o", "/dev/null", script)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		line, err := readLine(f, r, time.Minute)
		d := time.Since(t0)
		if werr := cmd.Wait(); werr != nil {
			return 0, fmt.Errorf("sbatch: %v: %s", werr, strings.TrimSpace(errb.String()))
		}
		if err != nil {
			return 0, err
		}
		id, _, _ := strings.Cut(strings.TrimSpace(out.String()), ";")
		if line != id {
			return 0, fmt.Errorf("job %s wrote %q", id, line)
		}
		return d, waitIdle(s, time.Minute)
	}
	// One untimed, so that the first timed one meets a daemon that has
	// started a job before (its first pass, its caches).
	if _, err := one(); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	for b.Loop() {
		d, err := one()
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d)
	}
	reportLatency(b, lat)
}

// BenchmarkDaemonCPUPerJob is the daemon's CPU per job: BENCH_JOBS jobs
// (default 200) of one GPU each, which sleep BENCH_JOB_SECONDS (default
// 1), submitted one after the other by sbatch onto 4 GPUs; the user and
// system time of the daemon's processes from before the first sbatch
// until squeue lists none of them (the harness learns of each end through
// a FIFO, not by polling the daemon), per job:
//
//	ms/job             the daemon alone (real Slurm: slurmctld and
//	                   slurmd), the submissions included
//	ms/job-supervisor  slurm-lite's supervisors (slurmstepd-lite and its
//	                   launcher), which the daemon reaps: the CPU of the
//	                   daemon's children less that of the job's script
//	                   (not reported for real Slurm, whose slurmstepd is
//	                   not slurmd's child)
//	ms/job-script      the job's script alone, run by the harness without
//	                   its sleep
//
// Each iteration is a whole run on a fresh daemon: run it with
// -benchtime 1x.
func BenchmarkDaemonCPUPerJob(b *testing.B) {
	length := cmp(os.Getenv("BENCH_JOB_SECONDS"), "1")
	n, err := strconv.Atoi(cmp(os.Getenv("BENCH_JOBS"), "200"))
	if err != nil || n < 1 {
		b.Fatalf("BENCH_JOBS=%q: want a count", os.Getenv("BENCH_JOBS"))
	}
	body := func(p, length string) string {
		return "#!/bin/sh\nsleep " + length + "\necho \"$SLURM_JOB_ID\" >'" + p + "'\n"
	}
	for b.Loop() {
		s := system(b, fmt.Sprintf("jobcpu%d", time.Now().UnixNano()), 4, nil)
		p, f, r := fifo(b, s, "jobcpu.fifo")
		script, err := s.Script("jobcpu.sh", body(p, length))
		if err != nil {
			b.Fatal(err)
		}
		// Let the just-started daemon settle (its first sample and pass).
		time.Sleep(time.Second)
		c0, err := s.JobCPU()
		if err != nil {
			b.Fatal(err)
		}
		for range n {
			if _, _, err := s.Run("sbatch", "--gpus=1", "-o", "/dev/null", script); err != nil {
				b.Fatal(err)
			}
		}
		for range n {
			if _, err := readLine(f, r, 10*time.Minute); err != nil {
				b.Fatal(err)
			}
		}
		if err := waitIdle(s, time.Minute); err != nil {
			b.Fatal(err)
		}
		c1, err := s.JobCPU()
		if err != nil {
			b.Fatal(err)
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(c1.Self-c0.Self)/float64(n), "ms/job")
		quick, err := s.Script("jobcpu0.sh", body(p, "0"))
		if err != nil {
			b.Fatal(err)
		}
		sh, err := scriptCPU(quick, 20)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ms(sh), "ms/job-script")
		if s.Pid != 0 {
			b.ReportMetric(max(ms(c1.Children-c0.Children)/float64(n)-ms(sh), 0), "ms/job-supervisor")
		}
	}
}

// scriptCPU is the mean CPU of script run n times by the harness,
// children included (the FIFO it writes to is held open here).
func scriptCPU(script string, n int) (time.Duration, error) {
	var total time.Duration
	for range n {
		cmd := exec.Command(script)
		cmd.Env = append(os.Environ(), "SLURM_JOB_ID=0")
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("running %s: %w", script, err)
		}
		total += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return total / time.Duration(n), nil
}
