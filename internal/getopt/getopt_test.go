package getopt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

// table is a slice of sbatch's and srun's tables in Slurm 22.05's order
// (src/common/slurm_opt.c common_options), with the same letters and
// argument kinds, plus one Exact row as slurm-lite's extensions use.
var table = []Option{
	{Name: "account", Short: 'A', Arg: RequiredArgument},
	{Name: "array", Short: 'a', Arg: RequiredArgument},
	{Name: "cluster", Arg: RequiredArgument},
	{Name: "clusters", Short: 'M', Arg: RequiredArgument},
	{Name: "gpus", Short: 'G', Arg: RequiredArgument},
	{Name: "gpus-per-node", Arg: RequiredArgument},
	{Name: "help", Short: 'h', Arg: NoArgument},
	{Name: "hold", Short: 'H', Arg: NoArgument},
	{Name: "jobid", Arg: RequiredArgument},
	{Name: "job-name", Short: 'J', Arg: RequiredArgument},
	{Name: "no-kill", Short: 'k', Arg: OptionalArgument},
	{Name: "nice", Arg: OptionalArgument},
	{Name: "nodes", Short: 'N', Arg: RequiredArgument},
	{Name: "ntasks-per-node", Arg: RequiredArgument},
	{Name: "partition", Short: 'p', Arg: RequiredArgument},
	{Name: "parsable", Arg: NoArgument},
	{Name: "tasks-per-node", Arg: RequiredArgument, ID: "ntasks-per-node"},
	{Name: "time", Short: 't', Arg: RequiredArgument},
	{Name: "verbose", Short: 'v', Arg: NoArgument},
	{Name: "gpu-mem", Arg: RequiredArgument, Exact: true},
}

// got is a Result in a form that diffs well.
type got struct {
	Key      string
	Value    string
	HasValue bool
	Long     bool
	Index    int
}

func simplify(rs []Result) []got {
	var out []got
	for _, r := range rs {
		out = append(out, got{r.Option.Key(), r.Value, r.HasValue, r.Long, r.Index})
	}
	return out
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		ordering Ordering
		args     []string
		want     []got
		operands []string
	}{
		{
			name: "bundled short flags are read one letter at a time",
			args: []string{"-vHv"},
			want: []got{{"verbose", "", false, false, 0}, {"hold", "", false, false, 0}, {"verbose", "", false, false, 0}},
		},
		{
			name: "a short option's value may be attached",
			args: []string{"-N1", "-Jname"},
			want: []got{{"nodes", "1", true, false, 0}, {"job-name", "name", true, false, 1}},
		},
		{
			name: "a short option's value may be the next argument",
			args: []string{"-J", "my job", "-t", "-5"},
			want: []got{{"job-name", "my job", true, false, 0}, {"time", "-5", true, false, 2}},
		},
		{
			name: "a flag bundled before an option with a value ends the bundle at the value",
			args: []string{"-vJfoo", "-HN", "2"},
			want: []got{
				{"verbose", "", false, false, 0}, {"job-name", "foo", true, false, 0},
				{"hold", "", false, false, 1}, {"nodes", "2", true, false, 1},
			},
		},
		{
			name: "a long option's value may follow an equals sign",
			args: []string{"--partition=gpu", "--job-name="},
			want: []got{{"partition", "gpu", true, true, 0}, {"job-name", "", true, true, 1}},
		},
		{
			name: "a long option with a required value may take the next argument",
			args: []string{"--partition", "gpu", "--time", "--hold"},
			want: []got{{"partition", "gpu", true, true, 0}, {"time", "--hold", true, true, 2}},
		},
		{
			name:     "an optional value must be attached, so the next argument is an operand",
			ordering: RequireOrder,
			args:     []string{"--nice", "5", "--hold"},
			want:     []got{{"nice", "", false, true, 0}},
			operands: []string{"5", "--hold"},
		},
		{
			name: "an optional value attached with equals, even empty, is a value",
			args: []string{"--nice=5", "--nice=", "-kset", "-k"},
			want: []got{
				{"nice", "5", true, true, 0}, {"nice", "", true, true, 1},
				{"no-kill", "set", true, false, 2}, {"no-kill", "", false, false, 3},
			},
		},
		{
			name: "an unambiguous prefix of a long name is that option",
			args: []string{"--part=gpu", "--pars", "--ho"},
			want: []got{{"partition", "gpu", true, true, 0}, {"parsable", "", false, true, 1}, {"hold", "", false, true, 2}},
		},
		{
			name: "an exact name wins over longer names it is a prefix of",
			args: []string{"--cluster=a", "--gpus=2"},
			want: []got{{"cluster", "a", true, true, 0}, {"gpus", "2", true, true, 1}},
		},
		{
			name: "aliases sharing a key and argument kind are one option",
			args: []string{"--tasks=4"},
			want: []got{{"ntasks-per-node", "4", true, true, 0}},
		},
		{
			name:     "two dashes end the options",
			ordering: Permute,
			args:     []string{"-v", "--", "-H", "x"},
			want:     []got{{"verbose", "", false, false, 0}},
			operands: []string{"-H", "x"},
		},
		{
			name:     "a lone dash is an operand",
			ordering: RequireOrder,
			args:     []string{"-", "-v"},
			operands: []string{"-", "-v"},
		},
		{
			name:     "require-order mode stops at the first operand and keeps the rest as its arguments",
			ordering: RequireOrder,
			args:     []string{"-p", "gpu", "job.sh", "--epochs", "3", "-v"},
			want:     []got{{"partition", "gpu", true, false, 0}},
			operands: []string{"job.sh", "--epochs", "3", "-v"},
		},
		{
			name:     "permute mode reads options after operands and keeps operands in order",
			ordering: Permute,
			args:     []string{"12", "-v", "13", "--partition", "gpu", "14"},
			want:     []got{{"verbose", "", false, false, 1}, {"partition", "gpu", true, true, 3}},
			operands: []string{"12", "13", "14"},
		},
		{
			name:     "permute mode still ends options at two dashes",
			ordering: Permute,
			args:     []string{"1", "--", "-v", "2"},
			operands: []string{"1", "-v", "2"},
		},
		{
			name: "an exact-only row matches its full name",
			args: []string{"--gpu-mem=10G"},
			want: []got{{"gpu-mem", "10G", true, true, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, operands, err := Parse(table, tt.ordering, tt.args)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.want, simplify(rs)); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.operands, operands); diff != "" {
				t.Errorf("operands (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrors checks glibc 2.36's texts (posix/getopt.c: process_long_option
// and the short-option branch of _getopt_internal_r).
func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  string
		index int
		// before are the options read before the mistake.
		before []got
	}{
		{
			name: "an unknown long option is named with its value, as typed",
			args: []string{"-H", "--bogus-option=1"},
			want: "unrecognized option '--bogus-option=1'", index: 1,
			before: []got{{"hold", "", false, false, 0}},
		},
		{
			name: "an unknown short letter is quoted alone",
			args: []string{"-x"},
			want: "invalid option -- 'x'",
		},
		{
			name:   "an unknown letter inside a bundle is reported after the letters before it",
			args:   []string{"-vxH"},
			want:   "invalid option -- 'x'",
			before: []got{{"verbose", "", false, false, 0}},
		},
		{
			name: "a colon is never an option letter",
			args: []string{"-:"},
			want: "invalid option -- ':'",
		},
		{
			name: "a short option missing its value at the end",
			args: []string{"-p", "gpu", "-J"},
			want: "option requires an argument -- 'J'", index: 2,
			before: []got{{"partition", "gpu", true, false, 0}},
		},
		{
			name: "a long option missing its value is named in full, not as abbreviated",
			args: []string{"--part"},
			want: "option '--partition' requires an argument",
		},
		{
			name: "a flag given a value is named in full",
			args: []string{"--hol=yes"},
			want: "option '--hold' doesn't allow an argument",
		},
		{
			name: "an ambiguous prefix lists the candidates in table order",
			args: []string{"--j=5"},
			want: "option '--j=5' is ambiguous; possibilities: '--jobid' '--job-name'",
		},
		{
			name: "an ambiguous prefix lists only candidates that differ from the first",
			args: []string{"--n"},
			want: "option '--n' is ambiguous; possibilities: '--no-kill' '--nice' '--nodes' '--ntasks-per-node'",
		},
		{
			name: "an exact-only row is never matched by an abbreviation",
			args: []string{"--gpu-m=1"},
			want: "unrecognized option '--gpu-m=1'",
		},
		{
			name: "an exact-only row is left out of ambiguity lists",
			args: []string{"--gpu"},
			want: "option '--gpu' is ambiguous; possibilities: '--gpus' '--gpus-per-node'",
		},
		{
			name: "an empty long name matches every option",
			args: []string{"--=x"},
			want: "option '--=x' is ambiguous; possibilities: '--account' '--array' '--cluster' '--clusters' '--gpus' '--gpus-per-node' '--help' '--hold' '--jobid' '--job-name' '--no-kill' '--nice' '--nodes' '--ntasks-per-node' '--partition' '--parsable' '--tasks-per-node' '--time' '--verbose'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, _, err := Parse(table, RequireOrder, tt.args)
			if err == nil {
				t.Fatalf("Parse(%q) = nil error, want %q", tt.args, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error = %q, want %q", got, tt.want)
			}
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("error is %T, want *Error", err)
			}
			if e.Index != tt.index {
				t.Errorf("Index = %d, want %d", e.Index, tt.index)
			}
			if diff := cmp.Diff(tt.before, simplify(rs)); diff != "" {
				t.Errorf("options before the error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextContinuesAfterAnError(t *testing.T) {
	// glibc keeps scanning after reporting a mistake; so does Next.
	p := NewParser(table, Permute, []string{"-xv", "--bogus", "a", "-H"})
	var keys, errs []string
	for {
		r, ok, err := p.Next()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if !ok {
			break
		}
		keys = append(keys, r.Option.Key())
	}
	if diff := cmp.Diff([]string{"verbose", "hold"}, keys); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"invalid option -- 'x'", "unrecognized option '--bogus'"}, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, p.Operands()); diff != "" {
		t.Errorf("operands (-want +got):\n%s", diff)
	}
}

// TestLongFormRoundTrip checks, on random command lines, that writing the
// options found back in long form ("--name=value") followed by "--" and the
// operands parses to the same options and operands.
func TestLongFormRoundTrip(t *testing.T) {
	words := []string{"-v", "-H", "-J", "-Jx", "-vJ", "-k", "-kx", "--nice", "--nice=1",
		"--part", "--part=a", "--time", "--", "-", "x", "y", "--hold", "-N", "-z", "--j"}
	rapid.Check(t, func(t *rapid.T) {
		args := rapid.SliceOfN(rapid.SampledFrom(words), 0, 10).Draw(t, "args")
		ordering := rapid.SampledFrom([]Ordering{Permute, RequireOrder}).Draw(t, "ordering")
		rs, operands, err := Parse(table, ordering, args)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			return
		}
		var again []string
		for _, r := range rs {
			a := "--" + r.Option.Name
			if r.HasValue {
				a += "=" + r.Value
			}
			again = append(again, a)
		}
		again = append(again, "--")
		again = append(again, operands...)
		rs2, operands2, err := Parse(table, RequireOrder, again)
		if err != nil {
			t.Fatalf("%q reparsed as %q: %v", args, again, err)
		}
		type kv struct {
			K, V string
			H    bool
		}
		flat := func(rs []Result) (out []kv) {
			for _, r := range rs {
				out = append(out, kv{r.Option.Key(), r.Value, r.HasValue})
			}
			return out
		}
		if diff := cmp.Diff(flat(rs), flat(rs2)); diff != "" {
			t.Fatalf("%q vs %q (-first +second):\n%s", args, again, diff)
		}
		if diff := cmp.Diff(operands, operands2, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("operands of %q vs %q (-first +second):\n%s", args, again, diff)
		}
	})
}

func TestAmbiguityComparesWithTheFirstMatchOnly(t *testing.T) {
	// glibc compares each later prefix match with the first one only: a row
	// identical to the first is left out of the list even when the prefix
	// is ambiguous because of a third row.
	tbl := []Option{
		{Name: "cpu-bind", Arg: RequiredArgument, ID: "cpu-bind"},
		{Name: "cpu_bind", Arg: RequiredArgument, ID: "cpu-bind"},
		{Name: "cpu-freq", Arg: RequiredArgument},
	}
	_, _, err := Parse(tbl, Permute, []string{"--cpu"})
	want := "option '--cpu' is ambiguous; possibilities: '--cpu-bind' '--cpu-freq'"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	rs, _, err := Parse(tbl, Permute, []string{"--cpu_b=v"})
	if err != nil || len(rs) != 1 || rs[0].Option.Key() != "cpu-bind" || rs[0].Option.Name != "cpu_bind" {
		t.Fatalf("--cpu_b=v: %v, %+v", err, rs)
	}
}
