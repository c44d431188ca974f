package scontrol

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// scontrolOptions is scontrol's option table (src/scontrol/scontrol.c).
var scontrolOptions = []getopt.Option{
	{Name: "all", Short: 'a'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "details", Short: 'd'},
	{Name: "federation"},
	{Name: "future", Short: 'F'},
	{Name: "help", Short: 'h'},
	{Name: "hide"},
	{Name: "local"},
	{Name: "oneliner", Short: 'o'},
	{Name: "quiet", Short: 'Q'},
	{Name: "sibling"},
	{Name: "uid", Short: 'u', Arg: getopt.RequiredArgument},
	{Name: "usage", ID: "help"},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
}

// scontrolArgs is scontrol's state across its command: flags and the exit
// code that commands raise.
type scontrolArgs struct {
	details  int
	all      bool // -a: hidden partitions too
	oneLiner bool
	quiet    int // 1: -Q, -1: -v
	exit     int
	sio      cli.IO
	client   *sockclient.Client
	env      *format.Env
}

// Main is the scontrol command: the job commands (show job, hold,
// release, requeue) and show hostnames / hostlist.
func Main(args []string, sio cli.IO) int {
	s := &scontrolArgs{sio: sio}
	p := getopt.NewParser(scontrolOptions, getopt.Permute, args)
	for {
		r, ok, err := p.Next()
		if err != nil {
			fmt.Fprintf(sio.Stderr, "scontrol: %v\nTry \"scontrol --help\" for more information\n", err)
			return 1
		}
		if !ok {
			break
		}
		switch r.Option.Key() {
		case "all":
			s.all = true
		case "details":
			s.details++
		case "hide":
			s.details = 0
		case "oneliner":
			s.oneLiner = true
		case "quiet":
			s.quiet = 1
		case "verbose":
			s.quiet = -1
		case "help":
			io.WriteString(sio.Stdout, scontrolHelp)
			return 0
		case "version":
			fmt.Fprintln(sio.Stdout, cli.SlurmVersion)
			return 0
		}
	}
	cmd := p.Operands()
	if len(cmd) == 0 {
		fmt.Fprintln(sio.Stderr, "scontrol: error: slurm-lite's scontrol runs one command given on its command line; interactive mode is not supported")
		return 1
	}
	s.run(cmd)
	return s.exit
}

// keyword reports whether tag abbreviates word to at least min letters, as
// scontrol's xstrncasecmp(tag, word, MAX(len(tag), min)) does.
func keyword(tag, word string, min int) bool {
	return len(tag) >= min && len(tag) <= len(word) && strings.EqualFold(tag, word[:len(tag)])
}

// run is _process_command for the commands slurm-lite has.
func (s *scontrolArgs) run(argv []string) {
	tag := argv[0]
	switch {
	case keyword(tag, "show", 3):
		s.show(argv)
	case keyword(tag, "requeue", 3):
		if len(argv) < 2 {
			s.tooFew(tag)
			return
		}
		for _, job := range argv[1:] {
			s.control(api.ActionRequeue, job, false)
		}
	case keyword(tag, "hold", 4), keyword(tag, "holdu", 5), keyword(tag, "uhold", 5), keyword(tag, "release", 3):
		if len(argv) < 2 {
			s.tooFew(tag)
			return
		}
		action := api.ActionHold
		if keyword(tag, "release", 3) {
			action = api.ActionRelease
		}
		for _, job := range argv[1:] {
			s.control(action, job, true)
		}
	case keyword(tag, "yield", 5):
		s.yield(argv)
	case keyword(tag, "update", 1):
		s.update(tag, argv[1:])
	case keyword(tag, "create", 2):
		s.createResv(tag, argv[1:])
	case keyword(tag, "delete", 3):
		s.deleteResv(tag, argv[1:])
	case keyword(tag, "help", 2):
		// Slurm's "help": the usage, after a complaint about extra words.
		if len(argv) > 1 {
			s.exit = 1
			fmt.Fprintf(s.sio.Stderr, "too many arguments for keyword:%s\n", tag)
		}
		io.WriteString(s.sio.Stdout, scontrolHelp)
	case keyword(tag, "ping", 3):
		if len(argv) > 1 {
			s.exit = 1
			fmt.Fprintf(s.sio.Stderr, "too many arguments for keyword:%s\n", tag)
			return
		}
		s.ping()
	case keyword(tag, "version", 4):
		fmt.Fprintln(s.sio.Stdout, cli.SlurmVersion)
	case keyword(tag, "token", 3):
		s.token(argv)
	default:
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "invalid keyword: %s\n", tag)
	}
}

func (s *scontrolArgs) tooFew(tag string) {
	s.exit = 1
	if s.quiet != 1 {
		fmt.Fprintf(s.sio.Stderr, "too few arguments for keyword:%s\n", tag)
	}
}

// connect opens the daemon's client once.
func (s *scontrolArgs) connect() bool {
	if s.client != nil {
		return true
	}
	c, cfg, code := cli.Dial("scontrol", s.sio)
	if c == nil {
		s.exit = code
		return false
	}
	s.client, s.env = c, cli.NewEnv(s.sio, cfg)
	return true
}

// show is _show_it.
func (s *scontrolArgs) show(argv []string) {
	if len(argv) < 2 {
		s.tooFew(argv[0])
		return
	}
	// Slurm lets more words follow assoc_mgr (and anything beginning
	// like it, comparing two letters only: xstrncasecmp with a length of 2).
	manyArgs := len(argv[1]) >= 2 && strings.EqualFold(argv[1][:2], "as")
	if len(argv) > 3 && !manyArgs {
		s.exit = 1
		if s.quiet != 1 {
			fmt.Fprintf(s.sio.Stderr, "too many arguments for keyword:%s\n", argv[0])
		}
		return
	}
	tag, val, hasVal := strings.Cut(argv[1], "=")
	if !hasVal && len(argv) == 3 {
		val, hasVal = argv[2], true
	}
	switch {
	case keyword(tag, "hostnames", 5):
		if !hasVal {
			val, hasVal = s.sio.Getenv("SLURM_NODELIST")
		}
		s.hostnames(val, hasVal)
	case keyword(tag, "hostlist", 5):
		s.hostlist(val, hasVal, false)
	case keyword(tag, "hostlistsorted", 9):
		s.hostlist(val, hasVal, true)
	case keyword(tag, "jobs", 1), keyword(tag, "jobid", 1):
		s.showJob(val, hasVal)
	case keyword(tag, "assoc_mgr", 2), keyword(tag, "cache", 2):
		s.showAssocMgr(argv[2:])
	case s.showEntity(tag, val, hasVal): // node, partition, config
	default:
		s.exit = 1
		if s.quiet != 1 {
			fmt.Fprintf(s.sio.Stderr, "invalid entity:%s for keyword:%s \n", tag, argv[0])
		}
	}
}

// hostnames is scontrol_print_hosts: a hostlist one name a line. A bad
// one is reported without failing, as Slurm does.
func (s *scontrolArgs) hostnames(list string, ok bool) {
	if !ok {
		fmt.Fprintln(s.sio.Stderr, "scontrol: error: host list is empty")
		return
	}
	hosts, err := slurmtime.ExpandHostlist(list)
	if err != nil {
		fmt.Fprintf(s.sio.Stderr, "Invalid hostlist: %s\n", list)
		return
	}
	for _, h := range hosts {
		fmt.Fprintln(s.sio.Stdout, h)
	}
}

// hostlist is scontrol_encode_hostlist: names (or a file of them, given
// by an absolute path) as one hostlist expression.
func (s *scontrolArgs) hostlist(list string, ok, sorted bool) {
	if !ok {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "invalid encode argument\n")
		io.WriteString(s.sio.Stdout, scontrolHelp)
		return
	}
	if strings.HasPrefix(list, "/") {
		b, err := os.ReadFile(list)
		if err != nil {
			s.exit = 1
			fmt.Fprintf(s.sio.Stderr, "Can not open %s\n", list)
			return
		}
		list = strings.ReplaceAll(strings.TrimRight(string(b), "\n"), "\n", ",")
	}
	hosts, err := slurmtime.ExpandHostlist(list)
	if err != nil {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "Invalid hostlist: %s\n", list)
		return
	}
	if sorted {
		slices.Sort(hosts)
		hosts = slices.Compact(hosts)
		fmt.Fprintln(s.sio.Stdout, slurmtime.CompressHostlist(hosts))
		return
	}
	out, _ := slurmtime.NormalizeHostlist(list)
	fmt.Fprintln(s.sio.Stdout, out)
}

// showJob is scontrol_print_job: one job (an id, or A_T), or all of them.
func (s *scontrolArgs) showJob(id string, hasID bool) {
	var jobID uint32
	task := jobrec.NoTask
	if hasID {
		for _, c := range id {
			if (c < '0' || c > '9') && c != '_' && c != '+' {
				s.exit = 1
				if s.quiet != 1 {
					fmt.Fprintf(s.sio.Stderr, "scontrol_print_job error: %s\n", slurm.ErrInvalidJobID)
				}
				return
			}
		}
		n, rest := cli.Cstrtol(id)
		jobID = uint32(n)
		if strings.HasPrefix(rest, "_") {
			t, _ := cli.Cstrtol(rest[1:])
			task = int(t)
		}
	}
	if !s.connect() {
		return
	}
	q := url.Values{}
	if jobID != 0 {
		q.Set("id", strconv.FormatUint(uint64(jobID), 10))
	}
	jobs, err := cli.GetJobs(s.client, q)
	if err == nil && jobID != 0 && len(jobs) == 0 {
		err = &sockclient.Error{Code: slurm.ErrInvalidJobID}
	}
	if err != nil {
		s.exit = 1
		if s.quiet != 1 {
			cli.LoadJobsError("scontrol", err, s.sio)
		}
		return
	}
	slices.SortStableFunc(jobs, func(a, b api.Job) int { return int(int64(a.ID) - int64(b.ID)) })
	// RunTime counts to the moment the answer came, as scontrol reads the
	// clock after loading the jobs.
	s.env.Now = s.sio.Now()
	var b strings.Builder
	printed := 0
	for i := range jobs {
		j := &jobs[i]
		showTask := jobrec.NoTask
		if task != jobrec.NoTask {
			switch {
			case j.ArrayRecord() && slices.Contains(j.ArrayPending, task):
				showTask = task
			case !j.ArrayRecord() && j.ArrayTaskID == task:
			default:
				continue
			}
		}
		b.WriteString(format.ShowJob(j, showTask, s.details, s.oneLiner, s.env))
		printed++
	}
	io.WriteString(s.sio.Stdout, b.String())
	if printed == 0 {
		switch {
		case hasID && task != jobrec.NoTask:
			s.exit = 1
			if s.quiet != 1 {
				fmt.Fprintf(s.sio.Stdout, "Job %d_%d not found\n", jobID, task)
			}
		case hasID:
			s.exit = 1
			if s.quiet != 1 {
				fmt.Fprintf(s.sio.Stdout, "Job %d not found\n", jobID)
			}
		case s.quiet != 1:
			fmt.Fprintln(s.sio.Stdout, "No jobs in the system")
		}
	}
}

// control is scontrol_hold and scontrol_requeue for one argument: job ids
// separated by commas or blanks ("12,13", "12_[1-3]"). Each failure prints
// Slurm's words and the job; a hold or release that failed adds
// slurm_perror's line for the last error.
func (s *scontrolArgs) control(action, arg string, hold bool) {
	arg, _ = cutFold(arg, "JobID=")
	arg, _ = cutFold(arg, "Job=")
	if name, ok := cutFold(arg, "Name=", "JobName="); ok && hold {
		s.controlByName(action, name)
		return
	}
	jobs, ok := splitJobList(arg)
	if !ok {
		s.exit = 1
		if s.quiet != 1 {
			fmt.Fprintf(s.sio.Stderr, "%s for job %s\n", slurm.ErrInvalidJobID, arg)
		}
		if hold {
			s.perror(slurm.ErrInvalidJobID, "")
		}
		return
	}
	if !s.connect() {
		return
	}
	res, err := cli.Post(s.client, api.PathControl, api.Control{Action: action, Jobs: jobs})
	if err != nil {
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	last := api.Result{}
	for _, r := range res.Results {
		if r.Code == 0 {
			continue
		}
		s.exit, last = 1, r
		if s.quiet != 1 {
			fmt.Fprintf(s.sio.Stderr, "%s for job %s\n", cli.ResultWords(r), r.Job)
			cli.PrintResultHint(r, s.sio)
		}
	}
	if hold && last.Code != 0 {
		s.perror(last.Code, last.Error)
	}
}

// controlByName holds or releases the jobs of a name (scontrol hold
// Name=NAME): each job of that name, by id; one that is not pending any
// more is refused by the daemon, as by slurmctld.
func (s *scontrolArgs) controlByName(action, name string) {
	if !s.connect() {
		return
	}
	jobs, err := cli.GetJobs(s.client, url.Values{"name": {name}})
	if err != nil {
		s.exit = 1
		cli.LoadJobsError("scontrol", err, s.sio)
		return
	}
	var ids []string
	for i := range jobs {
		j := &jobs[i]
		if j.Name != name || (j.State != "PENDING" && j.ArrayTaskID != jobrec.NoTask) {
			continue
		}
		ids = append(ids, cli.CancelName(j))
	}
	if len(ids) == 0 {
		return
	}
	res, err := cli.Post(s.client, api.PathControl, api.Control{Action: action, Jobs: ids})
	if err != nil {
		s.exit = cli.DaemonError("scontrol", err, s.sio)
		return
	}
	last := api.Result{}
	for _, r := range res.Results {
		if r.Code != 0 {
			s.exit, last = 1, r
			if s.quiet != 1 {
				fmt.Fprintf(s.sio.Stderr, "%s for job %s\n", cli.ResultWords(r), r.Job)
				cli.PrintResultHint(r, s.sio)
			}
		}
	}
	if last.Code != 0 {
		s.perror(last.Code, last.Error)
	}
}

// cutFold removes the first of prefixes that s begins with, in any case.
func cutFold(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return s, false
}

func (s *scontrolArgs) perror(code slurm.Errno, words string) {
	if s.quiet != 1 {
		fmt.Fprintf(s.sio.Stderr, "slurm_suspend error: %s\n", cli.Strerror(code, words))
	}
}

// splitJobList is _is_job_id: job ids split at commas and blanks outside
// brackets; false for anything that is not a job id.
func splitJobList(s string) ([]string, bool) {
	var out []string
	depth, start := 0, 0
	plus, under := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			if plus {
				return nil, false
			}
			plus = true
		case c == '_':
			if under {
				return nil, false
			}
			under = true
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '-':
			if depth == 0 && !under {
				return nil, false
			}
		case c == ',' || c == ' ':
			if depth == 0 {
				if i > start {
					out = append(out, s[start:i])
				}
				start, plus, under = i+1, false, false
			}
		case c < '0' || c > '9':
			return nil, false
		}
	}
	if depth != 0 || s == "" {
		return nil, false
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out, len(out) > 0
}

// ping is _ping_slurmctld for the one controller: "UP" and 0 when the
// daemon answers within MessageTimeout, else "DOWN" and 1 (with Slurm's
// banner for root). Scripts wait for a daemon they just started with
// `until scontrol ping >/dev/null; do sleep 0.2; done`.
func (s *scontrolArgs) ping() {
	cfg, _, err := config.Find("")
	if err != nil {
		s.exit = 1
		fmt.Fprintf(s.sio.Stderr, "scontrol: error: %v\n", err)
		return
	}
	state := "UP"
	if sockclient.Ping(cfg.SocketPath, cfg.MessageTimeout) != nil {
		state, s.exit = "DOWN", 1
	}
	fmt.Fprintf(s.sio.Stdout, "Slurmctld(primary) at %s is %s\n", cli.ShortHost(), state)
	if state == "DOWN" && os.Getuid() == 0 {
		fmt.Fprint(s.sio.Stdout, "*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n*****************************************\n")
	}
}
