package benchsys

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// System is a running scheduler that the benchmarks drive through its
// commands: slurm-lite's daemon in a directory of its own, or real Slurm
// set up by scripts/real-slurm.
type System struct {
	// Name is "slurm-lite" or "slurm".
	Name string
	// Bin holds the commands (sbatch, squeue, ...).
	Bin string
	// Dir is the system's directory; Work, inside it, is where jobs are
	// submitted from and write their output.
	Dir, Work string
	// Env is the commands' environment.
	Env []string
	// Pid is slurm-lite's daemon's pid (0 for real Slurm).
	Pid int
	// Socket is slurm-lite's socket ("" for real Slurm).
	Socket string

	stop func() error
	// Quiet's files, opened on its first call.
	quietOnce          sync.Once
	quietOut, quietLog *os.File
	quietErr           error
}

// Options says what to start.
type Options struct {
	// Bin is the directory of slurm-lite's commands (make build's bin).
	Bin string
	// Dir is an empty directory for the system's files.
	Dir string
	// GPUs is the number of simulated GPUs (slurm-lite only; real Slurm's
	// node has the 4 of scripts/real-slurm).
	GPUs int
	// RealSlurm, when set, is scripts/real-slurm: start real Slurm instead.
	RealSlurm string
	// PortBase moves real Slurm's ports (scripts/real-slurm --port-base).
	PortBase int
	// MaxJobs, when set, makes room for that many jobs, or one array of
	// that many tasks: MaxJobCount 2×MaxJobs (slurm-lite's per-user half
	// must still hold them all; Slurm refuses a job once MaxJobCount are
	// in) and MaxArraySize one more. Both systems' defaults stop at 10,000
	// jobs and 1,001 tasks.
	MaxJobs int
	// Accounting starts real Slurm with slurmdbd and MariaDB
	// (scripts/real-slurm --accounting), which sacct needs; slurm-lite
	// keeps its accounting itself.
	Accounting bool
}

// Start starts the system that opts name and waits until it answers.
func Start(opts Options) (*System, error) {
	if opts.RealSlurm != "" {
		return startSlurm(opts)
	}
	return startLite(opts)
}

func startLite(opts Options) (*System, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(opts.Bin)
	if err != nil {
		return nil, err
	}
	// A daemon run by root serves every user: its socket must be reachable.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o777); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "slurm-lite.toml")
	sock := filepath.Join(dir, "slurmd.sock")
	toml := fmt.Sprintf(`SocketPath        = %q
StateSaveLocation = %q

[Node]
NodeName   = "gpu01"
CPUs       = 16
RealMemory = "64000M"
GPUs       = "simulated"

[[Node.SimulatedGPU]]
Type   = "a100"
Memory = "80G"
Count  = %d
`, sock, filepath.Join(dir, "state"), max(opts.GPUs, 1))
	if opts.MaxJobs > 0 {
		// Top-level keys go before the first table.
		toml = fmt.Sprintf("MaxJobCount  = %d\nMaxArraySize = %d\n", 2*opts.MaxJobs, 2*opts.MaxJobs+1) + toml
	}
	if err := os.WriteFile(conf, []byte(toml), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "slurmd.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "slurmd-lite"), "-f", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	s := &System{
		Name: "slurm-lite", Bin: bin, Dir: dir, Work: work, Pid: cmd.Process.Pid, Socket: sock,
		Env: append(os.Environ(), "SLURM_LITE_CONF="+conf),
	}
	var once sync.Once
	var stopErr error
	s.stop = func() error {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				stopErr = errors.New("slurmd-lite did not stop within 10 s of SIGINT")
			}
		})
		return stopErr
	}
	c := sockclient.New(sock)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var jobs []api.Job
		err := c.Do(context.Background(), "GET", api.PathJobs, nil, &jobs)
		if err == nil {
			return s, nil
		}
		select {
		case <-done:
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("slurmd-lite exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("slurmd-lite does not answer on %s: %w", sock, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startSlurm(opts Options) (*System, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	args := []string{"start", "--dir", dir}
	if opts.PortBase != 0 {
		args = append(args, "--port-base", strconv.Itoa(opts.PortBase))
	}
	if opts.MaxJobs > 0 {
		args = append(args, "--max-jobs", strconv.Itoa(2*opts.MaxJobs))
	}
	if opts.Accounting {
		args = append(args, "--accounting")
	}
	out, err := exec.Command(opts.RealSlurm, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", opts.RealSlurm, strings.Join(args, " "), err, out)
	}
	s := &System{
		Name: "slurm", Bin: "/usr/bin", Dir: dir, Work: filepath.Join(dir, "jobs"),
		Env: append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf")),
	}
	s.stop = func() error {
		out, err := exec.Command(opts.RealSlurm, "stop", "--dir", dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s stop: %v\n%s", opts.RealSlurm, err, out)
		}
		return nil
	}
	return s, nil
}

// Stop stops the system (slurm-lite's daemon by SIGINT, real Slurm by
// scripts/real-slurm stop). Jobs still running are the caller's to end
// first.
func (s *System) Stop() error { return s.stop() }

// Command is one of the system's commands, ready to run in Work.
func (s *System) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.Bin, name), args...)
	cmd.Env = s.Env
	cmd.Dir = s.Work
	return cmd
}

// Run runs a command to its end and returns its wall time, from fork to
// exit, and its standard output.
func (s *System) Run(name string, args ...string) (time.Duration, []byte, error) {
	cmd := s.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return d, out.Bytes(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return d, out.Bytes(), nil
}

// Quiet runs a command to its end as the floor (BenchmarkProcessStart)
// runs the program that does nothing: its output goes to files, not
// through pipes, so that the harness's pipes and the goroutines that copy
// them (a tenth of a millisecond) are not counted as the command's. It
// returns the wall time, from fork to exit. Its standard output is
// dropped; its standard error goes to quiet.err in Dir, whose end a
// failure's error quotes.
func (s *System) Quiet(name string, args ...string) (time.Duration, error) {
	s.quietOnce.Do(func() {
		s.quietOut, s.quietErr = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if s.quietErr == nil {
			s.quietLog, s.quietErr = os.OpenFile(filepath.Join(s.Dir, "quiet.err"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		}
	})
	if s.quietErr != nil {
		return 0, s.quietErr
	}
	cmd := s.Command(name, args...)
	cmd.Stdout, cmd.Stderr = s.quietOut, s.quietLog
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		log, _ := os.ReadFile(s.quietLog.Name())
		if len(log) > 2000 {
			log = log[len(log)-2000:]
		}
		return d, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(log)))
	}
	return d, nil
}

// Script writes a job script into Work and returns its path.
func (s *System) Script(name, body string) (string, error) {
	p := filepath.Join(s.Work, name)
	return p, os.WriteFile(p, []byte(body), 0o755)
}

// Active counts the jobs squeue lists (pending, running, completing).
func (s *System) Active() (int, error) {
	_, out, err := s.Run("squeue", "-h", "-o", "%i")
	if err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	return n, nil
}

// Cancel cancels every job of the caller's.
func (s *System) Cancel() error {
	_, _, err := s.Run("scancel", "-u", currentUser())
	return err
}

// RSS is the daemon's resident memory in bytes: slurm-lite's one process,
// or real Slurm's slurmctld and slurmd together (and slurmdbd and mariadb
// when they run), read from /proc.
func (s *System) RSS() (int64, error) {
	var total int64
	for _, pid := range s.pids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				total += kb * 1024
			}
		}
	}
	return total, nil
}

// CPU is the CPU time (user and system) the daemon's processes have used.
func (s *System) CPU() (time.Duration, error) {
	var total time.Duration
	for _, pid := range s.pids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, err
		}
		// The fields after the command name, which is in parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(ut+st) * time.Second / clockTicks
	}
	return total, nil
}

// clockTicks is USER_HZ, which /proc/PID/stat counts in (100 on Linux).
const clockTicks = 100

func (s *System) pids() []int {
	if s.Pid != 0 {
		return []int{s.Pid}
	}
	var pids []int
	for _, name := range []string{"slurmctld", "slurmd", "slurmdbd", "mariadbd"} {
		b, err := os.ReadFile(filepath.Join(s.Dir, "pids", name+".pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Request is the job request that `sbatch args...` sends for script,
// parsed as sbatch parses it: what the API benchmarks submit.
func Request(script []byte, args ...string) (*jobscript.Request, error) {
	cl, err := jobscript.ParseCommandLine(args)
	if err != nil {
		return nil, err
	}
	return jobscript.Parse(jobscript.Input{Script: script, Command: cl, Now: time.Now()})
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	out, _ := exec.Command("id", "-un").Output()
	return strings.TrimSpace(string(out))
}
