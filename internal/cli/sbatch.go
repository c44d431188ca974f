package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// slurmVersion is the Slurm release whose behaviour and output we follow;
// `sbatch --version` prints it because tools check it.
const slurmVersion = "slurm 22.05.8"

// Sbatch is the sbatch command. It reads and checks the job exactly as real
// sbatch does (every refusal prints Slurm's text and exit code, and creates
// nothing), then hands it to the daemon.
func Sbatch(args []string, sio IO) int {
	req, code := readJob("sbatch", args, sio)
	if req == nil {
		return code
	}
	for _, w := range req.Warnings {
		fmt.Fprintf(sio.Stderr, "sbatch: %s\n", w)
	}
	cfg, _, err := config.Find("")
	if err != nil {
		fmt.Fprintf(sio.Stderr, "sbatch: error: %v\n", err)
		return 1
	}
	// The daemon lands with its own issue; until then say plainly that
	// there is nothing to submit to, in the words the client will use.
	fmt.Fprintf(sio.Stderr, "sbatch: error: %v\n", notRunning(cfg.SocketPath))
	return 1
}

// notRunning is the error every client gives when the daemon's socket is
// missing: what is wrong, and the command that fixes it.
func notRunning(socket string) error {
	return fmt.Errorf("slurmd-lite is not running (no socket at %s); start it with: slurmd-lite", socket)
}

// readJob runs sbatch's two passes over args: the command line, the script
// (a file, standard input or --wrap), the SBATCH_* variables. It returns the
// request, or nil and the exit code after printing what sbatch prints.
func readJob(prog string, args []string, sio IO) (*jobscript.Request, int) {
	cl, err := jobscript.ParseCommandLine(args)
	if err != nil {
		return nil, printJobError(prog, err, sio.Stderr)
	}
	switch cl.Action {
	case jobscript.Help, jobscript.Usage:
		fmt.Fprintf(sio.Stdout, "Usage: %s [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n", prog)
		return nil, 0
	case jobscript.Version:
		fmt.Fprintln(sio.Stdout, slurmVersion)
		return nil, 0
	case jobscript.GresHelp:
		fmt.Fprintln(sio.Stdout, "gpu\nshard")
		return nil, 0
	}
	var body []byte
	switch {
	case cl.HasWrap:
	case cl.Stdin:
		if body, err = io.ReadAll(sio.Stdin); err != nil {
			fmt.Fprintf(sio.Stderr, "%s: error: reading the script from standard input: %v\n", prog, err)
			return nil, 1
		}
	default:
		if body, err = readScript(cl.Script, sio); err != nil {
			fmt.Fprintf(sio.Stderr, "%s: error: Unable to open file %s\n", prog, cl.Script)
			return nil, 1
		}
	}
	maxArray := 0
	if cfg, _, err := config.Find(""); err == nil {
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
		return nil, printJobError(prog, err, sio.Stderr)
	}
	if os.Geteuid() != 0 {
		if err := req.RequireRoot(); err != nil {
			return nil, printJobError(prog, err, sio.Stderr)
		}
	}
	return req, 0
}

// readScript opens the script operand as sbatch does: the path as given,
// else a bare name looked up in $PATH (search_path in src/sbatch/opt.c).
func readScript(name string, sio IO) ([]byte, error) {
	body, err := sio.ReadFile(name)
	if err == nil || strings.ContainsRune(name, '/') {
		return body, err
	}
	path, _ := sio.Getenv("PATH")
	for _, dir := range filepath.SplitList(path) {
		if b, e := sio.ReadFile(filepath.Join(dir, name)); e == nil {
			return b, nil
		}
	}
	return nil, err
}

// printJobError prints a jobscript error in sbatch's words, then where it
// was in the script (Slurm does not say; a user fixing a 40-line header
// wants to know) and slurm-lite's hint, each on a line of its own after
// Slurm's so that tools matching Slurm's first lines still match.
func printJobError(prog string, err error, w io.Writer) int {
	var e *jobscript.Error
	if !errors.As(err, &e) {
		fmt.Fprintf(w, "%s: error: %v\n", prog, err)
		return 1
	}
	fmt.Fprint(w, e.Stderr(prog))
	if loc := e.Location(); loc != "" && e.Line > 0 {
		fmt.Fprintf(w, "%s: error: the option is at %s\n", prog, loc)
	}
	if e.Hint != "" {
		fmt.Fprintf(w, "%s: error: %s\n", prog, e.Hint)
	}
	return e.Exit
}

// Pending is the body of the commands whose client side lands with the
// daemon (squeue, scancel, scontrol, sinfo, sacct, sshare, srun): every one of
// them needs the daemon, so each says that it cannot reach one, in the words
// the client library will use, and fails as Slurm's commands fail when the
// controller is down.
func Pending(prog string, args []string, sio IO) int {
	cfg, _, err := config.Find("")
	if err != nil {
		fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	fmt.Fprintf(sio.Stderr, "%s: error: %v\n", prog, notRunning(cfg.SocketPath))
	return 1
}
