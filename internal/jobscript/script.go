package jobscript

import (
	"strings"
)

// WrapScript is the script sbatch writes around a --wrap command
// (_script_wrap in src/sbatch/sbatch.c).
func WrapScript(command string) string {
	return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + command + "\n"
}

// checkScript applies sbatch's checks on a script it has read
// (_get_script_buffer), in its order. Their errors exit with error_exit.
func checkScript(body []byte, exit int) *Error {
	bad := func(lines ...string) *Error {
		return &Error{Kind: KindInvalid, Exit: exit, Msg: strings.Join(lines, "\n")}
	}
	// sbatch tests for whitespace on the buffer as a C string: up to the
	// first NUL.
	cstr := body
	if i := strings.IndexByte(string(body), 0); i >= 0 {
		cstr = body[:i]
	}
	switch {
	case len(body) == 0:
		return bad("Batch script is empty!")
	case isWhitespace(string(cstr)):
		return bad("Batch script contains only whitespace!")
	case len(body) < 2 || body[0] != '#' || body[1] != '!':
		return bad("This does not look like a batch script.  The first",
			"line must start with #! followed by the path to an interpreter.",
			"For instance: #!/bin/sh")
	case len(cstr) != len(body):
		return bad("The Slurm controller does not allow scripts that",
			"contain a NULL character '\\0'.")
	case strings.Contains(string(body), "\r\n"):
		return bad("Batch script contains DOS line breaks (\\r\\n)",
			"instead of expected UNIX line breaks (\\n).")
	}
	return nil
}
