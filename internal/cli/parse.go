package cli

import (
	"fmt"
	"io"

	"github.com/slurm-lite/slurm-lite/internal/getopt"
)

// Command is what a Slurm command's getopt loop needs besides its options'
// meanings: its name, its option table, and the texts of --help, --usage
// and --version, which every command answers the same way.
type Command struct {
	// Name is the program's name, the prefix of its messages.
	Name string
	// Table is its getopt table; Ordering getopt's (srun and salloc stop
	// at the first operand, the others permute).
	Table    []getopt.Option
	Ordering getopt.Ordering
	// Help and Usage are printed on stdout for the options of key "help"
	// and "usage" (where the table has them), and the command exits 0.
	Help, Usage string
	// BadOption is the exit status of an option getopt refuses: 1 for most
	// commands, 255 for srun and salloc (their exit(-1)).
	BadOption int
	// NoTry leaves out the second line of a refused option,
	// `Try "NAME --help" for more information`, which sacct does not print.
	NoTry bool
}

// Parse reads args as the command's getopt_long loop does: each option in
// turn, --help, --usage and --version answered at once (where they come,
// so an earlier bad option still wins), the others handed to each. each
// returns done to stop the command with code (an error it printed, or an
// option that prints and exits). operands are what getopt left; done is
// true when the command has finished with code.
func (c *Command) Parse(args []string, stdout, stderr io.Writer, each func(r getopt.Result) (code int, done bool)) (operands []string, code int, done bool) {
	p := getopt.NewParser(c.Table, c.Ordering, args)
	for {
		r, ok, err := p.Next()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", c.Name, err)
			if !c.NoTry {
				fmt.Fprintf(stderr, "Try \"%s --help\" for more information\n", c.Name)
			}
			return nil, c.BadOption, true
		}
		if !ok {
			return p.Operands(), 0, false
		}
		switch r.Option.Key() {
		case "help":
			io.WriteString(stdout, c.Help)
			return nil, 0, true
		case "usage":
			io.WriteString(stdout, c.Usage)
			return nil, 0, true
		case "version":
			fmt.Fprintln(stdout, SlurmVersion)
			return nil, 0, true
		}
		if code, done := each(r); done {
			return nil, code, true
		}
	}
}
