package scancel

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// scancelOptions is scancel's option table (src/scancel/opt.c).
var scancelOptions = []getopt.Option{
	{Name: "account", Short: 'A', Arg: getopt.RequiredArgument},
	{Name: "batch", Short: 'b'},
	{Name: "ctld"},
	{Name: "full", Short: 'f'},
	{Name: "help"},
	{Name: "hurry", Short: 'H'},
	{Name: "interactive", Short: 'i'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "jobname", Short: 'n', Arg: getopt.RequiredArgument, ID: "name"},
	{Name: "me"},
	{Name: "name", Short: 'n', Arg: getopt.RequiredArgument},
	{Name: "nodelist", Short: 'w', Arg: getopt.RequiredArgument},
	{Name: "partition", Short: 'p', Arg: getopt.RequiredArgument},
	{Name: "qos", Short: 'q', Arg: getopt.RequiredArgument},
	{Name: "quiet", Short: 'Q'},
	{Name: "reservation", Short: 'R', Arg: getopt.RequiredArgument},
	{Name: "sibling", Arg: getopt.RequiredArgument},
	{Name: "signal", Short: 's', Arg: getopt.RequiredArgument},
	{Name: "state", Short: 't', Arg: getopt.RequiredArgument},
	{Name: "usage"},
	{Name: "user", Short: 'u', Arg: getopt.RequiredArgument},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
	{Name: "wckey", Arg: getopt.RequiredArgument},
}

// scancelArgs is a parsed scancel command line.
type scancelArgs struct {
	account, name, nodelist, partition, qos, reservation, wckey string
	user                                                        string
	me                                                          bool
	state                                                       slurm.JobState
	signal                                                      int // 0: none given (SIGKILL)
	batch, full, interactive                                    bool
	verbose                                                     int
	ids                                                         []cancelID
}

// cancelID is one job named on the command line, as _xlate_job_step_ids
// reads it: the text sent to the daemon and what it names.
type cancelID struct {
	text string
	job  uint32
	task int // -1 none, -2 every task ("A_*")
	step bool
}

const allTasks = -2

// Main is the scancel command.
func Main(args []string, sio cli.IO) int {
	a, code, done := parseScancel(args, sio)
	if done {
		return code
	}
	c, cfg, code := cli.DialView("scancel", sio)
	if c == nil {
		return code
	}
	if a.defaultOpts() {
		// Only ids: each goes to the daemon as written (_signal_job_by_str).
		var texts []string
		for _, id := range a.ids {
			texts = append(texts, id.text)
		}
		return a.cancel(c, texts, sio)
	}
	return a.cancelFiltered(c, cfg, sio)
}

func parseScancel(args []string, sio cli.IO) (a scancelArgs, code int, done bool) {
	env := func(name string) string { v, _ := sio.Getenv(name); return v }
	if v := env("SCANCEL_ACCOUNT"); v != "" {
		a.account = strings.ToLower(v)
	}
	a.batch = envBool(env("SCANCEL_BATCH"), "SCANCEL_BATCH", a.batch, sio)
	a.full = envBool(env("SCANCEL_FULL"), "SCANCEL_FULL", a.full, sio)
	a.interactive = envBool(env("SCANCEL_INTERACTIVE"), "SCANCEL_INTERACTIVE", a.interactive, sio)
	a.name, a.partition = env("SCANCEL_NAME"), env("SCANCEL_PARTITION")
	a.qos = strings.ToLower(env("SCANCEL_QOS"))
	if v := env("SCANCEL_STATE"); v != "" {
		if a.state, code, done = scancelState(v, true, sio); done {
			return a, code, done
		}
	}
	a.user = env("SCANCEL_USER")
	if envBool(env("SCANCEL_VERBOSE"), "SCANCEL_VERBOSE", false, sio) {
		a.verbose = 1
	}
	a.wckey = env("SCANCEL_WCKEY")

	cmdLine := &cli.Command{Name: "scancel", Table: scancelOptions, Ordering: getopt.Permute, Help: scancelHelp, Usage: scancelUsage, BadOption: 1}
	ops, code, done := cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		v := r.Value
		switch r.Option.Key() {
		case "account":
			a.account = strings.ToLower(v)
		case "batch":
			a.batch = true
		case "full":
			a.full = true
		case "interactive":
			a.interactive = true
		case "me":
			a.user, a.me = strconv.Itoa(syscallGetuid()), true
		case "name":
			a.name = v
		case "partition":
			a.partition = v
		case "quiet":
			a.verbose = -1
		case "qos":
			a.qos = strings.ToLower(v)
		case "reservation":
			a.reservation = v
		case "signal":
			sig, err := slurmsyntax.ParseSignalName(v)
			if err != nil {
				fmt.Fprintf(sio.Stderr, "Unknown job signal: %s\n", v)
				return 1, true
			}
			a.signal = int(sig)
		case "state":
			if a.state, code, done = scancelState(v, false, sio); done {
				return code, done
			}
		case "user":
			a.user = v
		case "verbose":
			a.verbose++
		case "nodelist":
			a.nodelist = v
		case "wckey":
			a.wckey = v
		}
		return 0, false
	})
	if done {
		return a, code, true
	}
	for _, op := range ops {
		ids, ok := parseCancelIDs(op)
		if !ok {
			fmt.Fprintf(sio.Stderr, "scancel: error: Invalid job id %s\n", op)
			return a, 1, true
		}
		a.ids = append(a.ids, ids...)
	}
	if a.account == "" && len(a.ids) == 0 && a.name == "" && a.nodelist == "" && a.partition == "" &&
		a.qos == "" && a.reservation == "" && a.state == "" && a.user == "" && a.wckey == "" {
		fmt.Fprintln(sio.Stderr, "scancel: error: No job identification provided")
		return a, 1, true
	}
	return a, 0, false
}

// envBool reads SCANCEL_BATCH and its kind: true/T or false/F.
func envBool(v, name string, def bool, sio cli.IO) bool {
	switch strings.ToLower(v) {
	case "":
		return def
	case "true", "t":
		return true
	case "false", "f":
		return false
	}
	fmt.Fprintf(sio.Stderr, "scancel: error: Unrecognized %s value: %s\n", name, v)
	return def
}

// scancelState is _xlate_state_name.
func scancelState(v string, fromEnv bool, sio cli.IO) (slurm.JobState, int, bool) {
	if st, ok := slurm.ParseJobState(v); ok {
		return st, 0, false
	}
	if fromEnv {
		fmt.Fprintf(sio.Stderr, "Unrecognized SCANCEL_STATE value: %s\n", v)
	} else {
		fmt.Fprintf(sio.Stderr, "Invalid job state specified: %s\n", v)
	}
	fmt.Fprintln(sio.Stderr, "Valid job states are PENDING, RUNNING, and SUSPENDED")
	return "", 1, true
}

// parseCancelIDs is _xlate_job_step_ids for one operand: "N", "A_T",
// "A_*", "A_[1-3,5]", "N.S", or several of them joined by commas.
func parseCancelIDs(s string) ([]cancelID, bool) {
	var out []cancelID
	for s != "" {
		id, rest, _ := slurmsyntax.Strtol(s, slurmsyntax.OutOfRange)
		if id <= 0 || id > int64(^uint32(0)) {
			return nil, false
		}
		c := cancelID{job: uint32(id), task: -1}
		switch {
		case strings.HasPrefix(rest, "_["):
			end := strings.IndexByte(rest, ']')
			if end < 0 || end != len(rest)-1 {
				return nil, false
			}
			if _, err := slurmsyntax.ParseArray(rest[2:end], slurmsyntax.MaxArraySizeLimit); err != nil {
				return nil, false
			}
			// A task range is sent whole; no step may follow it.
			c.text = s
			return append(out, c), true
		case strings.HasPrefix(rest, "_*"):
			c.task, rest = allTasks, rest[2:]
		case strings.HasPrefix(rest, "_"):
			t, r, _ := slurmsyntax.Strtol(rest[1:], slurmsyntax.OutOfRange)
			if t < 0 || r == rest[1:] {
				return nil, false
			}
			c.task, rest = int(t), r
		}
		if strings.HasPrefix(rest, ".") {
			st, r, _ := slurmsyntax.Strtol(rest[1:], slurmsyntax.OutOfRange)
			if st < 0 {
				return nil, false
			}
			c.step, rest = true, r
		}
		c.text = s[:len(s)-len(rest)]
		out = append(out, c)
		switch {
		case rest == "":
			s = ""
		case rest[0] == ',':
			s = rest[1:]
		default:
			return nil, false
		}
	}
	return out, true
}

// defaultOpts is has_default_opt: job ids and nothing that filters or
// signals.
func (a *scancelArgs) defaultOpts() bool {
	return a.account == "" && !a.batch && !a.interactive && a.name == "" && a.partition == "" &&
		a.qos == "" && a.reservation == "" && a.signal == 0 && a.state == "" && a.user == "" &&
		a.wckey == "" && a.nodelist == ""
}

// cancel sends job strings to the daemon and reports each result as
// _cancel_job_id does: errors for unknown and finished jobs are said only
// with -v, and do not count when cancelling; the exit code is the highest
// Slurm error number (the shell keeps its low 8 bits: 2002 is 210).
func (a *scancelArgs) cancel(c *sockclient.Client, jobs []string, sio cli.IO) int {
	if len(jobs) == 0 {
		return 0
	}
	kind := ""
	switch {
	case a.full:
		kind = "full "
	case a.batch:
		kind = "batch "
	}
	if a.verbose > 0 {
		for _, j := range jobs {
			if a.signal == 0 {
				fmt.Fprintf(sio.Stderr, "scancel: Terminating %sjob %s\n", kind, j)
			} else {
				fmt.Fprintf(sio.Stderr, "scancel: Signal %d to %sjob %s\n", a.signal, kind, j)
			}
		}
	}
	res, err := cli.Post(c, api.PathCancel, api.Cancel{Jobs: jobs, Signal: a.signal, Batch: a.batch, Full: a.full})
	if err != nil {
		return cli.DaemonError("scancel", err, sio)
	}
	rc := 0
	for _, r := range res.Results {
		if r.Code == 0 {
			continue
		}
		quietCode := r.Code == slurm.ErrAlreadyDone || r.Code == slurm.ErrInvalidJobID
		if a.verbose > 0 || !quietCode {
			fmt.Fprintf(sio.Stderr, "scancel: error: Kill job error on job id %s: %s\n", r.Job, cli.ResultWords(r))
			cli.PrintResultHint(r, sio)
		}
		code := r.Code
		if quietCode && a.signal == 0 {
			code = 0 // the job is gone: what was asked is done
		}
		rc = max(rc, int(code))
	}
	return rc & 0xff
}

// cancelFiltered is scancel with filters or a signal: the active jobs are
// loaded, the ids checked against them (an unknown one is an error even
// without -v), the filters applied, and the jobs left cancelled by id,
// pending ones first.
func (a *scancelArgs) cancelFiltered(c *sockclient.Client, cfg *config.View, sio cli.IO) int {
	q := url.Values{}
	for _, id := range a.ids {
		q.Add("id", strconv.FormatUint(uint64(id.job), 10))
	}
	if len(q) == 0 && a.user != "" && !a.me {
		q.Add("user", a.user)
	}
	jobs, err := cli.GetJobs(c, q)
	if err != nil {
		return cli.LoadJobsError("scancel", err, sio)
	}
	var uid int64 = -1
	if a.user != "" {
		id, ok := cli.UserID(a.user, cfg)
		if !ok {
			fmt.Fprintf(sio.Stderr, "scancel: error: Invalid user name: %s\n", a.user)
			return 1
		}
		uid = id
	}
	rc := 0
	active := jobs[:0]
	for _, j := range jobs {
		if !j.State.Finished() {
			active = append(active, j)
		}
	}
	found := make([]bool, len(a.ids))
	for i, id := range a.ids {
		for k := range active {
			if id.matches(&active[k]) {
				found[i] = true
			}
		}
		if !found[i] {
			rc = 1
			if a.verbose >= 0 {
				fmt.Fprintf(sio.Stderr, "scancel: error: Kill job error on job id %s: %s\n", id.display(), slurm.ErrInvalidJobID)
			}
		}
	}
	var pending, others []string
	matched := 0
	for k := range active {
		j := &active[k]
		if !a.keepJob(j, uid) {
			continue
		}
		name := cli.CancelName(j)
		if len(a.ids) > 0 {
			hit := false
			for i, id := range a.ids {
				if found[i] && id.matches(j) {
					hit = true
					if id.task >= 0 && j.ArrayRecord() {
						name = fmt.Sprintf("%d_%d", j.ArrayJobID, id.task)
					}
				}
			}
			if !hit {
				continue
			}
		}
		matched++
		if j.State == slurm.Pending {
			pending = append(pending, name)
		} else {
			others = append(others, name)
		}
	}
	if matched == 0 && a.verbose > 0 {
		if f := a.filterText(); f != "" {
			fmt.Fprintf(sio.Stderr, "scancel: error: No active jobs match ALL job filters, including: %s\n", f)
		}
	}
	rc = max(rc, a.cancel(c, pending, sio))
	rc = max(rc, a.cancel(c, others, sio))
	return rc
}

// keepJob is _filter_job_records for one active job.
func (a *scancelArgs) keepJob(j *api.Job, uid int64) bool {
	switch j.State {
	case slurm.Pending, slurm.Running, slurm.Suspended:
	default:
		return false
	}
	return (a.account == "" || j.Account == a.account) &&
		(a.name == "" || j.Name == a.name) &&
		(a.partition == "" || j.Partition == a.partition) &&
		(a.qos == "" || j.QOS == a.qos) &&
		(a.reservation == "" || j.Request.Reservation == a.reservation) &&
		(a.state == "" || j.State == a.state) &&
		(a.user == "" || (uid >= 0 && int64(j.UID) == uid) || (uid < 0 && j.User == a.user)) &&
		(a.nodelist == "" || cli.HostsIntersect(a.nodelist, j.Alloc.Node, j.State)) &&
		(a.wckey == "" || strings.TrimPrefix(j.Request.WCKey, "*") == a.wckey)
}

// filterText lists the filters for scancel -v's "No active jobs match".
func (a *scancelArgs) filterText() string {
	var b strings.Builder
	for _, f := range []struct{ k, v string }{
		{"account", a.account}, {"job_name", a.name}, {"nodelist", a.nodelist},
		{"partition", a.partition}, {"qos", a.qos}, {"reservation", a.reservation},
		{"state", string(a.state)}, {"user_name", a.user}, {"wckey", a.wckey},
	} {
		if f.v != "" {
			fmt.Fprintf(&b, "%s=%s ", f.k, f.v)
		}
	}
	return b.String()
}

// matches is scancel's test of an id against a loaded job.
func (id cancelID) matches(j *api.Job) bool {
	switch {
	case id.task == -1:
		return id.job == j.ID || (id.job == j.ArrayJobID && !id.step)
	case id.task == allTasks:
		return id.job == j.ArrayJobID
	case id.job != j.ArrayJobID:
		return false
	case j.ArrayRecord():
		for _, t := range j.ArrayPending {
			if t == id.task {
				return true
			}
		}
		return false
	}
	return j.ArrayTaskID == id.task
}

// display is how scancel names an id it did not find.
func (id cancelID) display() string {
	switch id.task {
	case -1:
		return strconv.FormatUint(uint64(id.job), 10)
	case allTasks:
		return fmt.Sprintf("%d_*", id.job)
	}
	return fmt.Sprintf("%d_%d", id.job, id.task)
}

func syscallGetuid() int { return syscall.Getuid() }

const scancelUsage = `Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]
               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]
               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]
               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]
               [job_id[_array_id][.step_id]]
`

const scancelHelp = `Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -A, --account=account           act only on jobs charging this account
  -b, --batch                     signal batch shell for specified job
  -f, --full                      signal batch shell and all steps for specified job
  -H, --hurry                     avoid burst buffer stage out
  -i, --interactive               require response from user for each job
  -M, --clusters                  clusters to issue commands to.
                                  NOTE: SlurmDBD must be up.
  -n, --name=job_name             act only on jobs with this name
  -p, --partition=partition       act only on jobs in this partition
  -Q, --quiet                     disable warnings
  -q, --qos=qos                   act only on jobs with this quality of service
  -R, --reservation=reservation   act only on jobs with this reservation
      --sibling=cluster_name      remove an active sibling job from a federated job
  -s, --signal=name | integer     signal to send to job, default is SIGKILL
  -t, --state=states              act only on jobs in this state.  Valid job
                                  states are PENDING, RUNNING and SUSPENDED
  -u, --user=user_name            act only on jobs of this user
  -V, --version                   output version information and exit
  -v, --verbose                   verbosity level
  -w, --nodelist                  act only on jobs on these nodes
      --wckey=wckey               act only on jobs with this workload
                                  charactization key

Help options:
  --help                          show this help message
  --usage                         display brief usage message
`
