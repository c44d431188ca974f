package slurmsyntax

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Infinite is the time limit Slurm prints as UNLIMITED (INFINITE, -1 and,
// for sbatch, 0 all parse to it).
const Infinite time.Duration = 1<<63 - 1

// yearSeconds is squeue's YEAR_SECONDS: longer times print as INVALID.
const yearSeconds = 365 * 24 * 60 * 60

// ParseTimeLimit parses a time limit in every form sbatch accepts:
// "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds", "UNLIMITED",
// "INFINITE", "-1". The result is whole minutes, seconds rounded up (Slurm's
// time_str2mins), or Infinite. "0" is Infinite as in sbatch ("a time limit
// of zero requests that no time limit be imposed"). The caller reports an
// error as sbatch does: "Invalid --time specification".
func ParseTimeLimit(s string) (time.Duration, error) {
	d, err := ParseMinutes(s)
	if err != nil {
		return 0, err
	}
	if d == 0 {
		return Infinite, nil
	}
	return d, nil
}

// ParseMinutes is Slurm's time_str2mins, which slurm.conf uses for
// durations such as PriorityDecayHalfLife=7-0 and PriorityMaxAge: the forms
// of ParseTimeLimit, rounded up to whole minutes, but "0" stays zero.
func ParseMinutes(s string) (time.Duration, error) {
	secs, inf, err := timeStr2Secs(s)
	if err != nil {
		return 0, err
	}
	if inf {
		return Infinite, nil
	}
	return time.Duration((secs+59)/60) * time.Minute, nil
}

// ParseSeconds is Slurm's time_str2secs: the forms of ParseTimeLimit to the
// second, no rounding ("5:30" is 330 seconds), "0" is zero.
func ParseSeconds(s string) (time.Duration, error) {
	secs, inf, err := timeStr2Secs(s)
	if err != nil {
		return 0, err
	}
	if inf {
		return Infinite, nil
	}
	return time.Duration(secs) * time.Second, nil
}

// timeStr2Secs follows time_str2secs in src/common/parse_time.c.
func timeStr2Secs(s string) (secs int64, infinite bool, err error) {
	if s == "" {
		return 0, false, fmt.Errorf("invalid time %q: empty", s)
	}
	if s == "-1" || strings.EqualFold(s, "INFINITE") || strings.EqualFold(s, "UNLIMITED") {
		return 0, true, nil
	}
	if !validTimespec(s) {
		return 0, false, fmt.Errorf("invalid time %q: want minutes, minutes:seconds, hours:minutes:seconds, "+
			"days-hours, days-hours:minutes, days-hours:minutes:seconds or UNLIMITED", s)
	}
	// validTimespec leaves exactly these shapes, every field present:
	// "-D", "D-", "D-H", "D-H:M", "D-H:M:S", "M", "M:S", "H:M:S".
	if s[0] == '-' {
		// Only "-D" gets here: sscanf reads a negative day count, and Slurm
		// goes on to use it as an unsigned limit, which helps no one.
		if v, _ := digits(s[1:]); v != 0 {
			return 0, false, fmt.Errorf("invalid time %q: negative", s)
		}
		return 0, false, nil
	}
	var fields []int64
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ':' }) {
		v, _ := digits(part)
		fields = append(fields, v)
	}
	var mult []int64
	switch {
	case strings.Contains(s, "-"):
		mult = []int64{86400, 3600, 60, 1}
	case len(fields) == 3:
		mult = []int64{3600, 60, 1}
	default:
		mult = []int64{60, 1}
	}
	for i, v := range fields {
		if v > math.MaxInt32 {
			return 0, false, fmt.Errorf("invalid time %q: too large", s)
		}
		secs += v * mult[i]
	}
	// Slurm keeps seconds in a C int.
	if secs > math.MaxInt32 {
		return 0, false, fmt.Errorf("invalid time %q: too large", s)
	}
	return secs, false, nil
}

// validTimespec is _is_valid_timespec: only digits, at most one '-' and it
// before any ':', at most two ':', and enough digit groups for the colons.
func validTimespec(s string) bool {
	groups, dash, colon := 0, 0, 0
	inDigits := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			if !inDigits {
				groups++
				inDigits = true
			}
		case c == '-':
			inDigits = false
			dash++
			if colon > 0 {
				return false
			}
		case c == ':':
			inDigits = false
			colon++
		default:
			return false
		}
	}
	if groups == 0 || dash > 1 || colon > 2 {
		return false
	}
	need := colon + 1 // groups needed without a dash: M, M:S, H:M:S
	if dash > 0 && colon > 0 {
		need = colon + 2 // D-H:M, D-H:M:S
	}
	return groups >= need
}

// FormatDuration prints d as squeue prints times (its _print_secs):
// "1-02:03:04", "2:03:04", "3:04", "0:00"; Infinite prints as "UNLIMITED".
// Negative times and times over 365 days print "INVALID", as squeue does.
// Fractions of a second are dropped.
func FormatDuration(d time.Duration) string {
	if d == Infinite {
		return "UNLIMITED"
	}
	secs := int64(d / time.Second)
	if d < 0 || secs > yearSeconds {
		return "INVALID"
	}
	days, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	default:
		return fmt.Sprintf("%d:%02d", m, s)
	}
}

// FormatClock prints d as scontrol, sinfo and sacct print limits and run
// times (secs2time_str / mins2time_str): "1-02:03:04", "02:03:04",
// "00:00:00", "UNLIMITED" for Infinite, "INVALID" when negative.
func FormatClock(d time.Duration) string {
	if d == Infinite {
		return "UNLIMITED"
	}
	if d < 0 {
		return "INVALID"
	}
	secs := int64(d / time.Second)
	days, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}
