package format

import (
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The column engine of the commands that print a table in a format the
// user may choose. Each command declares one table of fields; the
// parsers here read its format into columns, and the renderers print
// rows in them.
//
//	-o "%[.][width]letter"          parseShort  squeue, sinfo, sprio
//	-O "name[:[.][width]][suffix]"  parseLong   squeue, sinfo
//	--format "name[%width]"         parseNames  sacct, sshare, sacctmgr
//
// The -o and -O columns print with _print_str (appendLine, header); the
// --format ones with print_fields (FieldsHeader, FieldsLine).

// field is one column a command can print. R is the row the command
// prints; X holds what only that command reads of its fields (sinfo's
// partition attributes).
type field[R, X any] struct {
	letter byte     // -o letter, 0 for a field with -O names only
	names  []string // -O names, matched in any case
	// prefix: the first name also matches any longer name it begins
	// (Slurm's strncasecmp for squeue's "numtask").
	prefix bool
	header string
	// headWhole and whole print the header or the value uncut when a
	// right-justified column is too narrow (_print_str's cut_output false).
	headWhole, whole bool
	value            func(R) string
	// sized, when set, replaces value for a field whose value depends on
	// its column's width (sinfo's default partition, marked '*').
	sized func(r R, width int) string
	// task marks a field whose value changes with squeue's row's array
	// task (Row.Task): the one column of squeue -r's lines for a pending
	// array that AppendTasks formats for each task (TestAppendTasks keeps
	// the mark honest over every field).
	task bool
	// appendValue, when set, appends value's text to b, and AppendTasks
	// uses it: no string made per line.
	appendValue func(r R, b []byte) []byte
	x           X
}

// col is one item of a parsed -o or -O format: a field with its width,
// justification and the text printed after it. A column without a field
// prints its suffix alone (text before the first %, or a field the
// command does not know).
type col[R, X any] struct {
	f      *field[R, X]
	width  int
	right  bool
	suffix string
}

// columns is a parsed -o or -O format.
type columns[R, X any] []col[R, X]

// parseShort reads an -o format as squeue's, sinfo's and sprio's
// parse_format do: text before the first '%' is printed as is (a column
// even when empty); each "%[.][width]letter" is a field, and what follows
// its letter up to the next '%' is printed after it. unknown is called for
// each item whose letter names no field, and says whether it stays,
// printed as typed.
func parseShort[R, X any](fields []*field[R, X], spec string, unknown func(specToken) bool) columns[R, X] {
	var cs columns[R, X]
	prefix, toks := splitShortSpec(spec)
	if !strings.HasPrefix(spec, "%") {
		cs = append(cs, col[R, X]{suffix: prefix})
	}
	for _, t := range toks {
		c := col[R, X]{f: byLetter(fields, t.letter), width: t.width, right: t.right, suffix: t.suffix}
		if c.f == nil {
			if !unknown(t) {
				continue
			}
			c.suffix = "%" + t.raw
		}
		cs = append(cs, c)
	}
	return cs
}

// allSpec is the -o format "%all" stands for: every letter, a to z then A
// to Z, separated by "|", each capital followed by upperSuffix (sinfo
// writes a space there, squeue nothing).
func allSpec(upperSuffix string) string {
	var b strings.Builder
	b.WriteString("%a")
	for c := byte('b'); c <= 'z'; c++ {
		b.WriteString("|%")
		b.WriteByte(c)
	}
	for c := byte('A'); c <= 'Z'; c++ {
		b.WriteString("|%")
		b.WriteByte(c)
		b.WriteString(upperSuffix)
	}
	return b.String()
}

// parseLong reads an -O format as parse_long_format does: comma-separated
// "name[:[.][width]][suffix]", names in any case, width 20 and
// left-justified when no ':' is given. An unknown name prints nothing but
// its suffix; it is returned in unknown. all, when not nil, is what the
// name "all" stands for.
func parseLong[R, X any](fields []*field[R, X], spec string, all func() columns[R, X]) (cs columns[R, X], unknown []string) {
	for _, tok := range strings.Split(spec, ",") {
		if tok == "" {
			continue
		}
		c := col[R, X]{width: 20}
		name := tok
		if i := strings.IndexByte(tok, ':'); i >= 0 {
			name = tok[:i]
			rest := tok[i+1:]
			if strings.HasPrefix(rest, ".") {
				c.right = true
				rest = rest[1:]
			}
			n, suffix, _ := slurmsyntax.Strtol(rest, slurmsyntax.Zero)
			c.width, c.suffix = int(n), suffix
		}
		if all != nil && strings.EqualFold(name, "all") {
			cs = append(cs, all()...)
			continue
		}
		if c.f = byName(fields, name); c.f == nil {
			unknown = append(unknown, name)
		}
		cs = append(cs, c)
	}
	return cs, unknown
}

func byLetter[R, X any](fields []*field[R, X], c byte) *field[R, X] {
	if c == 0 {
		return nil
	}
	for _, f := range fields {
		if f.letter == c {
			return f
		}
	}
	return nil
}

func byName[R, X any](fields []*field[R, X], name string) *field[R, X] {
	for _, f := range fields {
		for i, n := range f.names {
			if strings.EqualFold(name, n) || (i == 0 && f.prefix && len(name) >= len(n) && strings.EqualFold(name[:len(n)], n)) {
				return f
			}
		}
	}
	return nil
}

// header is the columns' header line, with its newline.
func (cs columns[R, X]) header() string {
	var b []byte
	for _, c := range cs {
		if c.f != nil {
			b = appendCell(b, c.f.header, c.width, c.right, !c.f.headWhole)
		}
		b = append(b, c.suffix...)
	}
	return string(append(b, '\n'))
}

// appendLine appends one row in the columns, with its newline, to b:
// squeue writes its thousands of rows into one buffer.
func (cs columns[R, X]) appendLine(b []byte, r R) []byte {
	for i := range cs {
		c := &cs[i]
		if f := c.f; f != nil {
			b = appendCell(b, c.value(r), c.width, c.right, !f.whole)
		}
		b = append(b, c.suffix...)
	}
	return append(b, '\n')
}

// uses reports whether a column prints a field for which is holds.
func (cs columns[R, X]) uses(is func(*field[R, X]) bool) bool {
	for _, c := range cs {
		if c.f != nil && is(c.f) {
			return true
		}
	}
	return false
}
