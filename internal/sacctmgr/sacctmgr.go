package sacctmgr

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/getopt"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// sacctmgr shows slurm-lite's accounts, users, associations, QOS, cluster
// and TRES as Slurm 22.05's sacctmgr shows slurmdbd's. They come from the
// configuration in force:
//
// GET /v1/config (api.PathConfig) -> api.Config.
//
// slurm-lite takes all of them from its configuration file, so every
// command that would change them (add, modify, delete, ...) says which keys
// of that file to edit instead, and fails.

// sacctmgrOptions is sacctmgr's option table (src/sacctmgr/sacctmgr.c).
var sacctmgrOptions = []getopt.Option{
	{Name: "help", Short: 'h'},
	{Name: "usage", Short: 'h', ID: "help"},
	{Name: "immediate", Short: 'i'},
	{Name: "noheader", Short: 'n'},
	{Name: "oneliner", Short: 'o'},
	{Name: "parsable", Short: 'p'},
	{Name: "parsable2", Short: 'P'},
	{Name: "quiet", Short: 'Q'},
	{Name: "readonly", Short: 'r'},
	{Name: "associations", Short: 's'},
	{Name: "verbose", Short: 'v'},
	{Name: "version", Short: 'V'},
}

// sacctmgr is one run of the command: its settings, which commands and
// keywords change as they go, and the configuration once asked for.
type sacctmgr struct {
	sio       cli.IO
	out       format.MgrOutput
	withAssoc bool
	readonly  bool
	immediate bool
	exitCode  int
	exit      bool

	client *sockclient.Client
	cfg    *config.Config
	path   string // the configuration file ("" for the built-in defaults)
	data   *mgrData
	failed bool // the daemon could not be asked
}

// Main is the sacctmgr command.
func Main(args []string, sio cli.IO) int {
	m := &sacctmgr{sio: sio}
	cmdLine := &cli.Command{Name: "sacctmgr", Table: sacctmgrOptions, Ordering: getopt.Permute, Help: sacctmgrUsage, BadOption: 1}
	ops, code, done := cmdLine.Parse(args, sio.Stdout, sio.Stderr, func(r getopt.Result) (int, bool) {
		switch r.Option.Key() {
		case "immediate":
			m.immediate = true
		case "noheader":
			m.out.NoHeader = true
		case "parsable":
			m.out.Mode = format.ParsableEnding
		case "parsable2":
			m.out.Mode = format.ParsableNoEnding
		case "readonly":
			m.readonly = true
		case "associations":
			m.withAssoc = true
		}
		return 0, false
	})
	if done {
		return code
	}
	if len(ops) > 0 {
		m.command(ops)
		return m.exitCode
	}
	return m.interactive()
}

// interactive reads commands from stdin, as sacctmgr does without one on
// its command line; an error's exit code is kept for the end. Like
// readline reading from a pipe, it echoes each line after the prompt.
func (m *sacctmgr) interactive() int {
	echo := true
	if f, ok := m.sio.Stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			echo = false // the terminal echoes
		}
	}
	in := bufio.NewReader(m.sio.Stdin)
	code, last := 0, ""
	for !m.exit {
		io.WriteString(m.sio.Stdout, "sacctmgr: ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			io.WriteString(m.sio.Stdout, "\n")
			break
		}
		line = strings.TrimSuffix(line, "\n")
		if echo {
			io.WriteString(m.sio.Stdout, line+"\n")
		}
		switch {
		case strings.HasPrefix(line, "#"):
			continue
		case line == "!!":
			line = last
		default:
			last = line
		}
		m.command(splitMgrLine(line))
		if m.exitCode != 0 {
			code, m.exitCode = m.exitCode, 0
		}
	}
	return code
}

// splitMgrLine splits an interactive line at blanks outside quotes,
// keeping the quotes, as _get_command does.
func splitMgrLine(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	dq, sq := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		if !in {
			if c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
				continue
			}
			in = true
			cur.WriteByte(c)
			continue
		}
		switch {
		case c == '"':
			dq = !dq
		case c == '\'':
			sq = !sq
		case !dq && !sq && (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'):
			words = append(words, cur.String())
			cur.Reset()
			in, dq, sq = false, false, false
			continue
		}
		cur.WriteByte(c)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// kw is xstrncasecmp(word, name, MAX(n, min)) == 0: word starts like name
// over at least min characters, comparing past either's end as NUL.
func kw(word, name string, n, min int) bool {
	for i := 0; i < max(n, min); i++ {
		var a, b byte
		if i < len(word) {
			a = lowerByte(word[i])
		}
		if i < len(name) {
			b = lowerByte(name[i])
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// is reports whether word is the keyword name (at least min characters).
func is(word, name string, min int) bool { return kw(word, name, len(word), min) }

// command is _process_command.
func (m *sacctmgr) command(argv []string) {
	if len(argv) < 1 {
		m.exitCode = 1
		return
	}
	cmd, rest := argv[0], argv[1:]
	tooMany := func(format string) {
		if len(rest) > 0 {
			m.exitCode = 1
			fmt.Fprintf(m.sio.Stderr, format, cmd)
		}
	}
	switch {
	case is(cmd, "associations", 3):
		m.withAssoc = true
	case is(cmd, "dump", 3):
		m.refuse("dump", rest)
	case is(cmd, "help", 2):
		tooMany("too many arguments for keyword:%s\n")
		io.WriteString(m.sio.Stdout, sacctmgrUsage)
	case is(cmd, "load", 2):
		m.refuse("load", rest)
	case is(cmd, "oneliner", 1):
		tooMany("too many arguments for keyword:%s\n")
	case is(cmd, "quiet", 4):
		tooMany("too many arguments for keyword:%s\n")
	case is(cmd, "exit", 4) || is(cmd, `\q`, 2) || is(cmd, "quit", 4):
		tooMany("too many arguments for keyword:%s\n")
		m.exit = true
	case is(cmd, "add", 3) || is(cmd, "create", 3):
		m.change("add", rest)
	case is(cmd, "archive", 3):
		m.change("archive", rest)
	case is(cmd, "clear", 3):
		m.refuse("clear", rest)
	case is(cmd, "show", 3) || is(cmd, "list", 3):
		m.show(rest)
	case is(cmd, "modify", 1) || is(cmd, "update", 1):
		m.change("modify", rest)
	case is(cmd, "delete", 3) || is(cmd, "remove", 3):
		m.change("delete", rest)
	case is(cmd, "verbose", 4):
		tooMany("too many arguments for %s keyword\n")
	case is(cmd, "readonly", 4):
		tooMany("too many arguments for %s keyword\n")
		m.readonly = true
	case is(cmd, "reconfigure", 4), is(cmd, "rollup", 2), is(cmd, "shutdown", 4):
		m.refuse(strings.ToLower(cmd), rest)
	case is(cmd, "version", 4):
		tooMany("too many arguments for %s keyword\n")
		fmt.Fprintln(m.sio.Stdout, cli.SlurmVersion)
	default:
		m.exitCode = 1
		fmt.Fprintf(m.sio.Stderr, "invalid keyword: %s\n", cmd)
	}
}

// mgrEntity is a sacctmgr entity word and what slurm-lite configures it
// with.
type mgrEntity struct {
	word  string
	min   int
	alias string // a second spelling ("Acct")
	amin  int
	keys  string // where slurm-lite takes it from; "" for nothing
	noun  string
}

var (
	entAccount = mgrEntity{"Account", 1, "Acct", 4,
		"[[Account]] entries (Name, Parent, Shares, Users)", "accounts"}
	entUser = mgrEntity{"User", 1, "", 0,
		"[[User]] entries (Name, Account, Shares, DefaultAccount, QOS, AdminLevel) or an [[Account]]'s Users", "users"}
	entQOS = mgrEntity{"QOS", 1, "", 0,
		"[[QOS]] entries (Name, Priority, MaxTRESPerUser, MaxTRESPerJob, MaxJobsPerUser, MaxSubmitJobsPerUser, MaxWall, UsageFactor, Flags)", "QOS"}
	entCluster     = mgrEntity{"Cluster", 2, "", 0, "ClusterName", "the cluster"}
	entCoordinator = mgrEntity{"Coordinator", 2, "", 0, "Operators (or a [[User]]'s AdminLevel)", "coordinators"}
	entFederation  = mgrEntity{"Federation", 1, "", 0, "", "federations"}
	entResource    = mgrEntity{"Resource", 1, "", 0, "", "resources"}
	entJob         = mgrEntity{"Job", 1, "", 0, "", "jobs' accounting records"}
)

// change is add, modify, delete and archive: sacctmgr's checks, then
// slurm-lite's refusal.
func (m *sacctmgr) change(verb string, argv []string) {
	if m.readonly {
		m.exitCode = 1
		fmt.Fprintln(m.sio.Stderr, "Can't run this command in readonly mode.")
		return
	}
	var ents []mgrEntity
	var help string
	switch verb {
	case "add":
		ents = []mgrEntity{entAccount, {"Cluster", 2, "", 0, entCluster.keys, entCluster.noun}, entCoordinator,
			entFederation, entQOS, entResource, entUser}
		help = "No valid entity in add command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", " +
			"\"Federation\", \"QOS\", \"Resource\", or \"User\"\n"
	case "modify":
		acct := entAccount
		acct.word = "Accounts"
		ents = []mgrEntity{acct, {"Clusters", 5, "", 0, entCluster.keys, entCluster.noun}, entFederation, entJob,
			{"QOSs", 1, "", 0, entQOS.keys, entQOS.noun}, entResource, {"Users", 1, "", 0, entUser.keys, entUser.noun}}
		help = "No valid entity in modify command\nInput line must include \"Account\", \"Cluster\", \"Federation\", " +
			"\"Job\", \"QOS\", \"Resource\" or \"User\"\n"
	case "delete":
		acct := entAccount
		acct.word = "Accounts"
		ents = []mgrEntity{acct, {"Clusters", 2, "", 0, entCluster.keys, entCluster.noun},
			{"Coordinators", 2, "", 0, entCoordinator.keys, entCoordinator.noun},
			{"Federations", 1, "", 0, "", "federations"}, {"QOS", 2, "", 0, entQOS.keys, entQOS.noun},
			entResource, {"Users", 1, "", 0, entUser.keys, entUser.noun}}
		help = "No valid entity in delete command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", " +
			"\"Federation\", \"QOS\", \"Resource\", or \"User\"\n"
	case "archive":
		m.refuse("archive", argv)
		return
	}
	if len(argv) > 0 {
		for _, e := range ents {
			if is(argv[0], e.word, e.min) || (e.alias != "" && is(argv[0], e.alias, e.amin)) {
				m.refuseEntity(verb, e)
				return
			}
		}
	}
	m.exitCode = 1
	io.WriteString(m.sio.Stderr, help)
}

// refuseEntity says where slurm-lite takes what sacctmgr was asked to
// change.
func (m *sacctmgr) refuseEntity(verb string, e mgrEntity) {
	m.exitCode = 1
	if e.keys == "" {
		fmt.Fprintf(m.sio.Stderr, "sacctmgr: error: slurm-lite has no %s to %s\n", e.noun, verb)
		return
	}
	fmt.Fprintf(m.sio.Stderr, "sacctmgr: error: slurm-lite takes %s from its configuration file, not from sacctmgr: "+
		"edit %s in %s, then send slurmd-lite SIGHUP to reload it\n", e.noun, e.keys, m.configPath())
}

// refuse answers the commands that only a slurmdbd understands.
func (m *sacctmgr) refuse(what string, argv []string) {
	m.exitCode = 1
	fmt.Fprintf(m.sio.Stderr, "sacctmgr: error: slurm-lite has no accounting database to %s; accounts, users and QOS "+
		"come from %s\n", what, m.configPath())
}

// configPath names the configuration file for messages.
func (m *sacctmgr) configPath() string {
	path, err := config.Locate("", func(name string) string { v, _ := m.sio.Getenv(name); return v }, mgrFileExists)
	switch {
	case err != nil:
		return "the configuration file"
	case path == "":
		return config.DefaultPath + " (not there yet: slurmd-lite runs on its defaults)"
	}
	return path
}

// config asks the daemon for the configuration in force, once, or again
// when users are named: they hold the implicit association even before
// their first job, which the daemon knows to list only when asked.
func (m *sacctmgr) config(users ...string) (*mgrData, bool) {
	if m.data != nil && len(users) == 0 {
		return m.data, true
	}
	if m.failed {
		return nil, false
	}
	if m.client == nil {
		c, _, code := cli.Dial("sacctmgr", m.sio)
		if c == nil {
			m.failed, m.exitCode = true, code
			return nil, false
		}
		m.client = c
	}
	var ac api.Config
	var q url.Values
	if len(users) > 0 {
		q = url.Values{"user": users}
	}
	if err := cli.GetJSON(m.client, api.PathConfig, q, &ac); err != nil {
		m.failed, m.exitCode = true, cli.DaemonError("sacctmgr", err, m.sio)
		return nil, false
	}
	if ac.Config == nil {
		ac.Config = config.Default()
	}
	m.cfg, m.path = ac.Config, ac.Path
	m.data = newMgrData(ac.Config, ac.ImplicitUsers)
	return m.data, true
}

// sacctmgrUsage is sacctmgr --help and its help command (src/sacctmgr/sacctmgr.c _usage).
const sacctmgrUsage = "sacctmgr [<OPTION>] [<COMMAND>]                                            \n" +
	"    Valid <OPTION> values are:                                             \n" +
	"     -h or --help: equivalent to \"help\" command                          \n" +
	"     -i or --immediate: commit changes immediately                         \n" +
	"     -n or --noheader: no header will be added to the beginning of output  \n" +
	"     -o or --oneliner: equivalent to \"oneliner\" command                  \n" +
	"     -p or --parsable: output will be '|' delimited with a '|' at the end  \n" +
	"     -P or --parsable2: output will be '|' delimited without a '|' at the end\n" +
	"     -Q or --quiet: equivalent to \"quiet\" command                        \n" +
	"     -r or --readonly: equivalent to \"readonly\" command                  \n" +
	"     -s or --associations: equivalent to \"associations\" command          \n" +
	"     -v or --verbose: equivalent to \"verbose\" command                    \n" +
	"     -V or --version: equivalent to \"version\" command                    \n" +
	"                                                                           \n" +
	"  <keyword> may be omitted from the execute line and sacctmgr will execute \n" +
	"  in interactive mode. It will process commands as entered until explicitly\n" +
	"  terminated.                                                              \n" +
	"                                                                           \n" +
	"  Valid <COMMAND> values are:                                              \n" +
	"     add <ENTITY> <SPECS>     add entity                                   \n" +
	"     archive <DUMP/LOAD> <SPECS>                                           \n" +
	"                              Archive past jobs and/or steps, or load them \n" +
	"                              back into the databse.                       \n" +
	"     associations             when using show/list will list the           \n" +
	"                              associations associated with the entity.     \n" +
	"     clear stats              clear server statistics                      \n" +
	"     delete <ENTITY> <SPECS>  delete the specified entity(s)               \n" +
	"     dump <CLUSTER> [File=<FILENAME>]                                      \n" +
	"                              dump database information of the             \n" +
	"                              specified cluster to the flat file.          \n" +
	"                              Will default to clustername.cfg if no file   \n" +
	"                              is given.                                    \n" +
	"     exit                     terminate sacctmgr                           \n" +
	"     help                     print this description of use.               \n" +
	"     list <ENTITY> [<SPECS>]  display info of identified entity, default   \n" +
	"                              is display all.                              \n" +
	"     load <FILE> [<SPECS>]    read in the file to update the database      \n" +
	"                              with the file contents. <SPECS> here consist \n" +
	"                              of 'cluster=', and 'clean'.  The 'cluster='  \n" +
	"                              will override the cluster name given in the  \n" +
	"                              file.  The 'clean' option will remove what is\n" +
	"                              already in the system for this cluster and   \n" +
	"                              replace it with the file.  If the clean option\n" +
	"                              is not given only new additions or           \n" +
	"                              modifications will be done, no deletions.    \n" +
	"     modify <ENTITY> <SPECS>  modify entity                                \n" +
	"     oneliner                 report output one record per line.           \n" +
	"     parsable                 output will be | delimited with an ending '|'\n" +
	"     parsable2                output will be | delimited without an ending '|'\n" +
	"     quiet                    print no messages other than error messages. \n" +
	"     quit                     terminate this command.                      \n" +
	"     readonly                 makes it so no modification can happen.      \n" +
	"     reconfigure              reread the slurmdbd.conf on the DBD.         \n" +
	"     shutdown                 shutdown the server.                         \n" +
	"     show                     same as list                                 \n" +
	"     verbose                  enable detailed logging.                     \n" +
	"     version                  display tool version number.                 \n" +
	"     !!                       Repeat the last command entered.             \n" +
	"                                                                           \n" +
	"  <ENTITY> may be \"account\", \"association\", \"cluster\",               \n" +
	"                  \"configuration\", \"coordinator\", \"event\",           \n" +
	"                  \"federation\", \"job\", \"problem\", \"qos\",           \n" +
	"                  \"resource\", \"reservation\", \"runawayjobs\", \"stats\"\n" +
	"                  \"transaction\", \"tres\", \"user\" or \"wckey\"         \n" +
	"                                                                           \n" +
	"  <SPECS> are different for each command entity pair.                      \n" +
	"       list account       - Clusters=, Descriptions=, Format=,             \n" +
	"                            Names=, Organizations=, Parents=, WithAssoc,   \n" +
	"                            WithDeleted, WithCoordinators, WithRawQOS,     \n" +
	"                            and WOPLimits                                  \n" +
	"       add account        - Clusters=, DefaultQOS=, Description=, Fairshare=,\n" +
	"                            GrpTRESMins=, GrpTRES=, GrpJobs=, GrpMemory=,   \n" +
	"                            GrpNodes=, GrpSubmitJob=, GrpWall=, MaxTRESMins=,\n" +
	"                            MaxTRES=, MaxJobs=, MaxNodes=, MaxSubmitJobs=, \n" +
	"                            MaxWall=, Names=, Organization=, Parent=,      \n" +
	"                            Priority= and QosLevel=                        \n" +
	"       modify account     - (set options) DefaultQOS=, Description=,       \n" +
	"                            Fairshare=, GrpTRESMins=, GrpTRESRunMins=,       \n" +
	"                            GrpTRES=, GrpJobs=, GrpMemory=, GrpNodes=,     \n" +
	"                            GrpSubmitJob=, GrpWall=, MaxTRESMins=, MaxTRES=,\n" +
	"                            MaxJobs=, MaxNodes=, MaxSubmitJobs=, MaxWall=, \n" +
	"                            Names=, Organization=, Parent=, and QosLevel=  \n" +
	"                            RawUsage= (with admin privileges only)         \n" +
	"                            (where options) Clusters=, DefaultQOS=,        \n" +
	"                            Descriptions=, Names=, Organizations=,         \n" +
	"                            Parent=,Priority= and QosLevel=                \n" +
	"       delete account     - Clusters=, DefaultQOS=, Descriptions=, Names=, \n" +
	"                            Organizations=, and Parents=                   \n" +
	"                                                                           \n" +
	"       list associations  - Accounts=, Clusters=, Format=, ID=, OnlyDefaults,\n" +
	"                            Partitions=, Parent=, Tree, Users=,            \n" +
	"                            WithSubAccounts, WithDeleted, WOLimits,        \n" +
	"                            WOPInfo, and WOPLimits                         \n" +
	"                                                                           \n" +
	"       list cluster       - Classification=, DefaultQOS=, Federation=,     \n" +
	"                            Flags=, Format=, Names=, RPC= WithFed and      \n" +
	"                            WOLimits                                       \n" +
	"       add cluster        - DefaultQOS=, Fairshare=, Federation=, FedState=,\n" +
	"                            GrpTRES=, GrpJobs=, GrpMemory=, GrpNodes=,     \n" +
	"                            GrpSubmitJob=, MaxTRESMins=, MaxJobs=,         \n" +
	"                            MaxNodes=, MaxSubmitJobs=, MaxWall=, Name=,    \n" +
	"                            QosLevel= and Weight=                          \n" +
	"       modify cluster     - (set options) DefaultQOS=, Fairshare=,         \n" +
	"                            Federation=, FedState=, GrpTRES=, GrpJobs=,    \n" +
	"                            GrpMemory=, GrpNodes=, GrpSubmitJob=,          \n" +
	"                            MaxTRESMins=, MaxJobs=, MaxNodes=,             \n" +
	"                            MaxSubmitJobs=, MaxWall=, QosLevel= and Weight=\n" +
	"                            (where options) Classification=, Federation=,  \n" +
	"                            Flags=, and Names=                             \n" +
	"       delete cluster     - Classification=, DefaultQOS=, Flags=, and Names=\n" +
	"                                                                           \n" +
	"       add coordinator    - Accounts=, and Names=                          \n" +
	"       delete coordinator - Accounts=, and Names=                          \n" +
	"                                                                           \n" +
	"       list events        - All_Clusters, All_Time, Clusters=, CondFlags=, \n" +
	"                            End=, Events=, Format=, MaxCPUs=, MinCPUs=,    \n" +
	"                            Nodes=, Reason=, Start=, States=, and User=    \n" +
	"                                                                           \n" +
	"       list federation    - Names=, Format= and Tree                       \n" +
	"       add federation     - Flags=, Clusters= and Name=                    \n" +
	"       modify federation  - (set options) Clusters= and Flags=             \n" +
	"                            (where options) Names=                         \n" +
	"       delete federation  - Names=                                         \n" +
	"                                                                           \n" +
	"       modify job         - (set options) DerivedExitCode=, Comment=,      \n" +
	"                            NewWCKey=                                      \n" +
	"                            (where options) JobID=, Cluster=, EndTime=,    \n" +
	"                            StartTime=, WCKey=, User=                      \n" +
	"                                                                           \n" +
	"       list qos           - Descriptions=, Format=, Id=, Names=,           \n" +
	"                            PreemptMode=, and WithDeleted                  \n" +
	"       add qos            - Description=, Flags=, GraceTime=, GrpJobs=,    \n" +
	"                            GrpSubmitJob=, GrpTRES=, GrpTRESMins=, GrpWall=,\n" +
	"                            MaxJobs=, MaxSubmitJobsPerUser=, MaxTRESMins=, \n" +
	"                            MaxTRESPerJob=, MaxTRESPerNode=, MaxTRESPerUser=,\n" +
	"                            MaxWall=, Names=, Preempt=, PreemptMode=,      \n" +
	"                            Priority=, UsageFactor=, and UsageThreshold=   \n" +
	"       modify qos         - (set options) Description=, Flags=, GraceTime=,\n" +
	"                            GrpJobs=, GrpSubmitJob=, GrpTRES=, GrpTRESMins=,\n" +
	"                            GrpWall=,\n" +
	"                            MaxJobs=, MaxSubmitJobsPerUser=, MaxTRESMins=, \n" +
	"                            MaxTRESPerJob=, MaxTRESPerNode=, MaxTRESPerUser=,\n" +
	"                            MaxWall=, Names=, Preempt=, PreemptMode=,      \n" +
	"                            Priority=, RawUsage= (admin only),             \n" +
	"                            UsageFactor=, and UsageThreshold=              \n" +
	"                            (where options) Descriptions=, ID=, Names=     \n" +
	"                            and PreemptMode=                               \n" +
	"       delete qos         - Descriptions=, ID=, Names=, and PreemptMode=   \n" +
	"                                                                           \n" +
	"       list resource      - Clusters=, Descriptions=, Flags=, Format=, Ids=,\n" +
	"                            Names=, PercentAllowed=, ServerType=, Servers=,\n" +
	"                            and WithClusters                               \n" +
	"       add resource       - Clusters=, Count=, Descriptions=, Flags=,      \n" +
	"                            ServerType=, Names=, PercentAllowed=, Server=, \n" +
	"                            and Type=                                      \n" +
	"       modify resource    - (set options) Count=, Flags=, Manager=,        \n" +
	"                            PercentAllowed=,                               \n" +
	"                            (where options) Clusters=, Names=, Servers=,   \n" +
	"       delete resource    - Clusters=, Names=                              \n" +
	"                                                                           \n" +
	"       list reservation   - Clusters=, End=, ID=, Names=, Nodes=, Start=   \n" +
	"                                                                           \n" +
	"       list runawayjobs   - Cluster=, Format=                              \n" +
	"                                                                           \n" +
	"       clear stats                                                         \n" +
	"       list stats                                                          \n" +
	"                                                                           \n" +
	"       list transactions  - Accounts=, Action=, Actor=, Clusters=, End=,   \n" +
	"                            Format=, ID=, Start=, User=, and WithAssoc     \n" +
	"                                                                           \n" +
	"       list tres          - ID=, Name=, Type=, WithDeleted                 \n" +
	"                                                                           \n" +
	"       list user          - AdminLevel=, DefaultAccount=,                  \n" +
	"                            DefaultWCKey=, Format=, Names=,                \n" +
	"                            QosLevel=, WithAssoc, WithCoordinators,        \n" +
	"                            WithDeleted, WithRawQOS, and WOPLimits         \n" +
	"       add user           - Accounts=, AdminLevel=, Clusters=,             \n" +
	"                            DefaultAccount=, DefaultQOS=, DefaultWCKey=,   \n" +
	"                            Fairshare=, MaxTRESMins=, MaxTRES=,            \n" +
	"                            MaxJobs=, MaxNodes=, MaxSubmitJobs=, MaxWall=, \n" +
	"                            Names=, Partitions=, Priority= and QosLevel=   \n" +
	"       modify user        - (set options) AdminLevel=, DefaultAccount=,    \n" +
	"                            DefaultQOS=, DefaultWCKey=, Fairshare=,        \n" +
	"                            MaxTRESMins=, MaxTRES=, MaxJobs=, MaxNodes=,   \n" +
	"                            MaxSubmitJobs=, MaxWall=, NewName=,            \n" +
	"                            and QosLevel=,                                 \n" +
	"                            RawUsage= (with admin privileges only)         \n" +
	"                            (where options) Accounts=, AdminLevel=,        \n" +
	"                            Clusters=, DefaultAccount=, Names=,            \n" +
	"                            Partitions=, Priority= and QosLevel=           \n" +
	"       delete user        - Accounts=, AdminLevel=, Clusters=,             \n" +
	"                            DefaultAccount=, DefaultWCKey=, and Names=     \n" +
	"                                                                           \n" +
	"       list wckey         - Clusters=, End=, Format=, ID=, Names=,         \n" +
	"                            Start=, User=, and WithDeleted                 \n" +
	"                                                                           \n" +
	"       archive dump       - Directory=, Events, Jobs,                      \n" +
	"                            PurgeEventAfter=, PurgeJobAfter=,              \n" +
	"                            PurgeStepAfter=, PurgeSuspendAfter=,           \n" +
	"                            Script=, Steps, and Suspend                    \n" +
	"                                                                           \n" +
	"       archive load       - File=, or Insert=                              \n" +
	"                                                                           \n" +
	"  Format options are different for listing each entity pair.               \n" +
	"                                                                           \n" +
	"  One can get an number of characters by following the field option with   \n" +
	"  a %NUMBER option.  i.e. format=name%30 will print 30 chars of field name.\n" +
	"                                                                           \n" +
	"       Account            - Account, Coordinators, Description, Organization\n" +
	"                                                                           \n" +
	"       Association        - Account, Cluster, DefaultQOS, Fairshare,       \n" +
	"                            GrpTRESMins, GrpTRESRunMins, GrpTRES, GrpJobs, \n" +
	"                            GrpMemory, GrpNodes, GrpSubmitJob, GrpWall,    \n" +
	"                            ID, LFT, MaxTRESMins, MaxTRES,                 \n" +
	"                            MaxJobs, MaxNodes, MaxSubmitJobs, MaxWall, QOS,\n" +
	"                            ParentID, ParentName, Partition, RGT,          \n" +
	"                            User, WithRawQOS                               \n" +
	"                                                                           \n" +
	"       Cluster            - Classification, Cluster, ClusterNodes,         \n" +
	"                            ControlHost, ControlPort, DefaultQOS,          \n" +
	"                            Fairshare, Flags, GrpTRESMins, GrpTRES GrpJobs,\n" +
	"                            GrpMemory, GrpNodes, GrpSubmitJob, MaxTRESMins, \n" +
	"                            MaxTRES, MaxJobs, MaxNodes, MaxSubmitJobs,     \n" +
	"                            MaxWall, NodeCount, PluginIDSelect, RPC, TRES  \n" +
	"                                                                           \n" +
	"       Event              - Cluster, ClusterNodes, Duration, End,          \n" +
	"                            Event, EventRaw, NodeName, Reason, Start,      \n" +
	"                            State, StateRaw, TRES, User                    \n" +
	"                                                                           \n" +
	"       QOS                - Description, Flags, GraceTime, GrpJobs,        \n" +
	"                            GrpSubmitJob, GrpTRES, GrpTRESMins, GrpWall,   \n" +
	"                            MaxJobs, MaxSubmitJobsPerUser, MaxTRESMins,    \n" +
	"                            MaxTRESPerJob, MaxTRESPerNode, MaxTRESPerUser, \n" +
	"                            MaxWall, Name, Preempt, PreemptMode,           \n" +
	"                            Priority, UsageFactor, UsageThreshold          \n" +
	"                                                                           \n" +
	"       Resource           - Cluster, Count, CountAllowed, CountUsed,       \n" +
	"                            Description, Flags, Manager, Name,             \n" +
	"                            PercentAllowed, PercentUsed, Server, Type      \n" +
	"                                                                           \n" +
	"       Reservation        - Assoc, Cluster, End, Flags, ID, Name,          \n" +
	"                            NodeNames, Start, TRES, UnusedWall             \n" +
	"                                                                           \n" +
	"       RunAwayJobs        - Cluster, ID, Name, Partition, State,           \n" +
	"                            TimeStart, TimeEnd                             \n" +
	"                                                                           \n" +
	"       Transactions       - Action, Actor, Info, TimeStamp, Where          \n" +
	"                                                                           \n" +
	"       TRES               - ID, Name, Type                                 \n" +
	"                                                                           \n" +
	"       User               - AdminLevel, Coordinators, DefaultAccount,      \n" +
	"                            DefaultWCKey, User                             \n" +
	"                                                                           \n" +
	"       WCKey              - Cluster, ID, Name, User                        \n" +
	"                                                                           \n" +
	"       Account/User WithAssoc option will also honor                       \n" +
	"       all of the options for Association.                                 \n" +
	"                                                                           \n" +
	"                                                                           \n" +
	"  All commands entitys, and options are case-insensitive.               \n" +
	"\n"
