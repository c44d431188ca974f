package sim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the assumptions, one row of metrics per policy and the
// per-account averages.
func WriteTable(w io.Writer, tr *Trace, opt Options, pols []Policy, ms []Metrics, wall bool) {
	fmt.Fprintf(w, "trace: %s (%s, %d jobs", tr.File, tr.Format, len(tr.Jobs))
	if tr.Skipped > 0 {
		fmt.Fprintf(w, ", %d rows skipped", tr.Skipped)
	}
	fmt.Fprintf(w, "); lab: %d node(s) × %d GPUs\n", opt.Lab.Nodes, opt.Lab.GPUsPerNode)
	WriteSkips(w, tr)
	for _, line := range AssumptionLines(opt) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintln(w, "policies:")
	for _, p := range pols {
		fmt.Fprintf(w, "  %-10s %s\n", p.Name, p.Description)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := []string{"POLICY", "JOBS", "AVG_JCT", "MED_JCT", "P99_JCT", "AVG_WAIT", "P99_WAIT", "P99_WAIT<=1h",
		"AVG_BSLD", "MAKESPAN", "UTIL", "FAIR_GAP", "GPU_H", "FILLER_GPU_H", "PREEMPT", "SHRINK", "LOST_GPU_H", "LOST%"}
	if wall {
		cols = append(cols, "WALL_S")
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, m := range ms {
		row := []string{m.Policy, fmt.Sprint(m.Jobs), dur(m.AvgJCT), dur(m.MedianJCT), dur(m.P99JCT),
			dur(m.AvgWait), dur(m.P99Wait), dur(m.P99WaitShort), fmt.Sprintf("%.2f", m.AvgBSld), dur(m.Makespan),
			fmt.Sprintf("%.3f", m.UtilWindow), fmt.Sprintf("%.3f", m.FairGap), fmt.Sprintf("%.0f", m.GPUHours),
			fmt.Sprintf("%.0f", m.FillerGPUHours), fmt.Sprint(m.Preemptions), fmt.Sprint(m.Shrinks),
			fmt.Sprintf("%.1f", m.LostGPUHours), fmt.Sprintf("%.2f", 100*m.LostFrac)}
		if wall {
			row = append(row, fmt.Sprintf("%.2f", m.WallS))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	for _, m := range ms {
		if m.Unfinished > 0 || m.TimedOut > 0 {
			fmt.Fprintf(w, "%s: %d job(s) never started, %d reached their time limit (TIMEOUT)\n", m.Policy, m.Unfinished, m.TimedOut)
		}
	}
	fmt.Fprintln(w, "\nper account: average completion / average wait")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"ACCOUNT", "JOBS"}
	for _, m := range ms {
		head = append(head, m.Policy)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	if len(ms) > 0 {
		for i, a := range ms[0].Accounts {
			row := []string{a.Account, fmt.Sprint(a.Jobs)}
			for _, m := range ms {
				row = append(row, dur(m.Accounts[i].AvgJCT)+" / "+dur(m.Accounts[i].AvgWait))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	tw.Flush()
}

// WriteOutcomes writes one CSV row per trace job of a run.
func WriteOutcomes(w io.Writer, tr *Trace, r *Run) {
	for i, o := range r.Outcomes {
		fmt.Fprintf(w, "%s,%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%t\n", r.Policy.Name, tr.Jobs[i].Name, o.Account, o.GPUs,
			o.Submit, o.FirstStart, o.End, o.Runtime, o.FirstStart-o.Submit, o.End-o.Submit, o.Stops, o.Shrinks, o.TimedOut)
	}
}

// AssumptionLines state the model, for the output and the docs.
func AssumptionLines(opt Options) []string {
	a := opt.Assumptions
	return []string{
		"assumptions: jobs end at their trace runtime, capped at their time limit (TIMEOUT); the scheduler sees only time limits;",
		fmt.Sprintf("  preemption and yield: checkpoint every %s (work since the last one is lost), %s to stop, %s to restart; every multi-GPU job yieldable (P4);",
			short(a.Checkpoint), short(a.Stop), short(a.Restart)),
		"  P4 routes every job whose time limit is at most 1h to partition short (PriorityTier 2, above the main partition's 1): its jobs go first and may yield main-partition jobs;",
		fmt.Sprintf("  P4's yield payback counts %s per stopped job (stop + restart + checkpoint interval) on top of the waiting job's time limit;", short(a.Stop+a.Restart+a.Checkpoint)),
		fmt.Sprintf("  fillers (P3, P4): 1-GPU jobs of %s in a PriorityTier 0 REQUEUE partition, usage factor 0, as many pending as GPUs are idle;", short(a.FillerLimit)),
		fmt.Sprintf("  a shrunk job keeps its per-GPU batch and slows down by the speedup model: %s;", opt.Speedup.Source),
		fmt.Sprintf("  speedup on 1..%d GPUs: %s", len(opt.Speedup.Factor)-1, speedups(opt.Speedup)),
	}
}

func speedups(s *Speedup) string {
	var parts []string
	for g := 1; g < len(s.Factor); g++ {
		parts = append(parts, fmt.Sprintf("%.2f", s.Factor[g]))
	}
	return strings.Join(parts, " ")
}

func short(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d > 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0 && d > 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// dur prints seconds compactly: 42s, 12.5m, 3.25h, 2.10d.
func dur(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.0fs", s)
	case s < 3600:
		return fmt.Sprintf("%.1fm", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%.2fh", s/3600)
	}
	return fmt.Sprintf("%.2fd", s/86400)
}

// shownSkips is how many skipped rows WriteSkips names one by one.
const shownSkips = 5

// WriteSkips says which rows of the trace were left out and why: a count
// per reason, then the first few rows ("line 3: job 101.batch: a step
// ..."), so that a trace that lost most of its rows says what to fix.
func WriteSkips(w io.Writer, tr *Trace) {
	if len(tr.Skips) == 0 {
		return
	}
	var order []string
	count := map[string]int{}
	for _, s := range tr.Skips {
		if count[s.Why] == 0 {
			order = append(order, s.Why)
		}
		count[s.Why]++
	}
	parts := make([]string, len(order))
	for i, why := range order {
		parts[i] = fmt.Sprintf("%d %s", count[why], why)
	}
	fmt.Fprintf(w, "skipped: %s\n", strings.Join(parts, "; "))
	for _, s := range tr.Skips[:min(shownSkips, len(tr.Skips))] {
		fmt.Fprintf(w, "  line %d: job %s: %s\n", s.Line, s.JobID, s.Why)
	}
	if len(tr.Skips) > shownSkips {
		fmt.Fprintf(w, "  (and %d more)\n", len(tr.Skips)-shownSkips)
	}
}
