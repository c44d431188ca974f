package format

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

func TestParseAcctFields(t *testing.T) {
	tests := []struct {
		name   string
		spec   string
		names  []string
		widths []int
		bad    string
	}{
		{"the default fields", SacctDefault, []string{"JobID", "JobName", "Partition", "Account", "AllocCPUS", "State", "ExitCode"}, []int{-12, 10, 10, 10, 10, 10, 8}, ""},
		{"names match by prefix in any case", "jobid,state%20,nodelist%-256", []string{"JobID", "State", "NodeList"}, []int{-12, 20, -256}, ""},
		{"the first field of a prefix wins", "user,j", []string{"User", "JobID"}, []int{9, -12}, ""},
		{"blanks before a name are skipped, empty items too", " jobidraw,,", []string{"JobIDRaw"}, []int{-12}, ""},
		{"an unknown name is refused", "jobid,bogus", nil, nil, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, bad := ParseAcctFields(tt.spec)
			var names []string
			var widths []int
			for _, c := range cols {
				names, widths = append(names, c.Name()), append(widths, c.Width)
			}
			if tt.bad != "" {
				names, widths = nil, nil
			}
			if diff := cmp.Diff(tt.names, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.widths, widths); diff != "" {
				t.Errorf("widths (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.bad, bad); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
		})
	}
	if cols, _ := ParseAcctFields("a"); len(cols) != len(acctFields) {
		t.Errorf(`"a" is a prefix of ALL: got %d fields, want all %d`, len(cols), len(acctFields))
	}
}

func TestAcctPrinter(t *testing.T) {
	zero := uint32(0)
	start := testNow.Add(-time.Minute)
	rec := &jobrec.Record{Latest: true, Job: jobrec.Job{ID: 26383, ArrayJobID: 26383, ArrayTaskID: 0, Name: "arrenv",
		State: slurm.Cancelled, CancelledBy: &zero, Start: start, End: start.Add(time.Second), Partition: "gpu", Account: "lab"}}
	step := &jobrec.Step{ID: "batch", Name: "batch", State: slurm.Cancelled, ExitCode: jobrec.ExitCode{Signal: 15}, Start: start, End: start.Add(time.Second)}
	env := &Env{Now: testNow}
	cols, _ := ParseAcctFields("jobid,state,exitcode,elapsed,partition")
	tests := []struct {
		name string
		p    AcctPrinter
		want string
	}{
		{
			"fixed widths cut text with a '+', blank for a step's job-only field",
			AcctPrinter{Columns: cols},
			"JobID             State ExitCode    Elapsed  Partition \n------------ ---------- -------- ---------- ---------- \n" +
				"26383_0      CANCELLED+      0:0   00:00:01        gpu \n26383_0.bat+  CANCELLED     0:15   00:00:01            \n",
		},
		{
			"-p ends every value with the delimiter",
			AcctPrinter{Columns: cols, Parsable: true},
			"JobID|State|ExitCode|Elapsed|Partition|\n26383_0|CANCELLED by 0|0:0|00:00:01|gpu|\n26383_0.batch|CANCELLED|0:15|00:00:01||\n",
		},
		{
			"-P with a delimiter leaves the last one off",
			AcctPrinter{Columns: cols, Parsable: true, NoEnding: true, Delimiter: "\x1f"},
			"JobID\x1fState\x1fExitCode\x1fElapsed\x1fPartition\n26383_0\x1fCANCELLED by 0\x1f0:0\x1f00:00:01\x1fgpu\n26383_0.batch\x1fCANCELLED\x1f0:15\x1f00:00:01\x1f\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.Header() + tt.p.Line(&AcctRow{Rec: rec, Units: NoUnits, Env: env}) +
				tt.p.Line(&AcctRow{Rec: rec, Step: step, Units: NoUnits, Env: env})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestElapsedIsInWholeSeconds: Slurm keeps Start and End as time_t, so
// Elapsed is their difference in whole seconds and agrees with the times
// printed beside it, however the sub-second parts fall.
func TestElapsedIsInWholeSeconds(t *testing.T) {
	base := time.Date(2026, 11, 29, 13, 14, 41, 0, time.UTC)
	tests := []struct {
		name       string
		start, end time.Duration // after base
		want       string
	}{
		{"across a second boundary in 0.2 s", 900 * time.Millisecond, 1100 * time.Millisecond, "00:00:01"},
		{"within one second", 100 * time.Millisecond, 900 * time.Millisecond, "00:00:00"},
		{"1.8 s from the start of a second", 0, 1800 * time.Millisecond, "00:00:01"},
	}
	cols, _ := ParseAcctFields("elapsed")
	for _, tt := range tests {
		rec := &jobrec.Record{Latest: true, Job: jobrec.Job{ID: 1, ArrayTaskID: jobrec.NoTask, State: slurm.Completed,
			Start: base.Add(tt.start), End: base.Add(tt.end)}}
		p := AcctPrinter{Columns: cols, Parsable: true, NoEnding: true}
		got := strings.TrimSpace(p.Line(&AcctRow{Rec: rec, Units: NoUnits, Env: &Env{Now: testNow}}))
		if got != tt.want {
			t.Errorf("%s: Elapsed %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestTRESLeavesOutZero: under GPU-only billing weights a job without GPUs
// bills 0, which Slurm's TRES strings leave out (recorded against real
// Slurm by scripts/test-slurm).
func TestTRESLeavesOutZero(t *testing.T) {
	cfg := &config.Config{TRESBillingWeights: config.TRESWeights{"gres/gpu": 1}}
	env := &Env{Now: testNow, View: config.ViewOf(cfg), Node: &cfg.Node}
	start := testNow.Add(-time.Minute)
	rec := &jobrec.Record{Latest: true, Job: jobrec.Job{ID: 5, ArrayTaskID: jobrec.NoTask, State: slurm.Completed,
		Start: start, End: testNow, Request: jobscript.Request{NTasks: 1}}}
	cols, _ := ParseAcctFields("alloctres")
	p := AcctPrinter{Columns: cols, Parsable: true, NoEnding: true}
	if got := strings.TrimSpace(p.Line(&AcctRow{Rec: rec, Units: NoUnits, Env: env})); got != "cpu=1,node=1" {
		t.Errorf("AllocTRES %q, want cpu=1,node=1", got)
	}
	j := &api.Job{Job: rec.Job}
	if got := tres(j, env.View); strings.Contains(got, "billing") {
		t.Errorf("scontrol's TRES %q shows a billing of 0", got)
	}
}

// The batch step's peak memory is a step's usage, as sacct prints it
// (convert_num_unit of bytes, from no unit): MaxRSS, its node, its task
// (the batch step's one task, 0) and the average over its tasks (the one
// task's peak). The job's line has them empty, as has a step with no
// recorded peak (one that ended before Slurm's first sample).
func TestMaxRSSIsTheBatchStepsPeak(t *testing.T) {
	start := testNow.Add(-time.Minute)
	rec := &jobrec.Record{Latest: true, Job: jobrec.Job{ID: 7, ArrayTaskID: jobrec.NoTask, State: slurm.Completed,
		Start: start, End: testNow, Alloc: jobrec.Alloc{Node: "gpu01"}}}
	batch := &jobrec.Step{ID: "batch", Name: "batch", State: slurm.Completed, Start: start, End: testNow, NTasks: 1,
		MaxRSS: 80912384} // 79016 KiB
	unsampled := &jobrec.Step{ID: "0", Name: "true", State: slurm.Completed, Start: start, End: testNow, NTasks: 1}
	cols, _ := ParseAcctFields("jobid,maxrss,maxrssnode,maxrsstask,averss")
	tests := []struct {
		name      string
		units     int
		noConvert bool
		want      string
	}{
		{"as Slurm converts: KiB while whole", NoUnits, false, "7|||||\n7.batch|79016K|gpu01|0|79016K|\n7.0|||||\n"},
		{"--noconvert: bytes", NoUnits, true, "7|||||\n7.batch|80912384|gpu01|0|80912384|\n7.0|||||\n"},
		{"--units=M", unitMega, false, "7|||||\n7.batch|77.16M|gpu01|0|77.16M|\n7.0|||||\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := AcctPrinter{Columns: cols, Parsable: true}
			var got string
			for _, s := range []*jobrec.Step{nil, batch, unsampled} {
				got += p.Line(&AcctRow{Rec: rec, Step: s, Units: tt.units, NoConvert: tt.noConvert, Env: &Env{Now: testNow}})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
