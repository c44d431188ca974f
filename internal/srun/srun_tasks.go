package srun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/procfs"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// A step's tasks are srun's children, each launched through srunTask in a
// process group of its own, so that whatever a task leaves behind when it
// exits can be killed with it (slurmstepd kills what remains of a task).
// Their IO follows -o, -e and -i: srun's own descriptors by default
// (labelled lines with -l), a file per task or for all, /dev/null, or one
// task's alone. Standard input goes to every task (to task 0 alone it is
// passed as it is); a terminal is read by srun and copied, since a task
// outside srun's process group may not read it.
//
// Signals, as srun's signal thread handles them (src/srun/libsrun/srun_job.c):
//
//   - SIGINT: the first prints the tasks' states ("interrupt (one more
//     within 1 sec to abort)"); a second within a second, or the first with
//     --quit-on-interrupt, sends SIGINT to the tasks and then SIGKILL;
//     with -X the first is sent on.
//   - SIGTERM, SIGHUP, SIGQUIT: if the job is being ended (its supervisor,
//     or the daemon for an interactive job, sent the signal to every
//     process of the job, tasks included), srun says that the step was
//     aborted and waits for its tasks, which have KillWait; otherwise
//     someone wants srun gone: "forcing job termination", SIGKILL.
//   - SIGCONT: "got SIGCONT".
//   - SIGUSR1, SIGUSR2, SIGALRM: sent on to the tasks in an interactive
//     job. In a batch job they are not: whoever signals a batch job's
//     steps (scancel --signal, --signal=SIG@T) signals every process of the
//     job, the tasks with srun, and sending them on would deliver them twice.

// srunSignals are the signals srun catches (srun.c's sig_array, without
// SIGPIPE, which is caught apart: see runTasks).
var srunSignals = []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGCONT, syscall.SIGTERM,
	syscall.SIGHUP, syscall.SIGALRM, syscall.SIGUSR1, syscall.SIGUSR2}

// taskExit is how one task ended.
type taskExit struct {
	task int
	ws   syscall.WaitStatus
	// failed: the task could not be started at all.
	failed bool
}

// taskRun is a step's tasks while they run.
type taskRun struct {
	o    *srunOpts
	sio  cli.IO
	st   api.Step
	info stepInfo
	// forward: the job is interactive, so signals that reach srun come
	// from people, and go on to the tasks.
	forward bool
	// userCPU and sysCPU sum the tasks' CPU times (nanoseconds), as
	// their waits report them, for the step's accounting.
	userCPU, sysCPU atomic.Int64

	cmds []*exec.Cmd
	// childEnds are the tasks' ends of pipes and files, which srun closes
	// once they have started; closers what srun itself writes to, closed
	// once all is over.
	childEnds []*os.File
	closers   []io.Closer
	copiers   sync.WaitGroup
	exits     chan taskExit
	mu        sync.Mutex // guards srun's own stdout and stderr
}

// stdFile is the *os.File behind a reader or writer of IO, when it has one.
func stdFile(v any) *os.File {
	f, _ := v.(*os.File)
	return f
}

// labelWidth is the width of task numbers in -l labels (step_io.c's _wid).
func labelWidth(ntasks int) int {
	w := 1
	for n := ntasks - 1; n >= 10; n /= 10 {
		w++
	}
	return w
}

// labelLines copies r to w line by line with "N: " before each line, as
// srun -l does; a last line without a newline gets one. Writes to w hold
// mu, so that lines of different tasks do not mix.
func labelLines(r io.Reader, w io.Writer, mu *sync.Mutex, label string) error {
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 32<<10)
	flush := func(line []byte) error {
		mu.Lock()
		defer mu.Unlock()
		_, err := w.Write(append([]byte(label), line...))
		return err
	}
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			i := slices.Index(buf, '\n')
			if i < 0 {
				break
			}
			if werr := flush(buf[:i+1]); werr != nil {
				return werr
			}
			buf = buf[i+1:]
		}
		if err != nil {
			if len(buf) > 0 {
				return flush(append(buf, '\n'))
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// output is where one stream of one task goes.
func (tr *taskRun) output(spec ioSpec, task int, own *os.File, files map[string]*os.File, ff fileFields, dir string) (*os.File, error) {
	switch spec.kind {
	case ioNone:
		return nil, nil
	case ioOne:
		if task != spec.task {
			return nil, nil
		}
		return tr.labelled(own, task)
	case ioFile:
		path := ff.expand(spec.pattern, task)
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		f := files[path]
		if f == nil {
			flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if tr.o.openMode == "append" {
				flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			var err error
			if f, err = os.OpenFile(path, flags, 0o666); err != nil {
				return nil, err
			}
			files[path] = f
			tr.closers = append(tr.closers, f)
		}
		return tr.labelled(f, task)
	}
	return tr.labelled(own, task)
}

// labelled is w itself, or with -l a pipe whose lines reach w labelled.
func (tr *taskRun) labelled(w *os.File, task int) (*os.File, error) {
	if !tr.o.label || w == nil {
		return w, nil
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	tr.childEnds = append(tr.childEnds, pw)
	label := fmt.Sprintf("%*d: ", labelWidth(tr.info.ntasks), task)
	tr.copiers.Add(1)
	go func() {
		defer tr.copiers.Done()
		defer r.Close()
		if err := labelLines(r, w, &tr.mu, label); errors.Is(err, syscall.EPIPE) {
			// srun's output is gone (srun | head): as srun's SIGPIPE
			// handler, kill the tasks.
			tr.signalTasks(syscall.SIGKILL)
		}
	}()
	return pw, nil
}

// inputs are the tasks' standard inputs.
func (tr *taskRun) inputs(spec ioSpec, ff fileFields, dir string) ([]*os.File, error) {
	n := tr.info.ntasks
	in := make([]*os.File, n)
	own := stdFile(tr.sio.Stdin)
	tty := own != nil && isTerminal(own) && !tr.o.pty
	var takers []int
	switch spec.kind {
	case ioNone:
		return in, nil
	case ioOne:
		takers = []int{spec.task}
	case ioFile:
		for i := range n {
			path := ff.expand(spec.pattern, i)
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			tr.childEnds = append(tr.childEnds, f)
			in[i] = f
		}
		return in, nil
	default:
		for i := range n {
			takers = append(takers, i)
		}
	}
	if len(takers) == 1 && !tty && own != nil {
		in[takers[0]] = own
		return in, nil
	}
	// Read srun's input once and give every taker a copy.
	var writers []*os.File
	for _, t := range takers {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		tr.childEnds = append(tr.childEnds, r)
		in[t] = r
		writers = append(writers, w)
	}
	go broadcast(tr.sio.Stdin, writers)
	return in, nil
}

// broadcast copies r to every writer until r ends, then closes them; a
// writer whose reader has gone is dropped.
func broadcast(r io.Reader, ws []*os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		for i, w := range ws {
			if w != nil && n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					w.Close()
					ws[i] = nil
				}
			}
		}
		if err != nil {
			for _, w := range ws {
				if w != nil {
					w.Close()
				}
			}
			return
		}
	}
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// start starts every task; a task that cannot start (its files cannot be
// opened) is reported as failed at once, as slurmstepd reports it.
func (tr *taskRun) start(base []string) error {
	o := tr.o
	n := tr.info.ntasks
	tr.exits = make(chan taskExit, n)
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding srun's own binary: %w", err)
	}
	dir := o.chdir
	if dir == "" {
		dir, _ = os.Getwd()
	} else if !filepath.IsAbs(dir) {
		wd, _ := os.Getwd()
		dir = filepath.Join(wd, dir)
	}
	ff := fileFields{step: tr.info}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "SLURM_ARRAY_JOB_ID":
			ff.arrayJob = v
		case "SLURM_ARRAY_TASK_ID":
			ff.arrayTask = v
		case "SLURM_JOB_NAME":
			ff.envJobName = v
		}
	}
	if ff.envJobName == "" {
		ff.envJobName = tr.info.jobName
	}
	outSpec := parseIO(o.output, n)
	errSpec := outSpec
	if o.errOut != "" {
		errSpec = parseIO(o.errOut, n)
	}
	inSpec := parseIO(o.input, n)
	pty := o.pty && ownIsTTY(tr.sio)
	if pty {
		// The terminal is task 0's (srun --pty gives task 0 a terminal).
		inSpec = ioSpec{kind: ioOne}
	}
	stdin, err := tr.inputs(inSpec, ff, dir)
	if err != nil {
		fmt.Fprintf(tr.sio.Stderr, "srun: error: Could not open stdin file: %s\n", strerror2(err))
		return errTasksNotStarted
	}
	files := map[string]*os.File{}
	ownOut, ownErr := stdFile(tr.sio.Stdout), stdFile(tr.sio.Stderr)
	for i := range n {
		cmd := &exec.Cmd{Path: self, Args: append([]string{"srun"}, o.command...), Dir: dir, Stdin: stdin[i],
			Env: append(taskEnv(base, o.export, tr.info, i), srunTaskMarker+"=1")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if pty && i == 0 {
			// The terminal is the task's standard input, its fd 0.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: true, Ctty: 0}
		}
		out, err := tr.output(outSpec, i, ownOut, files, ff, dir)
		if err == nil {
			cmd.Stdout = out
			if o.errOut == "" && outSpec.kind == ioFile {
				// -o FILE without -e: both streams to the file (the
				// same labelled pipe with -l).
				cmd.Stderr = out
			} else if errw, e := tr.output(errSpec, i, ownErr, files, ff, dir); e == nil {
				cmd.Stderr = errw
			} else {
				err = e
			}
		}
		if err != nil {
			fmt.Fprintf(tr.sio.Stderr, "slurmstepd-%s: error: Could not open stdout file: %s\n", tr.info.node, strerror2(err))
			tr.exits <- taskExit{task: i, failed: true, ws: syscall.WaitStatus(1 << 8)}
			tr.cmds = append(tr.cmds, nil)
			continue
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(tr.sio.Stderr, "srun: error: starting task %d: %v\n", i, err)
			tr.exits <- taskExit{task: i, failed: true, ws: syscall.WaitStatus(1 << 8)}
			tr.cmds = append(tr.cmds, nil)
			continue
		}
		tr.cmds = append(tr.cmds, cmd)
		go tr.wait(i, cmd)
	}
	// The tasks hold their ends of the pipes and files now.
	for _, f := range tr.childEnds {
		f.Close()
	}
	return nil
}

var errTasksNotStarted = errors.New("tasks not started")

// ownIsTTY says whether srun's standard input is a terminal.
func ownIsTTY(sio cli.IO) bool {
	f := stdFile(sio.Stdin)
	return f != nil && isTerminal(f)
}

// wait reaps a task, then kills what it left in its process group, as
// slurmstepd ends a step's processes once its task has exited.
func (tr *taskRun) wait(i int, cmd *exec.Cmd) {
	err := cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err != nil && cmd.ProcessState == nil {
		ws = syscall.WaitStatus(1 << 8)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			tr.userCPU.Add(ru.Utime.Nano())
			tr.sysCPU.Add(ru.Stime.Nano())
		}
	}
	tr.exits <- taskExit{task: i, ws: ws}
}

// signalTasks sends sig to every task's process group.
func (tr *taskRun) signalTasks(sig syscall.Signal) {
	for _, c := range tr.cmds {
		if c != nil && c.Process != nil {
			_ = syscall.Kill(-c.Process.Pid, sig)
		}
	}
}

// finish closes what srun kept open for the tasks once their output has
// been copied; a copier still waiting after a while (a process that left
// the task's group holds the pipe) is left behind.
func (tr *taskRun) finish() {
	done := make(chan struct{})
	go func() { tr.copiers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
	for _, c := range tr.closers {
		c.Close()
	}
}

// exitGather is how long srun waits for more task exits to report with
// one (see Srun's loop): long enough for a loaded machine to deliver exits
// that happened together, short beside a step's life. launchGather bounds
// how long it waits for tasks that are still starting.
const (
	exitGather   = 150 * time.Millisecond
	launchGather = 5 * time.Second
)

// launching reports whether a task not in ended is still starting (its
// process still runs srun's own binary, before the exec of its command) or
// has ended without its exit having reached srun yet (a zombie): either
// way its end belongs with the ones at hand.
func (tr *taskRun) launching(ended []taskExit) bool {
	self, err := os.Executable()
	if err != nil {
		return false
	}
	for i, cmd := range tr.cmds {
		if cmd == nil || cmd.Process == nil || slices.ContainsFunc(ended, func(e taskExit) bool { return e.task == i }) {
			continue
		}
		pid := cmd.Process.Pid
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == self {
			return true
		}
		if st, err := procfs.ReadStat(pid); err == nil && st.State == 'Z' {
			return true
		}
	}
	return false
}

// exitGroup is tasks that ended the same way, reported on one line.
type exitGroup struct {
	tasks []int
	ws    syscall.WaitStatus
}

// groupExits gathers exits by status, each group in task order and the
// groups by their first task, as slurmstepd sends the exits it has reaped
// together in one message per status.
func groupExits(exits []taskExit) []exitGroup {
	var groups []exitGroup
	for _, e := range exits {
		k := slices.IndexFunc(groups, func(g exitGroup) bool { return g.ws == e.ws })
		if k < 0 {
			groups = append(groups, exitGroup{ws: e.ws})
			k = len(groups) - 1
		}
		groups[k].tasks = append(groups[k].tasks, e.task)
	}
	for i := range groups {
		slices.Sort(groups[i].tasks)
	}
	slices.SortFunc(groups, func(a, b exitGroup) int { return a.tasks[0] - b.tasks[0] })
	return groups
}

// exitLine is srun's report of a group of tasks that ended badly, "" for
// a clean exit or, when srun or the job's end killed them (quiet), a
// death by signal (launch_slurm.c's _task_finish).
func exitLine(node string, g exitGroup, quiet bool) string {
	s := ""
	if len(g.tasks) > 1 {
		s = "s"
	}
	who := fmt.Sprintf("srun: error: %s: task%s %s: ", node, s, slurmsyntax.FormatRanges(g.tasks))
	switch {
	case g.ws.Exited() && g.ws.ExitStatus() != 0:
		return fmt.Sprintf("%sExited with exit code %d", who, g.ws.ExitStatus())
	case g.ws.Signaled() && !quiet:
		core := ""
		if g.ws.CoreDump() {
			core = " (core dumped)"
		}
		return who + strsignal(g.ws.Signal()) + core
	}
	return ""
}

// worse is srun's global_rc rule: a death by signal beats an exit, the
// highest signal, else the highest exit status.
func worse(acc, ws syscall.WaitStatus) syscall.WaitStatus {
	switch {
	case ws.Signaled():
		if !acc.Signaled() || ws.Signal() > acc.Signal() {
			return ws
		}
	case ws.Exited():
		if !acc.Signaled() && ws.ExitStatus() > acc.ExitStatus() {
			return ws
		}
	}
	return acc
}

// exitStatus is srun's own exit status for the tasks' worst: the status,
// or 128 plus the signal.
func exitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
