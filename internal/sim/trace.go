package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// TraceJob is one job of a workload: what was submitted when, by whom, for
// how many GPUs and how long, and how long it really ran.
type TraceJob struct {
	// Name is the job's id in the trace, for messages.
	Name    string
	Line    int   // line of the trace file
	Submit  int64 // seconds after the trace's first submission
	Account string
	User    string
	GPUs    int
	// Duration is how long the job really ran, in seconds.
	Duration int64
	// TimeLimit is what the scheduler sees, in seconds; 0 for none.
	TimeLimit int64
}

// Trace is a workload read from a file.
type Trace struct {
	File   string
	Format string // "philly" or "sacct"
	Jobs   []TraceJob
	// Skipped counts rows that describe no GPU work (sacct: steps, jobs
	// that never started, ran no time or held no GPU); Skips says which
	// and why, in file order.
	Skipped int
	Skips   []Skip
}

// Skip is a row of the trace left out, and why.
type Skip struct {
	Line  int
	JobID string
	// Why is one of the skip reasons below.
	Why string
}

// Why a sacct row is not replayed.
const (
	SkipStep       = "a step (its job's own row counts)"
	SkipNotStarted = "never started (no Start time)"
	SkipNoRuntime  = "ran no time (Elapsed 0)"
	SkipNoGPUs     = "held no GPU"
)

// skip leaves a row out, saying why.
func (t *Trace) skip(line int, id, why string) {
	t.Skipped++
	t.Skips = append(t.Skips, Skip{Line: line, JobID: id, Why: why})
}

// ReadTraceFile reads a trace, detecting its format from the header line.
func ReadTraceFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	defer f.Close()
	return ReadTrace(path, f)
}

// ReadTrace reads a trace from r; name is used in messages.
//
// Two formats, told apart by the header:
//   - the Philly-derived CSV (job_id,submit_s,account,num_gpus,duration_s,
//     time_limit_s,...): the account is also the user;
//   - sacct --parsable2 output (JobID|...|...), with Submit, Start and End
//     or Elapsed, Timelimit, Account, User, and the GPUs from AllocTRES,
//     ReqTRES or AllocGPUs. Steps (JobID with a dot), jobs that never
//     started and jobs without GPUs are skipped.
//
// Jobs come back sorted by submission, ties in file order.
func ReadTrace(name string, r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading trace %s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: empty trace: expected a header line, either the Philly CSV's (job_id,submit_s,account,num_gpus,duration_s,time_limit_s) or sacct --parsable2's (JobID|Submit|...)", name)
	}
	header := strings.TrimPrefix(strings.TrimRight(sc.Text(), "\r"), "\ufeff")
	var (
		t   *Trace
		err error
	)
	switch {
	case strings.Contains(header, "|"):
		t, err = readSacct(name, header, sc)
	case strings.Contains(header, ","):
		t, err = readPhilly(name, header, sc)
	default:
		return nil, fmt.Errorf("%s:1: unknown trace format: the header %q is neither the Philly CSV's (job_id,submit_s,account,num_gpus,duration_s,time_limit_s) nor sacct --parsable2's (JobID|Submit|...)", name, cut(header))
	}
	if err != nil {
		return nil, err
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading trace %s: %w", name, err)
	}
	if len(t.Jobs) == 0 {
		return nil, fmt.Errorf("%s: the trace has no job with GPUs to replay", name)
	}
	slices.SortStableFunc(t.Jobs, func(a, b TraceJob) int { return int(a.Submit - b.Submit) })
	first := t.Jobs[0].Submit
	for i := range t.Jobs {
		t.Jobs[i].Submit -= first
	}
	return t, nil
}

func cut(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// columns maps header names to positions, and reports the first missing one.
func columns(header []string, want ...string) (map[string]int, string) {
	idx := map[string]int{}
	for i, h := range header {
		if _, dup := idx[strings.TrimSpace(h)]; !dup {
			idx[strings.TrimSpace(h)] = i
		}
	}
	for _, w := range want {
		if _, ok := idx[w]; !ok {
			return idx, w
		}
	}
	return idx, ""
}

var phillyColumns = []string{"job_id", "submit_s", "account", "num_gpus", "duration_s", "time_limit_s"}

func readPhilly(name, header string, sc *bufio.Scanner) (*Trace, error) {
	col, missing := columns(strings.Split(header, ","), phillyColumns...)
	if missing != "" {
		return nil, fmt.Errorf("%s:1: the CSV header has no column %q: a Philly-style trace needs %s", name, missing, strings.Join(phillyColumns, ","))
	}
	t := &Trace{File: name, Format: "philly"}
	line := 1
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) < len(col) {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d: every row needs %s", name, line, len(f), len(strings.Split(header, ",")), strings.Join(phillyColumns, ","))
		}
		get := func(c string) string { return strings.TrimSpace(f[col[c]]) }
		num := func(c string, min float64) (float64, error) {
			v, err := strconv.ParseFloat(get(c), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < min {
				return 0, fmt.Errorf("%s:%d: %s %q is not a number of at least %g: fix or delete the row", name, line, c, get(c), min)
			}
			return v, nil
		}
		submit, err := num("submit_s", math.Inf(-1))
		if err != nil {
			return nil, err
		}
		gpus, err := num("num_gpus", 1)
		if err != nil || gpus != math.Trunc(gpus) {
			return nil, fmt.Errorf("%s:%d: num_gpus %q is not a whole number of at least 1: fix or delete the row", name, line, get("num_gpus"))
		}
		dur, err := num("duration_s", 0)
		if err != nil {
			return nil, err
		}
		limit, err := num("time_limit_s", 0)
		if err != nil {
			return nil, err
		}
		acct := get("account")
		if acct == "" {
			return nil, fmt.Errorf("%s:%d: the account is empty: every job needs one (it is also its fair-share user)", name, line)
		}
		t.Jobs = append(t.Jobs, TraceJob{
			Name: get("job_id"), Line: line, Submit: int64(math.Floor(submit)), Account: acct, User: acct,
			GPUs: int(gpus), Duration: int64(math.Ceil(dur)), TimeLimit: int64(math.Ceil(limit)),
		})
	}
	return t, nil
}

func readSacct(name, header string, sc *bufio.Scanner) (*Trace, error) {
	col, missing := columns(strings.Split(header, "|"), "JobID", "Submit")
	if missing != "" {
		return nil, fmt.Errorf("%s:1: the sacct header has no %s field: print it with sacct --parsable2 -o JobID,Submit,Start,End,Elapsed,Timelimit,Account,User,AllocTRES", name, missing)
	}
	_, hasStart := col["Start"]
	_, hasElapsed := col["Elapsed"]
	_, hasEnd := col["End"]
	if !hasElapsed && !(hasStart && hasEnd) {
		return nil, fmt.Errorf("%s:1: the sacct header has neither Elapsed nor Start and End, so runtimes are unknown: add -o ...,Start,End,Elapsed", name)
	}
	if !hasAny(col, "AllocTRES", "ReqTRES", "AllocGPUs", "AllocGRES", "ReqGRES") {
		return nil, fmt.Errorf("%s:1: the sacct header has no GPU field: add AllocTRES (or ReqTRES, AllocGPUs) to -o", name)
	}
	t := &Trace{File: name, Format: "sacct"}
	var base time.Time
	type row struct {
		job    TraceJob
		submit time.Time
	}
	var rows []row
	line := 1
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, "|")
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(f) {
				return strings.TrimSpace(f[i])
			}
			return ""
		}
		id := get("JobID")
		if strings.Contains(id, ".") {
			t.skip(line, id, SkipStep)
			continue
		}
		submit, err := parseSacctTime(get("Submit"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: Submit %q is not a time like 2026-11-29T09:00:00: %v", name, line, get("Submit"), err)
		}
		var dur int64 = -1
		if s := get("Elapsed"); s != "" {
			if dur, err = parseElapsed(s); err != nil {
				return nil, fmt.Errorf("%s:%d: Elapsed %q is not [D-]HH:MM:SS: %v", name, line, s, err)
			}
		} else if st, e1 := parseSacctTime(get("Start")); e1 == nil {
			if en, e2 := parseSacctTime(get("End")); e2 == nil {
				dur = int64(en.Sub(st) / time.Second)
			}
		}
		if _, e := parseSacctTime(get("Start")); hasStart && e != nil {
			t.skip(line, id, SkipNotStarted) // Start is Unknown or None
			continue
		}
		if dur <= 0 {
			t.skip(line, id, SkipNoRuntime)
			continue
		}
		gpus, err := sacctGPUs(get)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if gpus == 0 {
			t.skip(line, id, SkipNoGPUs)
			continue
		}
		var limit int64
		if s := get("Timelimit"); s != "" && s != "Partition_Limit" {
			d, err := slurmsyntax.ParseTimeLimit(s)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: Timelimit %q is not a Slurm time limit such as 1-00:00:00 or UNLIMITED", name, line, s)
			}
			if d < slurmsyntax.Infinite {
				limit = int64(d / time.Second)
			}
		}
		acct, user := get("Account"), get("User")
		if acct == "" {
			acct = user
		}
		if user == "" {
			user = acct
		}
		if acct == "" {
			return nil, fmt.Errorf("%s:%d: neither Account nor User is set: add them to -o, fair share is computed on them", name, line)
		}
		if base.IsZero() || submit.Before(base) {
			base = submit
		}
		rows = append(rows, row{TraceJob{Name: id, Line: line, Account: acct, User: user, GPUs: gpus, Duration: dur, TimeLimit: limit}, submit})
	}
	for _, r := range rows {
		r.job.Submit = int64(r.submit.Sub(base) / time.Second)
		t.Jobs = append(t.Jobs, r.job)
	}
	return t, nil
}

func hasAny(col map[string]int, names ...string) bool {
	for _, n := range names {
		if _, ok := col[n]; ok {
			return true
		}
	}
	return false
}

// parseSacctTime reads sacct's time stamps (local time, which the
// simulator treats as UTC: only differences matter).
func parseSacctTime(s string) (time.Time, error) {
	return time.Parse("2006-01-02T15:04:05", s)
}

// parseElapsed reads [D-][HH:]MM:SS.
func parseElapsed(s string) (int64, error) {
	var days int64
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad days %q", d)
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("want MM:SS or HH:MM:SS")
	}
	var secs int64
	for _, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad number %q", p)
		}
		secs = secs*60 + n
	}
	return days*86400 + secs, nil
}

// sacctGPUs takes the GPU count from AllocGPUs, else gres/gpu= in AllocTRES
// or ReqTRES, else gpu: in AllocGRES or ReqGRES.
func sacctGPUs(get func(string) string) (int, error) {
	if s := get("AllocGPUs"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("AllocGPUs %q is not a whole number", s)
		}
		if n > 0 {
			return n, nil
		}
	}
	for _, c := range []string{"AllocTRES", "ReqTRES"} {
		for _, kv := range strings.Split(get(c), ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k != "gres/gpu" {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("%s has gres/gpu=%q, not a whole number", c, v)
			}
			return n, nil
		}
	}
	for _, c := range []string{"AllocGRES", "ReqGRES"} {
		for _, g := range strings.Split(get(c), ",") {
			if !strings.HasPrefix(g, "gpu") {
				continue
			}
			i := strings.LastIndex(g, ":")
			if i < 0 {
				continue
			}
			v, _, _ := strings.Cut(g[i+1:], "(")
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, nil
}
