package sacct

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// sacctOptions is sacct's option table (src/sacct/options.c).
var sacctOptions = []getopt.Option{
	{Name: "allusers", Short: 'a'},
	{Name: "accounts", Short: 'A', Arg: getopt.RequiredArgument},
	{Name: "allocations", Short: 'X'},
	{Name: "brief", Short: 'b'},
	{Name: "batch-script", Short: 'B'},
	{Name: "completion", Short: 'c'},
	{Name: "constraints", Short: 'C', Arg: getopt.RequiredArgument},
	{Name: "delimiter", Arg: getopt.RequiredArgument},
	{Name: "duplicates", Short: 'D'},
	{Name: "federation"},
	{Name: "helpformat", Short: 'e'},
	{Name: "help-fields", Short: 'e', ID: "helpformat"},
	{Name: "endtime", Short: 'E', Arg: getopt.RequiredArgument},
	{Name: "env-vars"},
	{Name: "file", Short: 'f', Arg: getopt.RequiredArgument},
	{Name: "flags", Short: 'F', Arg: getopt.RequiredArgument},
	{Name: "gid", Short: 'g', Arg: getopt.RequiredArgument, ID: "group"},
	{Name: "group", Short: 'g', Arg: getopt.RequiredArgument},
	{Name: "help", Short: 'h'},
	{Name: "local"},
	{Name: "name", Arg: getopt.RequiredArgument},
	{Name: "nnodes", Short: 'i', Arg: getopt.RequiredArgument},
	{Name: "ncpus", Short: 'I', Arg: getopt.RequiredArgument},
	{Name: "jobs", Short: 'j', Arg: getopt.RequiredArgument},
	{Name: "timelimit-min", Short: 'k', Arg: getopt.RequiredArgument},
	{Name: "timelimit-max", Short: 'K', Arg: getopt.RequiredArgument},
	{Name: "long", Short: 'l'},
	{Name: "allclusters", Short: 'L'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "nodelist", Short: 'N', Arg: getopt.RequiredArgument},
	{Name: "noconvert"},
	{Name: "units", Arg: getopt.RequiredArgument},
	{Name: "noheader", Short: 'n'},
	{Name: "fields", Short: 'o', Arg: getopt.RequiredArgument, ID: "format"},
	{Name: "format", Short: 'o', Arg: getopt.RequiredArgument},
	{Name: "parsable", Short: 'p'},
	{Name: "parsable2", Short: 'P'},
	{Name: "qos", Short: 'q', Arg: getopt.RequiredArgument},
	{Name: "partition", Short: 'r', Arg: getopt.RequiredArgument},
	{Name: "reason", Short: 'R', Arg: getopt.RequiredArgument},
	{Name: "state", Short: 's', Arg: getopt.RequiredArgument},
	{Name: "starttime", Short: 'S', Arg: getopt.RequiredArgument},
	{Name: "truncate", Short: 'T'},
	{Name: "uid", Short: 'u', Arg: getopt.RequiredArgument, ID: "user"},
	{Name: "use-local-uid"},
	{Name: "usage", Short: 'U'},
	{Name: "user", Short: 'u', Arg: getopt.RequiredArgument},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
	{Name: "wckeys", Short: 'W', Arg: getopt.RequiredArgument},
	{Name: "whole-hetjob", Arg: getopt.OptionalArgument},
	{Name: "associations", Short: 'x', Arg: getopt.RequiredArgument},
	{Name: "json"},
	{Name: "yaml"},
	{Short: 't', ID: "allocations"},
}

// sacctArgs is a parsed sacct command line.
type sacctArgs struct {
	allUsers, noSteps, dups, noHeader, parsable, noEnding, noConvert bool
	brief, long                                                      bool
	delimiter, fields                                                string
	cols                                                             []format.AcctColumn
	jobs                                                             []acctSel
	users, names, accounts, partitions, wckeys, nodes                []string
	states                                                           []slurm.JobState
	start, end                                                       time.Time
	units                                                            int
	json                                                             bool
}

// acctSel is one -j item: a job (id), an array task, or a step.
type acctSel struct {
	id   uint32
	task int    // -1: none
	step string // "": none
}

// Main is the sacct command.
func Main(args []string, sio cli.IO) int {
	a, code, done := parseSacct(args, sio)
	if done {
		return code
	}
	c, cfg, code := cli.DialView("sacct", sio)
	if c == nil {
		return code
	}
	for _, u := range a.users {
		if _, ok := cli.UserID(u, cfg); !ok {
			fmt.Fprintf(sio.Stderr, "sacct: error: Invalid user id: %s\n", u)
			return 1
		}
	}
	recs, err := a.fetch(c, cfg)
	if err != nil {
		return cli.DaemonError("sacct", err, sio)
	}
	recs = a.filter(recs)
	// _sort_desc_submit_time, which sorts ascending: submission, array,
	// task (none last), job id.
	slices.SortStableFunc(recs, func(x, y jobrec.Record) int {
		return cmp.Or(x.Job.Submit.Compare(y.Job.Submit), cmp.Compare(x.Job.ArrayJobID, y.Job.ArrayJobID),
			cmp.Compare(taskKey(&x.Job), taskKey(&y.Job)), cmp.Compare(x.Job.ID, y.Job.ID))
	})
	if a.json {
		return sacctJSON(recs, a.noSteps, cfg, sio)
	}
	p := &format.AcctPrinter{Columns: a.cols, Parsable: a.parsable, NoEnding: a.noEnding, Delimiter: a.delimiter}
	env := cli.NewViewEnv(sio, cfg)
	var b strings.Builder
	if !a.noHeader {
		b.WriteString(p.Header())
	}
	for i := range recs {
		r := &recs[i]
		sel := a.stepsOnly(&r.Job)
		if sel == nil {
			b.WriteString(p.Line(&format.AcctRow{Rec: r, Units: a.units, NoConvert: a.noConvert, Env: env}))
		}
		if a.noSteps {
			continue
		}
		for k := range r.Steps {
			s := &r.Steps[k]
			if sel != nil && !slices.Contains(sel, s.ID) {
				continue
			}
			b.WriteString(p.Line(&format.AcctRow{Rec: r, Step: s, Units: a.units, NoConvert: a.noConvert, Env: env}))
		}
	}
	io.WriteString(sio.Stdout, b.String())
	return 0
}

func taskKey(j *jobrec.Job) int64 {
	if j.ArrayTaskID == jobrec.NoTask {
		return 0xfffffffe // NO_VAL
	}
	return int64(j.ArrayTaskID)
}

func parseSacct(args []string, sio cli.IO) (a sacctArgs, code int, done bool) {
	a.units = format.NoUnits
	now := sio.Now()
	var fieldList []string
	var startSet, endSet bool
	cmdLine := &cli.Command{Name: "sacct", Table: sacctOptions, Ordering: getopt.Permute, Help: sacctHelp, Usage: sacctUsage, BadOption: 1, NoTry: true}
	ops, code, done := cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		v := r.Value
		switch r.Option.Key() {
		case "allusers":
			a.allUsers = true
		case "accounts":
			a.accounts = append(a.accounts, cli.SplitList(v)...)
		case "allocations":
			a.noSteps = true
		case "brief":
			a.brief = true
		case "delimiter":
			a.delimiter = v
		case "duplicates":
			a.dups = true
		case "helpformat":
			printAcctFields(sio)
			return 0, true
		case "starttime", "endtime":
			// parse_time(optarg, 1), as sacct calls it: a time that
			// parses to 0 (nothing named, or the epoch itself) is no
			// time given, and the default window applies.
			t, err := slurmsyntax.ParseTime(v, now, true)
			if err != nil {
				var be *slurmsyntax.BeginError
				if errors.As(err, &be) && be.Diagnostic() != "" {
					fmt.Fprintln(sio.Stderr, be.Diagnostic())
				}
				return 1, true
			}
			if r.Option.Key() == "starttime" {
				a.start, startSet = t, !t.IsZero()
			} else {
				a.end, endSet = t, !t.IsZero()
			}
		case "jobs":
			sels, ok := parseAcctSels(v)
			if !ok {
				fmt.Fprintf(sio.Stderr, "sacct: fatal: Bad job/step specified: %s\n", v)
				return 1, true
			}
			a.jobs = append(a.jobs, sels...)
		case "long":
			a.long = true
		case "nodelist":
			a.nodes = cli.SplitList(v)
		case "noconvert":
			a.noConvert = true
		case "units":
			u, ok := format.ParseUnits(v)
			if !ok {
				fmt.Fprintf(sio.Stderr, "sacct: error: Invalid unit type '%.1s'. Possible options are 'KMGTP'\nsacct: fatal: Invalid unit type\n", v)
				return 1, true
			}
			a.units = u
		case "noheader":
			a.noHeader = true
		case "name":
			a.names = append(a.names, cli.SplitList(v)...)
		case "format":
			fieldList = append(fieldList, v)
		case "parsable":
			a.parsable = true
		case "parsable2":
			a.parsable, a.noEnding = true, true
		case "partition":
			a.partitions = append(a.partitions, cli.SplitList(v)...)
		case "state":
			for _, s := range cli.SplitList(v) {
				st, ok := slurm.ParseJobState(s)
				if !ok {
					fmt.Fprintf(sio.Stderr, "sacct: fatal: unrecognized job state value '%s'\n", s)
					return 1, true
				}
				a.states = append(a.states, st)
			}
		case "user":
			if v == "-1" {
				a.allUsers, a.users = true, nil
				break
			}
			a.allUsers = false
			for _, u := range cli.SplitList(v) {
				a.users = append(a.users, u)
			}
		case "wckeys":
			a.wckeys = append(a.wckeys, cli.SplitList(v)...)
		case "json":
			// As openapi/dbv0.0.38 asks: every run of requeued jobs.
			a.json, a.dups = true, true
		case "yaml":
			fmt.Fprintf(sio.Stderr, "sacct: error: --%s is not supported by slurm-lite yet; use --json or --parsable2\n", r.Option.Key())
			return 1, true
		case "batch-script", "env-vars", "completion", "file":
			fmt.Fprintf(sio.Stderr, "sacct: error: --%s is not supported by slurm-lite\n", r.Option.Name)
			return 1, true
		}
		return 0, false
	})
	if done {
		return a, code, true
	}
	if a.long && len(fieldList) > 0 {
		fmt.Fprintln(sio.Stderr, "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
		return a, 1, true
	}
	a.window(now, startSet, endSet)
	if endSet && a.start.After(a.end) {
		fmt.Fprintf(sio.Stderr, "sacct: error: Start time (%s) requested is after end time (%s).\n", format.Time(a.start), format.Time(a.end))
		return a, 1, true
	}
	if a.brief {
		fieldList = append(fieldList, format.SacctBrief)
	}
	if a.long {
		fieldList = append(fieldList, format.SacctLong)
	}
	if len(fieldList) == 0 {
		if v, ok := sio.Getenv("SACCT_FORMAT"); ok {
			fieldList = append(fieldList, v)
		} else {
			fieldList = append(fieldList, format.SacctDefault)
		}
	}
	a.fields = strings.Join(fieldList, ",")
	var bad string
	if a.cols, bad = format.ParseAcctFields(a.fields); bad != "" {
		if strings.EqualFold(bad, "AllocGRES") || strings.EqualFold(bad, "ReqGRES") {
			fmt.Fprintf(sio.Stderr, "sacct: fatal: %s has been removed, please use %sTRES\n", bad, bad[:len(bad)-4])
		} else {
			fmt.Fprintf(sio.Stderr, "sacct: error: Invalid field requested: \"%s\"\n", bad)
		}
		return a, 1, true
	}
	if len(ops) > 0 {
		fmt.Fprintln(sio.Stderr, "sacct: error: Unknown arguments:")
		for _, op := range ops {
			fmt.Fprintf(sio.Stderr, "sacct: error:  %s\n", op)
		}
		return a, 1, true
	}
	// Jobs or nodes named: every user's. Root sees everyone's by default.
	if len(a.users) == 0 && (len(a.jobs) > 0 || len(a.nodes) > 0 || os.Getuid() == 0) {
		a.allUsers = true
	}
	return a, 0, false
}

// window is slurmdb_job_cond_def_start_end: with -s and no -j, the moment
// -S (default now); with -j alone, all time; with neither, since midnight.
func (a *sacctArgs) window(now time.Time, startSet, endSet bool) {
	switch {
	case len(a.states) > 0:
		if !startSet && len(a.jobs) == 0 {
			a.start, startSet = now, true
		}
		if startSet && !endSet {
			a.end, endSet = a.start, true
		}
	case len(a.jobs) == 0 && !startSet:
		y, m, d := now.Date()
		a.start = time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	}
	if !endSet {
		a.end = now
	}
}

// parseAcctSels is slurm_addto_step_list: "N", "A_T", "N.S", comma-separated.
func parseAcctSels(spec string) ([]acctSel, bool) {
	var out []acctSel
	for _, tok := range cli.SplitList(spec) {
		id, rest, _ := slurmsyntax.Strtol(tok, slurmsyntax.OutOfRange)
		if id <= 0 || id > int64(^uint32(0)) {
			return nil, false
		}
		s := acctSel{id: uint32(id), task: -1}
		if strings.HasPrefix(rest, "_") {
			t, r, _ := slurmsyntax.Strtol(rest[1:], slurmsyntax.OutOfRange)
			s.task, rest = int(t), r
		}
		if strings.HasPrefix(rest, ".") {
			s.step, rest = rest[1:], ""
		}
		if rest != "" {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// fetch asks the daemon for the runs.
func (a *sacctArgs) fetch(c *sockclient.Client, cfg *config.View) ([]jobrec.Record, error) {
	q := url.Values{}
	for _, s := range a.jobs {
		q.Add("id", strconv.FormatUint(uint64(s.id), 10))
	}
	if a.allUsers {
		q.Set("allusers", "1")
	} else if len(a.users) > 0 {
		for _, u := range a.users {
			q.Add("user", acctUserName(u, cfg))
		}
	} else if u, err := userdb.ByID(uint32(os.Getuid())); err == nil {
		q.Add("user", u.Name)
	}
	for _, st := range a.states {
		q.Add("state", string(st))
	}
	for _, n := range a.names {
		q.Add("name", n)
	}
	for _, acct := range a.accounts {
		q.Add("account", acct)
	}
	if !a.start.IsZero() {
		q.Set("since", a.start.Format(time.RFC3339Nano))
	}
	if !a.end.IsZero() {
		// The last instant of the second -E names (filter).
		q.Set("until", time.Unix(a.end.Unix(), int64(time.Second-1)).Format(time.RFC3339Nano))
	}
	if a.dups {
		q.Set("dups", "1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	var recs []jobrec.Record
	err := c.DoAccept(ctx, "GET", api.PathAccounting+"?"+q.Encode(), nil, "application/json", func(_ string, body io.Reader) error {
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		// Room for every record at once: decoding 10,000 into a slice
		// grown by doubling copied each record four times on average,
		// a sixth of sacct's time. Each record is an object starting
		// so (a quote inside a string would be escaped).
		recs = make([]jobrec.Record, 0, bytes.Count(data, []byte(`{"Job":`)))
		return json.Unmarshal(data, &recs)
	})
	return recs, err
}

// acctUserName is the name a -u item stands for (a name, or a uid).
func acctUserName(u string, cfg *config.View) string {
	if _, err := strconv.ParseUint(u, 10, 32); err == nil {
		if id, _ := strconv.ParseUint(u, 10, 32); userdb.Name(uint32(id)) != "" {
			return userdb.Name(uint32(id))
		}
	}
	return u
}

// filter keeps what sacct shows of the daemon's answer, which may be
// wider: the jobs and tasks asked for, their runs (all of them with -D),
// and every other filter.
func (a *sacctArgs) filter(recs []jobrec.Record) []jobrec.Record {
	out := recs[:0]
	for _, r := range recs {
		j := &r.Job
		if !r.Latest && !a.dups {
			continue
		}
		if len(a.jobs) > 0 && !slices.ContainsFunc(a.jobs, func(s acctSel) bool { return s.matches(j) }) {
			continue
		}
		if len(a.users) > 0 && !a.allUsers && !slices.ContainsFunc(a.users, func(u string) bool {
			return u == j.User || u == strconv.FormatUint(uint64(j.UID), 10)
		}) {
			continue
		}
		if len(a.states) > 0 && !slices.Contains(a.states, j.State) {
			continue
		}
		if len(a.names) > 0 && !slices.Contains(a.names, j.Name) {
			continue
		}
		if len(a.partitions) > 0 && !slices.Contains(a.partitions, j.Partition) {
			continue
		}
		if len(a.accounts) > 0 && !cli.ContainsFold(a.accounts, j.Account) {
			continue
		}
		if len(a.wckeys) > 0 && !slices.Contains(a.wckeys, strings.TrimPrefix(j.Request.WCKey, "*")) {
			continue
		}
		if len(a.nodes) > 0 && !slices.Contains(a.nodes, j.Alloc.Node) {
			continue
		}
		if !a.start.IsZero() && !j.End.IsZero() && j.End.Before(a.start) {
			continue
		}
		// Slurm's times are whole seconds: a job submitted in the second
		// -E names (-E now, just after sbatch) is in the window.
		if !a.end.IsZero() && j.Submit.Unix() > a.end.Unix() {
			continue
		}
		out = append(out, r)
	}
	return out
}

// matches is the -j test of one run: its job id, array id or task.
func (s acctSel) matches(j *jobrec.Job) bool {
	switch {
	case s.task < 0:
		return s.id == j.ID || s.id == j.ArrayJobID
	case j.ArrayRecord():
		return s.id == j.ArrayJobID && slices.Contains(j.ArrayPending, s.task)
	}
	return s.id == j.ArrayJobID && s.task == j.ArrayTaskID
}

// stepsOnly lists the steps asked for of a job when only steps of it were
// (-j N.S): then its own line is not printed.
func (a *sacctArgs) stepsOnly(j *jobrec.Job) []string {
	var steps []string
	for _, s := range a.jobs {
		if !s.matches(j) {
			continue
		}
		if s.step == "" {
			return nil
		}
		steps = append(steps, s.step)
	}
	return steps
}

// printAcctFields is --helpformat: the field names four a line.
func printAcctFields(sio cli.IO) {
	var b strings.Builder
	for i, name := range format.AcctFieldNames() {
		switch {
		case i&3 != 0:
			b.WriteByte(' ')
		case i > 0:
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%-19s", name)
	}
	b.WriteByte('\n')
	io.WriteString(sio.Stdout, b.String())
}

const sacctUsage = `Usage: sacct [options]
	Use --help for help
`
