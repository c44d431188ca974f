package format

import (
	"fmt"
	"math"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// Slurm's print_fields (src/common/print_fields.c), which sshare and
// sacctmgr print with: a header of names over a line of dashes, then one
// cell per field, each followed by a space; or, with --parsable, each value
// followed by "|" (with --parsable2, except the last). A positive width is
// right-justified, a negative one left-justified. Strings longer than the
// width are cut, with "+" as their last character; numbers never are.

// Parsable is print_fields_parsable_print.
type Parsable int

// The three ways of printing fields.
const (
	Fixed            Parsable = iota // columns
	ParsableEnding                   // -p: "a|b|"
	ParsableNoEnding                 // -P: "a|b"
)

// Field is one column: its header and its signed width.
type Field struct {
	Name  string
	Width int
}

// cellKind is which of print_fields' routines prints a value.
type cellKind int

const (
	cellStr    cellKind = iota // print_fields_str and the list printers
	cellNum                    // print_fields_uint*, print_fields_time: never cut
	cellDouble                 // print_fields_double
	cellUnset                  // a number that is NO_VAL or INFINITE
	cellDate                   // print_fields_date: cut to the width, without '+'
)

// Cell is one value to print.
type Cell struct {
	kind cellKind
	s    string
	f    float64
}

// Str is a string cell; "" prints as blanks (Slurm's NULL or empty string).
func Str(s string) Cell { return Cell{kind: cellStr, s: s} }

// Num is a number already written out (an integer, a time): printed
// whole, however wide.
func Num(s string) Cell { return Cell{kind: cellNum, s: s} }

// Uint is an unsigned integer cell.
func Uint[T ~uint32 | ~uint64 | ~int | ~int64](v T) Cell { return Num(fmt.Sprint(v)) }

// Double is a floating-point cell, printed as C's "%f".
func Double(f float64) Cell { return Cell{kind: cellDouble, f: f} }

// Unset is a number that is not set (NO_VAL, INFINITE): blanks.
func Unset() Cell { return Cell{kind: cellUnset} }

// dateCell is a time stamp already written out: cut to the width, with no
// '+'.
func dateCell(s string) Cell { return Cell{kind: cellDate, s: s} }

// nameWidth splits an item of a --format list as sacct, sshare and
// sacctmgr read it: "name[%width]", the width as C's strtol (atoi) reads
// it; set reports whether a '%' was there.
func nameWidth(item string) (name string, width int, set bool) {
	name, w, set := strings.Cut(item, "%")
	if set {
		n, _, _ := slurmsyntax.Strtol(w, slurmsyntax.Zero)
		width = int(n)
	}
	return name, width, set
}

// byPrefix is the index of the first name that begins with name, in any
// case (xstrncasecmp over the name's length), or -1: sacct and sshare
// match their --format names so.
func byPrefix(n int, nameOf func(i int) string, name string) int {
	for i := range n {
		if f := nameOf(i); len(name) <= len(f) && strings.EqualFold(f[:len(name)], name) {
			return i
		}
	}
	return -1
}

// FieldsHeader is print_fields_header: the names, and under them dashes,
// or for parsable output the names alone.
func FieldsHeader(fields []Field, mode Parsable) string { return fieldsHeader(fields, mode, "|") }

// fieldsHeader is FieldsHeader with the parsable modes' delimiter
// (sacct's --delimiter).
func fieldsHeader(fields []Field, mode Parsable, delim string) string {
	var b strings.Builder
	for i, f := range fields {
		last := i == len(fields)-1
		switch {
		case mode == ParsableNoEnding && last:
			b.WriteString(f.Name)
		case mode != Fixed:
			b.WriteString(f.Name + delim)
		default:
			b.WriteString(pad(f.Name, f.Width, true) + " ")
		}
	}
	b.WriteByte('\n')
	if mode != Fixed {
		return b.String()
	}
	for _, f := range fields {
		b.WriteString(strings.Repeat("-", abs(f.Width)) + " ")
	}
	b.WriteByte('\n')
	return b.String()
}

// FieldsLine prints one row of cells under fields.
func FieldsLine(fields []Field, cells []Cell, mode Parsable) string {
	return fieldsLine(fields, cells, mode, "|")
}

// fieldsLine is FieldsLine with the parsable modes' delimiter.
func fieldsLine(fields []Field, cells []Cell, mode Parsable, delim string) string {
	var b strings.Builder
	for i, f := range fields {
		b.WriteString(fieldCell(f, cells[i], mode, i == len(fields)-1, delim))
	}
	b.WriteByte('\n')
	return b.String()
}

func fieldCell(f Field, c Cell, mode Parsable, last bool, delim string) string {
	if mode != Fixed {
		var s string
		switch c.kind {
		case cellStr, cellNum, cellDate:
			s = c.s
		case cellDouble:
			s = cFloat(c.f)
		}
		if mode == ParsableNoEnding && last {
			return s
		}
		return s + delim
	}
	w := abs(f.Width)
	switch c.kind {
	case cellStr:
		s := c.s
		if s == "" {
			s = " "
		}
		if len(s) > w && w > 0 {
			s = s[:w-1] + "+"
		}
		return pad(s, f.Width, true) + " "
	case cellNum:
		return pad(c.s, f.Width, false) + " "
	case cellDate:
		return pad(c.s, f.Width, true) + " "
	case cellDouble:
		return fieldDouble(f.Width, c.f) + " "
	}
	return pad(" ", f.Width, false) + " "
}

// fieldDouble is print_fields_double's "%*f", or when that is wider than
// the column "%*.*e" with width and precision both the column's width,
// narrowed by how much that overflows. Its arithmetic can make both
// negative: printf then left-justifies and takes the default precision.
func fieldDouble(width int, f float64) string {
	w := abs(width)
	s := cPad(cFloat(f), w, width < 0)
	if len(s) <= w {
		return s
	}
	e := cExp(f, w)
	if n := len(cPad(e, w, false)); n > w {
		w -= n - w
	}
	prec := w
	if prec < 0 {
		prec = 6
	}
	left := width < 0 || w < 0
	return cPad(cExp(f, prec), abs(w), left)
}

// cFloat is C's "%f", with "inf" and "nan" as glibc writes them.
func cFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return fmt.Sprintf("%f", f)
}

// cExp is C's "%.*e".
func cExp(f float64, prec int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return fmt.Sprintf("%.*e", prec, f)
}

// cPad is printf's minimum width, never cutting.
func cPad(s string, w int, left bool) string {
	if len(s) >= w {
		return s
	}
	if left {
		return s + strings.Repeat(" ", w-len(s))
	}
	return strings.Repeat(" ", w-len(s)) + s
}

// AddToCharList is slurm_addto_char_list: it splits names at commas onto
// list, lower-cased. A name already there (in any case) moves to the end;
// a trailing comma is ignored; names may be quoted as a whole (inner quotes
// become backquotes); an empty list ("" or "”") adds one empty name, as
// for user=”. Commas inside [...] do not split (Slurm would also expand
// the host list there; no list slurm-lite reads holds host lists).
func AddToCharList(list []string, names string) []string {
	add := func(name string) {
		if i := indexFold(list, name); i >= 0 {
			list = append(list[:i:i], list[i+1:]...)
		}
		list = append(list, strings.ToLower(name))
	}
	b := []byte(names)
	i, start, quote := 0, 0, byte(0)
	if len(b) > 0 && (b[0] == '"' || b[0] == '\'') {
		quote, i = b[0], 1
	}
	start = i
	before := len(list)
	brack := false
	for ; i < len(b); i++ {
		c := b[i]
		if quote != 0 && c == quote {
			break
		}
		switch {
		case c == '"' || c == '\'':
			b[i] = '`'
		case c == '[':
			brack = true
		case c == ']':
			brack = false
		case c == ',' && !brack:
			if i+1 == len(b) {
				goto end
			}
			if i != start {
				add(string(b[start:i]))
			}
			start = i + 1
		}
	}
end:
	if len(list) == before || i-start > 0 {
		add(string(b[start:i]))
	}
	return list
}

func indexFold(list []string, s string) int {
	for i, v := range list {
		if strings.EqualFold(v, s) {
			return i
		}
	}
	return -1
}
