// Package scrontab is Slurm 22.05's scrontab for slurm-lite: it installs,
// lists, edits and removes a user's crontab of recurring batch jobs
// (src/scrontab/scrontab.c). The file is read here, as Slurm's command
// reads it, into one sbatch request per entry; the daemon checks each as
// a submission, and installs the whole crontab or none of it
// (internal/daemon/crontab.go).
package scrontab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

const prog = "scrontab"

// Usage is scrontab's usage text (src/scrontab/usage.txt).
const Usage = `usage:	scrontab [-u user] file
	scrontab [-u user] [ -e | -l | -r | -v]
	-e	Edit user's crontab (default action if stdin is a TTY)
	-l	List user's crontab
	-r	Delete user's crontab
	-u	User to edit crontab for
`

// defaultCrontab is what -e starts from when the user has none
// (src/scrontab/default_crontab.txt).
const defaultCrontab = `# Welcome to scrontab, Slurm's cron-like interface.
#
# Edit this file to submit recurring jobs to be run by Slurm.
#
# Note that jobs will be run based on the Slurm controller's
# time and timezone.
#
# Lines must either be valid entries, comments (start with '#'),
# or blank.
#
# Lines starting with #SCRON will be parsed for options to use
# with the next cron line. E.g., "#SCRON --time 1" would request
# a one minute timelimit be applied. See the sbatch man page for
# options, although note that not all options are supported here.
#
# For example, the following line (when uncommented) would request
# a job be run at 5am each day.
# 0 5 * * * /my/script/to/run
#
# min hour day-of-month month day-of-week command
`

// opts is the command line.
type opts struct {
	edit, list, remove bool
	user               string // -u, as given
	file               string // the first form's operand ("-": stdin)
	install            bool   // the first form
}

// fatal prints Slurm's fatal line and returns its exit status.
func fatal(sio cmdio.IO, format string, a ...any) int {
	fmt.Fprintf(sio.Stderr, "%s: fatal: %s\n", prog, fmt.Sprintf(format, a...))
	return 1
}

// Main is the scrontab command.
func Main(args []string, sio cmdio.IO) int {
	o, ok := parseArgs(args, sio)
	if !ok {
		io.WriteString(sio.Stderr, Usage)
		return 1
	}
	if o.edit && !stdinIsTerminal(sio) {
		return fatal(sio, "Standard input is not a TTY")
	}
	if o.user != "" {
		u, err := lookupUser(o.user)
		if err != nil {
			return fatal(sio, "Could not find user %s", o.user)
		}
		o.user = u.Name
	}
	c, cfg, code := cli.Dial(prog, sio)
	if c == nil {
		return code
	}
	if !cfg.ScronEnabled() {
		code := fatal(sio, "scrontab is disabled on this cluster")
		fmt.Fprintf(sio.Stderr, "slurm-lite: ScronParameters = \"enable\" in the configuration turns scrontab on\n")
		return code
	}
	var text string
	if o.install {
		b, err := readInput(o.file, sio)
		if err != nil {
			return fatal(sio, "failed to open %s", o.file)
		}
		text = string(b)
	}
	ctx := context.Background()
	if o.remove {
		err := c.Do(ctx, "POST", api.PathCrontabRemove, api.CrontabRemove{User: o.user}, nil)
		if err != nil {
			return daemonFatal(sio, "slurm_remove_crontab failed", err)
		}
		return 0
	}
	if o.edit || o.list {
		var ct api.CrontabText
		q := url.Values{}
		if o.user != "" {
			q.Set("user", o.user)
		}
		if err := cli.GetJSON(c, api.PathCrontab, q, &ct); err != nil {
			return daemonFatal(sio, "slurm_request_crontab failed", err)
		}
		if o.list {
			if ct.None {
				fmt.Fprintf(sio.Stdout, "no crontab for %s\n", ct.User)
				return 1
			}
			io.WriteString(sio.Stdout, markLines(ct.Text, ct.Disabled, "#DISABLED: "))
			return 0
		}
		text = defaultCrontab
		if !ct.None {
			text = markLines(ct.Text, ct.Disabled, "#DISABLED: ")
		}
	}
	return install(ctx, c, o, text, sio)
}

// install reads the crontab and sends it; with -e, it runs the editor
// first, and again, with the bad lines marked, while the user wants to
// fix them.
func install(ctx context.Context, c *sockclient.Client, o opts, text string, sio cmdio.IO) int {
	home := ""
	for {
		if o.edit {
			edited, code := editText(text, sio)
			if edited == nil {
				return code
			}
			text = *edited
		}
		entries, err := parseCrontab(text, sio.Now())
		var le *lineError
		if errors.As(err, &le) {
			for _, l := range le.slurm {
				fmt.Fprintf(sio.Stderr, "%s: error: %s\n", prog, l)
			}
			fmt.Fprintf(sio.Stderr, "slurm-lite: line %s: %s\n", le.line, le.detail)
			if !o.edit {
				fmt.Fprintln(sio.Stdout, "There are errors in your crontab.")
				return 1
			}
			if !retry(sio, "There are errors in your crontab.\nThe failed line(s) is commented out with #BAD:\nDo you want to retry the edit? (y/n) ") {
				return 0
			}
			text = markLines(text, lineRange(le.line), "#BAD: ")
			continue
		}
		if home == "" {
			u, err := targetUser(o.user)
			if err != nil {
				return fatal(sio, "getpwuid(%d) failed", os.Getuid())
			}
			home = u.Home
		}
		ct := api.Crontab{User: o.user, Text: text}
		for _, e := range entries {
			cwd := home
			ct.Entries = append(ct.Entries, api.CrontabEntry{
				Submit:    api.Submit{Request: *e.req, Env: []string{"SLURM_GET_USER_ENV=1"}, Cwd: cwd},
				Spec:      e.spec,
				LineStart: e.start, LineEnd: e.end,
			})
		}
		var res api.CrontabInstalled
		if err := c.Do(ctx, "POST", api.PathCrontab, ct, &res); err != nil {
			return cli.DaemonError(prog, err, sio)
		}
		if res.FailedLines == "" {
			return 0
		}
		words := cli.Strerror(slurm.Errno(res.Code), res.Error)
		detail := res.Error
		if detail == "" {
			detail = "(null)" // Slurm's printf of no message
		}
		msg := fmt.Sprintf("There was an issue with the job submission on lines %s\nThe error code return was: %s\nThe error message was: %s\n",
			res.FailedLines, words, detail)
		if res.Hint != "" {
			fmt.Fprintf(sio.Stderr, "slurm-lite: %s\n", res.Hint)
		}
		if !o.edit {
			io.WriteString(sio.Stdout, msg)
			return 1
		}
		if !retry(sio, msg+"The failed lines are commented out with #BAD:\nDo you want to retry the edit? (y/n) ") {
			return 0
		}
		text = markLines(text, lineRange(res.FailedLines), "#BAD: ")
	}
}

// retry asks the question until the answer is y or n.
func retry(sio cmdio.IO, question string) bool {
	buf := make([]byte, 1)
	for {
		io.WriteString(sio.Stdout, question)
		for {
			n, err := sio.Stdin.Read(buf)
			if err != nil || n == 0 {
				return false // no answer is no
			}
			switch strings.ToLower(string(buf[:1])) {
			case "y":
				return true
			case "n":
				return false
			case "\n":
				continue
			}
			break
		}
	}
}

// editText runs $VISUAL, else $EDITOR, else vi on a copy of text in
// $TMPDIR (else /tmp), as scrontab -e does, and returns what the editor
// left; nil and the exit status on failure.
func editText(text string, sio cmdio.IO) (*string, int) {
	dir, ok := sio.Getenv("TMPDIR")
	if !ok || dir == "" {
		dir = "/tmp"
	}
	f, err := os.CreateTemp(dir, "scrontab-")
	if err != nil {
		return nil, fatal(sio, "error creating temp crontab file '%s': %v", filepath.Join(dir, "scrontab-XXXXXX"), err)
	}
	name := f.Name()
	defer os.Remove(name)
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fatal(sio, "error writing to temp crontab file '%s': %v", name, err)
	}
	editor := "vi"
	if v, ok := sio.Getenv("VISUAL"); ok && v != "" {
		editor = v
	} else if v, ok := sio.Getenv("EDITOR"); ok && v != "" {
		editor = v
	}
	cmd := exec.Command(editor, name)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fatal(sio, "editor returned non-zero exit code")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fatal(sio, "error reopening temp crontab file '%s': %v", name, err)
	}
	s := string(b)
	return &s, 0
}

// daemonFatal prints a failed request as scrontab's fatal line, with
// Slurm's words for the refusal, and slurm-lite's hint.
func daemonFatal(sio cmdio.IO, what string, err error) int {
	var le *api.Error
	if errors.As(err, &le) {
		fatal(sio, "%s: %s", what, cli.Strerror(le.Code, le.Message))
		cli.PrintHint(prog, le, sio)
		return 1
	}
	return cli.DaemonError(prog, err, sio)
}

// readInput reads the first form's file, or standard input for "-".
func readInput(name string, sio cmdio.IO) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(sio.Stdin)
	}
	return sio.ReadFile(name)
}

// parseArgs reads the options as glibc's getopt does with "elru:v"
// (operands may come anywhere; -- ends the options), then Slurm's rules:
// -e, -l or -r take no operand; otherwise at most one, the file; none
// with a terminal on standard input is -e, without one is "-".
func parseArgs(args []string, sio cmdio.IO) (opts, bool) {
	var o opts
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		for j := 1; j < len(a); j++ {
			switch a[j] {
			case 'e':
				o.edit = true
			case 'l':
				o.list = true
			case 'r':
				o.remove = true
			case 'v':
			case 'u':
				switch {
				case j+1 < len(a):
					o.user = a[j+1:]
				case i+1 < len(args):
					i++
					o.user = args[i]
				default:
					return o, false
				}
				j = len(a)
			default:
				return o, false
			}
		}
	}
	if o.edit || o.list || o.remove {
		return o, len(operands) == 0
	}
	switch {
	case len(operands) > 1:
		return o, false
	case len(operands) == 1:
		o.install, o.file = true, operands[0]
	case stdinIsTerminal(sio):
		o.edit = true
	default:
		o.install, o.file = true, "-"
	}
	return o, true
}

// stdinIsTerminal reports whether standard input is a terminal.
func stdinIsTerminal(sio cmdio.IO) bool {
	w, ok := sio.Stdin.(io.Writer)
	return ok && sio.IsTerminal(w)
}

// lookupUser finds -u's user, by name or number, as uid_from_string.
func lookupUser(s string) (userdb.User, error) {
	if u, err := userdb.ByName(s); err == nil {
		return u, nil
	}
	var uid uint32
	if _, err := fmt.Sscanf(s, "%d", &uid); err == nil {
		return userdb.ByID(uid)
	}
	return userdb.User{}, fmt.Errorf("no user %q", s)
}

// targetUser is the crontab's user: -u's, else the caller.
func targetUser(name string) (userdb.User, error) {
	if name != "" {
		return lookupUser(name)
	}
	return userdb.ByID(uint32(os.Getuid()))
}
