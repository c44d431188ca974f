package slurmsyntax

import (
	"fmt"
	"math"
	"strconv"
)

// Bytes is a size in bytes.
type Bytes int64

// Size units, powers of 1024 as in Slurm.
const (
	KiB Bytes = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
	PiB
)

// ParseSize parses a size as Slurm's str_to_mbytes reads --mem: a whole
// number with an optional suffix K, M, G or T (either case, optionally
// followed by "B" or "b"): "16G", "500M", "2T", "1024K", "3". A number
// without a suffix is in defaultUnit (callers pass MiB for --mem and
// --mem-per-cpu; a defaultUnit below 1 means MiB).
//
// Slurm counts memory in whole MiB, rounding "K" values up; so the result
// is rounded up to a whole MiB, or to defaultUnit when that is smaller.
// Like str_to_mbytes it takes leading white space and a "+" sign, and
// rejects negative numbers, fractions ("1.5G"), "GiB", "P" and anything
// after the suffix. The caller reports an error as sbatch does: "Invalid
// --mem specification".
func ParseSize(s string, defaultUnit Bytes) (Bytes, error) {
	if defaultUnit < 1 {
		defaultUnit = MiB
	}
	n, used := strtol(s)
	if used == 0 {
		return 0, fmt.Errorf("invalid size %q: want a whole number with an optional K, M, G or T suffix", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("invalid size %q: negative", s)
	}
	if n == math.MaxInt64 { // strtoll overflowed: Slurm rejects it
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	unit := defaultUnit
	switch rest := s[used:]; {
	case rest == "":
	case len(rest) <= 2 && (len(rest) == 1 || rest[1] == 'B' || rest[1] == 'b'):
		switch rest[0] {
		case 'k', 'K':
			unit = KiB
		case 'm', 'M':
			unit = MiB
		case 'g', 'G':
			unit = GiB
		case 't', 'T':
			unit = TiB
		default:
			return 0, fmt.Errorf("invalid size %q: unknown unit %q; want K, M, G or T", s, rest)
		}
	default:
		return 0, fmt.Errorf("invalid size %q: unknown unit %q; want K, M, G or T", s, rest)
	}
	if n > math.MaxInt64/int64(unit) {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	b := Bytes(n) * unit
	grain := min(MiB, defaultUnit)
	if r := b % grain; r != 0 {
		if b > math.MaxInt64-grain {
			return 0, fmt.Errorf("invalid size %q: too large", s)
		}
		b += grain - r
	}
	return b, nil
}

// FormatSize prints a size as scontrol prints memory (convert_num_unit with
// CONVERT_NUM_UNIT_EXACT): the value moves up a unit while it is at least
// 1024 and a multiple of 512 of the current unit, so whole values print
// whole ("16000M", "80G", "1G") and halves print with two decimals
// ("62.50G" for 64000M, "1.50G" for 1536M). Zero prints "0"; sizes under a
// KiB print without a unit. A negative size prints with a minus sign.
func FormatSize(b Bytes) string {
	if b == 0 {
		return "0"
	}
	sign := ""
	mag := uint64(b)
	if b < 0 {
		sign = "-"
		mag = uint64(-b) // -MinInt64 wraps to 1<<63, still right as uint64
	}
	// Slurm does this arithmetic in a double; so do we, to print the same
	// two decimals.
	num := float64(mag)
	unit := 0
	for num >= 1024 && uint64(num)%512 == 0 {
		num /= 1024
		unit++
	}
	suffix := ""
	if unit > 0 {
		suffix = string("?KMGTP"[min(unit, 5)])
		if unit > 5 {
			suffix = "?" // Slurm's UNIT_UNKNOWN
		}
	}
	if num == math.Trunc(num) {
		return sign + strconv.FormatUint(uint64(num), 10) + suffix
	}
	return sign + strconv.FormatFloat(num, 'f', 2, 64) + suffix
}
