package sreport

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recorded is the workload scripts/record-sreport ran on real Slurm, at
// the times it moved the jobs to (UTC), and the golden cluster.
func recorded() (Cluster, []Job) {
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }
	elig := at(9, 50)
	jobs := []Job{
		{ID: 1, User: "alice", Account: "lab", Eligible: elig, Start: at(10, 0), End: at(12, 0), CPUs: 2, MemMB: 2000, GPUs: 2, Billing: 2},
		{ID: 2, User: "alice", Account: "vision", Eligible: elig, Start: at(10, 0), End: at(11, 30), CPUs: 1, MemMB: 1000, GPUs: 1, Billing: 1},
		{ID: 3, User: "bob", Account: "lab", Eligible: elig, Start: at(11, 0), End: at(14, 0), CPUs: 4, MemMB: 1000, GPUs: 1, Billing: 4},
		{ID: 4, User: "bob", Account: "vision", Eligible: elig, Start: at(13, 0), End: at(13, 45), CPUs: 8, MemMB: 1000, Billing: 8},
		{ID: 5, User: "bob", Account: "lab", Eligible: elig, Start: at(15, 0), End: at(15, 20), CPUs: 4, MemMB: 1000, GPUs: 4, Billing: 4},
		{ID: 6, User: "bob", Account: "lab", Eligible: at(21, 0), Start: at(22, 0), CPUs: 4, MemMB: 1000, GPUs: 4, Billing: 4},
	}
	for i := range jobs {
		jobs[i].ReqCPUs = jobs[i].CPUs
	}
	return Cluster{Name: "anchor", CPUs: 16, MemMB: 64000, GPUs: 4, Billing: 16}, jobs
}

// recordedNow is when the recordings were made (the default window is the
// day before).
var recordedNow = time.Date(2026, 12, 7, 3, 10, 0, 0, time.UTC)

type golden struct {
	args           []string
	stdout, stderr string
	code           int
}

func readGolden(t *testing.T, path string) golden {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	first, rest, _ := strings.Cut(s, "\n")
	out, rest, _ := strings.Cut(strings.TrimPrefix(rest, "--- stdout ---\n"), "--- stderr ---\n")
	errText, rest, _ := strings.Cut(rest, "--- exit code: ")
	code, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " ---"))
	// "$ sreport ARGS", or "$ su alice -c 'SLURM_CONF=... sreport ARGS'".
	cmdline := first[strings.LastIndex(first, " sreport")+len(" sreport"):]
	args := strings.Fields(strings.TrimSuffix(cmdline, "'"))
	return golden{args: args, stdout: out, stderr: errText, code: code}
}

// run is sreport over the recorded workload.
func run(args []string, now time.Time) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	o, code, done := Parse(args, now, &errb, &out)
	if done {
		return out.String(), errb.String(), code
	}
	c, jobs := recorded()
	out.WriteString(Print(o, Compute(c, jobs, o.Start, o.End, now)))
	return out.String(), errb.String(), 0
}

// TestGolden prints every report real Slurm 22.05 printed for the same
// jobs (testdata/golden/sreport_*.txt) and compares byte for byte. The
// sreport_private_* files were alice's and bob's under slurmdbd's
// PrivateData=usage, which 22.05's sreport does not obey (its reports read
// association usage through a path the check is not on): they show
// everyone, as root's do, and slurm-lite's computation prints the same;
// the daemon's viewer, which does hide other users' usage, is tested in
// sreport_usage.txtar.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/golden/sreport_*.txt")
	if len(files) < 20 {
		t.Fatalf("only %d golden files", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			g := readGolden(t, f)
			out, errText, code := run(g.args, recordedNow)
			// The recording keeps what $(...) keeps: no trailing blank lines.
			out, errText = asRecorded(out), asRecorded(errText)
			if diff := cmp.Diff(g.stdout, out); diff != "" {
				t.Errorf("sreport %s stdout (-want +got):\n%s", strings.Join(g.args, " "), diff)
			}
			if diff := cmp.Diff(g.stderr, errText); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if code != g.code {
				t.Errorf("exit %d, want %d", code, g.code)
			}
		})
	}
}

func asRecorded(s string) string {
	if s = strings.TrimRight(s, "\n"); s != "" {
		s += "\n"
	}
	return s
}
