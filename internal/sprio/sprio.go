package sprio

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The priority queries sprio makes:
//
// GET /v1/config (api.PathConfig) -> api.Config: PriorityType and the
// PriorityWeight* settings (sprio's columns and -w).
//
// GET /v1/priorities (api.PathPriorities) -> []api.PriorityRow: each pending
// job that accrues priority, per partition, with its weighted factors. A
// pending array task comes as "A_T"; sprio, like Slurm's, shows the tasks
// still in the array's pending record as one row under the array's id, and a
// task with a record of its own under that record's id, for which it asks:
//
// GET /v1/jobs?state=PENDING (api.PathJobs), only when some row is "A_T".
//
// sprio filters by job, user and partition itself.

// sprioOptions is sprio's option table (src/sprio/opts.c).
var sprioOptions = []getopt.Option{
	{Name: "noheader", Short: 'h'},
	{Name: "jobs", Short: 'j', Arg: getopt.OptionalArgument},
	{Name: "long", Short: 'l'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "norm", Short: 'n'},
	{Name: "format", Short: 'o', Arg: getopt.RequiredArgument},
	{Name: "sort", Short: 'S', Arg: getopt.RequiredArgument},
	{Name: "partition", Short: 'p', Arg: getopt.RequiredArgument},
	{Name: "user", Short: 'u', Arg: getopt.RequiredArgument, ID: "users"},
	{Name: "users", Short: 'u', Arg: getopt.RequiredArgument},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
	{Name: "weights", Short: 'w'},
	{Name: "federation"},
	{Name: "help"},
	{Name: "local"},
	{Name: "sib", ID: "sibling"},
	{Name: "sibling"},
	{Name: "usage"},
}

// sprioArgs is a parsed sprio command line.
type sprioArgs struct {
	noHeader, jobFlag, long, norm, weights, local, sibling bool
	jobs                                                   string
	jobIDs                                                 []uint32
	users                                                  string
	userNames                                              []string
	parts                                                  string
	format, sort, clusters                                 string
	verbose                                                int
}

// Main is the sprio command.
func Main(args []string, sio cli.IO) int {
	a, code, done := parseSprio(args, sio)
	if done {
		return code
	}
	c, cfg, code := cli.Dial("sprio", sio)
	if c == nil {
		return code
	}
	if a.clusters != "" && !cli.KnownClusters("sprio", a.clusters, cfg, sio) {
		return 1
	}
	var ac api.Config
	if err := cli.GetJSON(c, api.PathConfig, nil, &ac); err != nil {
		return cli.DaemonError("sprio", err, sio)
	}
	if ac.Config != nil {
		cfg = ac.Config
	}
	if cfg.PriorityType == config.PriorityBasic {
		fmt.Fprintf(sio.Stderr, "You are not running a supported priority plugin\n(%s).\n"+
			"Only 'priority/multifactor' is supported.\n", cfg.PriorityType)
		return 1
	}
	w := prioWeights(cfg)
	var prios []api.PriorityRow
	if err := cli.GetJSON(c, api.PathPriorities, nil, &prios); err != nil {
		return cli.DaemonError("sprio", err, sio)
	}
	var pending []api.Job
	if hasArrayTasks(prios) {
		var err error
		if pending, err = cli.GetJobs(c, url.Values{"state": {string(slurm.Pending)}}); err != nil {
			return cli.DaemonError("sprio", err, sio)
		}
	}
	rows := a.filter(prioRows(prios, pending))

	spec := a.format
	if spec == "" {
		spec = format.DefaultPrioFormat(w, a.long, a.norm, a.users != "", a.sibling && !a.local)
	}
	f, bad := format.ParsePrioFormat(spec)
	for _, l := range bad {
		fmt.Fprintf(sio.Stderr, "sprio: error: Invalid job format specification: %c\n", l)
	}
	if a.jobs != "" && len(rows) == 0 {
		fmt.Fprintln(sio.Stdout, "Unable to find jobs matching user/id(s) specified")
		return 0
	}
	if !a.noHeader {
		io.WriteString(sio.Stdout, f.Header(w))
	}
	if a.weights {
		io.WriteString(sio.Stdout, f.Weights(w))
		return 0
	}
	if l, ok := format.SortPrioRows(rows, a.sort); !ok {
		fmt.Fprintf(sio.Stderr, "sprio: error: Invalid sort specification: %c\n", l)
		return 1
	}
	for i := range rows {
		io.WriteString(sio.Stdout, f.Line(&rows[i], w))
	}
	return 0
}

func prioWeights(cfg *config.Config) format.PrioWeights {
	p := cfg.Priority
	// PriorityWeightTRES as the file wrote it, as Slurm prints the
	// slurm.conf line's.
	tres := p.WeightTRESText
	if tres == "" && len(p.WeightTRES) > 0 {
		tres = p.WeightTRES.String()
	}
	return format.PrioWeights{Age: p.WeightAge, Assoc: p.WeightAssoc, FairShare: p.WeightFairshare,
		JobSize: p.WeightJobSize, Partition: p.WeightPartition, QOS: p.WeightQOS, TRES: tres}
}

func hasArrayTasks(rows []api.PriorityRow) bool {
	for _, r := range rows {
		if strings.Contains(r.JobID, "_") {
			return true
		}
	}
	return false
}

// prioRows gives each row the job id sprio prints: its own, the id of an
// array task's own record, or the array's for a task still in the pending
// record, whose tasks then make one row per partition.
func prioRows(prios []api.PriorityRow, pending []api.Job) []format.PrioRow {
	type task struct {
		array uint32
		task  int
	}
	own := map[task]uint32{}
	for _, j := range pending {
		if j.ArrayJobID != 0 && j.ArrayTaskID != jobrec.NoTask {
			own[task{j.ArrayJobID, j.ArrayTaskID}] = j.ID
		}
	}
	type key struct {
		id   uint32
		part string
	}
	seen := map[key]bool{}
	var out []format.PrioRow
	for _, p := range prios {
		a, t, isTask := strings.Cut(p.JobID, "_")
		n, err := strconv.ParseUint(a, 10, 32)
		if err != nil {
			continue
		}
		id := uint32(n)
		if isTask {
			tn, _ := strconv.Atoi(t)
			if o, ok := own[task{id, tn}]; ok {
				id = o
			} else if seen[key{id, p.Partition}] {
				continue
			}
		}
		seen[key{id, p.Partition}] = true
		out = append(out, format.PrioRow{PriorityRow: p, ID: id})
	}
	return out
}

// filter keeps the rows of the jobs, users and partitions asked for, as
// slurmctld does for sprio.
func (a *sprioArgs) filter(rows []format.PrioRow) []format.PrioRow {
	parts := splitNonEmpty(a.parts)
	var out []format.PrioRow
	for _, r := range rows {
		if len(a.jobIDs) > 0 && !containsID(a.jobIDs, r.ID) {
			continue
		}
		if a.users != "" && cli.IndexFold(a.userNames, r.User) < 0 {
			continue
		}
		if len(parts) > 0 && cli.IndexFold(parts, r.Partition) < 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}

func containsID(ids []uint32, id uint32) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

func splitNonEmpty(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseSprio(args []string, sio cli.IO) (a sprioArgs, code int, done bool) {
	formatGiven := false
	if _, ok := sio.Getenv("SPRIO_LOCAL"); ok {
		a.local = true
	}
	if _, ok := sio.Getenv("SPRIO_SIBLING"); ok {
		a.sibling = true
	}
	cmdLine := &cli.Command{Name: "sprio", Table: sprioOptions, Ordering: getopt.Permute, Help: sprioHelp, Usage: sprioUsage, BadOption: 1}
	ops, code, done := cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		v := r.Value
		switch r.Option.Key() {
		case "noheader":
			a.noHeader = true
		case "jobs":
			if r.HasValue {
				a.jobs = v
				ids, ok := prioJobIDs(v, sio)
				if !ok {
					return 1, true
				}
				a.jobIDs = ids
			}
			a.jobFlag = true
		case "long":
			a.long, formatGiven = true, true
		case "clusters":
			a.clusters, a.local = v, true
		case "norm":
			a.norm = true
		case "format":
			a.format, formatGiven = v, true
		case "sort":
			a.sort = v
		case "partition":
			a.parts = v
		case "users":
			a.users = v
			a.userNames = prioUsers(v, sio)
		case "verbose":
			a.verbose++
		case "weights":
			a.weights = true
		case "local":
			a.local = true
		case "sibling":
			a.sibling = true
		}
		return 0, false
	})
	if done {
		return a, code, true
	}
	if a.long && a.format != "" {
		fmt.Fprintln(sio.Stderr, "sprio: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
		return a, 1, true
	}
	if v, ok := sio.Getenv("SPRIO_FORMAT"); ok && !formatGiven {
		a.format = v
	}
	if len(ops) > 0 && a.jobFlag {
		a.jobs = ops[0]
		ids, ok := prioJobIDs(ops[0], sio)
		if !ok {
			return a, 1, true
		}
		a.jobIDs = ids
		ops = ops[1:]
	}
	if len(ops) > 0 {
		fmt.Fprintf(sio.Stderr, "sprio: error: Unrecognized option: %s\n", ops[0])
		io.WriteString(sio.Stdout, sprioUsage)
		return a, 1, true
	}
	if a.verbose > 0 {
		a.printOptions(sio)
	}
	return a, 0, false
}

// prioJobIDs reads -j: comma-separated job ids; sprio refuses anything
// that is not one (slurm_xlate_job_id).
func prioJobIDs(list string, sio cli.IO) ([]uint32, bool) {
	var ids []uint32
	for _, s := range splitNonEmpty(list) {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil || n == 0 {
			fmt.Fprintf(sio.Stderr, "sprio: error: Invalid job id: %s\n", s)
			return nil, false
		}
		ids = append(ids, uint32(n))
	}
	return ids, true
}

// prioUsers reads -u: names or uids, each turned into the name the rows
// carry; sprio reports one that names nobody and goes on (its message ends
// with a newline of its own, hence the blank line).
func prioUsers(list string, sio cli.IO) []string {
	var names []string
	for _, s := range splitNonEmpty(list) {
		if u, err := userdb.ByName(s); err == nil {
			names = append(names, u.Name)
			continue
		}
		if _, err := strconv.ParseUint(s, 10, 32); err == nil {
			if id, _ := strconv.ParseUint(s, 10, 32); userdb.Name(uint32(id)) != "" {
				names = append(names, userdb.Name(uint32(id)))
			}
			continue
		}
		fmt.Fprintf(sio.Stderr, "sprio: error: Invalid user: %s\n\n", s)
	}
	return names
}

// printOptions is sprio -v's _print_options.
func (a *sprioArgs) printOptions(sio cli.IO) {
	null := func(s string) string {
		if s == "" {
			return "(null)"
		}
		return s
	}
	jobFlag := 0
	if a.jobFlag {
		jobFlag = 1
	}
	fmt.Fprintf(sio.Stdout, "-----------------------------\nformat     = %s\njob_flag   = %d\njobs       = %s\n"+
		"partition  = %s\nusers      = %s\nverbose    = %d\n", null(a.format), jobFlag, null(a.jobs),
		null(a.parts), null(a.users), a.verbose)
	if a.verbose > 1 {
		for i, id := range a.jobIDs {
			fmt.Fprintf(sio.Stdout, "job_list[%d] = %d\n", i, id)
		}
	}
	fmt.Fprint(sio.Stdout, "-----------------------------\n\n\n")
}

// sprioUsage is sprio --usage (src/sprio/opts.c _usage).
const sprioUsage = "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n" +
	"   [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n"

// sprioHelp is sprio --help (src/sprio/opts.c _help).
const sprioHelp = "Usage: sprio [OPTIONS]\n" +
	"      --federation                display jobs in federation if a member of one\n" +
	"  -h, --noheader                  no headers on output\n" +
	"  -j, --jobs                      comma separated list of jobs\n" +
	"                                  to view, default is all\n" +
	"      --local                     display jobs on local cluster only\n" +
	"  -l, --long                      long report\n" +
	"  -M, --cluster=cluster_name      cluster to issue commands to.  Default is\n" +
	"                                  current cluster.  cluster with no name will\n" +
	"                                  reset to default.\n" +
	"                                  NOTE: SlurmDBD must be up.\n" +
	"  -n, --norm                      display normalized values\n" +
	"  -o, --format=format             format specification\n" +
	"      --sibling                   display job records separately for each federation cluster\n" +
	"  -p, --partition=partition_name  comma separated list of partitions\n" +
	"  -u, --user=user_name            comma separated list of users to view\n" +
	"  -v, --verbose                   verbosity level\n" +
	"  -V, --version                   output version information and exit\n" +
	"  -w, --weights                   show the weights for each priority factor\n" +
	"\n" +
	"Help options:\n" +
	"  --help                          show this help message\n" +
	"  --usage                         display a brief summary of sprio options\n"
