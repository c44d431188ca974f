package stepd

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock/clocktest"
	"github.com/slurm-lite/slurm-lite/internal/procfs"
)

// The test binary doubles as the supervisor and as a stand-in daemon, as
// slurmd-lite does: STEPD_TEST_ROLE picks the part.
const roleEnv = "STEPD_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "stepd":
		os.Exit(Main(os.Args[1:]))
	case "stepd-clock":
		os.Exit(MainClock(os.Args[1:], clocktest.NewFile(os.Getenv(clockFileEnv))))
	case "daemon":
		os.Exit(fakeDaemon(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeDaemon starts a supervisor for the state directory args[0], writes
// its pid to args[1] and waits to be killed, as the daemon would.
func fakeDaemon(args []string) int {
	p, err := Launch([]string{os.Args[0]}, supervisorEnv(), args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(args[1], []byte(strconv.Itoa(p.Pid)), 0o600); err != nil {
		return 1
	}
	_, _ = p.Wait()
	select {}
}

// supervisorEnv is the environment a test supervisor runs with.
func supervisorEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, roleEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, roleEnv+"=stepd")
}

var nextJob atomic.Uint32

// testJob is a job run by a real supervisor process.
type testJob struct {
	t    *testing.T
	dir  string // state directory
	work string // working directory
	spec *Spec
	proc *os.Process
	env  []string // the supervisor's environment; nil: supervisorEnv()
}

// newJob makes a job running script (a whole file, "#!" line included)
// as the current user, with a one-second KillWait.
func newJob(t *testing.T, script string) *testJob {
	t.Helper()
	root := t.TempDir()
	j := &testJob{t: t, dir: filepath.Join(root, "state"), work: filepath.Join(root, "work")}
	for _, d := range []string{j.dir, j.work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	stored := filepath.Join(j.dir, "script")
	if err := os.WriteFile(stored, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	id := 1000 + nextJob.Add(1)
	j.spec = &Spec{
		JobID:       id,
		Name:        "test",
		Partition:   "gpu",
		Account:     "lab",
		QOS:         "normal",
		User:        Credential{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir, Shell: "/bin/bash"},
		WorkDir:     j.work,
		SubmitDir:   j.work,
		SubmitHost:  "vm",
		Script:      stored,
		SubmitEnv:   []string{"PATH=/usr/bin:/bin", "HOME=" + u.HomeDir, "USER=" + u.Username},
		NodeName:    "gpu01",
		ClusterName: "anchor",
		KillWait:    time.Second,
		SpoolDir:    root,
	}
	return j
}

// start writes the spec and launches the supervisor.
func (j *testJob) start() *testJob {
	j.t.Helper()
	if err := WriteSpec(j.dir, j.spec); err != nil {
		j.t.Fatal(err)
	}
	env := j.env
	if env == nil {
		env = supervisorEnv()
	}
	p, err := Launch([]string{os.Args[0]}, env, j.dir)
	if err != nil {
		j.t.Fatal(err)
	}
	j.proc = p
	j.t.Cleanup(func() {
		// A test that failed half-way must not leave its job running.
		if !j.ended() {
			_ = callQuiet(j.dir, Request{Op: OpCancel, Kill: true})
			_, _ = p.Wait()
		}
	})
	return j
}

func (j *testJob) ended() bool {
	_, err := ReadStatus(j.dir)
	return err == nil
}

// callQuiet is Call without the reply, for cleanups.
func callQuiet(dir string, r Request) error {
	_, err := Call(dir, r)
	return err
}

// wait waits for the supervisor to exit and returns the job's status.
func (j *testJob) wait() Status {
	j.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := j.proc.Wait()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			j.t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		j.t.Fatalf("supervisor still running after a minute; log:\n%s", j.log())
	}
	st, err := ReadStatus(j.dir)
	if err != nil {
		j.t.Fatalf("%v; log:\n%s", err, j.log())
	}
	return st
}

// waitFor polls until cond holds.
func (j *testJob) waitFor(what string, cond func() bool) {
	j.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			j.t.Fatalf("timed out waiting for %s; log:\n%s", what, j.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitOutput waits until the job's output file holds want.
func (j *testJob) waitOutput(name, want string) {
	j.t.Helper()
	j.waitFor(fmt.Sprintf("%q in %s", want, name), func() bool {
		return strings.Contains(j.read(name), want)
	})
}

func (j *testJob) read(name string) string {
	b, err := os.ReadFile(filepath.Join(j.work, name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		j.t.Fatal(err)
	}
	return string(b)
}

func (j *testJob) out() string { return j.read(fmt.Sprintf("slurm-%d.out", j.spec.JobID)) }

func (j *testJob) log() string {
	b, _ := os.ReadFile(filepath.Join(j.dir, LogFile))
	return string(b)
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	return procfs.Alive(pid) && syscall.Kill(pid, 0) == nil
}
