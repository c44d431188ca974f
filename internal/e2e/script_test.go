package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/clock/clocktest"
	"github.com/slurm-lite/slurm-lite/internal/daemon"
	"github.com/slurm-lite/slurm-lite/internal/daemontest"
	"github.com/slurm-lite/slurm-lite/internal/sacct"
	"github.com/slurm-lite/slurm-lite/internal/sacctmgr"
	"github.com/slurm-lite/slurm-lite/internal/sbatch"
	"github.com/slurm-lite/slurm-lite/internal/scancel"
	"github.com/slurm-lite/slurm-lite/internal/scontrol"
	"github.com/slurm-lite/slurm-lite/internal/scrontab"
	"github.com/slurm-lite/slurm-lite/internal/sinfo"
	"github.com/slurm-lite/slurm-lite/internal/slurmdcmd"
	"github.com/slurm-lite/slurm-lite/internal/sprio"
	"github.com/slurm-lite/slurm-lite/internal/squeue"
	"github.com/slurm-lite/slurm-lite/internal/sreport"
	"github.com/slurm-lite/slurm-lite/internal/srun"
	"github.com/slurm-lite/slurm-lite/internal/sshare"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
)

// The commands run as real processes: testscript re-executes this test
// binary under each command's name, with its PATH pointing at them.
func TestMain(m *testing.M) {
	testscript.Main(waitingTests{m}, map[string]func(){
		"sbatch": func() { os.Exit(sbatch.Main(os.Args[1:], testStdio())) },
		"slurmd-lite": func() {
			os.Exit(slurmdcmd.Main(os.Args[1:], cli.Stdio(), slurmdcmd.Daemon{Run: daemonMain, Stepd: stepdMain}))
		},
		"scrontab": func() { os.Exit(scrontab.Main(os.Args[1:], testStdio())) },
		"squeue":   func() { os.Exit(squeue.Main(os.Args[1:], testStdio())) },
		"scancel":  func() { os.Exit(scancel.Main(os.Args[1:], testStdio())) },
		"scontrol": func() { os.Exit(scontrol.Main(os.Args[1:], testStdio())) },
		"sacct":    func() { os.Exit(sacct.Main(os.Args[1:], testStdio())) },
		"sshare":   func() { os.Exit(sshare.Main(os.Args[1:], testStdio())) },
		"sprio":    func() { os.Exit(sprio.Main(os.Args[1:], testStdio())) },
		"sreport":  func() { os.Exit(sreport.Main(os.Args[1:], testStdio())) },
		"sacctmgr": func() { os.Exit(sacctmgr.Main(os.Args[1:], testStdio())) },
		"sinfo":    func() { os.Exit(sinfo.Main(os.Args[1:], testStdio())) },
		"srun":     func() { os.Exit(srun.Main(os.Args[1:], testStdio())) },
		"salloc":   func() { os.Exit(srun.Salloc(os.Args[1:], testStdio())) },
	})
}

// daemonMain is daemon.Main, on the clock testClockFileEnv moves when the
// script set it.
func daemonMain(path string, fresh, rebuild bool) int {
	opts := daemon.Options{ConfigPath: path, Fresh: fresh, Rebuild: rebuild}
	if f := os.Getenv(testClockFileEnv); f != "" {
		opts.Clock = clocktest.NewFile(f)
		// Its supervisors (this binary too: stepdMain) on the same clock.
		opts.SupervisorEnv = []string{testClockFileEnv + "=" + f}
	}
	return daemon.MainOptions(opts)
}

// stepdMain is stepd.Main, whose supervisor counts time limits and
// KillWait on the clock testClockFileEnv moves when the daemon passed it
// (daemonMain): a script moves it by a minute and a one-minute limit
// falls due at once, at the start plus the limit on the daemon's clock.
func stepdMain(args []string) int {
	if f := os.Getenv(testClockFileEnv); f != "" && len(args) > 0 && args[0] == "run" {
		return stepd.MainClock(args, clocktest.NewFile(f))
	}
	return stepd.Main(args)
}

// update rewrites a script's cmp golden file (a file in the script's own
// archive) with what the command printed: go test ./internal/e2e
// -run TestScripts/NAME -update, then read the diff.
var update = flag.Bool("update", false, "rewrite the txtar archives' cmp files with what the commands print")

// waitingTests runs the tests with more of them at once than there are
// cores (unless -parallel says otherwise): the scripts spend most of
// their time waiting on jobs, daemons and timers, not computing, and two
// at a time (go test's default on two cores) left the cores idle for
// minutes. What a script waits for is a condition it polls, never a
// speed (make test-stress runs them with every core busy).
type waitingTests struct{ m *testing.M }

func (w waitingTests) Run() int {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	return w.m.Run()
}

// runScripts runs a group of scripts with the rules every group keeps
// (issue 28): every program is run with exec and no two names in an
// archive collide, so that a typo is an error, not a silent no-op; and
// -update rewrites the archives' cmp files.
func runScripts(t *testing.T, p testscript.Params) {
	t.Helper()
	p.RequireExplicitExec, p.RequireUniqueNames, p.UpdateScripts = true, true, *update
	testscript.Run(t, p)
}

func TestScripts(t *testing.T) {
	t.Parallel() // beside the other groups of scripts (waitingTests)
	runScripts(t, testscript.Params{
		Dir:       filepath.Join("testdata", "script"),
		Cmds:      commands(),
		Condition: condition,
		Setup: func(env *testscript.Env) error {
			// What the script's jobs left running ends with it.
			work := env.WorkDir
			env.Defer(func() { daemontest.KillSupervisors(work) })
			// No configuration outside the test's own directory is read.
			env.Setenv("SLURM_LITE_CONF", "")
			env.Setenv("HOME", env.WorkDir)
			// The examples, for scripts that run them as users would.
			examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", examples)
			// The recordings, for scripts that compare with them in
			// their own way (a relation between columns).
			golden, err := filepath.Abs(goldenDir)
			if err != nil {
				return err
			}
			env.Setenv("GOLDEN", golden)
			return nil
		},
	})
}

// goldenDir holds the outputs recorded from real Slurm 22.05 (a copy of the
// project's shared golden/ folder; see its README.md).
var goldenDir = filepath.Join("..", "..", "testdata", "golden")

// cmdGolden runs the command line recorded in a golden file, through sh in
// the script's work directory, and compares stdout, stderr and the exit code
// with what real Slurm printed:
//
//	golden NAME [EXTRA-STDERR-LINE...]
//
// EXTRA-STDERR-LINEs are lines slurm-lite prints after Slurm's on purpose
// (each such difference is named in the script that uses it).
func cmdGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! golden")
	}
	if len(args) < 1 {
		ts.Fatalf("usage: golden NAME [EXTRA-STDERR-LINE...]")
	}
	g, err := readGolden(filepath.Join(goldenDir, args[0]+".txt"))
	if err != nil {
		ts.Fatalf("%v", err)
	}
	wantErr := g.stderr
	for _, line := range args[1:] {
		wantErr += line + "\n"
	}
	cmd := exec.Command("sh", "-c", g.command)
	cmd.Dir = ts.Getenv("WORK")
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); ts.Getenv(name) == "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for _, name := range []string{"PATH", "HOME", "SLURM_LITE_CONF", "WORK", "TMPDIR", testClockEnv, testClockOffsetEnv} {
		cmd.Env = append(cmd.Env, name+"="+ts.Getenv(name))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exit := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("running %q: %v", g.command, err)
		}
		exit = ee.ExitCode()
	}
	if stdout.String() != g.stdout {
		ts.Fatalf("%s: stdout differs from Slurm's\nwant:\n%s\ngot:\n%s", args[0], g.stdout, stdout.String())
	}
	if stderr.String() != wantErr {
		ts.Fatalf("%s: stderr differs from Slurm's\nwant:\n%s\ngot:\n%s", args[0], wantErr, stderr.String())
	}
	if exit != g.exit {
		ts.Fatalf("%s: exit code %d, Slurm's was %d", args[0], exit, g.exit)
	}
}

// golden is one recorded command: its command line and what it printed.
type golden struct {
	command        string
	stdout, stderr string
	exit           int
}

// readGolden reads the format described in testdata/golden/README.md: line
// 1 is "$ COMMAND", then "--- stdout ---", "--- stderr ---" and
// "--- exit code: N ---" sections.
func readGolden(path string) (golden, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return golden{}, err
	}
	text := string(data)
	first, rest, _ := strings.Cut(text, "\n")
	cmdline, ok := strings.CutPrefix(first, "$ ")
	if !ok {
		return golden{}, fmt.Errorf("%s: line 1 is not a command line", path)
	}
	out, rest, ok1 := strings.Cut(rest, "--- stderr ---\n")
	out, ok2 := strings.CutPrefix(out, "--- stdout ---\n")
	errText, exitLine, ok3 := strings.Cut(rest, "--- exit code: ")
	var g golden
	if _, err := fmt.Sscanf(exitLine, "%d ---", &g.exit); err != nil || !ok1 || !ok2 || !ok3 {
		return golden{}, fmt.Errorf("%s: not in the golden format", path)
	}
	g.command, g.stdout, g.stderr = cmdline, out, errText
	return g, nil
}

// commands are the custom commands of the scripts.
func commands() map[string]func(*testscript.TestScript, bool, []string) {
	cmds := map[string]func(*testscript.TestScript, bool, []string){"golden": cmdGolden}
	for name, fn := range e2eCmds {
		cmds[name] = fn
	}
	return cmds
}
