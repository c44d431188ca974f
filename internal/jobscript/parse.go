package jobscript

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Action is what a command line asks sbatch to do.
type Action int

const (
	// Submit a job: the usual case.
	Submit Action = iota
	// Help: --help/-h. sbatch prints its help and exits 0.
	Help
	// Usage: --usage. sbatch prints its usage line and exits 0.
	Usage
	// Version: --version/-V. sbatch prints "slurm 22.05.8" and exits 0.
	Version
	// GresHelp: --gres=help or --gres=list. sbatch lists GRES and exits 0.
	GresHelp
)

// CommandLine is sbatch's command line after its first pass
// (process_options_first_pass): every option checked, the options that act
// at once (-h, -V, -Q, -v, --wrap) taken out, and the script operand found.
type CommandLine struct {
	Action Action `json:"action,omitempty"`
	// Settings are the other options in command-line order, for Parse to
	// apply after the script and the environment.
	Settings []Setting `json:"settings,omitempty"`
	// Script is the first operand: the script's path as given. sbatch
	// looks a bare name up in --chdir's directory, then in $PATH
	// (search_path); the caller reads the file. Stdin is set when there
	// is no operand (and no --wrap): the script is read from standard input.
	Script string   `json:"script,omitempty"`
	Stdin  bool     `json:"stdin,omitempty"`
	Args   []string `json:"args,omitempty"`
	// Wrap is --wrap's command; HasWrap tells --wrap="" from no --wrap.
	Wrap    string `json:"wrap,omitempty"`
	HasWrap bool   `json:"has_wrap,omitempty"`
	Quiet   bool   `json:"quiet,omitempty"`
	Verbose int    `json:"verbose,omitempty"`
}

// firstPassNow is the clock used to check --begin and --deadline on the
// command line, which ParseCommandLine has no clock for: whether a time
// parses does not depend on when it is read; Parse evaluates it again with
// the real time.
var firstPassNow = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ParseCommandLine reads sbatch's arguments (without the program name) as
// sbatch's first pass does: getopt stops at the first operand, which is the
// script, and everything after it is the script's arguments. Every option is
// checked here, so a bad value on the command line is reported before the
// script is even read, as sbatch does. Errors are *Error.
func ParseCommandLine(args []string) (CommandLine, error) {
	cl := CommandLine{}
	for _, a := range args {
		if a == ":" {
			return cl, &Error{Kind: KindInvalid, Exit: exitError, Source: FromCommandLine,
				Msg:  "heterogeneous jobs (\":\" on the command line) are not supported",
				Hint: "slurm-lite runs one job on one machine; submit the components as separate jobs"}
		}
	}
	scratch := newState(firstPassNow, exitError)
	p := getopt.NewParser(table(), getopt.RequireOrder, args)
	for {
		res, ok, gerr := p.Next()
		if gerr != nil {
			return cl, usageError(gerr, FromCommandLine)
		}
		if !ok {
			break
		}
		d := def(res.Option)
		switch d.Key() {
		case "help":
			return CommandLine{Action: Help}, nil
		case "usage":
			return CommandLine{Action: Usage}, nil
		case "version":
			return CommandLine{Action: Version}, nil
		case "quiet":
			cl.Quiet = true
			continue
		case "verbose":
			cl.Verbose++
			continue
		case "wrap":
			cl.Wrap, cl.HasWrap = res.Value, true
			continue
		}
		if err := d.set(scratch, res.Value, res.HasValue); err != nil {
			if err.Kind == KindGresHelp {
				return CommandLine{Action: GresHelp}, nil
			}
			err.Source, err.Option = FromCommandLine, "--"+d.Name
			return cl, err
		}
		cl.Settings = append(cl.Settings, Setting{Name: d.Name, Value: res.Value, HasValue: res.HasValue})
	}
	ops := p.Operands()
	if len(ops) > 0 && cl.HasWrap {
		return cl, &Error{Kind: KindInvalid, Exit: exitError, Source: FromCommandLine,
			Msg: "Script arguments not permitted with --wrap option"}
	}
	switch {
	case len(ops) > 0:
		cl.Script = ops[0]
		if len(ops) > 1 {
			cl.Args = ops[1:]
		}
	case !cl.HasWrap:
		cl.Stdin = true
	}
	return cl, nil
}

// Input is everything Parse reads. Parse does no I/O: the caller reads the
// script, the environment and the clock, and passes them in.
type Input struct {
	// Script is the batch script's content as read; ignored with --wrap.
	Script []byte
	// Command is the command line from ParseCommandLine.
	Command CommandLine
	// Env looks up the submitter's environment (SBATCH_* variables and
	// SLURM_EXIT_ERROR); nil is an empty environment.
	Env func(string) (string, bool)
	// Now is the submission time, for --begin and --deadline.
	Now time.Time
	// MaxArraySize is slurm.conf's MaxArraySize; 0 means Slurm's default
	// (1001).
	MaxArraySize int
}

// Parse builds the job request as Slurm 22.05's sbatch does, in its order:
//
//  1. the script's checks (empty, "#!", NUL, DOS line breaks), or the
//     --wrap script;
//  2. the #SBATCH (and #SLURM) directives, joined into one argument list
//     and read by getopt; then the #SLITE directives;
//  3. the SBATCH_* environment variables, in sbatch's table order;
//  4. the command line's options;
//  5. sbatch's consistency rules and defaults (_opt_verify), and its GRES
//     check;
//  6. what the controller refuses of an otherwise well-formed request (a
//     malformed --dependency or --array, more than one node).
//
// Later steps override earlier ones; the last of a repeated option wins.
// An error is an *Error, of the first problem in that order.
func Parse(in Input) (*Request, error) {
	cl := in.Command
	if cl.Action != Submit {
		return nil, errors.New("jobscript: nothing to parse: the command line asks for help, usage, version or --gres=help")
	}
	getenv := in.Env
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	exitErr, zero := errorExit(getenv)
	s := newState(in.Now, exitErr)
	if zero {
		s.warn("error: SLURM_EXIT_ERROR has zero value")
	}
	r := s.r
	r.Quiet, r.Verbose = cl.Quiet, cl.Verbose
	r.Args = slices.Clone(cl.Args)

	name := "stdin"
	switch {
	case cl.HasWrap:
		r.Wrap, r.HasWrap = cl.Wrap, true
		r.Script = WrapScript(cl.Wrap)
	default:
		if !cl.Stdin {
			r.ScriptPath = cl.Script
			name = baseName(cl.Script)
		}
		if err := checkScript(in.Script, s.exitErr); err != nil {
			return nil, err
		}
		r.Script = string(in.Script)
	}
	r.ScriptName = name

	h, err := scanHeader(r.Script, name)
	s.warnings = append(s.warnings, h.warnings...)
	if err != nil {
		return nil, s.fail(err)
	}
	if h.hetjob > 0 {
		return nil, s.fail(&Error{Kind: KindInvalid, Exit: s.exitErr, Source: FromScript, File: name, Line: h.hetjob,
			Msg:  "heterogeneous jobs (#SBATCH hetjob) are not supported",
			Hint: "slurm-lite runs one job on one machine; submit the components as separate jobs"})
	}
	if err := s.directives(h.sbatch, name, FromScript); err != nil {
		return nil, s.fail(err)
	}
	if err := s.directives(h.slite, name, FromExtension); err != nil {
		return nil, s.fail(err)
	}
	if err := s.environment(getenv); err != nil {
		return nil, s.fail(err)
	}
	for _, st := range cl.Settings {
		d := byName(st.Name)
		if d == nil {
			return nil, fmt.Errorf("jobscript: command line setting %q is not an sbatch option", st.Name)
		}
		if err := s.apply(d, st.Value, st.HasValue, FromCommandLine); err != nil {
			err.Option = "--" + d.Name
			return nil, s.fail(err)
		}
	}
	if err := s.verify(); err != nil {
		return nil, s.fail(err)
	}
	if err := s.checkGres(); err != nil {
		return nil, s.fail(err)
	}
	maxArray := in.MaxArraySize
	if maxArray <= 0 {
		maxArray = defaultArraySize
	}
	if err := s.controller(min(maxArray, maxArraySizeLimit)); err != nil {
		return nil, s.fail(err)
	}
	r.Warnings = s.warnings
	return r, nil
}

// fail attaches the lines printed so far to an error.
func (s *state) fail(e *Error) *Error {
	if len(s.warnings) > 0 {
		e.Warnings = append(append([]string(nil), s.warnings...), e.Warnings...)
	}
	return e
}

// apply sets one option and records where it came from.
func (s *state) apply(d *optDef, v string, has bool, src Source) *Error {
	if err := d.set(s, v, has); err != nil {
		err.Source = src
		return err
	}
	s.src[d.Key()] = src
	return nil
}

// directives reads the words of the #SBATCH lines (or of the #SLITE lines)
// as one argument list, as _opt_batch_script does.
func (s *state) directives(words []arg, file string, src Source) *Error {
	argv := make([]string, len(words))
	for i, w := range words {
		argv[i] = w.text
	}
	locate := func(e *Error, i int) *Error {
		e.Source, e.File, e.Line = src, file, words[i].line
		return e
	}
	p := getopt.NewParser(table(), getopt.RequireOrder, argv)
	for {
		res, ok, gerr := p.Next()
		if gerr != nil {
			return locate(usageError(gerr, src), gerr.(*getopt.Error).Index)
		}
		if !ok {
			break
		}
		d := def(res.Option)
		written := "--" + d.Name
		if res.HasValue {
			written += "=" + res.Value
		}
		switch {
		case src == FromScript && d.ext:
			return locate(&Error{Kind: KindInvalid, Exit: exitOption, Option: "--" + d.Name,
				Msg: fmt.Sprintf("--%s is a slurm-lite extension, which real sbatch rejects in #SBATCH lines: "+
					"write it on a #SLITE line instead (#SLITE %s)", d.Name, written)}, res.Index)
		case src == FromExtension && !d.ext:
			return locate(&Error{Kind: KindInvalid, Exit: exitOption, Option: "--" + d.Name,
				Msg: fmt.Sprintf("--%s is a Slurm option, which real sbatch ignores in #SLITE lines: "+
					"write it on an #SBATCH line instead (#SBATCH %s)", d.Name, written)}, res.Index)
		case d.early:
			// -v, -Q, --wrap, --help, ... act in sbatch's first pass only;
			// in a script Slurm silently ignores them.
			continue
		}
		if err := s.apply(d, res.Value, res.HasValue, src); err != nil {
			err.Option = "--" + d.Name
			return locate(err, res.Index)
		}
	}
	if ops := p.Operands(); len(ops) > 0 {
		return locate(&Error{Kind: KindInvalid, Exit: exitOption,
			Msg: "Invalid directive found in batch script: " + ops[0]}, len(words)-len(ops))
	}
	return nil
}

// environment applies the SBATCH_* variables (_opt_env).
func (s *state) environment(getenv func(string) (string, bool)) *Error {
	for _, ev := range envVars {
		v, ok := getenv(ev.name)
		if !ok {
			continue
		}
		d := byKey()[ev.key]
		has := true
		switch d.Arg {
		case getopt.NoArgument:
			// A flag from the environment is set by "", "yes" or a
			// non-zero number, and reset by anything else.
			n, rest, _ := slurmsyntax.Strtol(v, slurmsyntax.Saturate)
			if v != "" && !strings.EqualFold(v, "yes") && (n == 0 || rest != "") {
				if d.reset != nil {
					d.reset(s)
				}
				delete(s.src, d.Key())
				continue
			}
			if d.Key() != "verbose" {
				v, has = "", false
			}
		case getopt.OptionalArgument:
			has = v != ""
		}
		if err := s.apply(d, v, has, FromEnvironment); err != nil {
			err.Var, err.Option = ev.name, "--"+d.Name
			return err
		}
	}
	return nil
}

// usageError turns a getopt error into sbatch's.
func usageError(err error, src Source) *Error {
	ge := err.(*getopt.Error)
	return &Error{Kind: KindUsage, Exit: exitOption, Msg: ge.Error(), Source: src, Option: ge.Option}
}

// def is sbatch's row that getopt returned.
func def(o getopt.Option) *optDef {
	for i := range options {
		if options[i].cmds&Sbatch != 0 && options[i].Option == o {
			return &options[i]
		}
	}
	panic(fmt.Sprintf("jobscript: getopt returned an option not in the table: %+v", o))
}

// byName is sbatch's option of a name.
func byName(name string) *optDef {
	for i := range options {
		if options[i].cmds&Sbatch != 0 && options[i].Name == name {
			return &options[i]
		}
	}
	return nil
}

// baseName is Slurm's xbasename: what follows the last '/'.
func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// errorExit is sbatch's error_exit: SLURM_EXIT_ERROR if set and not zero,
// else 1. zero reports a variable set to zero, which sbatch complains about.
func errorExit(getenv func(string) (string, bool)) (code int, zero bool) {
	v, ok := getenv("SLURM_EXIT_ERROR")
	if !ok {
		return exitError, false
	}
	n, _, _ := slurmsyntax.Strtol(v, slurmsyntax.Saturate) // atoi
	if n == 0 {
		return exitError, true
	}
	return int(uint8(n)), false
}
