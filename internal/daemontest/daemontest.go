// Package daemontest starts a real slurmd-lite for a test: the daemon as
// make build builds it, as a process of its own, over a configuration and
// a state directory in the test's t.TempDir, with the Slurm commands beside
// it. The test talks to it as users do (Run: sbatch, squeue, ...) or over
// its socket (Client), and it stops when the test ends, with every job the
// test left running.
//
// Only tests import it (internal/importrules checks it).
//
//	d := daemontest.Start(t, daemontest.Options{Config: "KillWait = 1"})
//	id := d.Must("sbatch", "--parsable", "--wrap", "true")
//	d.WaitFor("job "+id+" done", func() bool { ... })
//
// The binaries are built once per test binary (go build, from the module
// the test runs in) into a temporary directory, or taken from
// $SLITE_DAEMONTEST_BIN where a caller has built them already (make build's
// bin/). A test package that uses Start calls RemoveBuilt after m.Run in
// its TestMain.
package daemontest

import (
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
	"syscall"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// BinEnv names a directory of binaries built already (slurmd-lite and the
// commands, as make build leaves them in bin/): Start then builds none.
const BinEnv = "SLITE_DAEMONTEST_BIN"

// Options says how to start the daemon.
type Options struct {
	// Config is TOML added after the base configuration (SocketPath,
	// StateSaveLocation, KillWait = 1, GPUSampleInterval = 1). Where it
	// has a [Node] table of its own, the base's (gpu01, 2 CPUs, 2G, no
	// GPUs) is left out; top-level keys go before any table.
	Config string
	// State is StateSaveLocation; "" is state/ in the test's directory.
	State string
	// Dir is the daemon's directory (configuration, socket, log, jobs'
	// working directory); "" is a new t.TempDir. A second Start over the
	// same Dir and State is a restart.
	Dir string
	// Argv0 is the path the daemon is started as: its supervisors start
	// from the binary it names (slurmd-lite re-executes itself as
	// argv[0]). "" is the built slurmd-lite. A test makes the
	// supervisors fail by naming a file it then removes or a script.
	Argv0 string
	// Env is added to the daemon's environment.
	Env []string
}

// Daemon is a running slurmd-lite.
type Daemon struct {
	t testing.TB
	// Dir is the daemon's directory; Conf its configuration file (which
	// the commands Run starts read through SLURM_LITE_CONF); Sock its
	// socket; State its state directory.
	Dir, Conf, Sock, State string
	// Client talks to the daemon's socket as the commands do.
	Client *sockclient.Client

	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	waitErr error
	stopped bool
}

// Start starts a daemon for t and waits for its socket. It stops when t
// ends (Stop), after the jobs t left unfinished are cancelled.
func Start(t testing.TB, o Options) *Daemon {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real daemon")
	}
	dir := o.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	d := &Daemon{t: t, Dir: dir, Conf: filepath.Join(dir, "conf.toml"), Sock: filepath.Join(dir, "d.sock"),
		State: o.State, logPath: filepath.Join(dir, "slurmd.log"), exited: make(chan struct{})}
	if d.State == "" {
		d.State = filepath.Join(dir, "state")
	}
	if err := os.WriteFile(d.Conf, []byte(baseConfig(d.Sock, d.State, o.Config)), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := Bin(t, "slurmd-lite")
	log, err := os.OpenFile(d.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	d.cmd = exec.Command(bin, "-f", d.Conf)
	if o.Argv0 != "" {
		d.cmd.Args[0] = o.Argv0
	}
	d.cmd.Dir = dir
	d.cmd.Env = append(d.env(), o.Env...)
	d.cmd.Stdout, d.cmd.Stderr = log, log
	// A test binary killed before its cleanup takes its daemon along.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting slurmd-lite: %v", err)
	}
	go func() {
		d.waitErr = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(d.cleanup)
	for deadline := clock.After(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c := sockclient.New(d.Sock); c.Reach(context.Background()) == nil {
			d.Client = c
			return d
		}
		select {
		case <-d.exited:
			t.Fatalf("slurmd-lite exited before it listened (%v):\n%s", d.waitErr, d.Log())
		default:
		}
		if deadline.Passed() {
			t.Fatalf("timed out waiting for slurmd-lite's socket %s:\n%s", d.Sock, d.Log())
		}
	}
}

// baseConfig is the base configuration with extra after it.
func baseConfig(sock, state, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SocketPath        = %q\nStateSaveLocation = %q\n", sock, state)
	top, tables := extra, ""
	if i := strings.Index(extra, "\n["); i >= 0 {
		top, tables = extra[:i+1], extra[i+1:]
	} else if strings.HasPrefix(extra, "[") {
		top, tables = "", extra
	}
	if !hasKey(top, "KillWait") {
		b.WriteString("KillWait          = 1\n")
	}
	if !hasKey(top, "GPUSampleInterval") {
		b.WriteString("GPUSampleInterval = 1\n")
	}
	b.WriteString(top)
	if !strings.Contains(extra, "[Node]") {
		b.WriteString("\n[Node]\nNodeName   = \"gpu01\"\nCPUs       = 2\nRealMemory = \"2G\"\nGPUs       = \"none\"\n")
	}
	b.WriteString("\n" + tables)
	return b.String()
}

// hasKey reports whether TOML text sets key at its top.
func hasKey(text, key string) bool {
	for _, l := range strings.Split(text, "\n") {
		if k, _, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// env is what the daemon and the commands run with: the built binaries
// first on PATH, the test's configuration, nothing from the machine's.
func (d *Daemon) env() []string {
	return []string{
		"PATH=" + filepath.Dir(Bin(d.t, "slurmd-lite")) + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
		"HOME=" + d.Dir,
		"SLURM_LITE_CONF=" + d.Conf,
		"TMPDIR=" + os.TempDir(),
		"LANG=C",
	}
}

// Run runs a command (sbatch, squeue, ...) in the daemon's directory as
// a user would, and returns what it printed and its exit code.
func (d *Daemon) Run(name string, args ...string) (stdout, stderr string, code int) {
	d.t.Helper()
	cmd := exec.Command(Bin(d.t, name), args...)
	cmd.Dir, cmd.Env = d.Dir, d.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		d.t.Fatalf("running %s: %v", name, err)
	}
	return out.String(), errb.String(), code
}

// Must runs a command that must succeed and returns its output, trimmed.
func (d *Daemon) Must(name string, args ...string) string {
	d.t.Helper()
	out, errs, code := d.Run(name, args...)
	if code != 0 {
		d.t.Fatalf("%s %s: exit %d\n%s%s", name, strings.Join(args, " "), code, out, errs)
	}
	return strings.TrimSpace(out)
}

// WaitFor polls cond every 50 ms for up to 30 s, and fails the test
// naming what it waited for.
func (d *Daemon) WaitFor(what string, cond func() bool) {
	d.t.Helper()
	for deadline := clock.After(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
		if deadline.Passed() {
			d.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Job is job id as the daemon shows it (squeue's and scontrol's view).
func (d *Daemon) Job(id uint32) api.Job {
	d.t.Helper()
	var jobs []api.Job
	if err := d.Client.Do(context.Background(), "GET", fmt.Sprintf("%s?id=%d", api.PathJobs, id), nil, &jobs); err != nil || len(jobs) == 0 {
		d.t.Fatalf("job %d: %v (%d rows)", id, err, len(jobs))
	}
	return jobs[0]
}

// Log is what the daemon has logged so far.
func (d *Daemon) Log() string {
	b, _ := os.ReadFile(d.logPath)
	return string(b)
}

// Stop stops the daemon as SIGTERM does (its jobs go on, as they do
// past a daemon's stop) and waits for it; a daemon still there after 30 s
// is killed and the test fails. Stopping twice is stopping once.
func (d *Daemon) Stop() {
	d.t.Helper()
	if d.stopped {
		return
	}
	d.stopped = true
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
		d.t.Errorf("slurmd-lite did not stop within 30 s of SIGTERM; killed")
	}
	if d.waitErr != nil {
		d.t.Errorf("slurmd-lite: %v", d.waitErr)
	}
}

// cleanup cancels the jobs the test left (they outlive a daemon by
// design), stops the daemon, and kills what is left of the supervisors
// of this daemon's jobs, and only those.
func (d *Daemon) cleanup() {
	if !d.stopped && d.Client != nil {
		ctx := context.Background()
		unfinished := func() []string {
			var jobs []api.Job
			if d.Client.Do(ctx, "GET", api.PathJobs, nil, &jobs) != nil {
				return nil
			}
			var ids []string
			for _, j := range jobs {
				if !j.State.Finished() {
					ids = append(ids, strconv.Itoa(int(j.ID)))
				}
			}
			return ids
		}
		if ids := unfinished(); len(ids) > 0 {
			_ = d.Client.Do(ctx, "POST", api.PathCancel, api.Cancel{Jobs: ids}, nil)
			for deadline := clock.After(30 * time.Second); len(unfinished()) > 0 && !deadline.Passed(); {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	d.Stop()
	KillSupervisors(d.State)
	if d.t.Failed() {
		d.t.Logf("slurmd-lite's log (%s):\n%s", d.logPath, d.Log())
	}
}

var (
	buildMu  sync.Mutex
	builtDir string
	built    = map[string]string{}
)

// Bin is the path of a built binary (slurmd-lite, sbatch, ...): from
// $SLITE_DAEMONTEST_BIN, else built once for this test binary.
func Bin(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv(BinEnv); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v (make build puts every command there)", BinEnv, dir, err)
		}
		return p
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", name)); err != nil {
		t.Fatalf("no command %q in %s/cmd", name, root)
	}
	if builtDir == "" {
		if builtDir, err = os.MkdirTemp("", "daemontest-bin-"); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(builtDir, name)
	cmd := exec.Command(goTool(), "build", "-o", p, "./cmd/"+name)
	cmd.Dir = root
	// As make build builds them: the commands and the supervisor
	// without cgo; the daemon with it (NVML).
	cmd.Env = os.Environ()
	if name != "slurmd-lite" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	built[name] = p
	return p
}

// RemoveBuilt removes the binaries Bin built; a TestMain calls it after
// m.Run.
func RemoveBuilt() {
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
		builtDir, built = "", map[string]string{}
	}
}

// moduleRoot is the directory of the go.mod above the test's own.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: daemontest builds from the module's cmd/", dir)
		}
	}
}

// goTool is the go command that runs the tests: go test puts its GOROOT
// in the test's environment.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
