package slurmsyntax

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

// An Overflow is what Strtol reads a number beyond int64 as. The readers
// it replaced differed here, each caller's behaviour depends on it, and so
// it is each caller's explicit choice.
type Overflow int8

const (
	// Saturate is C's strtol: LONG_MAX, or LONG_MIN below it.
	Saturate Overflow = iota
	// OutOfRange is 1<<62 whatever the sign: past any uint32, so that the
	// commands' job id readers refuse it as too large (scancel, squeue,
	// sacct), and cut to a uint32 it is 0.
	OutOfRange
	// Zero reads it as 0 (the format widths of squeue -o and sacct -o).
	Zero
)

// scanDecimal reads the start of a number as C's strto* family does: white
// space, an optional sign, digits. u is the digits' value and over whether
// it passed uint64; end is where the digits stop, and ok is false when
// there are none.
func scanDecimal(s string) (neg bool, u uint64, over bool, end int, ok bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			over = true
		} else {
			u = u*10 + d
		}
		i++
	}
	return neg, u, over, i, i > start
}

// Strtol reads a number as C's strtol(s, &end, 10) does: white space, an
// optional sign, digits. rest is what follows the digits; ok is false when
// there is no digit (C then leaves end at s and returns 0: v is 0 and rest
// is s). A number beyond int64 is read as overflow says.
func Strtol(s string, overflow Overflow) (v int64, rest string, ok bool) {
	neg, u, over, i, ok := scanDecimal(s)
	if !ok {
		return 0, s, false
	}
	if over || !neg && u > math.MaxInt64 || neg && u > 1<<63 {
		switch {
		case overflow == OutOfRange:
			return 1 << 62, s[i:], true
		case overflow == Zero:
			return 0, s[i:], true
		case neg:
			return math.MinInt64, s[i:], true
		}
		return math.MaxInt64, s[i:], true
	}
	if neg {
		return -int64(u), s[i:], true
	}
	return int64(u), s[i:], true
}

// Strtoull reads a number as C's strtoull(s, &end, 10) does: as Strtol,
// but a minus sign negates in unsigned arithmetic ("-1" is the largest
// value), and a number beyond uint64 is the largest value whatever its
// sign.
func Strtoull(s string) (v uint64, rest string, ok bool) {
	neg, u, over, i, ok := scanDecimal(s)
	switch {
	case !ok:
		return 0, s, false
	case over:
		return math.MaxUint64, s[i:], true
	case neg:
		return -u, s[i:], true
	}
	return u, s[i:], true
}

// strtol is Strtol saturating, as this package's parsers read numbers: n
// is how many bytes were used, 0 when there was no digit.
func strtol(s string) (v int64, n int) {
	v, rest, ok := Strtol(s, Saturate)
	if !ok {
		return 0, 0
	}
	return v, len(s) - len(rest)
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
