package getopt

import (
	"fmt"
	"strings"
)

// ArgKind says whether an option takes an argument (glibc's has_arg).
type ArgKind int

// Argument kinds, as in <getopt.h>.
const (
	NoArgument ArgKind = iota
	RequiredArgument
	OptionalArgument
)

func (k ArgKind) String() string {
	switch k {
	case NoArgument:
		return "none"
	case RequiredArgument:
		return "required"
	case OptionalArgument:
		return "optional"
	}
	return fmt.Sprintf("ArgKind(%d)", int(k))
}

// Option is one row of a command's option table.
type Option struct {
	// Name is the long name without "--"; empty for a short-only option.
	Name string
	// Short is the short letter; 0 for a long-only option.
	Short byte
	// Arg says whether the option takes an argument.
	Arg ArgKind
	// ID identifies the option to the caller when several rows are one
	// option (aliases such as "tasks-per-node" and "ntasks-per-node"). Empty
	// means the row's own Key.
	ID string
	// Exact rows are matched only by their full long name, never by an
	// abbreviation. glibc has no such flag; see the package documentation.
	Exact bool
}

// Key is what identifies the option: ID, else the long name, else the short
// letter. Rows with the same Key and Arg are the same option for the
// ambiguity rule, as rows with the same val, has_arg and flag are in glibc.
func (o Option) Key() string {
	switch {
	case o.ID != "":
		return o.ID
	case o.Name != "":
		return o.Name
	}
	return string(rune(o.Short))
}

// Ordering says what happens at the first operand.
type Ordering int

const (
	// Permute scans the whole command line, as GNU getopt does by default;
	// operands are returned in their order.
	Permute Ordering = iota
	// RequireOrder stops at the first operand, as a "+" at the start of the
	// optstring (or POSIXLY_CORRECT) makes glibc do.
	RequireOrder
)

// Result is one option found on the command line.
type Result struct {
	// Option is the table row that matched.
	Option Option
	// Value is the argument; empty when there is none.
	Value string
	// HasValue reports an argument. It tells "--nice" from "--nice=" for
	// optional arguments; it is always true for required ones.
	HasValue bool
	// Long reports that the option was written in long form.
	Long bool
	// Index is the position in the argument list of the element where the
	// option was written (the value may come from the next element).
	Index int
}

// ErrorKind classifies a command-line mistake.
type ErrorKind int

// The mistakes glibc reports.
const (
	Unrecognized    ErrorKind = iota // unknown long option
	InvalidShort                     // unknown short option letter
	MissingArgument                  // a required argument is missing
	UnexpectedArg                    // "--flag=value" for a flag
	Ambiguous                        // a prefix of several options
)

// Error is a mistake on the command line. Its text is glibc's message
// without the "prog: " that glibc prints first.
type Error struct {
	Kind ErrorKind
	// Option is the option as the message names it: "--foo=1" for an
	// unrecognized or ambiguous long option (what was typed), the full name
	// "--job-name" for a missing or unexpected argument, "x" for a short one.
	Option string
	// Candidates lists, for an ambiguous prefix, the options it matches
	// ("--jobid", "--job-name"), in table order.
	Candidates []string
	// Index is the position of the offending element in the argument list.
	Index int
}

func (e *Error) Error() string {
	switch e.Kind {
	case Unrecognized:
		return fmt.Sprintf("unrecognized option '%s'", e.Option)
	case InvalidShort:
		return fmt.Sprintf("invalid option -- '%s'", e.Option)
	case MissingArgument:
		if strings.HasPrefix(e.Option, "--") {
			return fmt.Sprintf("option '%s' requires an argument", e.Option)
		}
		return fmt.Sprintf("option requires an argument -- '%s'", e.Option)
	case UnexpectedArg:
		return fmt.Sprintf("option '%s' doesn't allow an argument", e.Option)
	case Ambiguous:
		var b strings.Builder
		fmt.Fprintf(&b, "option '%s' is ambiguous; possibilities:", e.Option)
		for _, c := range e.Candidates {
			fmt.Fprintf(&b, " '%s'", c)
		}
		return b.String()
	}
	return fmt.Sprintf("getopt error %d on %q", int(e.Kind), e.Option)
}

// Parse reads every option of args (the command line without the program
// name) and returns them in order with the operands. It stops at the first
// mistake and returns the options read before it, so that a caller can apply
// them in order first, as Slurm's commands do before they exit.
func Parse(table []Option, ordering Ordering, args []string) ([]Result, []string, error) {
	p := NewParser(table, ordering, args)
	var out []Result
	for {
		r, ok, err := p.Next()
		if err != nil {
			return out, nil, err
		}
		if !ok {
			return out, p.Operands(), nil
		}
		out = append(out, r)
	}
}

// Parser reads options one at a time. The zero value is not usable; call
// NewParser.
type Parser struct {
	table    []Option
	ordering Ordering
	args     []string

	next     int    // index of the next element to scan
	cluster  string // rest of a short-option cluster being read ("hN" of "-ahN")
	clusterI int    // index of the element the cluster came from
	operands []string
	done     bool
}

// NewParser returns a parser of args, the command line without the program
// name (argv[1:]).
func NewParser(table []Option, ordering Ordering, args []string) *Parser {
	return &Parser{table: table, ordering: ordering, args: args}
}

// Next returns the next option. ok is false once the options are exhausted;
// Operands then holds what remains. After an error the parser stays usable
// and Next continues with the following element, as glibc's getopt does.
func (p *Parser) Next() (r Result, ok bool, err error) {
	if p.cluster != "" {
		return p.short()
	}
	for !p.done {
		if p.next >= len(p.args) {
			p.done = true
			break
		}
		a := p.args[p.next]
		if a == "--" {
			// Everything after "--" is an operand, in either ordering.
			p.operands = append(p.operands, p.args[p.next+1:]...)
			p.next = len(p.args)
			p.done = true
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if p.ordering == RequireOrder {
				p.operands = append(p.operands, p.args[p.next:]...)
				p.next = len(p.args)
				p.done = true
				break
			}
			p.operands = append(p.operands, a)
			p.next++
			continue
		}
		if a[1] == '-' {
			return p.long()
		}
		p.cluster, p.clusterI = a[1:], p.next
		p.next++
		return p.short()
	}
	return Result{}, false, nil
}

// Operands returns the operands found so far; after Next has reported the end
// of the options, all of them, in command-line order.
func (p *Parser) Operands() []string { return p.operands }

// long reads "--name[=value]" at p.next (glibc's process_long_option).
func (p *Parser) long() (Result, bool, error) {
	idx := p.next
	text := p.args[idx][2:]
	name, value, hasValue := strings.Cut(text, "=")
	p.next++

	found := -1
	for i, o := range p.table {
		if o.Name != "" && o.Name == name {
			found = i
			break
		}
	}
	if found < 0 {
		// No exact match: look for abbreviations. As in glibc, a later match
		// makes the prefix ambiguous only if it differs from the first one.
		var ambiguous []int
		for i, o := range p.table {
			if o.Name == "" || o.Exact || !strings.HasPrefix(o.Name, name) {
				continue
			}
			if found < 0 {
				found = i
				continue
			}
			first := p.table[found]
			if first.Key() != o.Key() || first.Arg != o.Arg {
				if ambiguous == nil {
					ambiguous = []int{found}
				}
				ambiguous = append(ambiguous, i)
			}
		}
		if ambiguous != nil {
			e := &Error{Kind: Ambiguous, Option: "--" + text, Index: idx}
			for _, i := range ambiguous {
				e.Candidates = append(e.Candidates, "--"+p.table[i].Name)
			}
			return Result{}, false, e
		}
	}
	if found < 0 {
		return Result{}, false, &Error{Kind: Unrecognized, Option: "--" + text, Index: idx}
	}
	o := p.table[found]
	r := Result{Option: o, Long: true, Index: idx}
	switch {
	case hasValue && o.Arg == NoArgument:
		return Result{}, false, &Error{Kind: UnexpectedArg, Option: "--" + o.Name, Index: idx}
	case hasValue:
		r.Value, r.HasValue = value, true
	case o.Arg == RequiredArgument:
		if p.next >= len(p.args) {
			return Result{}, false, &Error{Kind: MissingArgument, Option: "--" + o.Name, Index: idx}
		}
		r.Value, r.HasValue = p.args[p.next], true
		p.next++
	}
	return r, true, nil
}

// short reads the next letter of the current cluster.
func (p *Parser) short() (Result, bool, error) {
	c := p.cluster[0]
	p.cluster = p.cluster[1:]
	idx := p.clusterI

	found := -1
	for i, o := range p.table {
		if o.Short != 0 && o.Short == c {
			found = i
			break
		}
	}
	// glibc looks the letter up in the optstring, where ':' and ';' are
	// syntax, so they are never options. The rest of the cluster is read by
	// the next call, as glibc does.
	if found < 0 || c == ':' || c == ';' {
		return Result{}, false, &Error{Kind: InvalidShort, Option: string([]byte{c}), Index: idx}
	}
	o := p.table[found]
	r := Result{Option: o, Index: idx}
	switch o.Arg {
	case OptionalArgument:
		if p.cluster != "" {
			r.Value, r.HasValue = p.cluster, true
		}
		p.cluster = ""
	case RequiredArgument:
		switch {
		case p.cluster != "":
			r.Value, r.HasValue = p.cluster, true
		case p.next < len(p.args):
			r.Value, r.HasValue = p.args[p.next], true
			p.next++
		default:
			return Result{}, false, &Error{Kind: MissingArgument, Option: string([]byte{c}), Index: idx}
		}
		p.cluster = ""
	}
	return r, true, nil
}
