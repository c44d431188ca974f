package scrontab

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

func TestParseCrontab(t *testing.T) {
	text := `# comment
D=/data
  #SCRON --time=5 -J named
#SCRON --gpus=1
*/5 * * * * $D/run.sh $D
	
@daily /bin/date
`
	es, err := parseCrontab(text, now)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Spec, Command, Name, Path string
		Start, End                int
		LoginEnv                  bool
	}
	var gs []got
	for _, e := range es {
		gs = append(gs, got{e.spec, e.command, e.req.JobName, e.req.ScriptPath, e.start, e.end, e.req.GetUserEnv != nil})
	}
	want := []got{
		// The first $D only, as Slurm's xstrsubstitute.
		{"*/5 * * * *", "/data/run.sh $D", "named", "/data/run.sh $D", 3, 5, true},
		{"@daily", "/bin/date", "/bin/date", "/bin/date", 7, 7, true},
	}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if es[0].req.TimeLimit.Duration() != 5*time.Minute || len(es[0].req.GPUs) != 1 {
		t.Errorf("the #SCRON options were not applied: %+v", es[0].req)
	}
	wantScript := "#!/bin/sh\n# This job was submitted through scrontab\n  #SCRON --time=5 -J named\n#SCRON --gpus=1\n# crontab time request was: '*/5 * * * *'\n/data/run.sh $D\n"
	if diff := cmp.Diff(wantScript, es[0].req.Script); diff != "" {
		t.Errorf("script (-want +got):\n%s", diff)
	}
	if es[1].req.TimeLimit != 0 {
		t.Errorf("options leaked into the next entry: %+v", es[1].req.TimeLimit)
	}
}

func TestParseCrontabRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, text, line string
		slurm            []string
	}{
		{"a bad step names its line", "# x\n\n*/1 * * * * x\n", "3", []string{"bad step value", "something is broken"}},
		{"a word that is no entry", "hello world\n", "1", []string{"something is broken"}},
		{"an option sbatch does not know", "#SCRON --bogus\n* * * * * x\n", "1", []string{"Invalid option found in #SCRON line: --bogus"}},
		{"an operand", "#SCRON foo\n* * * * * x\n", "1", []string{"Invalid option found in #SCRON line: foo"}},
		{"an option scrontab would not obey", "\n#SCRON --begin=now+1hour\n* * * * * x\n", "2", []string{"Invalid option found in #SCRON line: --begin"}},
		{"options that do not agree name the entry's lines", "#SCRON --mem=1G\n#SCRON --mem-per-cpu=1G\n* * * * * x\n", "1-3", []string{"something is broken"}},
		{"a variable name with an underscore is no variable in Slurm", "MY_DIR=/x\n", "1", []string{"something is broken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCrontab(tc.text, now)
			var le *lineError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a line error", err)
			}
			if le.line != tc.line {
				t.Errorf("line %q, want %q (%v)", le.line, tc.line, err)
			}
			if diff := cmp.Diff(tc.slurm, le.slurm); diff != "" {
				t.Errorf("Slurm's lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadEnv(t *testing.T) {
	for _, tc := range []struct {
		line, name, value string
		ok                bool
	}{
		{"A=b c", "A", "b c", true},
		{"A = 'b c'  ", "A", "b c", true},
		{`A="b"`, "A", "b", true},
		{`A="b" x`, "", "", false},
		{"A=", "", "", false},
		{"0 0 * * * x", "", "", false},
		{"A_B=1", "", "", false},
	} {
		n, v, ok := loadEnv(tc.line)
		if n != tc.name || v != tc.value || ok != tc.ok {
			t.Errorf("loadEnv(%q) = %q, %q, %v; want %q, %q, %v", tc.line, n, v, ok, tc.name, tc.value, tc.ok)
		}
	}
}

func TestMarkLines(t *testing.T) {
	got := markLines("a\nb\nc\n", lineRange("2-3"), "#DISABLED: ")
	if want := "a\n#DISABLED: b\n#DISABLED: c\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestExample: the example crontab installs (each entry a job).
func TestExample(t *testing.T) {
	b, err := os.ReadFile("../../examples/nightly.scrontab")
	if err != nil {
		t.Fatal(err)
	}
	es, err := parseCrontab(string(b), now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.req.JobName)
	}
	if diff := cmp.Diff([]string{"nightly-eval", "refresh", "find"}, names); diff != "" {
		t.Errorf("job names (-want +got):\n%s", diff)
	}
	if !strings.Contains(es[1].command, "/data/corpus") {
		t.Errorf("$DATA not expanded: %q", es[1].command)
	}
}
