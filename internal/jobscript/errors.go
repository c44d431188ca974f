package jobscript

import (
	"fmt"
	"strings"
)

// Kind says how sbatch reports an error: which prefix its lines carry and
// with which exit code it ends.
type Kind int

const (
	// KindUsage is a command-line syntax error found by getopt
	// ("unrecognized option '--foo'"). sbatch prints "sbatch: " + Msg, then
	// `Try "sbatch --help" for more information`, and exits 255.
	KindUsage Kind = iota
	// KindInvalid is a bad option value or script found by sbatch itself:
	// each line of Msg is printed as "sbatch: error: " + line. Exit is 255
	// for most option values (Slurm's exit(-1)) and 1 for the rest.
	KindInvalid
	// KindFatal is a message sbatch prints with fatal() ("sbatch: fatal: "),
	// exiting 1.
	KindFatal
	// KindRejected is a request that sbatch sends but the controller
	// refuses: "sbatch: error: Batch job submission failed: " + Msg, exit 1.
	// The request is syntactically fine as far as sbatch is concerned (a
	// malformed --dependency is one: sbatch does not parse it).
	KindRejected
	// KindGresHelp is "--gres=help" or "--gres=list": sbatch prints the
	// GRES plugins it knows and exits 0. Not a failure; Msg is empty.
	KindGresHelp
)

// Source says where an option came from.
type Source string

// Sources of options, in increasing precedence (#SLITE lines rank with
// #SBATCH lines: both are the script).
const (
	FromScript      Source = "script"
	FromExtension   Source = "#SLITE"
	FromEnvironment Source = "environment"
	FromCommandLine Source = "command line"
)

// Error is a job submission that sbatch would refuse, with everything needed
// to print Slurm's exact text and exit with its code.
type Error struct {
	Kind Kind
	// Msg is Slurm's text without the "sbatch: " and "error: " prefixes;
	// several lines for the script checks ("This does not look like a batch
	// script...").
	Msg string
	// Exit is sbatch's exit status.
	Exit int
	// Option is the option at fault ("--time"), if any.
	Option string
	// Source is where the option came from; empty when no option is at fault.
	Source Source
	// File and Line locate the directive at fault in the script (1-based);
	// Slurm does not print them (it joins all directives into one argument
	// list), but a caller may, after Slurm's lines. Line is 0 when unknown.
	File string
	Line int
	// Var is the environment variable at fault (SBATCH_TIMELIMIT), if any.
	Var string
	// Hint is slurm-lite's own advice, never part of Slurm's text.
	Hint string
	// Warnings are lines sbatch printed before failing, already with their
	// level prefix ("error: Change from #SLURM to #SBATCH ...").
	Warnings []string
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.Var != "":
		fmt.Fprintf(&b, "%s: ", e.Var)
	case e.Source != "":
		fmt.Fprintf(&b, "%s: ", e.Source)
	}
	if e.Kind == KindRejected {
		b.WriteString("batch job submission failed: ")
	}
	b.WriteString(strings.ReplaceAll(e.Msg, "\n", " "))
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Stderr renders what sbatch prints for this error, byte for byte, with prog
// as the program name ("sbatch"). It does not include File, Line or Hint.
func (e *Error) Stderr(prog string) string {
	var b strings.Builder
	for _, w := range e.Warnings {
		fmt.Fprintf(&b, "%s: %s\n", prog, w)
	}
	switch e.Kind {
	case KindUsage:
		fmt.Fprintf(&b, "%s: %s\n", prog, e.Msg)
		fmt.Fprintf(&b, "Try \"%s --help\" for more information\n", prog)
	case KindInvalid:
		for _, l := range strings.Split(e.Msg, "\n") {
			fmt.Fprintf(&b, "%s: error: %s\n", prog, l)
		}
	case KindFatal:
		fmt.Fprintf(&b, "%s: fatal: %s\n", prog, e.Msg)
	case KindRejected:
		fmt.Fprintf(&b, "%s: error: Batch job submission failed: %s\n", prog, e.Msg)
	}
	return b.String()
}

// Location is "job.sh line 3" for an error in a directive, the environment
// variable's name for one from the environment, or "".
func (e *Error) Location() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s line %d", e.File, e.Line)
	case e.Var != "":
		return e.Var
	}
	return ""
}

// Exit codes sbatch uses: exit(-1) becomes 255; error_exit defaults to 1.
const (
	exitOption = 255
	exitError  = 1
)

func invalid(exit int, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Exit: exit, Msg: fmt.Sprintf(format, args...)}
}

func rejected(msg string) *Error {
	return &Error{Kind: KindRejected, Exit: exitError, Msg: msg}
}

func fatal(format string, args ...any) *Error {
	return &Error{Kind: KindFatal, Exit: exitError, Msg: fmt.Sprintf(format, args...)}
}

// Controller messages (slurm_strerror of the ESLURM codes slurmctld returns).
const (
	MsgDependency     = "Job dependency problem"
	MsgNodeConfig     = "Requested node configuration is not available"
	MsgNodeCount      = "Node count specification invalid"
	MsgInvalidArray   = "Invalid job array specification"
	MsgInvalidGres    = "Invalid generic resource (gres) specification"
	MsgGresType       = "Invalid GRES specification (with and without type identification)"
	MsgUIDNotRoot     = "--uid only permitted by root user"
	MsgGIDNotRoot     = "--gid only permitted by root user"
	MsgUIDInvalid     = "Invalid --uid specification"
	MsgGIDInvalid     = "Invalid --gid specification"
	defaultArraySize  = 1001
	maxArraySizeLimit = 4000001
)
