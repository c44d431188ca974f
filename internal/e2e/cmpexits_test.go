package e2e

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
)

func init() { e2eCmds["cmpexits"] = cmdCmpExits }

// cmpexits GOT WANT: cmp, except under make test-stress (SLITE_STRESS),
// where srun's task exit lines are compared task by task: "tasks 0-1:
// Killed" and "task 0: Killed" then "task 1: Killed" are the same ends.
// srun reports together the exits that come together, as slurmstepd does
// with those one waitpid loop reaps; tasks that end at the same moment on
// an idle machine (two `kill -9 $$`) may end apart while a busy loop holds
// every core, and so would Slurm's. Everything else must match exactly.
func cmdCmpExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpexits GOT WANT")
	}
	got, want := ts.ReadFile(args[0]), ts.ReadFile(args[1])
	if os.Getenv("SLITE_STRESS") != "" {
		got, want = taskByTask(got), taskByTask(want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		ts.Fatalf("%s and %s differ (-want +got):\n%s", args[0], args[1], diff)
	}
}

var exitLine = regexp.MustCompile(`^(srun: error: [^:]+: )tasks? ([0-9,-]+): (.*)$`)

// taskByTask writes each of srun's grouped exit lines as one line a task.
func taskByTask(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		m := exitLine.FindStringSubmatch(l)
		if m == nil {
			out = append(out, l)
			continue
		}
		for _, r := range strings.Split(m[2], ",") {
			lo, hi, _ := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if hi == "" {
				b, err2 = a, nil
			}
			if err1 != nil || err2 != nil {
				out = append(out, l)
				break
			}
			for t := a; t <= b; t++ {
				out = append(out, m[1]+"task "+strconv.Itoa(t)+": "+m[3])
			}
		}
	}
	return strings.Join(out, "\n")
}

func TestTaskByTask(t *testing.T) {
	grouped := "x\nsrun: error: gpu01: tasks 0-1,3: Killed\nsrun: Force Terminated StepId=8.2\n"
	apart := "x\nsrun: error: gpu01: task 0: Killed\nsrun: error: gpu01: task 1: Killed\nsrun: error: gpu01: task 3: Killed\nsrun: Force Terminated StepId=8.2\n"
	if got, want := taskByTask(grouped), taskByTask(apart); got != want || got != apart {
		t.Errorf("taskByTask:\n%s\nand\n%s\nwant both\n%s", got, want, apart)
	}
}
