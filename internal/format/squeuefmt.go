package format

import (
	"strings"
)

// Squeue's default formats (src/squeue/squeue.c), as -O lists.
const (
	SqueueDefault = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,timeused:.10 ,numnodes:.6 ,reasonlist:0"
	SqueueLong    = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,state:.8 ,timeused:.10 ,timelimit:.9 ,numnodes:.6 ,reasonlist:0"
	// SqueueStart is --start's -o format.
	SqueueStart = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
)

// jobField is one field squeue can print (src/squeue/opts.c, print.c).
type jobField = field[*Row, struct{}]

// Format is a parsed squeue -o or -O specification.
type Format columns[*Row, struct{}]

// ParseFormat reads an -o specification as squeue's parse_format does
// (parseShort). "%all" is every field. Unknown letters print as typed;
// each gives a warning, "Invalid job format specification: X", that squeue
// prints as an error without failing.
func ParseFormat(spec string) (Format, []string) {
	var warnings []string
	all := strings.EqualFold(spec, "%all")
	if all {
		spec = allSpec("")
	}
	f := parseShort(jobFields, spec, func(t specToken) bool {
		if !all {
			warnings = append(warnings, "Invalid job format specification: "+string(t.letter))
		}
		return !all
	})
	return Format(f), warnings
}

// ParseLongFormat reads an -O specification as parse_long_format does
// (parseLong). An unknown name prints nothing but its suffix, with a
// warning.
func ParseLongFormat(spec string) (Format, []string) {
	f, unknown := parseLong(jobFields, spec, nil)
	var warnings []string
	for _, name := range unknown {
		warnings = append(warnings, "Invalid job format specification: "+name)
	}
	return Format(f), warnings
}

// Header is the format's header line, with its newline.
func (f Format) Header() string { return columns[*Row, struct{}](f).header() }

// Line is one row in the format, with its newline.
func (f Format) Line(r Row) string { return string(f.AppendLine(nil, &r)) }

// AppendLine appends Line(*r) to b: squeue writes its thousands of rows
// into one buffer.
func (f Format) AppendLine(b []byte, r *Row) []byte {
	return columns[*Row, struct{}](f).appendLine(b, r)
}

// Uses reports whether the format prints a field, by its -o letter.
func (f Format) Uses(letter byte) bool {
	return columns[*Row, struct{}](f).uses(func(f *jobField) bool { return f.letter == letter })
}
