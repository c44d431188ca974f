package jobscript

import (
	"strings"
)

// Directive magic words. Slurm compares them case-sensitively with the start
// of the line (xstrncmp), so "# SBATCH", "#sbatch" and an indented "#SBATCH"
// are comments, and "#SBATCH--time=5" is a directive.
const (
	magicSBATCH = "#SBATCH"
	magicSLURM  = "#SLURM" // accepted with a warning (src/sbatch/opt.c)
	magicSLITE  = "#SLITE" // slurm-lite's extensions; a comment to Slurm
)

// warnSLURM is the error-level line sbatch prints, once, for "#SLURM".
const warnSLURM = "Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch"

// arg is one word of a directive line, with the line it came from.
type arg struct {
	text string
	line int
}

// header is what the directive lines of a script hold.
type header struct {
	sbatch   []arg // from #SBATCH and #SLURM lines, joined in order
	slite    []arg // from #SLITE lines
	slurm    bool  // a #SLURM line was seen
	hetjob   int   // line of a "hetjob"/"packjob" separator; 0 if none
	warnings []string
}

// scanHeader reads the directives of a script as sbatch's _opt_batch_script
// does: line by line from the top, until the first line that is neither
// blank nor a comment (a line whose first non-space character is '#'). The
// words of every directive line are joined into one argument list, so an
// option's value may come from the next directive line, and getopt sees all
// of them at once.
func scanHeader(script, file string) (header, *Error) {
	var h header
	lines := strings.Split(script, "\n")
	// next_line yields no empty last line after a final newline.
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, line := range lines {
		lineno := i + 1
		var rest string
		var dst *[]arg
		switch {
		case strings.HasPrefix(line, magicSBATCH):
			rest, dst = line[len(magicSBATCH):], &h.sbatch
		case strings.HasPrefix(line, magicSLURM):
			rest, dst = line[len(magicSLURM):], &h.sbatch
			if !h.slurm {
				h.slurm = true
				h.warnings = append(h.warnings, "error: "+warnSLURM)
			}
		case strings.HasPrefix(line, magicSLITE):
			rest, dst = line[len(magicSLITE):], &h.slite
		default:
			if isCommand(line) {
				return h, nil
			}
			continue
		}
		rest = strings.TrimLeft(rest, cSpace)
		if dst == &h.sbatch && isHetSeparator(rest) {
			// "#SBATCH hetjob" starts the next component of a
			// heterogeneous job; sbatch reads no further for this one.
			h.hetjob = lineno
			return h, nil
		}
		for {
			word, n, ok, err := nextArgument(rest, file, lineno)
			if err != nil {
				return h, err
			}
			if !ok {
				break
			}
			*dst = append(*dst, arg{word, lineno})
			rest = rest[n:]
		}
	}
	return h, nil
}

// isCommand reports whether a line ends the header: its first non-space
// character is not '#' (a blank line does not end it).
func isCommand(line string) bool {
	t := strings.TrimLeft(line, cSpace)
	return t != "" && t[0] != '#'
}

// cSpace is C's isspace in the "C" locale.
const cSpace = " \t\n\v\f\r"

func isSpace(c byte) bool { return strings.IndexByte(cSpace, c) >= 0 }

// isHetSeparator reports a "hetjob" or "packjob" word (any case) at the start
// of s, followed by a space or the end.
func isHetSeparator(s string) bool {
	for _, w := range []string{"hetjob", "packjob"} {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) &&
			(len(s) == len(w) || isSpace(s[len(w)])) {
			return true
		}
	}
	return false
}

// nextArgument returns the next word of a directive line and how many bytes
// of line it used, as Slurm's get_argument (src/sbatch/opt.c) does. ok is
// false when the line has no further word, or when Slurm's loop stops early
// (see below).
//
// This is not a shell's word splitting, and not go-shellwords, whose rules
// differ from Slurm's in ways that change real scripts:
//   - '#' outside quotes ends the line even inside a word: "-J a#b" is "-J a";
//     a shell only starts a comment at the start of a word.
//   - A backslash escapes the next character everywhere, inside single
//     quotes too: 'it\'s' is "it's"; a shell keeps backslashes in single
//     quotes and most of them in double quotes.
//   - An escaped space does not join words: "a\ b" is "a" and "b", because
//     Slurm's loop tests for a space before it looks at the escape.
//   - A word made only of quotes ("" or ”) ends the line, with every word
//     after it dropped: Slurm's get_argument returns NULL for it, which its
//     caller takes for the end of the line.
//   - ';', '|', '&', '<', '>', '$' and '`' are ordinary characters; there is
//     no expansion of any kind.
//   - A word starting with "hetjob" or "packjob" (any case) followed by a
//     space ends the line (Slurm blanks it out, then finds nothing).
//   - A word starting with ':' and an unmatched quote are fatal errors.
func nextArgument(line, file string, lineno int) (word string, used int, ok bool, err *Error) {
	i := 0
	for i < len(line) && isSpace(line[i]) {
		i++
	}
	if isHetSeparator(line[i:]) {
		return "", len(line), false, nil
	}
	if i < len(line) && line[i] == ':' {
		return "", 0, false, fatal("%s: line %d: Unexpected `:` in [%s]", file, lineno, line)
	}
	if i == len(line) {
		return "", 0, false, nil
	}
	var b strings.Builder
	var quote byte
	escaped, copied := false, false
	for i < len(line) && (quote != 0 || !isSpace(line[i])) && line[i] != '\n' {
		c := line[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
			i++
			continue
		case quote != 0:
			if c == quote {
				quote = 0
				i++
				continue
			}
		case c == '"' || c == '\'':
			quote = c
			i++
			continue
		case c == '#':
			// An unquoted, unescaped '#' starts a comment.
			goto done
		}
		b.WriteByte(c)
		copied = true
		i++
	}
done:
	if quote != 0 {
		return "", 0, false, fatal("%s: line %d: Unmatched `%c` in [%s]", file, lineno, quote, line)
	}
	if !copied {
		return "", i, false, nil
	}
	return b.String(), i, true, nil
}
