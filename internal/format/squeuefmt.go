package format

import (
	"fmt"
	"strconv"
	"strings"
)

// Squeue's default formats (src/squeue/squeue.c), as -O lists.
const (
	SqueueDefault = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,timeused:.10 ,numnodes:.6 ,reasonlist:0"
	SqueueLong    = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,state:.8 ,timeused:.10 ,timelimit:.9 ,numnodes:.6 ,reasonlist:0"
	// SqueueStart is --start's -o format.
	SqueueStart = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
)

// column is one item of a format: a field with its width, justification
// and the text printed after it. A column without a field prints its
// suffix alone (text before the first %, or a field Slurm does not know).
type column struct {
	f      *jobField
	width  int
	right  bool
	suffix string
}

// Format is a parsed squeue -o or -O specification.
type Format []column

// ParseFormat reads an -o specification as squeue's parse_format does:
// text before the first '%' is printed as is; each "%[.][width]letter"
// is a field, and what follows its letter up to the next '%' is printed
// after it. "%all" is every field. Unknown letters print as typed; each
// gives a warning, "Invalid job format specification: X", that squeue
// prints as an error without failing.
func ParseFormat(spec string) (Format, []string) {
	var f Format
	var warnings []string
	all := strings.EqualFold(spec, "%all")
	if all {
		var b strings.Builder
		b.WriteString("%a")
		for c := 'b'; c <= 'z'; c++ {
			fmt.Fprintf(&b, "|%%%c", c)
		}
		for c := 'A'; c <= 'Z'; c++ {
			fmt.Fprintf(&b, "|%%%c", c)
		}
		spec = b.String()
	}
	prefix, toks := splitShortSpec(spec)
	if !strings.HasPrefix(spec, "%") { // the text before the first %: a column even when empty
		f = append(f, column{suffix: prefix})
	}
	for _, t := range toks {
		c := column{width: t.width, right: t.right, suffix: t.suffix}
		if c.f = byLetter(t.letter); c.f == nil {
			if all {
				continue
			}
			c.suffix = "%" + t.raw
			warnings = append(warnings, "Invalid job format specification: "+string(t.letter))
		}
		f = append(f, c)
	}
	return f, warnings
}

// ParseLongFormat reads an -O specification as parse_long_format does:
// comma-separated "name[:[.][width]][suffix]", names in any case, width 20
// and left-justified when no ':' is given. An unknown name prints nothing
// but its suffix, with a warning.
func ParseLongFormat(spec string) (Format, []string) {
	var f Format
	var warnings []string
	for _, tok := range strings.Split(spec, ",") {
		if tok == "" {
			continue
		}
		c := column{width: 20}
		name := tok
		if i := strings.IndexByte(tok, ':'); i >= 0 {
			name, c.width = tok[:i], 0
			rest := tok[i+1:]
			if strings.HasPrefix(rest, ".") {
				c.right = true
				rest = rest[1:]
			}
			c.width, rest = strtol(rest)
			c.suffix = rest
		}
		if c.f = byName(name); c.f == nil {
			warnings = append(warnings, "Invalid job format specification: "+name)
		}
		f = append(f, c)
	}
	return f, warnings
}

// strtol reads a C integer at the start of s, as strtol(s, &end, 10) with
// its leading blanks and sign, returning the rest.
func strtol(s string) (int, string) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j {
		return 0, s
	}
	n, err := strconv.Atoi(s[i:k])
	if err != nil {
		n = 0
	}
	return n, s[k:]
}

func byLetter(c byte) *jobField {
	if c == 0 {
		return nil
	}
	for _, f := range jobFields {
		if f.letter == c {
			return f
		}
	}
	return nil
}

func byName(name string) *jobField {
	for _, f := range jobFields {
		for i, n := range f.names {
			if strings.EqualFold(name, n) || (i == 0 && f.prefix && len(name) >= len(n) && strings.EqualFold(name[:len(n)], n)) {
				return f
			}
		}
	}
	return nil
}

// Header is the format's header line, with its newline.
func (f Format) Header() string {
	var b strings.Builder
	for _, c := range f {
		if c.f != nil {
			b.WriteString(cell(c.f.header, c.width, c.right, !c.f.headWhole))
		}
		b.WriteString(c.suffix)
	}
	b.WriteByte('\n')
	return b.String()
}

// Line is one row in the format, with its newline.
func (f Format) Line(r Row) string { return string(f.AppendLine(nil, &r)) }

// AppendLine appends Line(*r) to b: squeue writes its thousands of rows
// into one buffer.
func (f Format) AppendLine(b []byte, r *Row) []byte {
	for _, c := range f {
		if c.f != nil {
			b = appendCell(b, c.f.value(r), c.width, c.right, !c.f.whole)
		}
		b = append(b, c.suffix...)
	}
	return append(b, '\n')
}

// Uses reports whether the format prints a field, by its -o letter.
func (f Format) Uses(letter byte) bool {
	for _, c := range f {
		if c.f != nil && c.f.letter == letter {
			return true
		}
	}
	return false
}
