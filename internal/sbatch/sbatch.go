// Package sbatch is the sbatch command: it reads and checks a job exactly as
// Slurm's sbatch does, and hands it to slurmd-lite.
//
// It is a package of its own, not part of internal/cli, for one reason:
// speed. sbatch is the command that workflow tools run by the thousand, and
// a process that links cli (net/http for srun's own server, os/user with
// cgo, SQLite's records) takes two milliseconds more to start than the
// whole submission costs. This package links the job script parser, the
// configuration, the API's types and sockclient, and nothing that needs
// cgo: the binary is static and starts in about a millisecond.
package sbatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Version is slurm.Version, which `sbatch --version` prints.
const Version = slurm.Version

// Main is the sbatch command. It reads and checks the job exactly as real
// sbatch does (every refusal prints Slurm's text and exit code, and creates
// nothing), then hands it to the daemon.
func Main(args []string, sio cmdio.IO) int {
	// sbatch needs a few settings only: from the daemon's settings file
	// where it is the configuration's (config.FindSettings), which saves
	// parsing the whole TOML file, and not at all for --version or --help.
	var (
		cfg     *config.Settings
		cfgPath string
		cfgErr  error
	)
	load := func() *config.Settings {
		s, path, err := config.FindSettings()
		cfgPath, cfgErr = path, err
		if err == nil {
			cfg = &s
		}
		return cfg
	}
	req, code := readJob("sbatch", args, sio, load)
	if req == nil {
		return code
	}
	for _, w := range req.Warnings {
		fmt.Fprintf(sio.Stderr, "sbatch: %s\n", w)
	}
	if cfgErr != nil {
		fmt.Fprintf(sio.Stderr, "sbatch: error: %v\n", cfgErr)
		return 1
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(sio.Stderr, "sbatch: error: finding the current directory: %v\n", err)
		return 1
	}
	if req.ScriptPath != "" && !req.HasWrap {
		path, _ := sio.Getenv("PATH")
		req.ScriptPath = commandPath(req.ScriptPath, fullChdir(cwd, req.Chdir), path)
	}
	sub := api.Submit{Request: *req, Env: submitEnv(sio), Cwd: cwd, TestOnly: req.TestOnly}
	c := sockclient.New(cfg.SocketPath)
	c.SetMessageTimeout(cfg.MessageTimeout)
	env, _ := sio.Getenv(config.EnvVar)
	c.SetAdvice(func() string { return config.NoDaemonAdvice(cfgPath, env) })
	ctx := context.Background()
	var resp api.Submitted
	// sbatch retries a controller that is temporarily unable to take the
	// job (MaxJobCount), sleeping a second longer each time (sbatch.c).
	for retries := 0; ; retries++ {
		err = c.Do(ctx, "POST", api.PathJobs, sub, &resp)
		var le *api.Error
		if errors.As(err, &le) && le.Code == slurm.EAGAIN && retries < maxRetries {
			if retries == 0 {
				fmt.Fprintln(sio.Stderr, "sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying")
			}
			time.Sleep(time.Duration(retries+1) * time.Second)
			continue
		}
		break
	}
	if err != nil {
		return printSubmitError(err, req.TestOnly, sio.Stderr)
	}
	if req.TestOnly {
		start := "Unknown"
		if !resp.Start.IsZero() {
			start = resp.Start.Local().Format("2006-01-02T15:04:05")
		}
		fmt.Fprintf(sio.Stderr, "sbatch: Job %d to start at %s using %d processors on nodes %s in partition %s\n",
			resp.JobID, start, resp.CPUs, resp.Node, resp.Partition)
		if resp.Hint != "" {
			fmt.Fprintf(sio.Stderr, "slurm-lite: %s\n", resp.Hint)
		}
		return 0
	}
	if !req.Quiet {
		if req.Parsable {
			fmt.Fprintf(sio.Stdout, "%d\n", resp.JobID)
		} else {
			fmt.Fprintf(sio.Stdout, "Submitted batch job %d\n", resp.JobID)
		}
	}
	if req.Wait {
		return waitJob(ctx, c, resp.JobID, sio)
	}
	return 0
}

// fullChdir is the job's working directory as sbatch holds it: --chdir
// made absolute as make_full_path does (the current directory, "/", the
// path, nothing cleaned), else the current directory.
func fullChdir(cwd, chdir string) string {
	switch {
	case chdir == "":
		return cwd
	case strings.HasPrefix(chdir, "/"):
		return chdir
	}
	return cwd + "/" + chdir
}

// commandPath is the script operand as sbatch sends it, the job's Command
// (search_path in src/common/proc_args.c, without the execute test): a
// name that starts with neither "." nor "/" becomes the first existing
// file (not a directory) of dir/NAME and then each $PATH entry's
// ENTRY/NAME (an entry starting with "." taken under dir); anything else,
// or a name found nowhere, stays as given.
func commandPath(name, dir, path string) string {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") {
		return name
	}
	dirs := []string{dir}
	for _, p := range strings.Split(path, ":") {
		if p != "" {
			dirs = append(dirs, p)
		}
	}
	for i, d := range dirs {
		full := d + "/" + name
		if i > 0 && strings.HasPrefix(d, ".") {
			full = dir + "/" + d + "/" + name
		}
		if st, err := os.Stat(full); err == nil && !st.IsDir() {
			return full
		}
	}
	return name
}

// maxRetries is sbatch's MAX_RETRIES.
const maxRetries = 15

// printSubmitError prints a refused submission as sbatch does: the
// controller's own lines, then "Batch job submission failed: ...", exit 1.
func printSubmitError(err error, testOnly bool, w io.Writer) int {
	var le *api.Error
	if !errors.As(err, &le) {
		fmt.Fprintf(w, "sbatch: error: %v\n", err)
		return 1
	}
	lines := strings.Split(le.Message, "\n")
	for _, note := range lines[:len(lines)-1] {
		fmt.Fprintf(w, "sbatch: error: %s\n", note)
	}
	last := lines[len(lines)-1]
	if testOnly {
		fmt.Fprintf(w, "allocation failure: %s\n", last)
	} else {
		fmt.Fprintf(w, "sbatch: error: Batch job submission failed: %s\n", last)
	}
	if le.Hint != "" {
		fmt.Fprintf(w, "slurm-lite: %s\n", le.Hint)
	}
	return 1
}

// waitJob is sbatch --wait: poll until the job ends, and exit with its exit
// status (1 when it ended by a signal), as _job_wait in sbatch.c.
func waitJob(ctx context.Context, c *sockclient.Client, id uint32, sio cmdio.IO) int {
	sleep := 2 * time.Second
	for {
		time.Sleep(sleep)
		sleep = min(sleep*4, 32*time.Second)
		var jobs []api.Job
		if err := c.Do(ctx, "GET", fmt.Sprintf("%s?id=%d", api.PathJobs, id), nil, &jobs); err != nil {
			fmt.Fprintf(sio.Stderr, "sbatch: error: Currently unable to load job state information, retrying: %v\n", err)
			continue
		}
		if len(jobs) == 0 {
			fmt.Fprintf(sio.Stderr, "sbatch: error: Job %d no longer found and exit code not found\n", id)
			return 0
		}
		ec, done := 0, true
		for _, j := range jobs {
			if !j.State.Finished() {
				done = false
				break
			}
			if j.ExitCode.Signal != 0 {
				ec = max(ec, 1)
			} else {
				ec = max(ec, j.ExitCode.Status)
			}
		}
		if done {
			return ec
		}
	}
}

// submitEnv is the environment the job inherits, with sbatch's additions:
// the umask and the resource limits (SLURM_UMASK, SLURM_RLIMIT_*), which
// the job runs with as Slurm's PropagateResourceLimits=ALL does.
func submitEnv(sio cmdio.IO) []string {
	env := os.Environ()
	mask := syscall.Umask(0)
	syscall.Umask(mask)
	env = append(env, fmt.Sprintf("SLURM_UMASK=%04o", mask))
	for _, r := range rlimits {
		var rl syscall.Rlimit
		if syscall.Getrlimit(r.res, &rl) != nil {
			continue
		}
		v := strconv.FormatUint(rl.Cur, 10)
		if rl.Cur == ^uint64(0) {
			v = "unlimited"
		}
		env = append(env, "SLURM_RLIMIT_"+r.name+"="+v)
	}
	return env
}

// rlimits are the resource limits submitEnv passes on, with their numbers
// (RLIMIT_*); a slice, not a map, so that nothing is built at start.
var rlimits = []struct {
	name string
	res  int
}{{"CPU", 0}, {"FSIZE", 1}, {"DATA", 2}, {"STACK", 3}, {"CORE", 4},
	{"RSS", 5}, {"NPROC", 6}, {"NOFILE", 7}, {"MEMLOCK", 8}, {"AS", 9}}

// ReadJob runs sbatch's two passes over args: the command line, the script
// (a file, standard input or --wrap), the SBATCH_* variables. It returns the
// request, or nil and the exit code after printing what sbatch prints.
func ReadJob(prog string, args []string, sio cmdio.IO) (*jobscript.Request, int) {
	return readJob(prog, args, sio, func() *config.Settings {
		cfg, _, err := config.Find("")
		if err != nil {
			return nil
		}
		s := config.SettingsOf(cfg)
		return &s
	})
}

// readJob is ReadJob with the way to read the settings, called once the
// command line is known to ask for a job (it returns nil when they could
// not be read).
func readJob(prog string, args []string, sio cmdio.IO, load func() *config.Settings) (*jobscript.Request, int) {
	cl, err := jobscript.ParseCommandLine(args)
	if err != nil {
		return nil, PrintJobError(prog, err, sio.Stderr)
	}
	switch cl.Action {
	case jobscript.Help:
		io.WriteString(sio.Stdout, HelpText)
		return nil, 0
	case jobscript.Usage:
		io.WriteString(sio.Stdout, UsageText)
		return nil, 0
	case jobscript.Version:
		fmt.Fprintln(sio.Stdout, Version)
		return nil, 0
	case jobscript.GresHelp:
		fmt.Fprintln(sio.Stdout, "gpu\nshard")
		return nil, 0
	}
	// The script is read only up to max_script_size, which slurmctld
	// would refuse it beyond: a 100 MB script is refused before it is
	// read, in the controller's words.
	cfg := load()
	limit := config.DefaultMaxScriptSize
	if cfg != nil {
		limit = cfg.MaxScriptSize
	}
	var body []byte
	switch {
	case cl.HasWrap:
	case cl.Stdin:
		if body, err = readLimited(sio.Stdin, limit); err != nil {
			fmt.Fprintf(sio.Stderr, "%s: error: reading the script from standard input: %v\n", prog, err)
			return nil, 1
		}
		if len(body) > limit {
			return nil, scriptTooBig(prog, sio.Stderr, fmt.Sprintf("the batch script on standard input is more than max_script_size (%d bytes); make it smaller: have it read its data from files instead of holding them", limit))
		}
	default:
		var size int64
		if body, size, err = readScript(cl.Script, sio, limit); err != nil {
			fmt.Fprintf(sio.Stderr, "%s: error: Unable to open file %s\n", prog, cl.Script)
			return nil, 1
		}
		if size > int64(limit) {
			return nil, scriptTooBig(prog, sio.Stderr, api.ScriptTooBig(size, limit))
		}
	}
	maxArray := 0
	if cfg != nil {
		maxArray = cfg.MaxArraySize
	}
	req, err := jobscript.Parse(jobscript.Input{
		Script:       body,
		Command:      cl,
		Env:          sio.Getenv,
		Now:          sio.Now(),
		MaxArraySize: maxArray,
	})
	if err != nil {
		return nil, PrintJobError(prog, err, sio.Stderr)
	}
	if os.Geteuid() != 0 {
		if err := req.RequireRoot(); err != nil {
			return nil, PrintJobError(prog, err, sio.Stderr)
		}
	} else if err := req.CheckIDs(userExists, groupExists); err != nil {
		return nil, PrintJobError(prog, err, sio.Stderr)
	}
	return req, 0
}

// userExists says whether a --uid names a user, by name or number, as
// uid_from_string looks it up: through getent(1), which asks NSS (LDAP,
// SSSD) as the C library would, so that this command needs no cgo. Only
// root's submissions with --uid come here.
func userExists(s string) bool { return getent("passwd", s) }

// groupExists is userExists for --gid.
func groupExists(s string) bool { return getent("group", s) }

// getent says whether database db has key, by name or number.
func getent(db, key string) bool {
	return exec.Command("getent", db, key).Run() == nil
}

// readScript opens the script operand as sbatch does: the path as given,
// else a bare name looked up in $PATH (search_path in src/sbatch/opt.c).
// It reads at most limit bytes: a file larger than that (by its size, or
// by what it held when read) is returned unread or cut, with its size.
func readScript(name string, sio cmdio.IO, limit int) ([]byte, int64, error) {
	body, size, err := readFileLimited(name, limit)
	if err == nil || strings.ContainsRune(name, '/') {
		return body, size, err
	}
	path, _ := sio.Getenv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if b, n, e := readFileLimited(filepath.Join(dir, name), limit); e == nil {
			return b, n, nil
		}
	}
	return nil, 0, err
}

// readFileLimited reads the file name unless its size is over limit, and
// then at most limit+1 bytes of it (it may have grown). The size returned
// is the file's, or what was read when that is more.
//
// The file is read with the system calls alone (cmdio.RawFile): os.Open
// would start the runtime's poller in every submission.
func readFileLimited(name string, limit int) ([]byte, int64, error) {
	f, err := cmdio.OpenRaw(name, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return nil, 0, fmt.Errorf("%s is a directory", name)
	case syscall.S_IFREG:
		if st.Size > int64(limit) {
			return nil, st.Size, nil
		}
	}
	body, err := readLimited(f, limit)
	return body, max(st.Size, int64(len(body))), err
}

// readLimited reads r to its end, or to limit+1 bytes: more than limit
// means too much.
func readLimited(r io.Reader, limit int) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}

// scriptTooBig prints the refusal of a script over max_script_size as
// sbatch prints slurmctld's (_test_job_desc_fields), then the hint.
func scriptTooBig(prog string, w io.Writer, hint string) int {
	fmt.Fprintf(w, "%s: error: Batch job submission failed: %s\n", prog, slurm.ErrPathnameTooLong)
	fmt.Fprintf(w, "slurm-lite: %s\n", hint)
	return 1
}

// PrintJobError prints a jobscript error in sbatch's words, then where it
// was in the script (Slurm does not say; a user fixing a 40-line header
// wants to know) and slurm-lite's hint, each on a line of its own after
// Slurm's so that tools matching Slurm's first lines still match.
func PrintJobError(prog string, err error, w io.Writer) int {
	var e *jobscript.Error
	if !errors.As(err, &e) {
		fmt.Fprintf(w, "%s: error: %v\n", prog, err)
		return 1
	}
	fmt.Fprint(w, e.Stderr(prog))
	if loc := e.Location(); loc != "" && e.Line > 0 {
		fmt.Fprintf(w, "slurm-lite: the option is at %s\n", loc)
	}
	if e.Hint != "" {
		fmt.Fprintf(w, "slurm-lite: %s\n", e.Hint)
	}
	return e.Exit
}
