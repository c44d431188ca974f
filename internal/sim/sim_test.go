package sim

import (
	"bytes"
	"context"
	"fmt"
	"github.com/alecthomas/kong"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const header = "job_id,submit_s,account,num_gpus,duration_s,time_limit_s\n"

func trace(t *testing.T, rows string) *Trace {
	t.Helper()
	tr, err := ReadTrace("tiny.csv", strings.NewReader(header+rows))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func options(nodes, gpn int) Options {
	return Options{Lab: Lab{Nodes: nodes, GPUsPerNode: gpn, GPUMem: 80 << 30}, Setup: DefaultSetup(),
		Assumptions: DefaultAssumptions(), Speedup: LinearSpeedup(gpn)}
}

func policy(t *testing.T, name string) Policy {
	t.Helper()
	ps, err := LookupPolicies(name)
	if err != nil {
		t.Fatal(err)
	}
	return ps[0]
}

// times is what the tests compare of an outcome: submit, first start, end.
type times struct{ Submit, Start, End int64 }

func TestSimulateTinyTraces(t *testing.T) {
	// j0 holds 1 of 2 GPUs with a 30-minute limit; j1 needs both; j2 needs
	// one for under a minute. FIFO makes j2 wait behind j1; backfill starts
	// it at once, since it ends long before j1's reservation (j0's limit).
	backfill := "0,0,a,1,100,1800\n1,10,b,2,100,1800\n2,20,a,1,50,60\n"
	tests := []struct {
		name   string
		rows   string
		policy string
		nodes  int
		gpn    int
		want   []times
	}{
		{"FIFO: nothing passes a blocked job", backfill, "P0", 1, 2,
			[]times{{0, 0, 100}, {10, 100, 200}, {20, 200, 250}}},
		{"backfill: a short job starts beside the blocked one", backfill, "P1", 1, 2,
			[]times{{0, 0, 100}, {10, 100, 200}, {20, 20, 70}}},
		{"a job larger than a node takes two whole nodes", "0,0,a,4,100,1800\n1,0,b,1,10,60\n", "P1", 2, 2,
			[]times{{0, 0, 100}, {0, 100, 110}}},
		{"a job ends at its time limit, not its runtime", "0,0,a,1,100,60\n", "P2", 1, 1,
			[]times{{0, 0, 60}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Simulate(trace(t, tc.rows), policy(t, tc.policy), options(tc.nodes, tc.gpn))
			if err != nil {
				t.Fatal(err)
			}
			var got []times
			for _, o := range r.Outcomes {
				got = append(got, times{o.Submit, o.FirstStart, o.End})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimeoutIsCounted(t *testing.T) {
	r, err := Simulate(trace(t, "0,0,a,1,100,60\n"), policy(t, "P2"), options(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if o := r.Outcomes[0]; !o.TimedOut || o.Runtime != 60 {
		t.Errorf("outcome %+v: want TimedOut with Runtime 60", o)
	}
}

// TestFillerPreemption: a filler starts on the idle GPU at 10 and is
// preempted at 1000 for j1: it ran 990 s, its last checkpoint was at 600 s,
// so 390 s of work plus the 60 s stop are lost; j1 starts when the stop
// ends, at 1060.
func TestFillerPreemption(t *testing.T) {
	r, err := Simulate(trace(t, "0,0,a,1,10,60\n1,1000,b,1,100,1800\n"), policy(t, "P3"), options(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	got := times{r.Outcomes[1].Submit, r.Outcomes[1].FirstStart, r.Outcomes[1].End}
	if diff := cmp.Diff(times{1000, 1060, 1160}, got); diff != "" {
		t.Errorf("j1 (-want +got):\n%s", diff)
	}
	if r.Preemptions != 1 || r.FillerLostGPUSeconds != 450 || r.FillerGPUSeconds != 1050 {
		t.Errorf("preemptions %d, filler lost %v GPU-s, filler held %v GPU-s; want 1, 450, 1050",
			r.Preemptions, r.FillerLostGPUSeconds, r.FillerGPUSeconds)
	}
}

// TestShrink: j0 holds all 4 GPUs when j1 (another account, so of higher
// fair-share priority) arrives at 1000. P4 shrinks j0 to 3 GPUs: its work
// up to the checkpoint at 600 s is kept, 400 s × 4 GPUs plus the stop are
// lost. At 1060 both start; j0 restarts for 60 s, then does the remaining
// 3000 s of 4-GPU work at 3/4 of the speed (linear model): it ends at
// 1060 + 60 + 4000.
func TestShrink(t *testing.T) {
	r, err := Simulate(trace(t, "0,0,a,4,3600,7200\n1,1000,b,1,100,1800\n"), policy(t, "P4"), options(1, 4))
	if err != nil {
		t.Fatal(err)
	}
	var got []times
	for _, o := range r.Outcomes {
		got = append(got, times{o.Submit, o.FirstStart, o.End})
	}
	if diff := cmp.Diff([]times{{0, 0, 5120}, {1000, 1060, 1160}}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	o := r.Outcomes[0]
	if o.Shrinks != 1 || o.LostGPUSeconds != (400+60)*4 || o.GPUSeconds != 4*1060+3*4060 {
		t.Errorf("j0: %d shrinks, %v GPU-s lost, %v held; want 1, %d, %d", o.Shrinks, o.LostGPUSeconds, o.GPUSeconds, (400+60)*4, 4*1060+3*4060)
	}
}

// TestYieldShortJob: j0 holds both GPUs for 5 h of its 10 h limit when
// j1 (30-minute limit, so P4's short partition) arrives at 600. Shrinking
// j0 to 1 GPU would cost it its 35,400 s left, no less than j1's wait for
// it (also 35,400 s): no shrink. Stopping it costs j1's limit plus 12
// minutes, far less: j0 yields (its checkpoint at 600 s keeps all its
// work, only the 60 s stop × 2 GPUs is lost). At 660 j1 starts, and a
// filler on the other GPU, which ends by its limit at 2460 when j0's
// reservation begins. j1 ends at 1260; j0 preempts the filler and
// restarts at 1320, makes progress from 1380 and ends at 1380 + 17,400.
// Under P3 (no yield, no short route) j1 waits for j0's end at 18,000.
func TestYieldShortJob(t *testing.T) {
	rows := "0,0,a,2,18000,36000\n1,600,b,1,600,1800\n"
	for _, tc := range []struct {
		policy string
		want   []times
		stops  int
	}{
		{"P3", []times{{0, 0, 18000}, {600, 18000, 18600}}, 0},
		{"P4", []times{{0, 0, 18780}, {600, 660, 1260}}, 1},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			r, err := Simulate(trace(t, rows), policy(t, tc.policy), options(1, 2))
			if err != nil {
				t.Fatal(err)
			}
			var got []times
			for _, o := range r.Outcomes {
				got = append(got, times{o.Submit, o.FirstStart, o.End})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
			if o := r.Outcomes[0]; o.Stops != tc.stops || o.Shrinks != 0 || o.LostGPUSeconds != float64(tc.stops*60*2) {
				t.Errorf("j0: %d stops, %d shrinks, %v GPU-s lost; want %d, 0, %d", o.Stops, o.Shrinks, o.LostGPUSeconds, tc.stops, tc.stops*120)
			}
		})
	}
}

const subset = "../../testdata/traces/lab64_jobs100-399.csv"

// runMain reads args as slurmd-lite's command line does (kong) and runs
// the simulator.
func runMain(t *testing.T, args ...string) string {
	t.Helper()
	var f Flags
	p, err := kong.New(&f, kong.Vars{"profiles": ProfilesDefault})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse(args); err != nil {
		t.Fatalf("simulate %v: %v", args, err)
	}
	var out, errb bytes.Buffer
	if rc := Command(f, &out, &errb, nil); rc != 0 {
		t.Fatalf("simulate %v: exit %d: %s", args, rc, errb.String())
	}
	return out.String()
}

func TestDeterministic(t *testing.T) {
	for _, format := range []string{"--json", "--no-wall"} {
		args := []string{"--trace", subset, "--nodes", "8", "--gpus-per-node", "8", "--policy", "P1,P4", "--no-wall", "--profiles", "none", format}
		a, b := runMain(t, args...), runMain(t, args...)
		if a != b {
			t.Errorf("two runs with %s differ:\n%s\n---\n%s", format, a, b)
		}
	}
}

func TestSubsetAllPolicies(t *testing.T) {
	tr, err := ReadTraceFile(subset)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Metrics{}
	for _, p := range Policies {
		r, err := Simulate(tr, p, options(8, 8))
		if err != nil {
			t.Fatal(err)
		}
		m := Summarize(r)
		if m.Jobs != len(tr.Jobs) || m.Unfinished != 0 {
			t.Errorf("%s: %d jobs finished, %d unfinished; want all %d", p.Name, m.Jobs, m.Unfinished, len(tr.Jobs))
		}
		if m.UtilWindow > 1+1e-9 || m.FairGap < 0 || m.FairGap > 1 {
			t.Errorf("%s: utilisation %v, fair gap %v out of range", p.Name, m.UtilWindow, m.FairGap)
		}
		got[p.Name] = m
	}
	if p0, p1 := got["P0"], got["P1"]; p1.AvgWait > p0.AvgWait {
		t.Errorf("backfill made the average wait longer: P1 %v s, P0 %v s", p1.AvgWait, p0.AvgWait)
	}
	if p2, p3 := got["P2"], got["P3"]; p3.UtilWindow < p2.UtilWindow {
		t.Errorf("fillers lowered utilisation: P3 %v, P2 %v", p3.UtilWindow, p2.UtilWindow)
	}
	for _, name := range []string{"P0", "P1", "P2", "P2-classic"} {
		if m := got[name]; m.Preemptions != 0 || m.FillerGPUHours != 0 {
			t.Errorf("%s preempted %d jobs and ran %v filler GPU-hours; it has no fillers", name, m.Preemptions, m.FillerGPUHours)
		}
	}
}

func TestReadSacct(t *testing.T) {
	tr, err := ReadTraceFile("../../testdata/traces/sacct_small.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceJob{
		{Name: "101", Line: 2, Submit: 0, Account: "vision", User: "alice", GPUs: 2, Duration: 7200, TimeLimit: 4 * 3600},
		{Name: "102", Line: 4, Submit: 600, Account: "nlp", User: "bob", GPUs: 1, Duration: 1800, TimeLimit: 3600},
		{Name: "105", Line: 7, Submit: 3600, Account: "vision", User: "carol", GPUs: 4, Duration: 86400, TimeLimit: 86400},
	}
	if diff := cmp.Diff(want, tr.Jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	// The step, the job without GPUs and the job that never started.
	if tr.Format != "sacct" || tr.Skipped != 3 {
		t.Errorf("format %q, %d skipped; want sacct, 3", tr.Format, tr.Skipped)
	}
	wantSkips := []Skip{{3, "101.batch", SkipStep}, {5, "103", SkipNoGPUs}, {6, "104", SkipNotStarted}}
	if diff := cmp.Diff(wantSkips, tr.Skips); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}
	var b strings.Builder
	WriteSkips(&b, tr)
	wantText := "skipped: 1 a step (its job's own row counts); 1 held no GPU; 1 never started (no Start time)\n" +
		"  line 3: job 101.batch: a step (its job's own row counts)\n" +
		"  line 5: job 103: held no GPU\n" +
		"  line 6: job 104: never started (no Start time)\n"
	if b.String() != wantText {
		t.Errorf("WriteSkips:\n%s\nwant:\n%s", b.String(), wantText)
	}
}

// Past the first few skipped rows, WriteSkips counts the rest.
func TestWriteSkipsMany(t *testing.T) {
	text := "JobID|Submit|Start|End|Elapsed|User|AllocTRES\n"
	for i := range 8 {
		text += fmt.Sprintf("%d|2026-11-02T09:00:00|2026-11-02T09:00:00|2026-11-02T09:01:00|00:01:00|alice|gres/gpu=%d\n", i+1, i%2)
		text += fmt.Sprintf("%d.0|2026-11-02T09:00:00|2026-11-02T09:00:00|2026-11-02T09:01:00|00:01:00||gres/gpu=1\n", i+1)
	}
	tr, err := ReadTrace("t.txt", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteSkips(&b, tr)
	want := "skipped: 4 held no GPU; 8 a step (its job's own row counts)\n" +
		"  line 2: job 1: held no GPU\n" +
		"  line 3: job 1.0: a step (its job's own row counts)\n" +
		"  line 5: job 2.0: a step (its job's own row counts)\n" +
		"  line 6: job 3: held no GPU\n" +
		"  line 7: job 3.0: a step (its job's own row counts)\n" +
		"  (and 7 more)\n"
	if b.String() != want {
		t.Errorf("WriteSkips:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTraceErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"empty file", "", "t.csv: empty trace"},
		{"unknown header", "hello\n", "t.csv:1: unknown trace format"},
		{"missing column", "job_id,submit_s,account,num_gpus,duration_s\n", `t.csv:1: the CSV header has no column "time_limit_s"`},
		{"bad GPU count", header + "0,0,a,1,10,60\n1,5,a,two,10,60\n", `t.csv:3: num_gpus "two" is not a whole number`},
		{"short row", header + "0,0,a\n", "t.csv:2: 3 fields, the header has 6"},
		{"sacct without runtimes", "JobID|Submit|AllocTRES\n", "has neither Elapsed nor Start and End"},
		{"sacct bad time", "JobID|Submit|Elapsed|AllocTRES\n1|yesterday|00:01:00|gres/gpu=1\n", `t.csv:2: Submit "yesterday" is not a time`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace("t.csv", strings.NewReader(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestJobTooLargeForLab(t *testing.T) {
	_, err := Simulate(trace(t, "0,0,a,1,10,60\n7,5,a,16,10,60\n"), policy(t, "P2"), options(1, 8))
	if err == nil || !strings.Contains(err.Error(), "tiny.csv:3: job 7 asks for 16 GPUs, the simulated lab has 8") {
		t.Errorf("error %v, want one naming tiny.csv:3 and the lab's size", err)
	}
}

func TestUsageErrors(t *testing.T) {
	var out, errb bytes.Buffer
	f := Flags{Trace: subset, Nodes: 1, GPUsPerNode: 8, GPUMem: "80G", Policy: "P9"}
	if rc := Command(f, &out, &errb, nil); rc != 1 || !strings.Contains(errb.String(), `unknown policy "P9"`) {
		t.Errorf("bad policy: exit %d, stderr %q", rc, errb.String())
	}
	errb.Reset()
	f = Flags{Nodes: 1, GPUsPerNode: 8, GPUMem: "80G", Policy: "P2"}
	if rc := Command(f, &out, &errb, nil); rc != 1 || !strings.Contains(errb.String(), "no trace: give one with --trace FILE") {
		t.Errorf("no trace: exit %d, stderr %q", rc, errb.String())
	}
	errb.Reset()
	f = Flags{Trace: subset, Nodes: 1, GPUsPerNode: 8, GPUMem: "80G", Policy: "P2", Keep: "kept"}
	if rc := Command(f, &out, &errb, nil); rc != 1 || !strings.Contains(errb.String(), "--keep keeps a live replay's daemon directory: give it with --live") {
		t.Errorf("--keep without --live: exit %d, stderr %q", rc, errb.String())
	}
}

// TestLiveKeepsADirectoryPerPolicy: simulate --live --keep DIR gives each
// policy's replay its own DIR/POLICY, and the scale.
func TestLiveKeepsADirectoryPerPolicy(t *testing.T) {
	var got []LiveOptions
	live := func(_ context.Context, tr *Trace, pol Policy, opt Options, lo LiveOptions) (*Run, error) {
		lo.Progress = nil
		got = append(got, lo)
		return Simulate(tr, pol, opt)
	}
	var out, errb bytes.Buffer
	f := Flags{Trace: subset, Nodes: 4, GPUsPerNode: 8, GPUMem: "80G", Policy: "P0,P2", Live: true, Scale: 0.5, Keep: "kept", Profiles: "none"}
	if rc := Command(f, &out, &errb, live); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errb.String())
	}
	want := []LiveOptions{{Scale: 0.5, Keep: filepath.Join("kept", "P0")}, {Scale: 0.5, Keep: filepath.Join("kept", "P2")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("live options (-want +got):\n%s", diff)
	}
}

// lab64 is a benchmark trace, shipped in testdata/traces.
func lab64(tb testing.TB, name string) *Trace {
	path := filepath.Join("..", "..", "testdata", "traces", name)
	tr, err := ReadTraceFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

func benchSimulate(b *testing.B, file string, nodes int, pol string) {
	tr := lab64(b, file)
	ps, err := LookupPolicies(pol)
	if err != nil {
		b.Fatal(err)
	}
	p := ps[0]
	opt := options(nodes, 8)
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		if _, err := Simulate(tr, p, opt); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(began).Seconds(), "s/trace")
	}
}

func BenchmarkSimulateLab64P2(b *testing.B) {
	benchSimulate(b, "lab64_philly_2017-11-20_14d.csv", 8, "P2")
}
func BenchmarkSimulateLab64P4(b *testing.B) {
	benchSimulate(b, "lab64_philly_2017-11-20_14d.csv", 8, "P4")
}
func BenchmarkSimulateNode8P2(b *testing.B) {
	benchSimulate(b, "node8_philly_2017-11-20_14d.csv", 1, "P2")
}

// TestOnlyP4Yields: the yield settings and the short route are P4's
// alone, so P0-P3 replay as they did before them.
func TestOnlyP4Yields(t *testing.T) {
	tr := trace(t, "0,0,a,2,100,1800\n")
	type setting struct {
		YieldPayback, YieldOwn, ShrinkRegrow bool
		YieldCost, YieldMinRun               time.Duration
		Partitions                           []string
	}
	for _, pol := range Policies {
		w := buildWorld(Lab{Nodes: 1, GPUsPerNode: 2}, DefaultSetup(), pol, tr, DefaultAssumptions())
		got := setting{YieldPayback: w.cfg.YieldPayback, YieldOwn: w.cfg.YieldOwn, ShrinkRegrow: w.cfg.ShrinkRegrow, YieldCost: w.cfg.YieldCost, YieldMinRun: w.cfg.YieldMinRun}
		for _, p := range w.partitions {
			got.Partitions = append(got.Partitions, p.Name)
		}
		want := setting{Partitions: []string{"gpu"}}
		switch pol.Name {
		case "P3":
			want.Partitions = []string{"gpu", "filler"}
		case "P4":
			want = setting{true, true, true, 12 * time.Minute, 11 * time.Minute, []string{"gpu", "short", "filler"}}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", pol.Name, diff)
		}
	}
}
