package jobscript

// Value parsers that reproduce the C functions sbatch calls on option values
// (src/common/proc_args.c, parse_time.c, slurm_protocol_defs.c), with their
// leniencies: strtol's leading spaces and sign, suffixes, silent truncation
// to int. Formats that internal/slurmsyntax owns (time limits, --begin,
// --signal, --array, --dependency) are parsed there.

import (
	"math"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// parseInt is Slurm's parse_int: a whole decimal number, positive (> 0) when
// asked, else not negative, cut to a C int. Its errors exit 1, not 255.
func parseInt(name, val string, positive bool) (int, *Error) {
	v, rest, _ := slurmsyntax.Strtol(val, slurmsyntax.Saturate)
	// With no digits strtol leaves end at the start, so "" passes as 0
	// (and fails only the positive test) while "abc" fails.
	if rest != "" || v < 0 || (positive && v <= 0) {
		return 0, invalid(exitError, "Invalid numeric value \"%s\" for %s.", val, name)
	}
	if v == math.MaxInt64 {
		return 0, invalid(exitError, "Numeric argument (%d) to big for %s.", v, name)
	}
	return int(int32(v)), nil
}

// strToMbytes is Slurm's str_to_mbytes: a count of MiB, with an optional
// K, M, G or T suffix (KiB rounded up), optionally followed by "B".
func strToMbytes(s string) (uint64, bool) {
	v, rest, ok := slurmsyntax.Strtol(s, slurmsyntax.Saturate)
	if !ok || v < 0 || v == math.MaxInt64 || v == math.MinInt64 {
		return 0, false
	}
	if rest == "" {
		return uint64(v), true
	}
	endOnByte := len(rest) == 1 || (len(rest) == 2 && (rest[1] == 'B' || rest[1] == 'b'))
	if !endOnByte {
		return 0, false
	}
	u := uint64(v)
	switch rest[0] {
	case 'k', 'K':
		return (u + 1023) / 1024, true
	case 'm', 'M':
		return u, true
	case 'g', 'G':
		return u * 1024, true
	case 't', 'T':
		return u * 1024 * 1024, true
	}
	return 0, false
}

// suffixMult is Slurm's suffix_mult: the multiplier of a count suffix, or
// false for an unknown one.
func suffixMult(s string) (uint64, bool) {
	switch strings.ToLower(s) {
	case "":
		return 1, true
	case "k", "kib":
		return 1 << 10, true
	case "kb":
		return 1e3, true
	case "m", "mib":
		return 1 << 20, true
	case "mb":
		return 1e6, true
	case "g", "gib":
		return 1 << 30, true
	case "gb":
		return 1e9, true
	case "t", "tib":
		return 1 << 40, true
	case "tb":
		return 1e12, true
	case "p", "pib":
		return 1 << 50, true
	case "pb":
		return 1e15, true
	}
	return 0, false
}

// strToNodes is _str_to_nodes: a count with an optional k or m multiplier.
// It returns -1 when there are no digits.
func strToNodes(s string) (int, string) {
	v, rest, ok := slurmsyntax.Strtol(s, slurmsyntax.Saturate)
	if !ok {
		return -1, s
	}
	if rest != "" && (rest[0] == 'k' || rest[0] == 'K') {
		v *= 1024
		rest = rest[1:]
	}
	if rest != "" && (rest[0] == 'm' || rest[0] == 'M') {
		v *= 1024 * 1024
		rest = rest[1:]
	}
	return int(int32(v)), rest
}

func isWhitespace(s string) bool { return strings.Trim(s, cSpace) == "" }

// verifyNodeCount is verify_node_count: "N" or "min-max".
func verifyNodeCount(arg string) (lo, hi int, err *Error) {
	if i := strings.IndexByte(arg, '-'); i >= 0 {
		minStr, maxStr := arg[:i], arg[i+1:]
		var left string
		lo, left = strToNodes(minStr)
		if !isWhitespace(left) {
			return 0, 0, invalid(exitOption, "\"%s\" is not a valid node count", minStr)
		}
		if lo < 0 {
			lo = 1
		}
		hi, left = strToNodes(maxStr)
		if !isWhitespace(left) {
			return 0, 0, invalid(exitOption, "\"%s\" is not a valid node count", maxStr)
		}
	} else {
		var left string
		lo, left = strToNodes(arg)
		hi = lo
		if !isWhitespace(left) || lo < 0 {
			return 0, 0, invalid(exitOption, "\"%s\" is not a valid node count", arg)
		}
	}
	if hi != 0 && hi < lo {
		return 0, 0, invalid(exitOption, "Maximum node count %d is less than minimum node count %d", hi, lo)
	}
	return lo, hi, nil
}

// timeStr2Secs is Slurm's time_str2secs: "min", "min:sec", "hr:min:sec",
// "days-hr[:min[:sec]]" in seconds; -1 for INFINITE/UNLIMITED/-1; false for
// anything else. internal/slurmsyntax parses time limits (in minutes); this
// seconds form is only for --delay-boot and --switches.
func timeStr2Secs(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	if s == "-1" || strings.EqualFold(s, "INFINITE") || strings.EqualFold(s, "UNLIMITED") {
		return -1, true
	}
	if !validTimespec(s) {
		return 0, false
	}
	if strings.Contains(s, "-") {
		f, _ := scanInts(s, "-::")
		return f[0]*86400 + f[1]*3600 + f[2]*60 + f[3], true
	}
	f, n := scanInts(s, "::")
	if n == 3 {
		return f[0]*3600 + f[1]*60 + f[2], true
	}
	// minutes[:seconds]
	return f[0]*60 + f[1], true
}

// scanInts reads up to four integers separated by seps, as sscanf with
// "%d-%d:%d:%d" does: it stops at the first field that does not parse, and
// says how many it read.
func scanInts(s, seps string) (f [4]int, n int) {
	for n <= len(seps) {
		v, rest, ok := slurmsyntax.Strtol(s, slurmsyntax.Saturate)
		if !ok {
			break
		}
		f[n] = int(int32(v))
		n++
		if n > len(seps) || rest == "" || rest[0] != seps[n-1] {
			break
		}
		s = rest[1:]
	}
	return f, n
}

// validTimespec is _is_valid_timespec of parse_time.c.
func validTimespec(s string) bool {
	digit, dash, colon := 0, 0, 0
	inDigit := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if !inDigit {
				digit++
				inDigit = true
			}
		case c == '-':
			inDigit = false
			dash++
			if colon > 0 {
				return false
			}
		case c == ':':
			inDigit = false
			colon++
		default:
			return false
		}
	}
	if digit == 0 || dash > 1 || colon > 2 {
		return false
	}
	if dash > 0 {
		if (colon == 1 && digit < 3) || (colon == 2 && digit < 4) {
			return false
		}
	} else if (colon == 1 && digit < 2) || (colon == 2 && digit < 3) {
		return false
	}
	return true
}
