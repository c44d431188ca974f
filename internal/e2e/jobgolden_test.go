package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	e2eCmds["jobgolden"] = cmdJobGolden
	e2eCmds["loginenv"] = cmdLoginEnv
}

// goldenJobOutput is the first "--- job output file NAME ---" section of
// a recorded job (testdata/golden/job_*.txt).
func goldenJobOutput(ts *testscript.TestScript, name string) string {
	b, err := os.ReadFile(filepath.Join(goldenDir, name+".txt"))
	ts.Check(err)
	_, rest, ok := strings.Cut(string(b), "\n--- job output file ")
	if !ok {
		ts.Fatalf("%s.txt has no job output file", name)
	}
	_, out, _ := strings.Cut(rest, "---\n")
	if i := strings.Index(out, "\n--- "); i >= 0 {
		out = out[:i+1]
	}
	return out
}

// jobMasks are what differs between any two runs of a job: its id and
// times in slurmstepd's lines.
var jobMasks = []*regexp.Regexp{
	regexp.MustCompile(`JOB \d+ ON`),
	regexp.MustCompile(`AT \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`),
}

// jobgolden NAME FILE: FILE, a job's output, is what real Slurm's job
// wrote in the recording NAME (testdata/golden/NAME.txt), line for line,
// but for the job's id and times in slurmstepd's lines.
func cmdJobGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jobgolden NAME FILE")
	}
	want := goldenJobOutput(ts, args[0])
	got := ts.ReadFile(args[1])
	mask := func(s string) string {
		for _, re := range jobMasks {
			s = re.ReplaceAllStringFunc(s, func(m string) string { return regexp.MustCompile(`\d`).ReplaceAllString(m, "N") })
		}
		return s
	}
	if mask(want) != mask(got) {
		ts.Fatalf("%s differs from the recording %s.\nSlurm 22.05:\n%s\nslurm-lite:\n%s", args[1], args[0], want, got)
	}
}

// Variables of a job's environment whose values must be the recording's
// exactly: what the login environment and --export decide.
var loginEnvVars = []string{"HOME", "LOGNAME", "MAIL", "PATH", "SHELL", "USER", "FOO", "SHLVL",
	"ENVIRONMENT", "HOSTNAME", "TMPDIR", "SLURM_GET_USER_ENV", "SLURM_EXPORT_ENV", "SLURM_JOB_USER",
	"SLURM_MEM_PER_CPU", "SLURM_CPUS_ON_NODE", "SLURM_JOB_NAME"}

// Variables only one side has, by design: Slurm's controller address and
// configuration file, slurm-lite's own (docs and stepd/doc.go), and the
// account and QOS, which the recording's cluster ran without accounting.
var (
	onlySlurm = []string{"SLURM_WORKING_CLUSTER", "SLURM_CONF"}
	onlyLite  = []string{"SLURM_LITE_CONF", "CUDA_DEVICE_ORDER", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS",
		"SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLITE_CHECKPOINT_DIR"}
)

// loginenv NAME FILE: FILE, a job's "env | sort", has the recording NAME's
// login environment: loginEnvVars with the same values (or absent on both
// sides), and the same variable names otherwise, but for onlySlurm and
// onlyLite.
func cmdLoginEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: loginenv NAME FILE")
	}
	want := envLines(goldenJobOutput(ts, args[0]))
	got := envLines(ts.ReadFile(args[1]))
	var diffs []string
	for _, k := range loginEnvVars {
		w, wok := want[k]
		g, gok := got[k]
		if w != g || wok != gok {
			diffs = append(diffs, fmt.Sprintf("%s: Slurm %s, slurm-lite %s", k, shown(w, wok), shown(g, gok)))
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok && !slices.Contains(onlySlurm, k) {
			diffs = append(diffs, fmt.Sprintf("%s: only in Slurm's (%q)", k, want[k]))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && !slices.Contains(onlyLite, k) {
			diffs = append(diffs, fmt.Sprintf("%s: only in slurm-lite's (%q)", k, got[k]))
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		ts.Fatalf("%s's environment differs from the recording %s:\n%s", args[1], args[0], strings.Join(diffs, "\n"))
	}
}

func shown(v string, ok bool) string {
	if !ok {
		return "unset"
	}
	return fmt.Sprintf("%q", v)
}

// envLines reads "env | sort" output (values without newlines).
func envLines(text string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && k != "" {
			m[k] = v
		}
	}
	return m
}
