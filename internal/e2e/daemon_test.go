package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/daemontest"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Commands for the end-to-end scripts, which run the real daemon and the
// real commands as processes (see testdata/script/daemon_*.txtar).
var e2eCmds = map[string]func(*testscript.TestScript, bool, []string){
	"waitsock":  cmdWaitSock,
	"waitjob":   cmdWaitJob,
	"asuser":    cmdAsUser,
	"parallel":  cmdParallel,
	"distinct":  cmdDistinct,
	"fileowner": cmdFileOwner,
	"userdir":   cmdUserDir,
	"shareddir": cmdSharedDir,
	"jobnote":   cmdJobNote,
	// goldenlike NAME [-run COMMAND] [MASK...]: as in the fake daemon's
	// scripts, against a live daemon.
	"goldenlike": cmdGoldenLike,
}

// jobnote ID TEXT: job ID (or the id in the variable ID) has a note
// containing TEXT.
func cmdJobNote(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jobnote ID TEXT")
	}
	id := args[0]
	if v := ts.Getenv(id); v != "" {
		id = strings.TrimSpace(v)
	}
	cfg, err := config.Load(ts.Getenv("SLURM_LITE_CONF"))
	ts.Check(err)
	c := sockclient.New(cfg.SocketPath)
	var jobs []api.Job
	ts.Check(c.Do(context.Background(), "GET", api.PathJobs+"?id="+id, nil, &jobs))
	for _, j := range jobs {
		for _, n := range j.Notes {
			if strings.Contains(n, args[1]) != neg {
				return
			}
		}
	}
	if !neg {
		ts.Fatalf("job %s has no note containing %q", id, args[1])
	}
}

// shareddir VAR: make a directory every user can enter (mode 0755, owned
// by the test's user) under the system's temporary directory, for the
// daemon's socket and configuration when other users must reach them;
// removed when the script ends; its path goes in $VAR.
func cmdSharedDir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: shareddir VAR")
	}
	dir, err := os.MkdirTemp("", "slurm-lite-e2e-")
	ts.Check(err)
	ts.Defer(func() { daemontest.KillSupervisors(dir); os.RemoveAll(dir) })
	ts.Check(os.Chmod(dir, 0o755))
	ts.Setenv(args[0], dir)
}

// userdir USER VAR: make a directory owned by USER under the system's
// temporary directory (the test's own work directory is not reachable by
// other users), removed when the script ends; its path goes in $VAR.
func cmdUserDir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: userdir USER VAR")
	}
	u := requireUser(ts, args[0])
	dir, err := os.MkdirTemp("", "slurm-lite-e2e-"+args[0]+"-")
	ts.Check(err)
	ts.Defer(func() { daemontest.KillSupervisors(dir); os.RemoveAll(dir) })
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	ts.Check(os.Chown(dir, uid, gid))
	ts.Check(os.Chmod(dir, 0o755))
	ts.Setenv(args[1], dir)
}

// waitsock PATH: wait (up to 20 s) until a daemon answers on the socket.
func cmdWaitSock(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitsock PATH")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("no daemon answered on %s within 20s", path)
}

// waitjob [-t SECONDS] [-exit S:N] [-reason R] ID STATE: wait until job
// ID (or the job id in the variable ID) is in STATE (default timeout
// 120 s), asking the daemon named by $SLURM_LITE_CONF; with -exit, its
// exit code must be S:N then; with -reason, wait until its reason is R
// too (a pass has looked at it).
func cmdWaitJob(ts *testscript.TestScript, neg bool, args []string) {
	limit := 120 * time.Second
	exit, reason := "", ""
	for len(args) > 2 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-t":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			limit = time.Duration(n) * time.Second
		case "-exit":
			exit = args[1]
		case "-reason":
			reason = args[1]
		default:
			ts.Fatalf("waitjob: unknown flag %s", args[0])
		}
		args = args[2:]
	}
	if len(args) != 2 {
		ts.Fatalf("usage: waitjob [-t SECONDS] [-exit S:N] [-reason R] ID STATE")
	}
	id := args[0]
	if v := ts.Getenv(id); v != "" {
		id = strings.TrimSpace(v)
	}
	cfg, err := config.Load(ts.Getenv("SLURM_LITE_CONF"))
	ts.Check(err)
	c := sockclient.New(cfg.SocketPath)
	deadline := time.Now().Add(limit)
	last := "unknown"
	var lastJob api.Job
	for time.Now().Before(deadline) {
		var jobs []api.Job
		if err := c.Do(context.Background(), "GET", api.PathJobs+"?id="+id, nil, &jobs); err == nil {
			for _, j := range jobs {
				if fmt.Sprint(j.ID) != id {
					continue
				}
				sq := j.Squeue() // SPECIAL_EXIT as squeue shows it
				last, lastJob = string(sq.ShownState()), j
				if last == args[1] && (reason == "" || string(j.Reason) == reason) {
					if exit != "" && j.ExitCode.String() != exit {
						ts.Fatalf("job %s ended %s with exit code %s, not %s", id, last, j.ExitCode, exit)
					}
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	ts.Fatalf("job %s is %s, not %s %s, after %v (exit %s, reason %s, restarts %d, notes %q)", id, last, args[1], reason, limit,
		lastJob.ExitCode, lastJob.Reason, lastJob.Restarts, lastJob.Notes)
}

// asuser [-dir DIR] [-env NAME=VALUE]... [-unset NAME]... USER CMD [ARGS...]:
// run a command as another user (the tests run as root), in DIR (default
// $WORK), with PATH (the copies of the commands other users can run
// first: a job it submits finds them there), SLURM_LITE_CONF, HOME and
// USER, changed by -env and -unset. Its stdout and stderr, trimmed, go in
// $ASUSER_STDOUT and $ASUSER_STDERR, and its exit status in $ASUSER_EXIT;
// the status is checked as exec would (! asuser expects a failure). Guard
// scripts with [root] and [user:NAME].
func cmdAsUser(ts *testscript.TestScript, neg bool, args []string) {
	dir := ts.Getenv("WORK")
	var set []string
	var unset []string
	for len(args) > 2 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-dir":
			dir = args[1]
		case "-env":
			set = append(set, args[1])
		case "-unset":
			unset = append(unset, args[1])
		default:
			ts.Fatalf("asuser: unknown flag %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: asuser [-dir DIR] [-env NAME=VALUE]... [-unset NAME]... USER CMD [ARGS...]")
	}
	u := requireUser(ts, args[0])
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	path := sharedCommand(ts, args[1])
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = dir
	env := map[string]string{"PATH": ts.Getenv("SLITE_SHARED_BIN") + ":" + ts.Getenv("PATH"),
		"SLURM_LITE_CONF": ts.Getenv("SLURM_LITE_CONF"), "HOME": u.HomeDir, "USER": u.Username}
	for _, kv := range set {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range unset {
		delete(env, k)
	}
	cmd.Env = nil
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	slices.Sort(cmd.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("asuser: %v", err)
	}
	ts.Setenv("ASUSER_STDOUT", strings.TrimSpace(stdout.String()))
	ts.Setenv("ASUSER_STDERR", strings.TrimSpace(stderr.String()))
	ts.Setenv("ASUSER_EXIT", strconv.Itoa(code))
	ts.Logf("[asuser %s] exit %d\nstdout:\n%sstderr:\n%s", args[0], code, stdout.String(), stderr.String())
	switch {
	case code != 0 && !neg:
		ts.Fatalf("asuser %s: exit status %d", strings.Join(args, " "), code)
	case code == 0 && neg:
		ts.Fatalf("asuser %s: unexpected success", strings.Join(args, " "))
	}
}

// sharedCommand is a copy of one of the script's commands that other users
// can run: testscript's own command directory, like the test binary, is
// private to the user running the tests. The copy is this test binary under
// the command's name, which is how testscript tells its commands apart.
func sharedCommand(ts *testscript.TestScript, name string) string {
	dir := ts.Getenv("SLITE_SHARED_BIN")
	if dir == "" {
		d, err := os.MkdirTemp("", "slurm-lite-e2e-bin-")
		ts.Check(err)
		ts.Defer(func() { os.RemoveAll(d) })
		ts.Check(os.Chmod(d, 0o755))
		ts.Setenv("SLITE_SHARED_BIN", d)
		dir = d
	}
	path := dir + "/" + name
	if _, err := os.Stat(path); err == nil {
		return path
	}
	self, err := os.Executable()
	ts.Check(err)
	// Copied by cp, not written from here: a file this process held open
	// for writing would be inherited by whatever another script forks
	// meanwhile, and exec of it would fail with "text file busy" until that
	// child had exec'd in turn (golang.org/issue/22315).
	if out, err := exec.Command("cp", self, path).CombinedOutput(); err != nil {
		ts.Fatalf("copying the commands for other users: %v: %s", err, out)
	}
	ts.Check(os.Chmod(path, 0o755))
	return path
}

// requireUser looks up a user; scripts guard with [user:NAME] so that a
// machine without one skips with the reason instead of failing.
func requireUser(ts *testscript.TestScript, name string) *user.User {
	if os.Geteuid() != 0 {
		ts.Fatalf("needs root to run commands as another user (guard the script with [root])")
	}
	u, err := user.Lookup(name)
	if err != nil {
		ts.Fatalf("needs a user %q (guard the script with [user:%s]; .ci/run creates alice and bob)", name, name)
	}
	return u
}

// condition answers the scripts' [root] and [user:NAME] guards.
func condition(cond string) (bool, error) {
	switch {
	case cond == "root":
		return os.Geteuid() == 0, nil
	case cond == "cgroup2" || cond == "cgroupmem":
		return cgroupCondition(cond), nil
	case strings.HasPrefix(cond, "user:"):
		_, err := user.Lookup(strings.TrimPrefix(cond, "user:"))
		return err == nil, nil
	case strings.HasPrefix(cond, "uid:"):
		// uid:NAME:N: the user NAME exists with uid N (a recording that
		// prints uids needs the recording's).
		name, uid, _ := strings.Cut(strings.TrimPrefix(cond, "uid:"), ":")
		u, err := user.Lookup(name)
		return err == nil && u.Uid == uid, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// parallel N OUTFILE CMD [ARGS...]: run N copies of a command at once and
// append their stdout to OUTFILE; every copy must succeed.
func cmdParallel(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 3 {
		ts.Fatalf("usage: parallel N OUTFILE CMD [ARGS...]")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	path, err := exec.LookPath(args[2])
	ts.Check(err)
	var (
		mu   sync.Mutex
		outs []string
		errs []string
		wg   sync.WaitGroup
	)
	env := []string{"PATH=" + ts.Getenv("PATH"), "SLURM_LITE_CONF=" + ts.Getenv("SLURM_LITE_CONF"), "HOME=" + ts.Getenv("HOME")}
	for range n {
		wg.Go(func() {
			cmd := exec.Command(path, args[3:]...)
			cmd.Dir = ts.Getenv("WORK")
			cmd.Env = env
			out, err := cmd.Output()
			mu.Lock()
			defer mu.Unlock()
			outs = append(outs, string(out))
			if err != nil {
				errs = append(errs, err.Error())
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		ts.Fatalf("%d of %d failed: %s", len(errs), n, errs[0])
	}
	f, err := os.OpenFile(ts.MkAbs(args[1]), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	ts.Check(err)
	defer f.Close()
	_, err = f.WriteString(strings.Join(outs, ""))
	ts.Check(err)
}

// distinct FILE N: FILE has exactly N non-empty lines, all different.
func cmdDistinct(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: distinct FILE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	all := len(lines)
	slices.Sort(lines)
	lines = slices.Compact(lines)
	if all != want || len(lines) != want {
		ts.Fatalf("%s: %d lines, %d distinct; want %d distinct", args[0], all, len(lines), want)
	}
}

// fileowner FILE USER: FILE belongs to USER.
func cmdFileOwner(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: fileowner FILE USER")
	}
	u := requireUser(ts, args[1])
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	uid := fi.Sys().(*syscall.Stat_t).Uid
	if strconv.Itoa(int(uid)) != u.Uid {
		ts.Fatalf("%s belongs to uid %d, not %s (%s)", args[0], uid, args[1], u.Uid)
	}
}
