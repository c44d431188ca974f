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

func init() { e2eCmds["showgolden"] = cmdShowGolden }

// showGoldenLine is line 1 of a scontrol show job recording made by
// scripts/record-exclusive: the job's id, then the sbatch command that
// made it and the setting it ran under.
var (
	showGoldenLine    = regexp.MustCompile(`^\$ scontrol show job (\d+)  # (sbatch .*), on the golden cluster with (.*)$`)
	showGoldenAccount = regexp.MustCompile(`((?:^| )Account=)\S+`)
)

// showgolden NAME...: submit the sbatch command line of each recording
// NAME (testdata/golden/NAME.txt, by scripts/record-exclusive) with
// --parsable to the daemon of $SLURM_LITE_CONF, wait until it runs, and
// compare its scontrol show job with real Slurm's field by field, what
// differs naturally masked as for testdata/showjob (showjob); cancel it.
func cmdShowGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: showgolden NAME...")
	}
	var failed []string
	for _, name := range args {
		data, err := os.ReadFile(filepath.Join(goldenDir, name+".txt"))
		ts.Check(err)
		first, rest, _ := strings.Cut(string(data), "\n")
		m := showGoldenLine.FindStringSubmatch(first)
		out, _, ok := strings.Cut(rest, "--- stderr ---\n")
		out, ok2 := strings.CutPrefix(out, "--- stdout ---\n")
		if m == nil || !ok || !ok2 {
			ts.Fatalf("%s.txt is not a recording of scripts/record-exclusive", name)
		}
		line := strings.Replace(m[2], "sbatch ", "sbatch --parsable ", 1)
		got, errOut, code := runShowJobCommand(ts, line, nil)
		id := strings.TrimSpace(got)
		if code != 0 || id == "" {
			ts.Fatalf("%s: %s: exit %d\n%s", name, line, code, errOut)
		}
		settleShowJob(ts, id, false)
		show, errOut, code := runShowJobCommand(ts, "scontrol show job "+id, nil)
		if code != 0 {
			ts.Fatalf("%s: scontrol show job %s: exit %d\n%s", name, id, code, errOut)
		}
		ts.Logf("%s (%s): %s\n%s", name, m[3], line, show)
		// The account is root's default one, which the recording's
		// associations named root: not what is compared here.
		out, show = showGoldenAccount.ReplaceAllString(out, "${1}*"), showGoldenAccount.ReplaceAllString(show, "${1}*")
		want := showJobFields(maskShowJob(out, "/srv/slurm/work", recordIDs(out, m[1]), "", ""))
		have := showJobFields(maskShowJob(show, ts.Getenv("WORK"), recordIDs(show, id), "", ""))
		if diff := diffShowJobFieldsMasking(want, have, false); diff != "" {
			failed = append(failed, fmt.Sprintf("%s (%s):\n%s", name, m[3], diff))
		}
		runShowJobCommand(ts, "scancel "+id, nil)
		settleShowJob(ts, id, true)
	}
	if len(failed) > 0 {
		ts.Fatalf("scontrol show job differs from real Slurm's (-real +ours):\n%s", strings.Join(failed, "\n"))
	}
}
