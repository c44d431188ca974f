package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

func init() { e2eCmds["showjob"] = cmdShowJob }

// showJobDir holds real Slurm's scontrol show job of each case of
// scripts/record-show-job (its README.md has the format).
var showJobDir = filepath.Join("..", "..", "testdata", "showjob")

// showjob CASE...: submit each recorded case's sbatch command line to the
// daemon of $SLURM_LITE_CONF, in $WORK, with $RUN and $HELD the anchors'
// ids (jobs like the recording's: a running one named anchor-run and a
// held one named anchor-held); wait until the job runs or pends for a
// reason; compare its scontrol show job with real Slurm's field by field,
// what differs naturally masked (see maskShowJob); cancel it.
func cmdShowJob(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: showjob CASE...")
	}
	var failed []string
	for _, name := range args {
		if diff := showJobCase(ts, name); diff != "" {
			failed = append(failed, name+":\n"+diff)
		}
	}
	if len(failed) > 0 {
		ts.Fatalf("scontrol show job differs from real Slurm's (-real +ours):\n%s", strings.Join(failed, "\n"))
	}
}

// showJobRecording is one recorded case.
type showJobRecording struct {
	sbatch    string // the command line after "$ "
	id        string // the job's id in the recording
	run, held string // the anchors' ids in the recording
	work      string // the submission directory in the recording
	stdout    string
}

func readShowJobRecording(path string) (showJobRecording, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return showJobRecording{}, err
	}
	var r showJobRecording
	lines := strings.SplitN(string(data), "\n", 4)
	if len(lines) < 4 {
		return r, fmt.Errorf("%s: too short", path)
	}
	var ok1, ok2 bool
	r.sbatch, ok1 = strings.CutPrefix(lines[0], "$ ")
	r.id, ok2 = strings.CutPrefix(lines[1], "$ scontrol show job ")
	if _, err := fmt.Sscanf(lines[2], "# RUN=%s HELD=%s WORK=%s", &r.run, &r.held, &r.work); err != nil || !ok1 || !ok2 {
		return r, fmt.Errorf("%s: not in the format of testdata/showjob/README.md", path)
	}
	out, _, ok := strings.Cut(lines[3], "--- stderr ---\n")
	out, ok3 := strings.CutPrefix(out, "--- stdout ---\n")
	if !ok || !ok3 {
		return r, fmt.Errorf("%s: no stdout section", path)
	}
	r.stdout = out
	return r, nil
}

// showJobCase runs one case and returns the differing fields, "" for none.
func showJobCase(ts *testscript.TestScript, name string) string {
	rec, err := readShowJobRecording(filepath.Join(showJobDir, name+".txt"))
	ts.Check(err)
	if rec.stdout == "" {
		ts.Fatalf("%s: real Slurm refused the job; nothing to compare", name)
	}
	work := ts.Getenv("WORK")
	run, held := ts.Getenv("RUN"), ts.Getenv("HELD")
	out, errOut, code := runShowJobCommand(ts, rec.sbatch, map[string]string{"RUN": run, "HELD": held})
	id := strings.TrimSpace(out)
	if code != 0 || id == "" {
		ts.Fatalf("%s: %s: exit %d\n%s", name, rec.sbatch, code, errOut)
	}
	id, _, _ = strings.Cut(id, ";")
	defer func() {
		runShowJobCommand(ts, "scancel "+id, nil)
		settleShowJob(ts, id, true)
	}()
	settleShowJob(ts, id, false)
	show, errOut, code := runShowJobCommand(ts, "scontrol show job "+id, nil)
	if code != 0 {
		ts.Fatalf("%s: scontrol show job %s: exit %d\n%s", name, id, code, errOut)
	}
	ts.Logf("%s: %s\n%s", name, rec.sbatch, show)
	want := showJobFields(maskShowJob(rec.stdout, rec.work, recordIDs(rec.stdout, rec.id), rec.run, rec.held))
	got := showJobFields(maskShowJob(show, work, recordIDs(show, id), run, held))
	return diffShowJobFields(want, got)
}

// runShowJobCommand runs a command line through bash in $WORK with the
// script's environment and extra variables.
func runShowJobCommand(ts *testscript.TestScript, line string, extra map[string]string) (stdout, stderr string, code int) {
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = ts.Getenv("WORK")
	for _, name := range []string{"PATH", "HOME", "SLURM_LITE_CONF", "WORK", "TMPDIR"} {
		cmd.Env = append(cmd.Env, name+"="+ts.Getenv(name))
	}
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("running %q: %v", line, err)
		}
		code = ee.ExitCode()
	}
	return o.String(), e.String(), code
}

// settleShowJob waits (20 s at most) until job id runs, has ended, or
// pends for a reason other than None, as scripts/record-show-job does;
// with gone, until it neither runs nor pends. It asks the daemon itself:
// a command a poll would cost the script a second in all.
func settleShowJob(ts *testscript.TestScript, id string, gone bool) {
	cfg, err := config.Load(ts.Getenv("SLURM_LITE_CONF"))
	ts.Check(err)
	c := sockclient.New(cfg.SocketPath)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var jobs []api.Job
		ts.Check(c.Do(context.Background(), "GET", api.PathJobs+"?id="+id, nil, &jobs))
		state, reason, undecided := slurm.JobState(""), slurm.Reason(""), false
		for _, j := range jobs {
			if strconv.FormatUint(uint64(j.ID), 10) == id {
				state, reason = j.State, j.Reason
				// A held job's reason comes at once, its dependencies'
				// state with the scheduler's next pass (every case's
				// dependency is on a job that stays).
				undecided = j.Request.Dependency != nil && j.DepReason == ""
			}
		}
		busy := state == slurm.Running || state == slurm.Pending || state == slurm.Completing
		waiting := state == slurm.Pending && (reason == "" || reason == slurm.ReasonNone || undecided)
		if gone && !busy || !gone && !waiting {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordIDs are the job ids an output shows: the job's own, then those of
// the other records (an array's tasks), in order.
func recordIDs(out, id string) []string {
	ids := []string{id}
	for _, m := range regexp.MustCompile(`(?m)^JobId=(\d+)`).FindAllStringSubmatch(out, -1) {
		if m[1] != id {
			ids = append(ids, m[1])
		}
	}
	return ids
}

var (
	showJobDate   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
	showJobMasked = regexp.MustCompile(`((?:^| )(?:AllocNode:Sid|RunTime)=)\S*`)
	showJobPrio   = regexp.MustCompile(`((?:^| )Priority=)[1-9]\d*`)
	showJobIDs    = regexp.MustCompile(`((?:^| )(?:JobId|ArrayJobId|Dependency|Command|WorkDir|StdErr|StdIn|StdOut)=)(\S*)`)
)

// maskShowJob replaces in a scontrol show job output what differs
// naturally between two systems by its shape, as scripts/record-show-job
// does: the submission directory by $WORK, dates by <date>, RunTime and
// AllocNode:Sid by *, a priority other than 0 by N, and in the fields
// that carry job ids (JobId, ArrayJobId, Dependency and the paths) the
// job's ids by $JOB0, $JOB1... and the anchors' by $RUN and $HELD.
func maskShowJob(out, work string, ids []string, run, held string) string {
	out = strings.ReplaceAll(out, work, "$WORK")
	out = showJobDate.ReplaceAllString(out, "<date>")
	out = showJobMasked.ReplaceAllString(out, "$1*")
	out = showJobPrio.ReplaceAllString(out, "${1}N")
	names := map[string]string{run: "$RUN", held: "$HELD"}
	for i, id := range ids {
		names[id] = "$JOB" + strconv.Itoa(i)
	}
	digits := regexp.MustCompile(`\d+`)
	return showJobIDs.ReplaceAllStringFunc(out, func(f string) string {
		m := showJobIDs.FindStringSubmatch(f)
		return m[1] + digits.ReplaceAllStringFunc(m[2], func(n string) string {
			if name, ok := names[n]; ok {
				return name
			}
			return n
		})
	})
}

// showJobField is one Key=Value of a record.
type showJobField struct{ key, value string }

var showJobKey = regexp.MustCompile(`(?:^| )([A-Za-z_][A-Za-z0-9_:/]*)=`)

// showJobFields splits an output into its fields, in order, each key
// prefixed with its record's number ("#1 NumNodes"); a value runs to the
// next " Key=" on its line.
func showJobFields(out string) []showJobField {
	var fields []showJobField
	rec := 0
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimLeft(line, " ")
		if strings.HasPrefix(line, "JobId=") {
			rec++
		}
		locs := showJobKey.FindAllStringSubmatchIndex(line, -1)
		if len(locs) == 0 || locs[0][0] != 0 {
			if strings.TrimSpace(line) != "" {
				fields = append(fields, showJobField{fmt.Sprintf("#%d (text)", rec), line})
			}
			continue
		}
		for i, l := range locs {
			end := len(line)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			fields = append(fields, showJobField{fmt.Sprintf("#%d %s", rec, line[l[2]:l[3]]), line[l[1]:end]})
		}
	}
	return fields
}

// diffShowJobFields lists the fields whose values differ, one a line,
// but for one difference that is known and left alone. A job that asks
// for no memory gets DefMemPerCPU=1000 on the recorded cluster and no
// limit on slurm-lite (DefMemPerNode=UNLIMITED, by design):
// MinMemoryCPU=1000M against MinMemoryNode=0, and TRES are compared
// without their mem=.
func diffShowJobFields(want, got []showJobField) string {
	wm, gm := map[string]string{}, map[string]string{}
	var order []string
	for _, f := range want {
		wm[f.key] = f.value
		order = append(order, f.key)
	}
	for _, f := range got {
		if _, ok := wm[f.key]; !ok {
			order = append(order, f.key)
		}
		gm[f.key] = f.value
	}
	memRe := regexp.MustCompile(`mem=[^,]*,`)
	for k, v := range wm {
		rec, ok := strings.CutSuffix(k, " MinMemoryCPU")
		if !ok || v != "1000M" {
			continue
		}
		if _, has := gm[k]; has || gm[rec+" MinMemoryNode"] != "0" {
			continue
		}
		delete(wm, k)
		delete(gm, rec+" MinMemoryNode")
		wm[rec+" TRES"] = memRe.ReplaceAllString(wm[rec+" TRES"], "")
		gm[rec+" TRES"] = memRe.ReplaceAllString(gm[rec+" TRES"], "")
	}
	var b strings.Builder
	for _, k := range order {
		w, wok := wm[k]
		g, gok := gm[k]
		if !wok && !gok || (wok && gok && w == g) {
			continue
		}
		if !wok {
			w = "<absent>"
		}
		if !gok {
			g = "<absent>"
		}
		fmt.Fprintf(&b, "  %s: -%s +%s\n", k, w, g)
	}
	return b.String()
}

// The comparison of showjob: a recording matches itself under other ids
// and another directory, and a changed field is reported.
func TestShowJobCompare(t *testing.T) {
	rec, err := readShowJobRecording(filepath.Join(showJobDir, "afterok_held.txt"))
	if err != nil {
		t.Fatal(err)
	}
	mask := func(out, work, id, run, held string) []showJobField {
		return showJobFields(maskShowJob(out, work, recordIDs(out, id), run, held))
	}
	want := mask(rec.stdout, rec.work, rec.id, rec.run, rec.held)
	ours := strings.NewReplacer("JobId="+rec.id+" ", "JobId=77 ", "slurm-"+rec.id+".out", "slurm-77.out",
		"afterok:"+rec.run+"(", "afterok:5(", rec.work, "/x/y",
		"2026-", "2027-").Replace(rec.stdout)
	if d := diffShowJobFields(want, mask(ours, "/x/y", "77", "5", "4")); d != "" {
		t.Errorf("the same output under other ids differs:\n%s", d)
	}
	for _, change := range [][2]string{
		{"NumNodes=1 ", "NumNodes=1-1 "},
		{"Dependency=afterok:5(unfulfilled)", "Dependency=(null)"},
		{"EligibleTime=Unknown", "EligibleTime=2027-01-01T00:00:00"},
		{"   Power=\n", "   Power=\n   MailUser=root MailType=END\n"},
	} {
		changed := strings.Replace(ours, change[0], change[1], 1)
		if changed == ours {
			t.Fatalf("%q is not in the recording", change[0])
		}
		if d := diffShowJobFields(want, mask(changed, "/x/y", "77", "5", "4")); d == "" {
			t.Errorf("%q for %q: no difference found", change[1], change[0])
		}
	}
}
