package format

import (
	"slices"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Null stands for a C NULL string in a field's value: printf prints it as
// "(null)", or as nothing when a precision under 6 cuts it (glibc), and
// Slurm's commands show it wherever a job has no value for a text field.
const Null = "\x00(null)"

// cell is squeue's _print_str (src/squeue/print.c): a value in a field of
// width bytes. Right-justified values are padded on the left; left-justified
// ones are cut to width (printf's "%.Ns") and padded on the right; cut also
// cuts a right-justified value that is too long. A negative width prints the
// value and one space, zero the value alone.
func cell(s string, width int, right, cut bool) string {
	return string(appendCell(make([]byte, 0, max(width, len(s))+1), s, width, right, cut))
}

// appendCell appends cell(s, width, right, cut) to b: squeue prints
// thousands of cells, and a cell of its own was two allocations each.
func appendCell(b []byte, s string, width int, right, cut bool) []byte {
	if s == Null {
		s = "(null)"
		if !right && width > 0 && width < len(s) {
			s = "" // glibc prints no part of "(null)"
		}
	}
	switch {
	case width < 0:
		return append(append(b, s...), ' ')
	case width == 0:
		return append(b, s...)
	case right:
		if len(s) < width {
			b = appendSpaces(b, width-len(s))
		} else if cut {
			s = s[:width]
		}
		return append(b, s...)
	default:
		if len(s) > width {
			s = s[:width]
		}
		return appendSpaces(append(b, s...), width-len(s))
	}
}

// appendSpaces appends n spaces, doubling what it copies as
// strings.Repeat does: a format may ask for a width of millions.
func appendSpaces(b []byte, n int) []byte {
	if n <= 0 {
		return b
	}
	start := len(b)
	b = slices.Grow(b, n)[:start+n]
	b[start] = ' '
	for done := 1; done < n; done *= 2 {
		copy(b[start+done:], b[start:start+done])
	}
	return b
}

// orNull is s, or Null when s is empty: the C NULL of a text field that was
// never set.
func orNull(s string) string {
	if s == "" {
		return Null
	}
	return s
}

// printable is v with Null shown as printf shows it.
func printable(v string) string {
	if v == Null {
		return "(null)"
	}
	return v
}

// Time prints a time stamp as Slurm's slurm_make_time_str does with the
// standard format: "2026-11-29T08:50:06" in local time, "Unknown" for none.
func Time(t time.Time) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}

// timeOrNA is squeue's _print_time: N/A for no time.
func timeOrNA(t time.Time) string {
	if t.IsZero() {
		return "N/A"
	}
	return Time(t)
}

// Date is the line squeue -l and -i print above their table (print_date:
// ctime's "%a %b %d %T %Y").
func Date(t time.Time) string {
	return t.Local().Format("Mon Jan 02 15:04:05 2006")
}

// secs prints seconds as squeue's _print_secs does.
func secs(d time.Duration) string {
	return slurmsyntax.FormatDuration(d)
}

// uitoa prints a count.
func uitoa[T ~uint32 | ~uint64 | ~int | ~int64](v T) string {
	return strconv.FormatInt(int64(v), 10)
}

// Units of convertNum, as Slurm numbers them (UNIT_NONE .. UNIT_PETA).
const (
	unitNone = iota
	unitKilo
	unitMega
	unitGiga
	unitTera
	unitPeta
)

// Conversion modes of convertNum (Slurm's CONVERT_NUM_UNIT_* flags).
type convertMode int

const (
	convertExact convertMode = iota // move up while no precision is lost
	convertNo                       // --noconvert: keep the unit
	convertAll                      // move up while at least 1024
)

// convertNum is Slurm's convert_num_unit: num in unit orig, printed in unit
// spec (unitNone-1 for none, which leaves it to mode) with its letter:
// "1000M", "16G", "62.50G", "0.98G"; zero prints "0".
func convertNum(num float64, orig, spec int, mode convertMode) string {
	const units = "\x00KMGTP?"
	if int64(num) == 0 {
		return "0"
	}
	switch {
	case spec >= unitNone:
		for ; spec < orig; orig-- {
			num *= 1024
		}
		for ; spec > orig; orig++ {
			num /= 1024
		}
	case mode == convertNo:
	case mode == convertExact:
		for num >= 1024 && uint64(num)%512 == 0 {
			num /= 1024
			orig++
		}
	default:
		for num >= 1024 {
			num /= 1024
			orig++
		}
	}
	if orig < unitNone || orig > unitPeta {
		orig = len(units) - 1
	}
	suffix := ""
	if orig != unitNone {
		suffix = units[orig : orig+1]
	}
	if i := uint64(num); float64(i) == num {
		return strconv.FormatUint(i, 10) + suffix
	}
	return strconv.FormatFloat(num, 'f', 2, 64) + suffix
}

// mebi prints a size in MiB as squeue and scontrol print memory.
func mebi(mib uint64, noConvert bool) string {
	mode := convertExact
	if noConvert {
		mode = convertNo
	}
	return convertNum(float64(mib), unitMega, unitNone-1, mode)
}
