package squeue

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// squeueOptions is squeue's option table (src/squeue/opts.c), in its order.
var squeueOptions = []getopt.Option{
	{Name: "accounts", Short: 'A', Arg: getopt.RequiredArgument},
	{Name: "all", Short: 'a'},
	{Name: "array", Short: 'r'},
	{Name: "array-unique"},
	{Name: "Format", Short: 'O', Arg: getopt.RequiredArgument},
	{Name: "format", Short: 'o', Arg: getopt.RequiredArgument},
	{Name: "federation"},
	{Name: "help"},
	{Name: "hide"},
	{Name: "iterate", Short: 'i', Arg: getopt.RequiredArgument},
	{Name: "jobs", Short: 'j', Arg: getopt.OptionalArgument},
	{Name: "local"},
	{Name: "long", Short: 'l'},
	{Name: "licenses", Short: 'L', Arg: getopt.RequiredArgument},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "me"},
	{Name: "name", Short: 'n', Arg: getopt.RequiredArgument},
	{Name: "noconvert"},
	{Name: "node", Short: 'w', Arg: getopt.RequiredArgument, ID: "nodelist"},
	{Name: "nodes", Short: 'w', Arg: getopt.RequiredArgument, ID: "nodelist"},
	{Name: "nodelist", Short: 'w', Arg: getopt.RequiredArgument},
	{Name: "noheader", Short: 'h'},
	{Name: "partitions", Short: 'p', Arg: getopt.RequiredArgument},
	{Name: "priority", Short: 'P'},
	{Name: "qos", Short: 'q', Arg: getopt.RequiredArgument},
	{Name: "reservation", Short: 'R', Arg: getopt.RequiredArgument},
	{Name: "sib", ID: "sibling"},
	{Name: "sibling"},
	{Name: "sort", Short: 'S', Arg: getopt.RequiredArgument},
	{Name: "start"},
	{Name: "steps", Short: 's', Arg: getopt.OptionalArgument},
	{Name: "states", Short: 't', Arg: getopt.RequiredArgument},
	{Name: "usage"},
	{Name: "user", Short: 'u', Arg: getopt.RequiredArgument, ID: "users"},
	{Name: "users", Short: 'u', Arg: getopt.RequiredArgument},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
	{Name: "json"},
	{Name: "yaml"},
	{Short: 'U', Arg: getopt.RequiredArgument, ID: "accounts"},
}

// squeueArgs is a parsed squeue command line.
type squeueArgs struct {
	all, array, noHeader, long, start, noConvert bool
	jobFlag, steps, me                           bool
	format, formatLong, sort                     string
	jobs                                         []jobSel
	formatSet, formatLongSet                     bool
	userNames                                    []string
	users                                        []cli.UserMatch
	usersGiven                                   bool
	states                                       []slurm.JobState
	allStates                                    bool
	partitions, names, accounts, qos, licenses   []string
	reservation, nodes                           string
	iterate                                      int
	json                                         bool
}

// jobSel is one -j item: a job id, or a task of an array job (task < 0:
// none).
type jobSel struct {
	id   uint32
	task int
}

// Main is the squeue command.
func Main(args []string, sio cli.IO) int {
	a, code, done := parseSqueue(args, sio)
	if done {
		return code
	}
	c, cfg, code := cli.DialView("squeue", sio)
	if c == nil {
		return code
	}
	a.resolveUsers(sio, cfg)
	if a.json {
		return squeueJSON(c, cfg, sio)
	}
	for {
		if !a.noHeader && (a.iterate > 0 || a.long) {
			fmt.Fprintln(sio.Stdout, format.Date(sio.Now()))
		}
		code = a.show(c, cfg, sio)
		if a.iterate <= 0 {
			return code
		}
		fmt.Fprintln(sio.Stdout)
		time.Sleep(time.Duration(a.iterate) * time.Second)
	}
}

// parseSqueue reads the command line and the SQUEUE_* variables as
// squeue's parse_command_line does. done is set when squeue has nothing
// more to do (an error, --help, --version).
func parseSqueue(args []string, sio cli.IO) (a squeueArgs, code int, done bool) {
	env := func(name string) (string, bool) { return sio.Getenv(name) }
	if _, ok := env("SQUEUE_ALL"); ok {
		a.all = true
	}
	if _, ok := env("SQUEUE_ARRAY"); ok {
		a.array = true
	}
	if v, ok := env("SQUEUE_SORT"); ok {
		a.sort = v
	}
	overrideEnv := false
	var stateSpec, userSpec string
	var haveStates, haveUsers, haveNames, haveParts bool
	cmdLine := &cli.Command{Name: "squeue", Table: squeueOptions, Ordering: getopt.Permute, Help: squeueHelp, Usage: squeueUsage, BadOption: 1}
	ops, code, done := cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		v := r.Value
		switch r.Option.Key() {
		case "accounts":
			a.accounts = cli.SplitList(v)
		case "all":
			a.all = true
		case "noheader":
			a.noHeader = true
		case "iterate":
			a.iterate, _ = strconv.Atoi(v)
			if a.iterate <= 0 {
				fmt.Fprintf(sio.Stderr, "squeue: error: --iterate=%s\n\n", v)
				return 1, true
			}
		case "jobs":
			if r.HasValue {
				if a.jobs, code, done = parseJobSels(v, sio); done {
					return code, done
				}
			}
			a.jobFlag = true
		case "long":
			a.long, overrideEnv = true, true
		case "licenses":
			a.licenses = cli.SplitList(v)
		case "name":
			a.names, haveNames = cli.SplitList(v), true
		case "Format":
			if a.formatSet {
				fmt.Fprintln(sio.Stderr, "squeue: error: -O (--Format) is incompatible with -o (--format)")
				return 1, true
			}
			a.formatLong, a.formatLongSet, overrideEnv = v, true, true
		case "format":
			if a.formatLongSet {
				fmt.Fprintln(sio.Stderr, "squeue: error: -o (--format) is incompatible with -O (--Format)")
				return 1, true
			}
			a.format, a.formatSet, overrideEnv = v, true, true
		case "partitions":
			a.partitions, haveParts, a.all = cli.SplitList(v), true, true
		case "qos":
			a.qos = cli.SplitList(v)
		case "reservation":
			a.reservation = v
		case "array":
			a.array = true
		case "steps":
			a.steps, overrideEnv = true, true
		case "sort":
			a.sort = v
		case "states":
			stateSpec, haveStates = v, true
		case "users":
			userSpec, haveUsers, a.me = v, true, false
		case "me":
			haveUsers, a.me = true, true
		case "nodelist":
			a.nodes = v
		case "hide":
			a.all = false
		case "start":
			a.start, overrideEnv = true, true
		case "noconvert":
			a.noConvert = true
		case "json":
			a.json = true
		case "yaml":
			fmt.Fprintf(sio.Stderr, "squeue: error: --%s is not supported by slurm-lite yet; use --json, -o or -O\n", r.Option.Key())
			return 1, true
		}
		return 0, false
	})
	if done {
		return a, code, true
	}
	if a.long && a.formatSet {
		fmt.Fprintln(sio.Stderr, "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
		return a, 1, true
	}
	if !overrideEnv {
		if v, ok := env("SQUEUE_FORMAT"); ok {
			a.format, a.formatSet = v, true
		} else if v, ok := env("SQUEUE_FORMAT2"); ok {
			a.formatLong, a.formatLongSet = v, true
		}
	}
	if len(ops) > 0 {
		if a.jobFlag {
			if a.jobs, code, done = parseJobSels(ops[0], sio); done {
				return a, code, done
			}
			ops = ops[1:]
		} else if a.steps {
			ops = ops[1:]
		}
		if len(ops) > 0 {
			fmt.Fprintf(sio.Stderr, "squeue: error: Unrecognized option: %s\n", ops[0])
			io.WriteString(sio.Stdout, squeueUsage)
			return a, 1, true
		}
	}
	if a.steps {
		fmt.Fprintln(sio.Stderr, "squeue: error: job steps are not listed by slurm-lite (--steps)")
		return a, 1, true
	}
	if v, ok := env("SQUEUE_ACCOUNT"); ok && a.accounts == nil {
		a.accounts = cli.SplitList(v)
	}
	if v, ok := env("SQUEUE_NAMES"); ok && !haveNames {
		a.names = cli.SplitList(v)
	}
	if v, ok := env("SQUEUE_PARTITION"); ok && !haveParts {
		a.partitions, a.all = cli.SplitList(v), true
	}
	if v, ok := env("SQUEUE_QOS"); ok && a.qos == nil {
		a.qos = cli.SplitList(v)
	}
	if v, ok := env("SQUEUE_STATES"); ok && !haveStates {
		stateSpec, haveStates = v, true
	}
	if v, ok := env("SQUEUE_USERS"); ok && !haveUsers {
		userSpec, haveUsers = v, true
	}
	if a.start {
		if !a.formatSet && !a.formatLongSet {
			a.format, a.formatSet = format.SqueueStart, true
		}
		if a.sort == "" {
			a.sort = "S"
		}
		if !haveStates {
			stateSpec, haveStates = "PD", true
		}
	}
	if haveStates {
		if code, done = a.parseStates(stateSpec, sio); done {
			return a, code, done
		}
	}
	if haveUsers {
		a.usersGiven = true
		if !a.me {
			a.userNames = cli.SplitList(userSpec)
		}
	}
	return a, 0, false
}

// userNames are the -u names, resolved once the configuration is read.
func (a *squeueArgs) resolveUsers(sio cli.IO, cfg *config.View) {
	if a.me {
		a.users = []cli.UserMatch{cli.Me()}
		return
	}
	for _, name := range a.userNames {
		uid, ok := cli.UserID(name, cfg)
		if !ok {
			// squeue goes on without the user, so that no job matches.
			fmt.Fprintf(sio.Stderr, "squeue: error: Invalid user: %s\n\n", name)
			continue
		}
		a.users = append(a.users, cli.UserMatch{Name: name, UID: uid})
	}
}

// parseStates is _build_state_list: "all", or states by long or short
// name; an unknown one ends squeue with the list of valid ones.
func (a *squeueArgs) parseStates(spec string, sio cli.IO) (int, bool) {
	if strings.EqualFold(spec, "all") {
		a.allStates = true
		return 0, false
	}
	a.states = nil
	for _, s := range cli.SplitList(spec) {
		st, ok := slurm.ParseJobState(s)
		if !ok {
			fmt.Fprintf(sio.Stderr, "squeue: error: Invalid job state specified: %s\n", s)
			fmt.Fprintf(sio.Stderr, "squeue: error: Valid job states include: %s\n\n", validJobStates)
			return 1, true
		}
		a.states = append(a.states, st)
	}
	return 0, false
}

// validJobStates is the list squeue prints after an unknown -t state.
const validJobStates = "PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED"

// parseJobSels is _build_job_list: comma-separated ids, each "N" or
// "A_T", read as strtol reads them; an id that is not positive ends squeue.
func parseJobSels(spec string, sio cli.IO) ([]jobSel, int, bool) {
	var sels []jobSel
	for _, tok := range cli.SplitList(spec) {
		id, rest, _ := slurmsyntax.Strtol(tok, slurmsyntax.OutOfRange)
		sel := jobSel{id: uint32(id), task: -1}
		if strings.HasPrefix(rest, "_") {
			t, _, _ := slurmsyntax.Strtol(rest[1:], slurmsyntax.OutOfRange)
			sel.task = int(t)
		}
		if id <= 0 || id > int64(^uint32(0)) {
			fmt.Fprintf(sio.Stderr, "squeue: error: Invalid job id: %s\n", tok)
			return nil, 1, true
		}
		sels = append(sels, sel)
	}
	return sels, 0, false
}

// query is what squeue asks the daemon: with one job id, that id alone
// (slurm_load_job, which fails for an unknown id); otherwise every filter
// the daemon can apply.
func (a *squeueArgs) query() url.Values {
	q := url.Values{}
	if len(a.jobs) == 1 {
		q.Add("id", strconv.FormatUint(uint64(a.jobs[0].id), 10))
		return q
	}
	for _, s := range a.jobs {
		q.Add("id", jobSelString(s))
	}
	// --me selects by uid, which the client does; -u by name, which the
	// daemon may do too (the client filters again).
	if !a.me {
		for _, u := range a.users {
			q.Add("user", u.Name)
		}
	}
	for _, p := range a.partitions {
		q.Add("partition", p)
	}
	for _, n := range a.names {
		q.Add("name", n)
	}
	return q
}

func jobSelString(s jobSel) string {
	if s.task >= 0 {
		return fmt.Sprintf("%d_%d", s.id, s.task)
	}
	return strconv.FormatUint(uint64(s.id), 10)
}

// squeueUsage and squeueHelp are squeue's --usage and --help texts.
const squeueUsage = `Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]
              [-n name] [-o format] [-p partitions] [--qos qos]
              [--reservation reservation] [--sort fields] [--start]
              [--step step_id] [-t states] [-u user_name] [--usage]
              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]
	      [-ahjlrsv]
`

const squeueHelp = `Usage: squeue [OPTIONS]
  -A, --account=account(s)        comma separated list of accounts
				  to view, default is all accounts
  -a, --all                       display jobs in hidden partitions
      --array-unique              display one unique pending job array
                                  element per line
      --federation                Report federated information if a member
                                  of one
  -h, --noheader                  no headers on output
      --hide                      do not display jobs in hidden partitions
  -i, --iterate=seconds           specify an interation period
  -j, --job=job(s)                comma separated list of jobs IDs
                                  to view, default is all
      --json                      Produce JSON output
      --local                     Report information only about jobs on the
                                  local cluster. Overrides --federation.
  -l, --long                      long report
  -L, --licenses=(license names)  comma separated list of license names to view
  -M, --clusters=cluster_name     cluster to issue commands to.  Default is
                                  current cluster.  cluster with no name will
                                  reset to default. Implies --local.
  -n, --name=job_name(s)          comma separated list of job names to view
      --noconvert                 don't convert units from their original type
                                  (e.g. 2048M won't be converted to 2G).
  -o, --format=format             format specification
  -O, --Format=format             format specification
  -p, --partition=partition(s)    comma separated list of partitions
				  to view, default is all partitions
  -q, --qos=qos(s)                comma separated list of qos's
				  to view, default is all qos's
  -R, --reservation=name          reservation to view, default is all
  -r, --array                     display one job array element per line
      --sibling                   Report information about all sibling jobs
                                  on a federated cluster. Implies --federation.
  -s, --step=step(s)              comma separated list of job steps
				  to view, default is all
  -S, --sort=fields               comma separated list of fields to sort on
      --start                     print expected start times of pending jobs
  -t, --states=states             comma separated list of states to view,
				  default is pending and running,
				  '--states=all' reports all states
  -u, --user=user_name(s)         comma separated list of users to view
      --name=job_name(s)          comma separated list of job names to view
  -v, --verbose                   verbosity level
  -V, --version                   output version information and exit
  -w, --nodelist=hostlist         list of nodes to view, default is 
				  all nodes
      --yaml                      Produce YAML output

Help options:
  --help                          show this help message
  --usage                         display a brief summary of squeue options
`
