package slurmtime

import "math"

// Slurm reads numbers with C's strtol family. These helpers reproduce the
// parts of that behaviour Slurm relies on (leading white space, a sign,
// saturation on overflow) so each parser can say which it accepts. They
// report whether any digit was read: where C reads "no digits" as 0 and
// carries on, our parsers reject the input instead (see doc.go).

// isCSpace reports whether b is white space for C's isspace.
func isCSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' || b == '\r'
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// digits reads the run of ASCII digits at the start of s. The value
// saturates at math.MaxInt64. n is the number of digits read.
func digits(s string) (v int64, n int) {
	for n < len(s) && isDigit(s[n]) {
		d := int64(s[n] - '0')
		if v > (math.MaxInt64-d)/10 {
			v = math.MaxInt64
		} else {
			v = v*10 + d
		}
		n++
	}
	return v, n
}

// strtol reads a number as C's strtol(s, &end, 10) does: white space, an
// optional sign, digits. n is how many bytes were used, 0 when there was no
// digit (C then leaves end at s and returns 0). The value saturates.
func strtol(s string) (v int64, n int) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	v, nd := digits(s[i:])
	if nd == 0 {
		return 0, 0
	}
	if neg {
		v = -v
	}
	return v, i + nd
}

// hasPrefixFold reports whether s starts with prefix, ASCII case folded,
// as Slurm's xstrncasecmp(s, prefix, len(prefix)) == 0.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(s[i]) != lower(prefix[i]) {
			return false
		}
	}
	return true
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// byteAt returns s[i], or 0 past the end: C strings end in a NUL, and
// Slurm's parsers look one or two bytes ahead.
func byteAt(s string, i int) byte {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}
