package sreport

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The queries sreport makes:
//
// GET /v1/node (api.PathNode) -> api.Node: the machine's CPUs, memory and
// GPUs, the cluster's TRES.
//
// GET /v1/config (api.PathConfig) -> api.Config: ClusterName and the
// billing weights.
//
// GET /v1/accounting?allusers=1&usage=1&since=..&until=.. -> the job runs
// that existed in the window, as sacct reads them; under PrivateData=jobs
// or =usage a normal user gets only their own (the daemon's viewer).

//go:embed help.txt
var helpText string

// options is sreport's option table (src/sreport/sreport.c).
var options = []getopt.Option{
	{Name: "all_clusters", Short: 'a'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "federation"},
	{Name: "help", Short: 'h'},
	{Name: "immediate", Short: 'i'},
	{Name: "local"},
	{Name: "noheader", Short: 'n'},
	{Name: "parsable", Short: 'p'},
	{Name: "parsable2", Short: 'P'},
	{Name: "quiet", Short: 'Q'},
	{Name: "sort", Short: 's'},
	{Name: "tres", Short: 'T', Arg: getopt.RequiredArgument},
	{Short: 't', Arg: getopt.RequiredArgument, ID: "time"},
	{Name: "usage", ID: "help"},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
}

// Options is a parsed sreport command line.
type Options struct {
	Report              Report
	Time                TimeFormat
	TRES                []string
	TRESGiven           bool
	Parsable, Parsable2 bool
	NoHeader            bool
	Format              []string
	Accounts, Users     []string
	TopCount            int
	// Clusters is Clusters=: this machine's name, or nothing to report.
	Clusters []string
	// Proper is a user's "Proper Name" (nil: none).
	Proper func(user string) string
	// Start, End is the window, rounded to hours.
	Start, End time.Time
}

// reportNames: each report type's reports, as sreport names them in its
// "Valid ... reports are" line, and the ones slurm-lite prints.
var reportNames = map[string]struct {
	valid string
	ours  map[string]Report
}{
	"cluster": {`"AccountUtilizationByUser", "UserUtilizationByAccount", "UserUtilizationByWckey", "Utilization", and "WCKeyUtilizationByUser"`,
		map[string]Report{"accountutilizationbyuser": AccountUtilizationByUser, "userutilizationbyaccount": UserUtilizationByAccount, "utilization": ClusterUtilization}},
	"job":  {`"SizesByAccount", "SizesByAccountAndWckey", and "SizesByWckey"`, map[string]Report{"sizesbyaccount": JobSizesByAccount}},
	"user": {`"TopUsage"`, map[string]Report{"topusage": UserTopUsage}},
}

// Parse reads sreport's command line. code is the exit status when done
// (help, an error); what Slurm only warns about (an unknown -t, a bad
// start=) is written to stderr and parsing goes on, as sreport does.
func Parse(args []string, now time.Time, stderr, stdout io.Writer) (o *Options, code int, done bool) {
	o = &Options{TRES: []string{"cpu"}, TopCount: 10}
	cmdLine := &cli.Command{Name: "sreport", Table: options, Ordering: getopt.Permute, Help: helpText, BadOption: 1}
	ops, code, done := cmdLine.Parse(args, stdout, stderr, func(r getopt.Result) (int, bool) {
		switch r.Option.Key() {
		case "noheader":
			o.NoHeader = true
		case "parsable":
			o.Parsable, o.Parsable2 = true, false
		case "parsable2":
			o.Parsable2, o.Parsable = true, false
		case "time":
			if f, ok := parseTimeFormat(r.Value); ok {
				o.Time = f
			} else {
				// Slurm's message has no newline.
				fmt.Fprintf(stderr, "unknown time format %s", r.Value)
			}
		case "tres":
			list, err := parseTRES(r.Value)
			if err != nil {
				fmt.Fprintf(stderr, "sreport: error: %v\n", err)
				return 1, true
			}
			o.TRES, o.TRESGiven = list, true
		}
		return 0, false
	})
	if done {
		return nil, code, true
	}
	if len(ops) == 0 {
		fmt.Fprintln(stderr, "sreport: error: interactive mode is not supported; give the report on the command line, e.g. sreport cluster Utilization")
		return nil, 1, true
	}
	kind := strings.ToLower(ops[0])
	var names struct {
		valid string
		ours  map[string]Report
	}
	found := false
	for k, v := range reportNames {
		if len(kind) >= 1 && strings.HasPrefix(k, kind) {
			kind, names, found = k, v, true
		}
	}
	if !found {
		fmt.Fprintf(stderr, "invalid keyword: %s\n", ops[0])
		return nil, 1, true
	}
	if len(ops) < 2 {
		fmt.Fprintf(stderr, "too few arguments for keyword:%s\n", kind)
		return nil, 1, true
	}
	rep, ok := matchReport(ops[1], names.ours)
	if !ok {
		fmt.Fprintf(stderr, "Not valid report %s\nValid %s reports are, %s\n", ops[1], kind, names.valid)
		return nil, 1, true
	}
	o.Report = rep
	var start, end time.Time
	for _, a := range ops[2:] {
		key, val, hasVal := strings.Cut(a, "=")
		is := func(word string, minLen int) bool {
			n := max(len(key), minLen)
			return n <= len(word) && strings.EqualFold(key, word[:n])
		}
		switch {
		case !hasVal && is("tree", 4):
			fmt.Fprintln(stderr, "sreport: error: Tree is not supported: slurm-lite's accounts are one level under root, as the plain report shows them; leave Tree out")
			return nil, 1, true
		case !hasVal && is("all_clusters", 1):
		case hasVal && is("start", 1):
			t, err := slurmsyntax.ParseTime(val, now, true)
			if err != nil || (t.IsZero() && val != "") {
				fmt.Fprintf(stderr, "Invalid time specification (pos=0): %s\n", val)
				continue
			}
			start = t
		case hasVal && is("end", 1):
			t, err := slurmsyntax.ParseTime(val, now, true)
			if err != nil || (t.IsZero() && val != "") {
				fmt.Fprintf(stderr, "Invalid time specification (pos=0): %s\n", val)
				continue
			}
			end = t
		case hasVal && is("format", 1):
			o.Format = splitList(val)
		case hasVal && (is("accounts", 2) || is("acct", 4)):
			o.Accounts = splitList(val)
		case hasVal && is("users", 1):
			o.Users = splitList(val)
		case hasVal && is("topcount", 4):
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "sreport: error: TopCount=%q is not a positive count\n", val)
				return nil, 1, true
			}
			o.TopCount = n
		case hasVal && is("clusters", 1):
			o.Clusters = splitList(val)
		default:
			fmt.Fprintf(stderr, " Unknown condition: %s\n Use keyword set to modify value\n", a)
			return nil, 1, true
		}
	}
	o.Start, o.End = window(start, end, now)
	if len(o.Format) > 0 && o.Report != JobSizesByAccount {
		if _, err := columns(o, nil, clusterCols); err != nil {
			fmt.Fprintf(stderr, " %v\n", err)
			return nil, 1, true
		}
	}
	return o, 0, false
}

// matchReport matches a report name as sreport does: a case-insensitive
// prefix long enough to tell it from the type's other reports.
func matchReport(s string, ours map[string]Report) (Report, bool) {
	l := strings.ToLower(s)
	if len(l) < 2 {
		return 0, false
	}
	for name, r := range ours {
		if strings.HasPrefix(name, l) {
			return r, true
		}
	}
	return 0, false
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// parseTRES reads -T: TRES names as accounting writes them, or ALL.
func parseTRES(s string) ([]string, error) {
	if strings.EqualFold(s, "all") {
		return tresNames, nil
	}
	var out []string
	for _, t := range splitList(s) {
		l := strings.ToLower(t)
		if l == "gres/gpu" || strings.HasPrefix(l, "gres/gpu:") {
			l = "gres/gpu"
		}
		known := false
		for _, n := range tresNames {
			known = known || n == l
		}
		if !known {
			return nil, fmt.Errorf("unknown TRES %q in -T; slurm-lite accounts for %s", t, strings.Join(tresNames, ","))
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-T needs a TRES, e.g. -T gres/gpu")
	}
	return out, nil
}

// window is slurmdb_report_set_start_end_time: both ends rounded to the
// nearest hour; no end is today's midnight, no start the day before the
// end's day; at least one hour.
func window(start, end, now time.Time) (time.Time, time.Time) {
	round := func(t time.Time) time.Time {
		t = t.Truncate(time.Minute).Add(func() time.Duration {
			if t.Second() >= 30 {
				return time.Minute
			}
			return 0
		}())
		h := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, t.Location())
		if t.Minute() >= 30 {
			h = h.Add(time.Hour)
		}
		return h
	}
	if end.IsZero() {
		end = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	} else {
		end = round(end)
	}
	if start.IsZero() {
		start = time.Date(now.Year(), now.Month(), now.Day()-1, 0, 0, 0, 0, now.Location())
	} else {
		start = round(start)
	}
	if end.Sub(start) < time.Hour {
		end = start.Add(time.Hour)
	}
	return start, end
}

// Main is the sreport command.
func Main(args []string, sio cli.IO) int {
	o, code, done := Parse(args, sio.Now(), sio.Stderr, sio.Stdout)
	if done {
		return code
	}
	c, cfg, code := cli.Dial("sreport", sio)
	if c == nil {
		return code
	}
	var ac api.Config
	if err := cli.GetJSON(c, api.PathConfig, nil, &ac); err != nil {
		return cli.DaemonError("sreport", err, sio)
	}
	if ac.Config != nil {
		cfg = ac.Config
	}
	if len(o.Clusters) > 0 && !slices.Contains(o.Clusters, cfg.ClusterName) {
		fmt.Fprintf(sio.Stderr, "sreport: error: no cluster %s here: this machine's ClusterName is %q\n", strings.Join(o.Clusters, ","), cfg.ClusterName)
		return 1
	}
	var node api.Node
	if err := cli.Get(c, api.PathNode, &node); err != nil {
		return cli.DaemonError("sreport", err, sio)
	}
	q := url.Values{"allusers": {"1"}, "usage": {"1"}, "dups": {"1"},
		"since": {o.Start.Format(time.RFC3339Nano)}, "until": {o.End.Format(time.RFC3339Nano)}}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	var recs []jobrec.Record
	if err := c.Do(ctx, "GET", api.PathAccounting+"?"+q.Encode(), nil, &recs); err != nil {
		return cli.DaemonError("sreport", err, sio)
	}
	o.Proper = properName
	cl, jobs := FromDaemon(cfg, node, recs)
	r := Compute(cl, jobs, o.Start, o.End, sio.Now())
	io.WriteString(sio.Stdout, Print(o, r))
	return 0
}

// FromDaemon turns the daemon's node and job runs into the report's cluster
// and jobs.
func FromDaemon(cfg *config.Config, node api.Node, recs []jobrec.Record) (Cluster, []Job) {
	return NewCluster(cfg, node.CPUs, node.MemoryMB, len(node.GPUs)), Jobs(cfg, recs)
}

// NewCluster is the machine in the report's terms: its billing is the
// node's under the cluster's TRESBillingWeights (none: the CPU count,
// Slurm's default).
func NewCluster(cfg *config.Config, cpus int, memMB int64, gpus int) Cluster {
	return Cluster{Name: cfg.ClusterName, CPUs: cpus, MemMB: memMB, GPUs: gpus,
		Billing: int64(math.Round(billing(cfg.TRESBillingWeights, cpus, memMB, gpus)))}
}

// Jobs are the job runs in the report's terms. Billing follows the
// partition's TRESBillingWeights, as sacct's AllocTRES does.
func Jobs(cfg *config.Config, recs []jobrec.Record) []Job {
	var jobs []Job
	for _, rec := range recs {
		j := &rec.Job
		w := cfg.TRESBillingWeights
		if p := cfg.Partition(j.Partition); p != nil && len(p.TRESBillingWeights) > 0 {
			w = p.TRESBillingWeights
		}
		req := max(1, j.Request.CPUsPerTask) * max(1, j.Request.NTasks)
		cpus := len(j.Alloc.CPUs)
		if cpus == 0 {
			cpus = req
		}
		gpus := 0
		for _, g := range j.Alloc.GPUs {
			if g.Mem == 0 {
				gpus++
			}
		}
		mem := j.Alloc.Mem >> 20
		jobs = append(jobs, Job{ID: j.ID, User: j.User, Account: j.Account,
			Eligible: j.Eligible, Start: j.Start, End: j.End,
			CPUs: cpus, ReqCPUs: req, MemMB: mem, GPUs: gpus,
			Billing: int64(math.Round(billing(w, cpus, mem, gpus)))})
	}
	return jobs
}

// billing is Slurm's billing TRES under weights (none: the CPU count).
func billing(w config.TRESWeights, cpus int, memMB int64, gpus int) float64 {
	if len(w) == 0 {
		return float64(cpus)
	}
	return w["cpu"]*float64(cpus) + w["mem"]*float64(memMB) + w["gres/gpu"]*float64(gpus)
}

// properName is what sreport prints as a user's Proper Name: the passwd
// comment up to its first comma (strtok's first token; a comment of commas
// alone, as adduser leaves it, is printed as it is).
func properName(user string) string {
	u, err := userdb.ByName(user)
	if err != nil {
		return ""
	}
	return properOf(u.Gecos)
}

func properOf(gecos string) string {
	if tok, _, _ := strings.Cut(strings.TrimLeft(gecos, ","), ","); tok != "" {
		return tok
	}
	return gecos
}
