package jobscript

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// run parses a submission for the tests below.
func run(args []string, script string, env map[string]string) (*Request, error) {
	return parseAll(args, []byte(script), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want *Error", err, err)
	}
	return e
}

// TestScriptChecks follows _get_script_buffer in src/sbatch/sbatch.c.
func TestScriptChecks(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   string // stderr; "" means accepted
	}{
		{"an empty script", "", "sbatch: error: Batch script is empty!\n"},
		{"a script of spaces", " \n\t\n", "sbatch: error: Batch script contains only whitespace!\n"},
		{"spaces then a NUL count as only spaces (a C string ends at NUL)", "  \x00#!/bin/sh\n",
			"sbatch: error: Batch script contains only whitespace!\n"},
		{"a first line without #!", "echo hi\n", "sbatch: error: This does not look like a batch script.  The first\n" +
			"sbatch: error: line must start with #! followed by the path to an interpreter.\n" +
			"sbatch: error: For instance: #!/bin/sh\n"},
		{"#! after a blank line", "\n#!/bin/sh\n", "sbatch: error: This does not look like a batch script.  The first\n" +
			"sbatch: error: line must start with #! followed by the path to an interpreter.\n" +
			"sbatch: error: For instance: #!/bin/sh\n"},
		{"a NUL character", "#!/bin/sh\necho \x00\n", "sbatch: error: The Slurm controller does not allow scripts that\n" +
			"sbatch: error: contain a NULL character '\\0'.\n"},
		{"DOS line breaks", "#!/bin/sh\r\necho hi\r\n", "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n" +
			"sbatch: error: instead of expected UNIX line breaks (\\n).\n"},
		{"a lone carriage return is not a DOS line break", "#!/bin/sh\necho hi\r", ""},
		{"#! alone is enough", "#!", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run([]string{"job.sh"}, tt.script, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e := asError(t, err)
			if diff := cmp.Diff(tt.want, e.Stderr("sbatch")); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if e.Exit != 1 {
				t.Errorf("exit = %d, want 1", e.Exit)
			}
		})
	}
}

func TestWrapScript(t *testing.T) {
	r, err := run([]string{"--wrap", "echo a; echo b"}, "ignored", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho a; echo b\n"
	if r.Script != want {
		t.Errorf("script = %q, want %q", r.Script, want)
	}
	// The wrap script goes through the directive reader too, so a command
	// that looks like a directive is one (its lines before it are comments
	// and a blank line).
	r, err = run([]string{"--wrap=#SBATCH -J sneaky"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.JobName != "sneaky" {
		t.Errorf("job name = %q, want sneaky", r.JobName)
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want CommandLine
	}{
		{
			name: "options then the script then its arguments",
			args: []string{"-p", "gpu", "job.sh", "-p", "x"},
			want: CommandLine{Settings: []Setting{{Name: "partition", Value: "gpu", HasValue: true}},
				Script: "job.sh", Args: []string{"-p", "x"}},
		},
		{
			name: "an optional value must be attached, so --nice 5 makes 5 the script",
			args: []string{"--nice", "5", "job.sh"},
			want: CommandLine{Settings: []Setting{{Name: "nice"}}, Script: "5", Args: []string{"job.sh"}},
		},
		{
			name: "two dashes end the options",
			args: []string{"--", "-job.sh"},
			want: CommandLine{Script: "-job.sh"},
		},
		{
			name: "no operand reads standard input",
			args: []string{"--parsable"},
			want: CommandLine{Settings: []Setting{{Name: "parsable"}}, Stdin: true},
		},
		{
			name: "-Q and -v act at once and are counted",
			args: []string{"-vQv", "job.sh"},
			want: CommandLine{Quiet: true, Verbose: 2, Script: "job.sh"},
		},
		{
			name: "--help stops reading, even before a bad option",
			args: []string{"-p", "gpu", "--help", "--bogus"},
			want: CommandLine{Action: Help},
		},
		{
			name: "-V is --version",
			args: []string{"-V"},
			want: CommandLine{Action: Version},
		},
		{
			name: "--gres=help lists GRES",
			args: []string{"--gres=help", "job.sh"},
			want: CommandLine{Action: GresHelp},
		},
		{
			name: "an alias is kept under its own name",
			args: []string{"--tasks-per-node=2", "job.sh"},
			want: CommandLine{Settings: []Setting{{Name: "tasks-per-node", Value: "2", HasValue: true}}, Script: "job.sh"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommandLine(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CommandLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandLineErrorsComeFirst(t *testing.T) {
	// sbatch checks its whole command line before it reads the script, so
	// an error there wins over one in the script, and the first of two
	// command-line errors wins.
	_, err := ParseCommandLine([]string{"--mem=lots", "--time=bad", "job.sh"})
	e := asError(t, err)
	if e.Msg != "Invalid --mem specification" || e.Source != FromCommandLine || e.Option != "--mem" {
		t.Errorf("got %+v", e)
	}
}

func TestParseRefusesNonSubmissions(t *testing.T) {
	if _, err := Parse(Input{Command: CommandLine{Action: Help}}); err == nil {
		t.Error("Parse of a --help command line: no error")
	}
}

// TestValues checks option values against the C functions sbatch calls;
// each case names the function.
func TestValues(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	i := func(v int) *int { return &v }
	tests := []struct {
		name   string
		script string
		check  func(r *Request) any
		want   any
	}{
		{"time 5:30 is minutes:seconds rounded up (time_str2mins)", "-t 5:30",
			func(r *Request) any { return r.TimeLimit.String() }, "6m0s"},
		{"time 0 is unlimited (arg_set_time_limit)", "-t 0",
			func(r *Request) any { return r.TimeLimit.Unlimited() }, true},
		{"time UNLIMITED", "--time=UNLIMITED",
			func(r *Request) any { return r.TimeLimit.Unlimited() }, true},
		{"time h:m:s", "--time=1:02:03",
			func(r *Request) any { return r.TimeLimit.String() }, "1h3m0s"},
		{"time-min in days-hours:minutes", "--time-min=1-2:30",
			func(r *Request) any { return r.TimeMin.String() }, "26h30m0s"},
		{"mem without a unit is MiB (str_to_mbytes)", "--mem=500",
			func(r *Request) any { return r.MemPerNode }, u(500)},
		{"mem in KiB rounds up", "--mem=1025K",
			func(r *Request) any { return r.MemPerNode }, u(2)},
		{"mem with a B after the unit", "--mem=2GB",
			func(r *Request) any { return r.MemPerNode }, u(2048)},
		{"mem in TiB", "--mem=1t",
			func(r *Request) any { return r.MemPerNode }, u(1 << 20)},
		{"mem=0 is all the node's memory, and given", "--mem=0",
			func(r *Request) any { return r.MemPerNode }, u(0)},
		{"nice without a number is 0 (strtoll without end check)", "--nice=abc",
			func(r *Request) any { return r.Nice }, i(0)},
		{"nice may be negative", "--nice=-5",
			func(r *Request) any { return r.Nice }, i(-5)},
		{"no-requeue then requeue: the last wins", "--no-requeue --requeue",
			func(r *Request) any { return *r.Requeue }, true},
		{"exclusive then oversubscribe: the last wins", "--exclusive -s",
			func(r *Request) any { return r.Sharing }, Oversubscribe},
		{"exclusive=mcs", "--exclusive=mcs",
			func(r *Request) any { return r.Sharing }, ExclusiveMCS},
		{"open-mode takes the first letter only", "--open-mode=Apples",
			func(r *Request) any { return r.OpenMode }, "append"},
		{"output none is /dev/null", "-o none -e NONE",
			func(r *Request) any { return r.Output + " " + r.Error }, "/dev/null /dev/null"},
		{"nodelist replaces nodefile", "--nodefile=hosts -w gpu01",
			func(r *Request) any { _, ok := r.OtherValue("nodefile"); return []any{r.NodeList, ok} },
			[]any{"gpu01", false}},
		{"nodefile replaces nodelist", "-w gpu01 --nodefile=hosts",
			func(r *Request) any { v, _ := r.OtherValue("nodefile"); return []any{r.NodeList, v} },
			[]any{"", "hosts"}},
		{"gres none", "--gres=none",
			func(r *Request) any { return []any{r.GresNone, len(r.Gres)} }, []any{true, 0}},
		{"gres counts take suffixes (suffix_mult)", "--gres=shard:2k",
			func(r *Request) any { return r.Gres[0].Count }, uint64(2048)},
		{"gpus list with types", "--gpus=a100:2,v100:1",
			func(r *Request) any { return r.GPUs },
			[]Gres{{Name: "gpu", Type: "a100", Count: 2}, {Name: "gpu", Type: "v100", Count: 1}}},
		{"get-user-env with a short-mode suffix", "--get-user-env=30S",
			func(r *Request) any { return *r.GetUserEnv }, GetUserEnv{Timeout: 30, Mode: "S"}},
		{"priority TOP", "--priority=top",
			func(r *Request) any { return *r.Priority }, PriorityTop},
		{"-B multiplies into the default task count (_opt_verify)", "-N1 -B 2:4",
			func(r *Request) any { return []any{r.NTasks, r.NTasksSet} }, []any{8, true}},
		{"a node count with a k suffix (_str_to_nodes)", "-N 0-1k",
			func(r *Request) any { return r.Nodes }, NodeRange{Min: 0, Max: 1024}},
		{"signal R: and a number", "--signal=R:10@120",
			func(r *Request) any { return *r.Signal }, slurmsyntax.SignalSpec{Signal: 10, Seconds: 120, Reservation: true}},
		{"mail-type NONE clears nothing already read", "--mail-type=END --mail-type=NONE",
			func(r *Request) any { return r.MailType }, []string{"END"}},
		{"mail-type skips unknown words", "--mail-type=END,SOMETIMES",
			func(r *Request) any { return r.MailType }, []string{"END"}},
		{"mail-type ALL", "--mail-type=all",
			func(r *Request) any { return r.MailType },
			[]string{"INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT"}},
		{"ntasks beyond a C int wraps as Slurm's cast does (parse_int)", "-n 4294967298",
			func(r *Request) any { return r.NTasks }, 2},
		{"cpus-per-task with a plus sign and spaces (strtol)", "-c ' +3'",
			func(r *Request) any { return r.CPUsPerTask }, 3},
		{"array with a throttle and MaxArraySize's default", "--array=0-1000:500%1",
			func(r *Request) any { return *r.Array }, Array{Spec: "0-1000:500%1", Tasks: []int{0, 500, 1000}, Limit: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := run([]string{"job.sh"}, "#!/bin/sh\n#SBATCH "+tt.script+"\ntrue\n", nil)
			if err != nil {
				t.Fatalf("%s", stderrOf(err))
			}
			if diff := cmp.Diff(tt.want, tt.check(r)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestValueErrors checks the texts and exit codes of bad values; each text
// is the one slurm_opt.c or proc_args.c prints for that option.
func TestValueErrors(t *testing.T) {
	tests := []struct {
		name   string
		script string
		env    map[string]string
		stderr string
		exit   int
	}{
		{"nice out of range", "--nice=3000000000", nil,
			"sbatch: error: Invalid --nice value, out of range (+/- 2147483645)\n", 255},
		{"negative priority", "--priority=-1", nil, "sbatch: error: Priority must be >= 0\n", 255},
		{"priority too large", "--priority=4294967294", nil, "sbatch: error: Priority must be < 4294967294\n", 255},
		{"exclusive with an unknown word", "--exclusive=yes", nil, "sbatch: error: Invalid --exclusive specification\n", 255},
		{"a bad begin time", "--begin=someday", nil, "sbatch: error: Invalid --begin specification\n", 255},
		{"a bad signal", "--signal=NOPE@30", nil, "sbatch: error: Invalid --signal specification\n", 255},
		{"a bad node count", "-N two", nil, "sbatch: error: \"two\" is not a valid node count\n", 255},
		{"a node range upside down", "-N 4-2", nil,
			"sbatch: error: Maximum node count 2 is less than minimum node count 4\n", 255},
		{"a bad mem-per-cpu", "--mem-per-cpu=1X", nil, "sbatch: error: Invalid --mem-per-cpu specification\n", 255},
		{"zero tasks", "-n 0", nil, "sbatch: error: Invalid numeric value \"0\" for --ntasks.\n", 1},
		{"a huge number", "-c 99999999999999999999", nil,
			"sbatch: error: Numeric argument (9223372036854775807) to big for --cpus-per-task.\n", 1},
		{"a bad mail type", "--mail-type=SOMETIMES", nil, "sbatch: error: Invalid --mail-type specification\n", 255},
		{"a bad get-user-env suffix", "--get-user-env=10X", nil, "sbatch: error: Invalid --get-user-env specification\n", 255},
		{"a bad gres-flags", "--gres-flags=bind", nil, "sbatch: error: Invalid --gres-flags specification\n", 255},
		{"a bad profile", "--profile=everything", nil, "sbatch: error: invalid --profile=everything option\n", 255},
		{"a plane distribution without a size", "--distribution=plane", nil,
			"sbatch: error: Invalid plane size or size not specified\nsbatch: error: Invalid --distribution specification\n", 255},
		{"an arbitrary distribution without a node list", "-m arbitrary", nil,
			"sbatch: error: With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option\n", 1},
		{"a bad -B field", "-B 2:x", nil, "sbatch: error: Invalid numeric value \"x\" for second arg of -B.\n", 1},
		{"wait-all-nodes above 1", "--wait-all-nodes=2", nil, "sbatch: error: Invalid --wait-all-nodes specification\n", 255},
		{"both burst buffer options", "--bb=x --bbf=y", nil, "sbatch: error: Cannot specify both --burst-buffer and --bbf\n", 1},
		{"ntasks-per-gpu with gpus-per-task", "--ntasks-per-gpu=2 --gpus-per-task=1", nil,
			"sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU\n", 1},
		{"core-spec and thread-spec", "-S 1 --thread-spec=1", nil,
			"sbatch: fatal: -S/--core-spec and --thred-spec options are mutually exclusive\n", 1},
		{"two memory options from the environment", "", map[string]string{"SBATCH_MEM_PER_CPU": "1G", "SBATCH_MEM_PER_NODE": "4G"},
			"sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.\n", 1},
		{"gres help in a script prints the GRES list", "--gres=list", nil, "", 0},
		{"an array beyond MaxArraySize", "--array=0-1001", nil,
			"sbatch: error: Batch job submission failed: Invalid job array specification\n", 1},
		{"SLURM_EXIT_ERROR sets error_exit for controller refusals", "--dependency=after", map[string]string{"SLURM_EXIT_ERROR": "7"},
			"sbatch: error: Batch job submission failed: Job dependency problem\n", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run([]string{"job.sh"}, "#!/bin/sh\n#SBATCH "+tt.script+"\ntrue\n", tt.env)
			e := asError(t, err)
			if diff := cmp.Diff(tt.stderr, e.Stderr("sbatch")); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if e.Exit != tt.exit {
				t.Errorf("exit = %d, want %d", e.Exit, tt.exit)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name   string
		script string
		env    map[string]string
		want   []string
	}{
		{"-S is ignored with AllowSpecResourcesUsage=No", "-S 2", nil,
			[]string{"error: Ignoring -S since it's not allowed by configuration (AllowSpecResourcesUsage = No)"}},
		{"SLURM_EXIT_ERROR=0 is complained about", "-p gpu", map[string]string{"SLURM_EXIT_ERROR": "0"},
			[]string{"error: SLURM_EXIT_ERROR has zero value"}},
		{"#SLURM is warned about once", "-p gpu\n#SLURM -t 5\n#SLURM -J x", nil,
			[]string{"error: Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := "#!/bin/sh\n#SBATCH " + tt.script + "\ntrue\n"
			if tt.name == "#SLURM is warned about once" {
				script = "#!/bin/sh\n#SLURM " + tt.script + "\ntrue\n"
			}
			r, err := run([]string{"job.sh"}, script, tt.env)
			if err != nil {
				t.Fatal(stderrOf(err))
			}
			if diff := cmp.Diff(tt.want, r.Warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxArraySize(t *testing.T) {
	cl, _ := ParseCommandLine([]string{"--array=0-5000", "job.sh"})
	in := Input{Script: []byte("#!/bin/sh\n"), Command: cl, Now: corpusNow}
	if _, err := Parse(in); err == nil {
		t.Error("0-5000 accepted with the default MaxArraySize of 1001")
	}
	in.MaxArraySize = 10001
	r, err := Parse(in)
	if err != nil {
		t.Fatalf("0-5000 refused with MaxArraySize=10001: %v", err)
	}
	if len(r.Array.Tasks) != 5001 {
		t.Errorf("%d tasks, want 5001", len(r.Array.Tasks))
	}
}

func TestClustersSkipTheGresCheck(t *testing.T) {
	// slurm_opt_create_job_desc does not validate GRES when --clusters
	// sends the job to another cluster.
	_, err := run([]string{"-M", "other", "--gres=gpu::1", "job.sh"}, "#!/bin/sh\n", nil)
	if err != nil {
		t.Errorf("refused: %v", err)
	}
}

func TestErrorRendering(t *testing.T) {
	e := &Error{Kind: KindInvalid, Exit: 255, Msg: "Invalid --time specification", Source: FromScript,
		File: "job.sh", Line: 3, Option: "--time", Warnings: []string{"error: Change from #SLURM"}}
	if got, want := e.Error(), "job.sh:3: Invalid --time specification"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := e.Location(), "job.sh line 3"; got != want {
		t.Errorf("Location() = %q, want %q", got, want)
	}
	if got, want := e.Stderr("sbatch"), "sbatch: error: Change from #SLURM\nsbatch: error: Invalid --time specification\n"; got != want {
		t.Errorf("Stderr = %q, want %q", got, want)
	}
	r := &Error{Kind: KindRejected, Exit: 1, Msg: MsgNodeCount, Hint: "one machine"}
	if got, want := r.Error(), "batch job submission failed: Node count specification invalid (one machine)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if (&Request{UID: "alice"}).RequireRoot() == nil || (&Request{}).RequireRoot() != nil {
		t.Error("RequireRoot: want an error for --uid only")
	}
	if got := (&Request{GID: "lab"}).RequireRoot().(*Error).Stderr("sbatch"); got != "sbatch: error: --gid only permitted by root user\n" {
		t.Errorf("RequireRoot(--gid) = %q", got)
	}
	known := func(s string) bool { return s == "alice" || s == "1001" || s == "lab" }
	for _, tc := range []struct {
		r    Request
		want string
	}{
		{Request{UID: "alice", GID: "lab"}, ""},
		{Request{UID: "1001"}, ""},
		{Request{UID: "mallory"}, "sbatch: error: Invalid --uid specification\n"},
		{Request{UID: "alice", GID: "nogroup"}, "sbatch: error: Invalid --gid specification\n"},
	} {
		got := ""
		if err := tc.r.CheckIDs(known, known); err != nil {
			got = err.(*Error).Stderr("sbatch")
		}
		if got != tc.want {
			t.Errorf("CheckIDs(uid %q, gid %q) = %q, want %q", tc.r.UID, tc.r.GID, got, tc.want)
		}
	}
}

func TestParseLeavesItsInputAlone(t *testing.T) {
	script := []byte("#!/bin/sh\n#SBATCH -J x --export=A,B=1 --mail-type=END\n#SLITE --yieldable\ntrue\n")
	cl, err := ParseCommandLine([]string{"-p", "gpu", "--mail-type=BEGIN", "job.sh", "arg"})
	if err != nil {
		t.Fatal(err)
	}
	scriptCopy := append([]byte(nil), script...)
	clCopy := cl
	clCopy.Settings = append([]Setting(nil), cl.Settings...)
	clCopy.Args = append([]string(nil), cl.Args...)
	r, err := Parse(Input{Script: script, Command: cl, Now: corpusNow})
	if err != nil {
		t.Fatal(err)
	}
	r.Args[0] = "changed" // the request must not share the command line's slices
	if diff := cmp.Diff(scriptCopy, script); diff != "" {
		t.Errorf("script modified (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(clCopy, cl); diff != "" {
		t.Errorf("command line modified (-before +after):\n%s", diff)
	}
}

// TestCheckpointInterval: #SLITE --checkpoint-interval takes --time's forms
// to the second (a job resumed after a yield runs at least this long
// before the scheduler stops it again); UNLIMITED and nonsense are
// refused in sbatch's words, exit 255 as --time's.
func TestCheckpointInterval(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"10", 10 * time.Minute, ""},
		{"5:30", 5*time.Minute + 30*time.Second, ""},
		{"1:00:00", time.Hour, ""},
		{"0", 0, ""},
		{"UNLIMITED", 0, "sbatch: error: Invalid --checkpoint-interval specification\n"},
		{"soon", 0, "sbatch: error: Invalid --checkpoint-interval specification\n"},
	} {
		t.Run(tt.value, func(t *testing.T) {
			r, err := run([]string{"job.sh"}, "#!/bin/sh\n#SLITE --checkpoint-interval="+tt.value+"\ntrue\n", nil)
			if tt.err != "" {
				e := asError(t, err)
				if diff := cmp.Diff(tt.err, e.Stderr("sbatch")); diff != "" || e.Exit != 255 {
					t.Errorf("exit %d, stderr (-want +got):\n%s", e.Exit, diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.CheckpointInterval.Duration(); got != tt.want {
				t.Errorf("CheckpointInterval = %s, want %s", got, tt.want)
			}
		})
	}
}
