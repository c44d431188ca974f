package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
)

func TestCommandParse(t *testing.T) {
	table := []getopt.Option{
		{Name: "help", Short: 'h'},
		{Name: "usage"},
		{Name: "version", Short: 'V'},
		{Name: "long", Short: 'l'},
		{Name: "stop"},
	}
	type result struct {
		Seen           []string
		Operands       []string
		Code           int
		Done           bool
		Stdout, Stderr string
	}
	for _, tc := range []struct {
		name string
		cmd  Command
		args []string
		want result
	}{{
		name: "options go to each in order and operands come back",
		cmd:  Command{Name: "sx", Table: table, BadOption: 1},
		args: []string{"-l", "a", "--long", "b"},
		want: result{Seen: []string{"long", "long"}, Operands: []string{"a", "b"}},
	}, {
		name: "--help prints the help and exits 0 where it comes",
		cmd:  Command{Name: "sx", Table: table, Help: "help text\n", BadOption: 1},
		args: []string{"-l", "--help", "--bogus"},
		want: result{Seen: []string{"long"}, Done: true, Stdout: "help text\n"},
	}, {
		name: "--usage prints the usage",
		cmd:  Command{Name: "sx", Table: table, Usage: "Usage: sx\n", BadOption: 1},
		args: []string{"--usage"},
		want: result{Done: true, Stdout: "Usage: sx\n"},
	}, {
		name: "-V prints the Slurm version",
		cmd:  Command{Name: "sx", Table: table, BadOption: 1},
		args: []string{"-V"},
		want: result{Done: true, Stdout: SlurmVersion + "\n"},
	}, {
		name: "a bad option before --version wins, with Try --help and the command's status",
		cmd:  Command{Name: "srun", Table: table, Ordering: getopt.RequireOrder, BadOption: 255},
		args: []string{"--bogus", "--version"},
		want: result{Code: 255, Done: true,
			Stderr: "srun: unrecognized option '--bogus'\nTry \"srun --help\" for more information\n"},
	}, {
		name: "NoTry leaves the Try line out (sacct)",
		cmd:  Command{Name: "sacct", Table: table, BadOption: 1, NoTry: true},
		args: []string{"--bogus"},
		want: result{Code: 1, Done: true, Stderr: "sacct: unrecognized option '--bogus'\n"},
	}, {
		name: "each stops the command with its code",
		cmd:  Command{Name: "sx", Table: table, BadOption: 1},
		args: []string{"--stop", "-l"},
		want: result{Seen: []string{"stop"}, Code: 3, Done: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var got result
			var stdout, stderr strings.Builder
			got.Operands, got.Code, got.Done = tc.cmd.Parse(tc.args, &stdout, &stderr, func(r getopt.Result) (int, bool) {
				got.Seen = append(got.Seen, r.Option.Key())
				if r.Option.Key() == "stop" {
					return 3, true
				}
				return 0, false
			})
			got.Stdout, got.Stderr = stdout.String(), stderr.String()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
