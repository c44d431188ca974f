//go:build realslurm

package jobscript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// TestRealSlurm replays every corpus case through the real sbatch of Slurm
// 22.05 and checks that the corpus records what it does. It needs a running
// cluster (scripts/real-slurm start, ideally --accounting as the golden
// recording had) and SLURM_CONF pointing at it, and runs as root:
//
//	scripts/real-slurm start --accounting
//	SLURM_CONF=/tmp/real-slurm/slurm.conf go test -tags realslurm -run RealSlurm ./internal/jobscript/
//	scripts/real-slurm stop
//
// A refused case must give the same stderr and exit code. An accepted case
// is submitted with --hold added (nothing runs), its record is read back
// with "scontrol show job", every field there that the Request decides is
// compared (realFields), and the job is cancelled. The cases listed in
// realKnown differ on purpose, or because the golden cluster lacks a name
// they use; for those the checker still pins what real Slurm prints.
func TestRealSlurm(t *testing.T) {
	if os.Getenv("SLURM_CONF") == "" {
		t.Skip("SLURM_CONF is not set: start real Slurm with scripts/real-slurm start")
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		t.Skip("no sbatch on $PATH")
	}
	files, err := filepath.Glob("testdata/corpus/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for name := range realKnown {
		if _, err := os.Stat(filepath.Join("testdata/corpus", name+".txtar")); err != nil {
			t.Errorf("realKnown names %q, which is not a corpus case", name)
		}
	}
	agreed := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		if t.Run(name, func(t *testing.T) { realCase(t, f, realKnown[name]) }) {
			agreed++
		}
	}
	t.Logf("%d of %d corpus cases agree with real sbatch (%d of them as known differences)",
		agreed, len(files), len(realKnown))
}

// known is a corpus case where real Slurm on the golden cluster does not do
// what the corpus records.
type known struct {
	// why the difference is expected.
	why string
	// stderr and exit are what real sbatch prints and returns instead;
	// the checker still demands exactly that. accepts says that real
	// sbatch submits the job where the corpus refuses it.
	stderr  string
	exit    int
	accepts bool
}

// noShardRefusal is what real sbatch prints for a GRES that slurm.conf's
// GresTypes does not name (sbatch checks the names itself, before
// submitting): the golden cluster has GresTypes=gpu only.
const noShardRefusal = "sbatch: error: Invalid generic resource (gres) specification\n"

// realKnown lists the expected differences, by case name.
var realKnown = map[string]known{
	"err_extension_on_sbatch_line": {
		why: "slurm-lite's --gpu-mem is not a Slurm option: real sbatch refuses it as unknown, " +
			"slurm-lite refuses it with a pointer to #SLITE (doc.go)",
		stderr: "sbatch: unrecognized option '--gpu-mem=10G'\nTry \"sbatch --help\" for more information\n",
		exit:   255,
	},
	"err_slurm_option_on_slite_line": {
		why:     "real Slurm reads #SLITE lines as comments; slurm-lite refuses a Slurm option there (doc.go)",
		accepts: true,
	},
	"slite_extensions": {
		why: "#SLITE lines are comments to real Slurm, and the golden cluster has no shard GRES " +
			"(GresTypes=gpu), against which real sbatch checks --gres=shard:12 itself",
		stderr: noShardRefusal, exit: 1,
	},
	"gres_shard_and_unknown": {
		why: "real sbatch checks GRES names against slurm.conf's GresTypes (gpu only on the golden cluster); " +
			"jobscript has no configuration and leaves the names to the daemon",
		stderr: noShardRefusal, exit: 1,
	},
	"cluster_names": {
		why:    "the golden cluster has no feature a100, reservation maint or license matlab: its slurmctld refuses the job",
		stderr: "sbatch: error: Batch job submission failed: Invalid license specification\n", exit: 1,
	},
	"err_time_negative_days": {
		why: "real sbatch reads -t -5 as minus five days and slurmctld keeps it as an unsigned minute count " +
			"(TimeLimit=2982611-04:17:00); slurm-lite refuses a negative limit (slurmsyntax, doc.go)",
		accepts: true,
	},
	"err_two_nodes": {
		why: "real slurmctld, with EnforcePartLimits=NO (the default), accepts a job asking for more nodes " +
			"than the partition has and leaves it pending for ever (Reason=PartitionNodeLimit); " +
			"slurm-lite refuses it at once with the words Slurm uses under EnforcePartLimits=ALL (doc.go)",
		accepts: true,
	},
	"slite_on_command_line": {
		why:    "--gpu-mem and --batch-size are slurm-lite extensions, unknown to real sbatch",
		stderr: "sbatch: unrecognized option '--gpu-mem=20G'\nTry \"sbatch --help\" for more information\n",
		exit:   255,
	},
	"err_hetjob": {
		why:     "slurm-lite refuses heterogeneous jobs (doc.go); real sbatch submits them",
		accepts: true,
	},
}

// realCase runs one corpus case through real sbatch.
func realCase(t *testing.T, path string, k known) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sec := map[string]string{}
	for _, f := range parseTxtar(data).Files {
		sec[f.Name] = string(f.Data)
	}
	args := []string{"job.sh"}
	if a, ok := sec["args"]; ok {
		args = nil
		if a != "" {
			args = strings.Split(strings.TrimSuffix(a, "\n"), "\n")
		}
	}
	dir := t.TempDir()
	args, stdin := placeScript(t, dir, args, sec["script"])
	env := realEnv(sec["env"])

	// --hold first: a case refused by the corpus but accepted by real
	// Slurm must not run either.
	res := runReal(t, dir, env, stdin, "sbatch", append([]string{"--hold"}, args...)...)
	jobs := submittedJobs(res.stdout)
	if len(jobs) == 0 && (res.timedOut || res.exit == 0) {
		// -Q prints nothing; --wait (SBATCH_WAIT) waits for a held job
		// until it is stopped. Either way the job is the one held.
		jobs = heldJobs(t, env)
	}
	if res.timedOut {
		res.exit = 0
	}
	for _, id := range jobs {
		t.Cleanup(func() { runReal(t, dir, env, "", "scancel", id) })
	}
	gotStderr := strings.ReplaceAll(res.stderr, dir+"/", "")

	if k.why != "" {
		t.Logf("known difference: %s", k.why)
		if k.accepts {
			if res.exit != 0 || len(jobs) == 0 {
				t.Errorf("real sbatch was expected to accept this; exit %d, stderr:\n%s", res.exit, gotStderr)
			}
			return
		}
		if res.exit != k.exit || gotStderr != k.stderr {
			t.Errorf("real sbatch: exit %d, want %d; stderr (-want +got):\n%s", res.exit, k.exit, cmp.Diff(k.stderr, gotStderr))
		}
		return
	}

	if wantStderr, ok := sec["stderr"]; ok {
		wantExit, _ := strconv.Atoi(strings.TrimSpace(sec["exit"]))
		if diff := cmp.Diff(wantStderr, gotStderr); diff != "" {
			t.Errorf("stderr (-want +got):\n%s", diff)
		}
		if res.exit != wantExit {
			t.Errorf("exit = %d, want %d", res.exit, wantExit)
		}
		return
	}

	var want Request
	dec := json.NewDecoder(strings.NewReader(sec["want.json"]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("want.json: %v", err)
	}
	if res.exit != 0 {
		t.Fatalf("real sbatch refused an accepted case: exit %d\n%s", res.exit, gotStderr)
	}
	var wantStderr string
	for _, w := range want.Warnings {
		wantStderr += "sbatch: " + w + "\n"
	}
	if want.TestOnly {
		// --test-only prints a start estimate instead of submitting.
		gotStderr = regexp.MustCompile(`(?m)^sbatch: Job \d+ to start at .*\n`).ReplaceAllString(gotStderr, "")
	}
	if diff := cmp.Diff(wantStderr, gotStderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if want.TestOnly {
		return
	}
	if len(jobs) != 1 {
		t.Fatalf("found %d submitted jobs in stdout %q", len(jobs), res.stdout)
	}
	show := runReal(t, dir, env, "", "scontrol", "show", "job", jobs[0])
	if show.exit != 0 {
		t.Fatalf("scontrol show job %s: %s", jobs[0], show.stderr)
	}
	got := parseShowJob(show.stdout)
	realGot(got)
	wantFields := realFields(&want, dir, got)
	gotFields := map[string]string{}
	for k := range wantFields {
		gotFields[k] = got[k]
	}
	if want.Begin != (time.Time{}) {
		gotFields["Begin-Submit"] = timeBetween(got["SubmitTime"], got["EligibleTime"], want.Begin.Sub(corpusNow))
	}
	if diff := cmp.Diff(wantFields, gotFields); diff != "" {
		t.Errorf("scontrol show job (-want +got):\n%s\nwhole record:\n%s", diff, show.stdout)
	}
}

// placeScript writes the case's script where sbatch will look for it, or
// returns it as standard input. An absolute script path is moved under dir.
func placeScript(t *testing.T, dir string, args []string, script string) ([]string, string) {
	args = append([]string(nil), args...)
	write := func(p string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := ParseCommandLine(args)
	switch {
	case err != nil:
		// The command line is refused before any script is read; write
		// it anyway under every plain word, in case real sbatch reads it.
		for _, a := range args {
			if a != "" && !strings.HasPrefix(a, "-") && !strings.Contains(a, "/") {
				write(filepath.Join(dir, a))
			}
		}
		return args, ""
	case cl.HasWrap:
		return args, ""
	case cl.Stdin:
		return args, script
	}
	i := len(args) - len(cl.Args) - 1
	if filepath.IsAbs(cl.Script) {
		args[i] = filepath.Join(dir, cl.Script)
		write(args[i])
	} else {
		write(filepath.Join(dir, cl.Script))
	}
	return args, ""
}

// realEnv is this process's environment without SBATCH_* and SLURM_*
// (but SLURM_CONF), plus the case's variables.
func realEnv(caseEnv string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if (strings.HasPrefix(kv, "SBATCH_") || strings.HasPrefix(kv, "SLURM_")) && !strings.HasPrefix(kv, "SLURM_CONF=") {
			continue
		}
		env = append(env, kv)
	}
	for _, l := range strings.Split(caseEnv, "\n") {
		if strings.Contains(l, "=") {
			env = append(env, l)
		}
	}
	return env
}

type realResult struct {
	stdout, stderr string
	exit           int
	// timedOut reports a command stopped after realTimeout: sbatch
	// --wait on a held job.
	timedOut bool
}

const realTimeout = 10 * time.Second

func runReal(t *testing.T, dir string, env []string, stdin, name string, args ...string) realResult {
	ctx, cancel := context.WithTimeout(context.Background(), realTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return realResult{out.String(), errb.String(), cmd.ProcessState.ExitCode(), ctx.Err() != nil}
}

var submittedRE = regexp.MustCompile(`(?m)^(?:Submitted batch job (\d+)|(\d+)(?:;\S*)?)$`)

// submittedJobs finds the job ids sbatch printed, plain or --parsable.
func submittedJobs(stdout string) []string {
	var ids []string
	for _, m := range submittedRE.FindAllStringSubmatch(stdout, -1) {
		ids = append(ids, m[1]+m[2])
	}
	return ids
}

// heldJobs lists the pending jobs, for a submission made with -Q.
func heldJobs(t *testing.T, env []string) []string {
	r := runReal(t, "/", env, "", "squeue", "-h", "-t", "PD", "-o", "%A")
	return strings.Fields(r.stdout)
}

// restOfLine are the fields whose value runs to the end of their line in
// scontrol's multi-line output (a value may hold spaces).
var restOfLine = map[string]bool{
	"JobName": true, "Comment": true, "WorkDir": true, "Command": true,
	"StdErr": true, "StdIn": true, "StdOut": true, "Reservation": true,
}

// parseShowJob reads the first record of "scontrol show job" (multi-line).
func parseShowJob(out string) map[string]string {
	m := map[string]string{}
	rec, _, _ := strings.Cut(out, "\n\n")
	for _, line := range strings.Split(rec, "\n") {
		line = strings.TrimSpace(line)
		for line != "" {
			word, rest, _ := strings.Cut(line, " ")
			k, v, ok := strings.Cut(word, "=")
			if !ok {
				line = rest
				continue
			}
			if restOfLine[k] {
				// JobName is the last field of the first line; the others
				// have a line of their own.
				_, v, _ = strings.Cut(line, "=")
				m[k] = strings.TrimSuffix(v, " ")
				break
			}
			m[k] = v
			line = rest
		}
	}
	return m
}

// realFields is what "scontrol show job" must show for the request, field
// by field, on the golden cluster: partition gpu by default, MaxTime
// INFINITE, DefMemPerCPU=1000, JobRequeue 1, and with accounting the
// default accounts of scripts/real-slurm (root in root, alice and bob in
// lab) and QOS normal. got supplies the job's ids for the file names.
// Fields the controller derives (NumCPUs, a NumNodes that sbatch did not
// set, TRES) are left out.
func realFields(r *Request, dir string, got map[string]string) map[string]string {
	account := "root"
	if r.UID == "alice" || r.UID == "bob" {
		account = "lab"
	}
	f := map[string]string{
		"JobName":        r.JobName,
		"Partition":      or(r.Partition, "gpu"),
		"TimeLimit":      "UNLIMITED",
		"TimeMin":        "N/A",
		"NumTasks":       strconv.Itoa(r.NTasks),
		"CPUs/Task":      strconv.Itoa(max(r.CPUsPerTask, 1)),
		"Nice":           "0",
		"Requeue":        "1",
		"Features":       or(r.Constraint, "(null)"),
		"ReqNodeList":    or(r.NodeList, "(null)"),
		"ExcNodeList":    or(r.Exclude, "(null)"),
		"Licenses":       or(r.Licenses, "(null)"),
		"Account":        or(r.Account, account),
		"QOS":            or(r.QOS, "normal"),
		"OverSubscribe":  "OK",
		"Contiguous":     "0",
		"Dependency":     "(null)",
		"Deadline":       "N/A",
		"MinTmpDiskNode": "0",
	}
	if r.TimeLimit != 0 {
		f["TimeLimit"] = realTime(r.TimeLimit)
	}
	if r.TimeMin != 0 {
		f["TimeMin"] = realTime(r.TimeMin)
	}
	if r.Deadline != (time.Time{}) && r.TimeLimit == 0 && r.TimeMin == 0 {
		// job_create: a deadline without a limit gets a time-min of 1.
		f["TimeMin"] = "00:01:00"
	}
	if r.NodesSet {
		f["NumNodes"] = strconv.Itoa(r.Nodes.Min)
		if r.Nodes.Max != 0 {
			f["NumNodes"] += "-" + strconv.Itoa(r.Nodes.Max)
		}
	}
	f["NtasksPerN:B:S:C"] = strconv.Itoa(r.NTasksPerNode) + ":0:*:*"
	switch {
	case r.MemPerNode != nil:
		f["MinMemoryNode"] = realMB(*r.MemPerNode)
	case r.MemPerCPU != nil:
		f["MinMemoryCPU"] = realMB(*r.MemPerCPU)
	case r.MemPerGPU != nil:
		f["MemPerTres"] = "gres:gpu:" + strconv.FormatUint(*r.MemPerGPU, 10)
	default:
		f["MinMemoryCPU"] = "1000M"
	}
	if r.CPUsPerGPU != 0 {
		f["CpusPerTres"] = "gres:gpu:" + strconv.Itoa(r.CPUsPerGPU)
	}
	tres := func(key string, gs ...[]Gres) {
		var parts []string
		for _, g := range gs {
			for _, x := range g {
				parts = append(parts, "gres:"+x.String())
			}
		}
		if len(parts) > 0 {
			f[key] = strings.Join(parts, ",")
		}
	}
	tres("TresPerJob", r.GPUs)
	tres("TresPerNode", r.Gres, r.GPUsPerNode)
	tres("TresPerTask", r.GPUsPerTask)
	if r.Array != nil {
		f["ArrayTaskId"] = realRanges(r.Array.Tasks)
		if r.Array.Limit != 0 {
			f["ArrayTaskId"] += "%" + strconv.Itoa(r.Array.Limit)
			f["ArrayTaskThrottle"] = strconv.Itoa(r.Array.Limit)
		}
	}
	if r.Dependency != nil {
		f["Dependency"] = realDependency(r.Dependency.Parsed)
	}
	if r.Nice != nil {
		f["Nice"] = strconv.Itoa(*r.Nice)
	}
	if r.Requeue != nil && !*r.Requeue {
		f["Requeue"] = "0"
	}
	if r.Comment != "" {
		f["Comment"] = r.Comment
	}
	if r.Reservation != "" {
		f["Reservation"] = r.Reservation
	}
	if len(r.MailType) > 0 {
		f["MailType"] = strings.Join(r.MailType, ",")
		f["MailUser"] = or(r.MailUser, "root")
	}
	if r.Deadline != (time.Time{}) {
		f["Deadline"] = r.Deadline.Format("2006-01-02T15:04:05")
	}
	if r.Begin != (time.Time{}) {
		f["Begin-Submit"] = r.Begin.Sub(corpusNow).String()
	}
	switch r.Sharing {
	case Exclusive:
		f["OverSubscribe"] = "NO"
	case ExclusiveUser:
		f["OverSubscribe"] = "USER"
	case ExclusiveMCS:
		f["OverSubscribe"] = "MCS"
	case Oversubscribe:
		f["OverSubscribe"] = "YES"
	}
	// Options kept in Other that scontrol shows.
	if _, ok := r.OtherValue("contiguous"); ok {
		f["Contiguous"] = "1"
	}
	if v, ok := r.OtherValue("mincpus"); ok {
		f["MinCPUsNode"] = v
	}
	if v, ok := r.OtherValue("tmp"); ok {
		mb, ok := strToMbytes(v)
		f["MinTmpDiskNode"] = realMB(mb)
		if !ok {
			f["MinTmpDiskNode"] = "bad --tmp " + v
		}
	}
	if v, ok := r.OtherValue("switches"); ok {
		n, wait, _ := strings.Cut(v, "@")
		f["Switches"] = n + "@" + wait
		if wait != "" {
			d, err := slurmsyntax.ParseTimeLimit(wait)
			// slurmctld caps the wait at max_switch_wait, 300 s by default.
			f["Switches"] = n + "@" + realTime(Limit(min(d, 5*time.Minute)))
			if err != nil {
				f["Switches"] = err.Error()
			}
		}
	}
	if v, ok := r.OtherValue("gres-flags"); ok {
		switch v {
		case "enforce-binding":
			f["GresEnforceBind"] = "Yes"
		case "disable-binding":
			f["GresEnforceBind"] = "No"
		}
	}

	work := dir
	if r.Chdir != "" {
		work = r.Chdir
		if !filepath.IsAbs(work) {
			work = filepath.Join(dir, work)
		}
	}
	f["WorkDir"] = work
	f["StdIn"] = realPath(or(r.Input, "/dev/null"), work, r.JobName, got)
	out := r.Output
	if out == "" {
		out = "slurm-%j.out"
		if r.Array != nil {
			out = "slurm-%A_%a.out"
		}
	}
	f["StdOut"] = realPath(out, work, r.JobName, got)
	f["StdErr"] = realPath(or(r.Error, out), work, r.JobName, got)
	return f
}

// realGot normalises what scontrol printed where Slurm keeps a spelling
// that the Request does not: a GRES without a count ("--gpus=a100" is sent
// as "gres:gpu:a100") means a count of 1.
func realGot(got map[string]string) {
	for _, k := range []string{"TresPerJob", "TresPerNode", "TresPerTask"} {
		v, ok := got[k]
		if !ok {
			continue
		}
		parts := strings.Split(v, ",")
		for i, p := range parts {
			last := p[strings.LastIndexByte(p, ':')+1:]
			if _, err := strconv.Atoi(last); err != nil {
				parts[i] = p + ":1"
			}
		}
		got[k] = strings.Join(parts, ",")
	}
}

// realRanges is a bitmap as bit_fmt prints it: "0-3,7".
func realRanges(ids []int) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

// realDependency is how slurmctld shows a dependency it has not yet seen
// satisfied: every job of every term on its own, "(unfulfilled)" after
// each.
func realDependency(d slurmsyntax.Dependency) string {
	sep := ","
	if d.Any {
		sep = "?"
	}
	var terms []string
	for _, t := range d.Terms {
		delay := ""
		if t.Delay != 0 {
			delay = "+" + strconv.Itoa(int(t.Delay/time.Minute))
		}
		if len(t.Jobs) == 0 {
			terms = append(terms, string(t.Type)+delay+"(unfulfilled)")
			continue
		}
		for _, j := range t.Jobs {
			terms = append(terms, string(t.Type)+":"+j.String()+delay+"(unfulfilled)")
		}
	}
	return strings.Join(terms, sep)
}

// realPath is _fname_format of src/api/job_info.c: what scontrol shows for
// an output file pattern.
func realPath(p, work, name string, got map[string]string) string {
	job := got["JobId"]
	arrayJob, task := job, "4294967294" // NO_VAL: not an array task yet
	if got["ArrayJobId"] != "" {
		arrayJob = got["ArrayJobId"]
		if _, err := strconv.Atoi(got["ArrayTaskId"]); err == nil {
			task = got["ArrayTaskId"]
		}
	}
	p = strings.ReplaceAll(p, "%A", arrayJob)
	p = strings.ReplaceAll(p, "%a", task)
	p = strings.ReplaceAll(p, "%j", job)
	p = strings.ReplaceAll(p, "%u", "root")
	p = strings.ReplaceAll(p, "%x", name)
	if !strings.HasPrefix(p, "/") {
		p = work + "/" + p
	}
	return p
}

// realTime is secs2time_str: [D-]HH:MM:SS, or UNLIMITED.
func realTime(l Limit) string {
	if l.Unlimited() {
		return "UNLIMITED"
	}
	s := int64(l.Duration() / time.Second)
	d, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// realMB is convert_num_unit(MiB, UNIT_MEGA, CONVERT_NUM_UNIT_EXACT).
func realMB(n uint64) string {
	if n == 0 {
		return "0"
	}
	units := "MGTP"
	v, u := float64(n), 0
	for v >= 1024 && uint64(v)%512 == 0 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == float64(uint64(v)) {
		return fmt.Sprintf("%d%c", uint64(v), units[u])
	}
	return fmt.Sprintf("%.2f%c", v, units[u])
}

// timeBetween is the time from one scontrol time stamp to another, as
// want's String when it is within two seconds of want: submission and
// sbatch's clock may be a second apart.
func timeBetween(from, to string, want time.Duration) string {
	a, err1 := time.ParseInLocation("2006-01-02T15:04:05", from, time.Local)
	b, err2 := time.ParseInLocation("2006-01-02T15:04:05", to, time.Local)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("unreadable times %q, %q", from, to)
	}
	if d := b.Sub(a); (d - want).Abs() > 2*time.Second {
		return d.String()
	}
	return want.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
