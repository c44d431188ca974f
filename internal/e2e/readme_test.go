package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// The README's first hour is pasted by new users, so its "reserve and
// budget" lines must be the ones testdata/script/readme_budget.txtar runs
// (issue 25): the reservation commands, the budget appended to the file
// (budget.sh there) and the sshare -l line. A change to either side
// without the other fails here.
func TestREADMEReserveAndBudget(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	a, err := txtar.ParseFile("testdata/script/readme_budget.txtar")
	if err != nil {
		t.Fatal(err)
	}
	// The README's code lines, without their trailing comments.
	var have []string
	for _, l := range strings.Split(string(readme), "\n") {
		if i := strings.Index(l, "   #"); i >= 0 {
			l = l[:i]
		}
		have = append(have, strings.TrimRight(l, " \\"))
	}
	body := strings.Join(have, "\n")
	var want []string
	for _, f := range a.Files {
		if f.Name == "budget.sh" {
			want = append(want, strings.Split(strings.TrimSpace(string(f.Data)), "\n")...)
		}
	}
	if len(want) == 0 {
		t.Fatal("readme_budget.txtar has no budget.sh")
	}
	want = append(want,
		"scontrol create reservation ReservationName=evening StartTime=18:00 Duration=4:00:00",
		"    Users=$USER TRES=gres/gpu=1 Flags=DAILY",
		"sinfo -T",
		"sbatch --reservation=evening -t 3:00:00 examples/hello.slurm",
		"kill -HUP %1",
		"sshare -l -o Account,User,GrpTRESMins,GrpTRESRaw%80")
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("README.md's first hour lacks the line %q that readme_budget.txtar runs", w)
		}
	}
	script := string(a.Comment)
	for _, w := range []string{
		"exec scontrol create reservation ReservationName=evening StartTime=18:00 Duration=4:00:00 Users=$USER TRES=gres/gpu=1 Flags=DAILY\n",
		"exec sinfo -T\n",
		"exec sbatch --reservation=evening -t 3:00:00 $EXAMPLES/hello.slurm\n",
		"exec sshare -l -o Account,User,GrpTRESMins,GrpTRESRaw%80\n",
	} {
		if !strings.Contains(script, w) {
			t.Errorf("readme_budget.txtar no longer runs %q", strings.TrimSpace(w))
		}
	}
}
