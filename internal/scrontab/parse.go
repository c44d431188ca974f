package scrontab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cron"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
)

// entry is one crontab entry: its schedule, its job, and its lines
// (counted from 1, its first #SCRON line to its schedule line).
type entry struct {
	spec       string // the schedule as written ("*/5 * * * *", "@daily")
	command    string // after variable expansion
	req        *jobscript.Request
	start, end int
}

// lineError is a line scrontab refuses: Slurm's lines for it (without
// "scrontab: error: "), and what is wrong in slurm-lite's words.
type lineError struct {
	line   string // "4", or "2-4" for an entry whose options do not agree
	slurm  []string
	detail string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %s: %s", e.line, e.detail) }

// header is the script Slurm writes for every entry (_job_script_header).
const header = "#!/bin/sh\n# This job was submitted through scrontab\n"

// refusedOptions are sbatch options scrontab's #SCRON lines do not take:
// Slurm's option table has no scrontab setter for them ("Invalid option
// found in #SCRON line"), or, taken, they would not be obeyed (the
// schedule is the begin time; the job is its own script).
var refusedOptions = map[string]string{
	"array":     "an entry is one job; write one entry per task",
	"wrap":      "the command is the rest of the schedule line",
	"begin":     "the schedule sets the begin time",
	"test-only": "scrontab submits; try the options with sbatch --test-only",
	"wait":      "scrontab does not wait for its jobs",
	"parsable":  "scrontab prints nothing on success",
	"hold":      "a held entry would never run; leave the line out, or comment it out",
}

// parseCrontab reads a crontab as scrontab does (_edit_and_update_crontab):
// blank lines and comments are skipped; #SCRON lines gather sbatch options
// for the next entry; NAME=value lines set variables, which the commands
// of the entries after them expand ($NAME, first occurrence); every other
// line must be an entry. It stops at the first bad line.
func parseCrontab(text string, now time.Time) ([]entry, error) {
	var (
		out     []entry
		opts    []string
		scron   []string // the #SCRON lines as written, for the script
		start   = -1
		vars    []envVar
		lines   = strings.Split(text, "\n")
		nolines = len(lines)
	)
	if strings.HasSuffix(text, "\n") {
		nolines-- // the empty string after the last newline is no line
	}
	for i := 0; i < nolines; i++ {
		lineno := i + 1
		line := lines[i]
		pos := strings.TrimLeft(line, " \t")
		switch {
		case pos == "":
			continue
		case strings.HasPrefix(pos, "#SCRON"):
			args := strings.Fields(line[strings.Index(line, "#SCRON")+len("#SCRON"):])
			if err := checkOptions(args); err != nil {
				err.line = fmt.Sprint(lineno)
				return nil, err
			}
			opts = append(opts, args...)
			scron = append(scron, line)
			if start == -1 {
				start = lineno
			}
			continue
		case strings.HasPrefix(pos, "#"):
			continue
		}
		if name, value, ok := loadEnv(pos); ok {
			vars = slices.DeleteFunc(vars, func(v envVar) bool { return v.name == name })
			vars = append(vars, envVar{name, value})
			continue
		}
		e, err := cron.Parse(pos)
		if err != nil {
			le := &lineError{line: fmt.Sprint(lineno), detail: err.Error()}
			var ce *cron.Error
			if errors.As(err, &ce) && ce.Slurm != "" {
				le.slurm = append(le.slurm, ce.Slurm)
			}
			le.slurm = append(le.slurm, "something is broken")
			return nil, le
		}
		command := e.Command
		for _, v := range vars {
			command = strings.Replace(command, "$"+v.name, v.value, 1)
		}
		spec := strings.TrimRight(pos[:len(pos)-len(e.Command)], " \t")
		first := start
		if first == -1 {
			first = lineno
		}
		script := header
		for _, l := range scron {
			script += l + "\n"
		}
		script += fmt.Sprintf("# crontab time request was: '%s'\n%s\n", spec, command)
		req, err := request(opts, script, command, now)
		if err != nil {
			return nil, &lineError{line: fmt.Sprintf("%d-%d", first, lineno), slurm: []string{"something is broken"}, detail: err.Error()}
		}
		out = append(out, entry{spec: spec, command: command, req: req, start: first, end: lineno})
		opts, scron, start = nil, nil, -1
	}
	return out, nil
}

// checkOptions checks one #SCRON line's options as sbatch's getopt would,
// and refuses operands and the options scrontab does not take.
func checkOptions(args []string) *lineError {
	if len(args) == 0 {
		return nil
	}
	cl, err := jobscript.ParseCommandLine(args)
	if err != nil {
		return &lineError{slurm: []string{"Invalid option found in #SCRON line: " + badArg(err, args)}, detail: err.Error()}
	}
	if cl.HasWrap {
		return &lineError{slurm: []string{"Invalid option found in #SCRON line: --wrap"}, detail: "--wrap: " + refusedOptions["wrap"]}
	}
	if cl.Action != jobscript.Submit || cl.Script != "" {
		arg := cl.Script
		if arg == "" {
			arg = args[0]
		}
		return &lineError{slurm: []string{"Invalid option found in #SCRON line: " + arg},
			detail: fmt.Sprintf("%q is not an sbatch option; #SCRON lines hold sbatch options only (the command is the rest of the schedule line)", arg)}
	}
	for _, st := range cl.Settings {
		if why, bad := refusedOptions[st.Name]; bad {
			return &lineError{slurm: []string{"Invalid option found in #SCRON line: --" + st.Name}, detail: "--" + st.Name + ": " + why}
		}
	}
	return nil
}

// badArg is the argument getopt stopped at, as Slurm names it.
func badArg(err error, args []string) string {
	var je *jobscript.Error
	if errors.As(err, &je) && je.Option != "" {
		return je.Option
	}
	for _, a := range args {
		if strings.Contains(err.Error(), a) {
			return a
		}
	}
	return args[0]
}

// request is the job of one entry, as sbatch would make it of the
// entry's options and script: named after the command's first word,
// with the user's login environment (Slurm sends SLURM_GET_USER_ENV=1
// and nothing else).
func request(opts []string, script, command string, now time.Time) (*jobscript.Request, error) {
	cl, err := jobscript.ParseCommandLine(opts)
	if err != nil {
		return nil, err
	}
	cl.Stdin = true // the script below, read as sbatch reads standard input
	req, err := jobscript.Parse(jobscript.Input{Script: []byte(script), Command: cl, Now: now})
	if err != nil {
		return nil, err
	}
	named := false
	for _, st := range cl.Settings {
		if st.Name == "job-name" {
			named = true
		}
	}
	if !named {
		req.JobName, _, _ = strings.Cut(command, " ")
	}
	// Slurm's job argv[0] is the command, which scontrol shows as
	// Command=.
	req.ScriptName, req.ScriptPath = "", command
	if req.GetUserEnv == nil {
		req.GetUserEnv = &jobscript.GetUserEnv{}
	}
	return req, nil
}

type envVar struct{ name, value string }

// loadEnv reads a variable line as scrontab's load_env does: NAME, blanks,
// "=", blanks, then the value, quoted (nothing but blanks after the
// closing quote) or the rest of the line. NAME is letters and digits.
func loadEnv(line string) (name, value string, ok bool) {
	i := 0
	for i < len(line) && isAlnum(line[i]) {
		i++
	}
	name = line[:i]
	rest := strings.TrimLeft(line[i:], " \t")
	if name == "" || !strings.HasPrefix(rest, "=") {
		return "", "", false
	}
	v := strings.TrimLeft(rest[1:], " \t")
	if v == "" {
		return "", "", false
	}
	if q := v[0]; q == '\'' || q == '"' {
		end := strings.IndexByte(v[1:], q)
		if end < 0 || strings.TrimRight(v[end+2:], " \t") != "" {
			return "", "", false
		}
		return name, v[1 : end+1], true
	}
	return name, v, true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// markLines prefixes the lines named (counted from 1) with prefix, as
// scrontab shows the entries cancelled since ("#DISABLED: ") or the bad
// ones after an edit ("#BAD: ").
func markLines(text string, lines []int, prefix string) string {
	if len(lines) == 0 {
		return text
	}
	parts := strings.SplitAfter(text, "\n")
	for _, l := range lines {
		if l >= 1 && l <= len(parts) && parts[l-1] != "" {
			parts[l-1] = prefix + parts[l-1]
		}
	}
	return strings.Join(parts, "")
}

// lineRange is "3" or "3-5" as a list of lines.
func lineRange(s string) []int {
	var a, b int
	if n, _ := fmt.Sscanf(s, "%d-%d", &a, &b); n == 2 {
		var out []int
		for l := a; l <= b; l++ {
			out = append(out, l)
		}
		return out
	}
	if _, err := fmt.Sscanf(s, "%d", &a); err == nil {
		return []int{a}
	}
	return nil
}
