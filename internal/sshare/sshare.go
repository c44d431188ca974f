package sshare

import (
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The fair-share queries sshare makes:
//
// GET /v1/config (api.PathConfig) -> api.Config: PriorityFlags (Fair Tree or
// classic) and the cluster's name.
//
// GET /v1/shares (api.PathShares) -> []api.ShareRow: every association of the
// tree in sshare's order (depth first, users before sub-accounts), the root
// first. sshare picks the rows itself, as slurmctld's assoc_mgr_get_shares
// does: with users named, only their user rows (account rows always stay);
// with accounts named, only rows of those accounts.
//
// GET /v1/jobs?state=RUNNING (api.PathJobs), only when a TRES column is
// printed: the running jobs, whose TRES times the time they have left make
// TRESRunMins.

// sshareOptions is sshare's option table (src/sshare/sshare.c); its
// optstring also has -q and -t:, which sshare refuses after parsing them.
var sshareOptions = []getopt.Option{
	{Name: "accounts", Short: 'A', Arg: getopt.RequiredArgument},
	{Name: "all", Short: 'a'},
	{Name: "helpformat", Short: 'e'},
	{Name: "long", Short: 'l'},
	{Name: "partition", Short: 'm'},
	{Name: "cluster", Short: 'M', Arg: getopt.RequiredArgument, ID: "clusters"},
	{Name: "clusters", Short: 'M', Arg: getopt.RequiredArgument},
	{Name: "noheader", Short: 'n'},
	{Name: "format", Short: 'o', Arg: getopt.RequiredArgument},
	{Name: "parsable", Short: 'p'},
	{Name: "parsable2", Short: 'P'},
	{Name: "users", Short: 'u', Arg: getopt.RequiredArgument},
	{Name: "Users", Short: 'U'},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
	{Name: "help"},
	{Name: "usage"},
	{Short: 'h'},
	{Short: 'q'},
	{Short: 't', Arg: getopt.RequiredArgument},
}

// sshareArgs is a parsed sshare command line.
type sshareArgs struct {
	all, long, partitions, usersOnly, noHeader bool
	mode                                       format.Parsable
	accounts, users                            []string
	format                                     string // the -o values, each with a comma
	clusters                                   string
	verbose                                    int
}

// Main is the sshare command.
func Main(args []string, sio cli.IO) int {
	a, code, done := parseSshare(args, sio)
	if done {
		return code
	}
	c, cfg, code := cli.Dial("sshare", sio)
	if c == nil {
		return code
	}
	if a.clusters != "" && !cli.KnownClusters("sshare", a.clusters, cfg, sio) {
		return 1
	}
	if a.clusters != "" {
		fmt.Fprintf(sio.Stdout, "CLUSTER: %s\n", cfg.ClusterName)
	}
	var ac api.Config
	var rows []api.ShareRow
	if err := cli.GetJSON(c, api.PathConfig, nil, &ac); err != nil {
		return sshareError(err, sio)
	}
	var q url.Values
	if len(a.users) > 0 {
		q = url.Values{"user": a.users} // they hold the implicit association, jobs or not
	}
	if err := cli.GetJSON(c, api.PathShares, q, &rows); err != nil {
		return sshareError(err, sio)
	}
	if ac.Config != nil {
		cfg = ac.Config
	}
	classic := cfg.Priority.HasFlag("NO_FAIR_TREE")
	spec := a.format
	if spec == "" {
		spec = defaultShareFormat(a.long, a.partitions, classic)
	}
	fields, bad := format.ParseShareFields(spec)
	if bad != "" {
		fmt.Fprintf(sio.Stderr, "sshare: error: Invalid field requested: %q\n", bad)
		return 1
	}
	lines := shareLines(rows, a.users, a.accounts)
	addGrpTRESMins(lines, cfg)
	if usesTRES(fields) {
		jobs, err := cli.GetJobs(c, url.Values{"state": {string(slurm.Running)}})
		if err != nil {
			return sshareError(err, sio)
		}
		addTRESRunMins(lines, jobs, cfg, sio)
	}
	io.WriteString(sio.Stdout, format.Sshare(lines, format.ShareOptions{
		Fields: fields, Mode: a.mode, Header: !a.noHeader, UsersOnly: a.usersOnly,
		Classic: classic, Cluster: cfg.ClusterName, TRES: format.ShareTRES,
	}))
	return 0
}

// sshareError is slurm_perror's "Couldn't get shares from controller" in
// slurm-lite's words: what went wrong, and what to do.
func sshareError(err error, sio cli.IO) int { return cli.DaemonError("sshare", err, sio) }

func defaultShareFormat(long, partitions, classic bool) string {
	switch {
	case long && classic && partitions:
		return format.ShareFormatClassicPrt
	case long && classic:
		return format.ShareFormatClassic
	case long && partitions:
		return format.ShareFormatLongPart
	case long:
		return format.ShareFormatLong
	case partitions:
		return format.ShareFormatPart
	}
	return format.ShareFormat
}

func parseSshare(args []string, sio cli.IO) (a sshareArgs, code int, done bool) {
	usersGiven := false
	cmdLine := &cli.Command{Name: "sshare", Table: sshareOptions, Ordering: getopt.Permute, Help: sshareUsage, Usage: sshareUsage, BadOption: 1}
	_, code, done = cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		switch r.Option.Key() {
		case "all":
			a.all = true
		case "accounts":
			a.accounts = format.AddToCharList(a.accounts, r.Value)
		case "helpformat":
			io.WriteString(sio.Stdout, format.ShareFieldNames())
			return 0, true
		case "h", "noheader":
			a.noHeader = true
		case "long":
			a.long = true
		case "clusters":
			a.clusters = r.Value
		case "partition":
			a.partitions = true
		case "format":
			a.format += r.Value + ","
		case "parsable":
			a.mode = format.ParsableEnding
		case "parsable2":
			a.mode = format.ParsableNoEnding
		case "users":
			if r.Value == "-1" {
				a.all = true
				break
			}
			a.all, usersGiven = false, true
			names, ok := cli.UserNames(r.Value, sio)
			if !ok {
				return 1, true
			}
			for _, n := range names {
				if cli.IndexFold(a.users, n) < 0 {
					a.users = append(a.users, n)
				}
			}
		case "Users":
			a.usersOnly = true
		case "verbose":
			a.verbose++
		default: // -q and -t: in the optstring, but handled nowhere
			fmt.Fprintf(sio.Stderr, "getopt error, returned %s\n", r.Option.Key())
			return 1, true
		}
		return 0, false
	})
	if done {
		return a, code, true
	}
	switch {
	case a.all:
		a.users = nil
		if a.verbose > 0 {
			fmt.Fprint(sio.Stderr, "Users requested:\n\t: all\n")
		}
	case usersGiven && a.verbose > 0:
		fmt.Fprint(sio.Stderr, "Users requested:\n")
		for _, u := range a.users {
			fmt.Fprintf(sio.Stderr, "\t: %s\n", u)
		}
	case !usersGiven:
		if u, err := userdb.ByID(uint32(os.Getuid())); err == nil {
			a.users = []string{u.Name}
			if a.verbose > 0 {
				fmt.Fprintf(sio.Stderr, "Users requested:\n\t: %s\n", u.Name)
			}
		}
	}
	if a.verbose > 0 {
		if len(a.accounts) > 0 {
			fmt.Fprint(sio.Stderr, "Accounts requested:\n")
			for _, acct := range a.accounts {
				fmt.Fprintf(sio.Stderr, "\t: %s\n", acct)
			}
		} else {
			fmt.Fprint(sio.Stderr, "Accounts requested:\n\t: all\n")
		}
	}
	return a, 0, false
}

// shareLines keeps the rows sshare asked for, each with its parent account
// (found from the depths, as the daemon sends the tree depth first) and an
// association id numbering the whole tree.
func shareLines(rows []api.ShareRow, users, accounts []string) []format.ShareLine {
	var out []format.ShareLine
	var stack []string // account names by depth
	for i, r := range rows {
		l := format.ShareLine{ShareRow: r, ID: i + 1}
		if r.User == "" {
			if r.Depth > 0 && r.Depth-1 < len(stack) {
				l.Parent = stack[r.Depth-1]
			}
			stack = append(stack[:min(r.Depth, len(stack))], r.Account)
		}
		if len(users) > 0 && r.User != "" && cli.IndexFold(users, r.User) < 0 {
			continue
		}
		if len(accounts) > 0 && cli.IndexFold(accounts, r.Account) < 0 {
			continue
		}
		out = append(out, l)
	}
	return out
}

// addGrpTRESMins gives each account row its budget (GrpTRESMins); user
// rows have none (Slurm's Grp limits are not inherited).
func addGrpTRESMins(lines []format.ShareLine, cfg *config.Config) {
	budgets := map[string]map[string]uint64{}
	for _, a := range cfg.Accounts {
		if len(a.GrpTRESMins) == 0 {
			continue
		}
		m := map[string]uint64{}
		for n, v := range a.GrpTRESMins {
			m[n] = uint64(v)
		}
		budgets[a.Name] = m
	}
	for i := range lines {
		if l := &lines[i]; l.User == "" {
			l.GrpTRESMins = budgets[l.Account]
		}
	}
}

func usesTRES(fields []format.Field) bool {
	for _, f := range fields {
		if f.Name == "TRESRunMins" || f.Name == "GrpTRESRaw" {
			return true
		}
	}
	return false
}

// addTRESRunMins charges each running job's TRES-minutes to its user's
// association and to every account above it. GrpTRESRaw (usage in
// TRES-minutes) gets the billing usage alone: slurm-lite keeps fair-share
// usage as billing, not per TRES.
func addTRESRunMins(lines []format.ShareLine, jobs []api.Job, cfg *config.Config, sio cli.IO) {
	now := sio.Now()
	parents := map[string]string{}
	for _, l := range lines {
		if l.User == "" {
			parents[l.Account] = l.Parent
		}
	}
	charge := map[[2]string]map[string]uint64{} // (account, user) -> TRES-minutes
	add := func(k [2]string, m map[string]uint64) {
		if charge[k] == nil {
			charge[k] = map[string]uint64{}
		}
		for n, v := range m {
			charge[k][n] += v
		}
	}
	for i := range jobs {
		j := &jobs[i]
		m := format.TRESRunMins(j, now, cfg)
		if m == nil {
			continue
		}
		acct := j.Account
		if acct == "" {
			if accts, ok := cfg.UserAccounts(j.User); ok && len(accts) > 0 {
				acct = accts[0]
			}
		}
		add([2]string{acct, j.User}, m)
		seen := map[string]bool{}
		for a := acct; a != "" && !seen[a]; a = parents[a] {
			seen[a] = true
			add([2]string{a, ""}, m)
		}
	}
	for i := range lines {
		l := &lines[i]
		l.TRESRunMins = charge[[2]string{l.Account, l.User}]
		l.GrpTRESRaw = map[string]uint64{"billing": uint64(max(0, l.RawUsage)) / 60}
	}
}

// sshareUsage is sshare's --help and --usage (src/sshare/sshare.c _usage).
const sshareUsage = "Usage:  sshare [OPTION]                                                    \n" +
	"  Valid OPTIONs are:                                                       \n" +
	"    -a or --all            list all users                                  \n" +
	"    -A or --accounts=      display specific accounts (comma separated list)\n" +
	"    -e or --helpformat     Print a list of fields that can be specified    \n" +
	"                           with the '--format' option                      \n" +
	"    -l or --long           include normalized usage in output              \n" +
	"    -m or --partition      print the partition part of the association     \n" +
	"    -M or --cluster=names  clusters to issue commands to.                  \n" +
	"                           NOTE: SlurmDBD must be up.                      \n" +
	"    -n or --noheader       omit header from output                         \n" +
	"    -o or --format=        Comma separated list of fields (use             \n" +
	"                           \"--helpformat\" for a list of available fields).\n" +
	"    -p or --parsable       '|' delimited output with a trailing '|'        \n" +
	"    -P or --parsable2      '|' delimited output without a trailing '|'     \n" +
	"    -u or --users=         display specific users (comma separated list)   \n" +
	"    -U or --Users          display only user information                   \n" +
	"    -v or --verbose        display more information                        \n" +
	"    -V or --version        display tool version number                     \n" +
	"          --help           display this usage description                  \n" +
	"          --usage          display this usage description                  \n" +
	"                                                                           \n" +
	"\n"
