package sacctmgr

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/format"
)

// mgrWord is one word of a list command's conditions, split as
// parse_option_end splits it: "Name=value", "Name+=value", or a bare word.
type mgrWord struct {
	arg    string
	n      int  // the length of the name part (the whole word when bare)
	hasEq  bool // "=" present
	value  string
	option byte // '+' or '-' of "+=" and "-="
}

func parseMgrWord(arg string) mgrWord {
	w := mgrWord{arg: arg, n: len(arg), value: arg}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c == '=' || ((c == '+' || c == '-') && i+1 < len(arg) && arg[i+1] == '=') {
			w.hasEq, w.n = true, i
			end := i + 1
			if c != '=' {
				w.option, end = c, i+2
			}
			w.value = arg[end:]
			break
		}
	}
	return w
}

// is matches the word's name part against a keyword.
func (w mgrWord) is(name string, min int) bool { return kw(w.arg, name, w.n, min) }

// bare reports a word without "=" that is the keyword name.
func (w mgrWord) bare(name string, min int) bool { return !w.hasEq && w.is(name, min) }

// mgrCond is what a list command's conditions ask for.
type mgrCond struct {
	format                                         []string
	names                                          []string // users, accounts, QOS or clusters named
	accounts, users, clusters, parents, partitions []string
	qos, defQOS, ids, admin, defAccounts           []string
	withAssoc, tree, onlyDefs, subAccounts         bool
	assocSet                                       bool // association conditions given
	usersGiven, accountsGiven                      bool
}

// assocCond is sacctmgr_set_assoc_cond: the conditions every entity with
// associations takes.
func (c *mgrCond) assocCond(w mgrWord) bool {
	add := func(list *[]string) bool {
		*list = format.AddToCharList(*list, w.value)
		return true
	}
	switch {
	case w.is("Accounts", 2) || w.is("Acct", 4):
		c.accountsGiven = true
		return add(&c.accounts)
	case w.is("Ids", 1) || w.is("Associations", 2):
		return add(&c.ids)
	case w.is("Clusters", 1):
		return add(&c.clusters)
	case w.is("DefaultQOS", 8):
		return add(&c.defQOS)
	case w.is("Partitions", 3):
		return add(&c.partitions)
	case w.is("Parents", 4):
		return add(&c.parents)
	case w.is("QosLevel", 1):
		return add(&c.qos)
	case w.is("Users", 1):
		c.usersGiven = true
		return add(&c.users)
	}
	return false
}

// conditions reads a list command's words with the entity's own reader,
// skipping "where" and "set" as the list functions do. It returns false
// after an error, which has been printed.
func (m *sacctmgr) conditions(argv []string, read func(w mgrWord, c *mgrCond) bool) (mgrCond, bool) {
	c := mgrCond{withAssoc: m.withAssoc}
	ok := true
	for _, arg := range argv {
		w := parseMgrWord(arg)
		if w.bare("Where", 5) || w.bare("Set", 3) {
			continue
		}
		if w.is("Format", 1) && w.hasEq {
			c.format = format.AddToCharList(c.format, w.value)
			continue
		}
		if !read(w, &c) {
			ok = false
		}
	}
	if !ok {
		m.exitCode = 1
	}
	return c, ok
}

func (m *sacctmgr) unknownCondition(arg, tail string) bool {
	fmt.Fprintf(m.sio.Stderr, " Unknown condition: %s\n%s", arg, tail)
	return false
}

const setValue = " Use keyword 'set' to modify value\n"

// show is _show_it.
func (m *sacctmgr) show(argv []string) {
	if len(argv) == 0 {
		m.noEntity()
		return
	}
	e, rest := argv[0], argv[1:]
	switch {
	case is(e, "Accounts", 2) || is(e, "Acct", 4):
		m.listAccounts(rest)
	case is(e, "Associations", 2):
		m.listAssocs(rest)
	case is(e, "Clusters", 2):
		m.listClusters(rest)
	case is(e, "Configuration", 2):
		m.noSuch("a slurmdbd configuration (scontrol show config shows slurm-lite's)")
	case is(e, "Events", 1):
		m.listEvents(rest)
	case is(e, "Federation", 1):
		m.noSuch("federations")
	case is(e, "Problems", 1):
		m.noSuch("association problems")
	case is(e, "RunawayJobs", 2) || is(e, "OrphanJobs", 1) || is(e, "LostJobs", 1):
		m.noSuch("runaway jobs")
	case is(e, "QOS", 1):
		m.listQOS(rest)
	case is(e, "Resource", 4):
		m.noSuch("resources")
	case is(e, "Reservations", 4) || is(e, "Resv", 4):
		m.noSuch("reservations")
	case is(e, "Stats", 1):
		m.noSuch("slurmdbd statistics")
	case is(e, "Transactions", 1) || is(e, "Txn", 1):
		m.noSuch("transactions")
	case is(e, "Users", 1):
		m.listUsers(rest)
	case is(e, "WCKeys", 1):
		m.noSuch("WCKeys")
	case is(e, "tres", 2):
		m.listTRES(rest)
	default:
		m.noEntity()
	}
}

func (m *sacctmgr) noEntity() {
	m.exitCode = 1
	io.WriteString(m.sio.Stderr, "No valid entity in list command\nInput line must include \"Account\", "+
		"\"Association\", \"Cluster\", \"Configuration\",\n\"Event\", \"Federation\", \"Problem\", \"QOS\", "+
		"\"Resource\", \"Reservation\",\n\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n")
}

func (m *sacctmgr) noSuch(what string) {
	m.exitCode = 1
	fmt.Fprintf(m.sio.Stderr, "sacctmgr: error: slurm-lite keeps no %s; it lists accounts, associations, "+
		"clusters, events, QOS, TRES and users\n", what)
}

// columns turns the format (or the default) into columns; an unknown
// field ends sacctmgr, as in Slurm.
func (m *sacctmgr) columns(c mgrCond, def string) ([]format.MgrColumn, bool) {
	names := c.format
	if len(names) == 0 {
		names = format.AddToCharList(nil, def)
	}
	cols, bad := format.MgrColumns(names, c.tree)
	if bad != "" {
		fmt.Fprintf(m.sio.Stderr, "Unknown field '%s'\n", bad)
		m.exitCode = 1
		m.exit = true
		return nil, false
	}
	return cols, true
}

// commitCheck is sacctmgr's question before a listing that ignores some
// of its conditions; -i answers yes. Anything but y or Y is no.
func (m *sacctmgr) commitCheck(warning string) bool {
	if m.immediate {
		return true
	}
	fmt.Fprintf(m.sio.Stdout, "%s (You have 30 seconds to decide)\n(N/y): ", warning)
	line, _ := bufio.NewReader(m.sio.Stdin).ReadString('\n')
	fmt.Fprintln(m.sio.Stdout)
	return strings.HasPrefix(line, "y") || strings.HasPrefix(line, "Y")
}

func (m *sacctmgr) listUsers(argv []string) {
	c, ok := m.conditions(argv, func(w mgrWord, c *mgrCond) bool {
		switch {
		case w.is("Set", 3):
			return true
		case w.bare("WithAssoc", 5):
			c.withAssoc = true
		case w.bare("WithCoordinators", 5), w.bare("WithDeleted", 5), w.bare("WithRawQOSLevel", 5),
			w.bare("WOPLimits", 4):
		case !w.hasEq || w.is("Names", 1) || w.is("Users", 1):
			c.names = format.AddToCharList(c.names, w.value)
		case w.is("AdminLevel", 2):
			c.admin = append(c.admin, w.value)
		case w.is("Clusters", 1):
			c.clusters = format.AddToCharList(c.clusters, w.value)
		case w.is("DefaultAccount", 8):
			c.defAccounts = format.AddToCharList(c.defAccounts, w.value)
		case w.is("DefaultWCKey", 8), w.is("WCKeys", 1):
		case c.assocCond(w):
			c.assocSet = true
		default:
			return m.unknownCondition(w.arg, setValue)
		}
		return true
	})
	if !ok {
		return
	}
	def := "U,DefaultA,Ad"
	if c.withAssoc && len(c.format) == 0 {
		def += ",Cl,Acc,Part,Share,Priority,MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"
	}
	if !c.withAssoc && c.assocSet && !m.commitCheck("You requested options that are only valid when "+
		"querying with the withassoc option.\nAre you sure you want to continue?") {
		fmt.Fprintln(m.sio.Stdout, "Aborted")
		return
	}
	cols, ok := m.columns(c, def)
	if !ok {
		return
	}
	d, ok := m.config(c.names...)
	if !ok {
		return
	}
	var users []format.MgrUser
	for _, u := range d.users {
		if len(c.names) > 0 && cli.IndexFold(c.names, u.Name) < 0 ||
			len(c.defAccounts) > 0 && cli.IndexFold(c.defAccounts, u.DefaultAccount) < 0 ||
			len(c.admin) > 0 && !adminMatches(c.admin, u.Admin) ||
			len(c.clusters) > 0 && cli.IndexFold(c.clusters, d.cluster) < 0 {
			continue
		}
		u.Assocs = d.filterAssocs(u.Assocs, c)
		if c.assocSet && len(u.Assocs) == 0 {
			continue
		}
		users = append(users, u)
	}
	io.WriteString(m.sio.Stdout, format.ListUsers(cols, users, c.withAssoc, m.out))
}

// adminMatches is str_2_slurmdb_admin_level's reading of AdminLevel=.
func adminMatches(levels []string, admin string) bool {
	for _, l := range levels {
		l = strings.ToLower(l)
		if l != "" && strings.HasPrefix(strings.ToLower(admin), l) {
			return true
		}
	}
	return false
}

func (m *sacctmgr) listAccounts(argv []string) {
	c, ok := m.conditions(argv, func(w mgrWord, c *mgrCond) bool {
		switch {
		case w.is("Set", 3):
			return true
		case w.bare("WithAssoc", 5):
			c.withAssoc = true
		case w.bare("WithCoordinators", 5), w.bare("WithDeleted", 5), w.bare("WithRawQOSLevel", 5),
			w.bare("WOPLimits", 4):
		case !w.hasEq || w.is("Names", 1) || w.is("Accounts", 2) || w.is("Acct", 4):
			c.names = format.AddToCharList(c.names, w.value)
		case w.is("Descriptions", 1), w.is("Organizations", 1):
		case c.assocCond(w):
			c.assocSet = true
		default:
			return m.unknownCondition(w.arg, setValue)
		}
		return true
	})
	if !ok {
		return
	}
	def := "Acc,Des,O"
	if c.withAssoc {
		def += ",Cl,ParentN,U,Share,Priority,GrpJ,GrpN,GrpCPUs,GrpMEM,GrpS,GrpWall,GrpCPUMins," +
			"MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"
	}
	if !c.withAssoc && c.assocSet && !m.commitCheck("You requested options that are only valid when "+
		"querying with the withassoc option.\nAre you sure you want to continue?") {
		fmt.Fprintln(m.sio.Stdout, "Aborted")
		return
	}
	cols, ok := m.columns(c, def)
	if !ok {
		return
	}
	d, ok := m.config()
	if !ok {
		return
	}
	var accts []format.MgrAccount
	for _, a := range d.accounts {
		if len(c.names) > 0 && cli.IndexFold(c.names, a.Name) < 0 {
			continue
		}
		a.Assocs = d.filterAssocs(a.Assocs, c)
		if c.assocSet && len(a.Assocs) == 0 {
			continue
		}
		accts = append(accts, a)
	}
	io.WriteString(m.sio.Stdout, format.ListAccounts(cols, accts, c.withAssoc, m.out))
}

func (m *sacctmgr) listAssocs(argv []string) {
	c, ok := m.conditions(argv, func(w mgrWord, c *mgrCond) bool {
		switch {
		case w.bare("OnlyDefaults", 2):
			c.onlyDefs = true
		case w.bare("Tree", 4):
			c.tree = true
		case w.bare("WithSubAccounts", 5):
			c.subAccounts = true
		case w.bare("WithDeleted", 5), w.bare("WithRawQOSLevel", 5), w.bare("WOPInfo", 4),
			w.bare("WOPLimits", 4), w.bare("WOLimits", 3):
		case !w.hasEq || w.is("Ids", 1) || w.is("Associations", 2):
			for _, id := range format.AddToCharList(nil, w.value) {
				if !validUint(id) {
					fmt.Fprintf(m.sio.Stderr, "sacctmgr: error: Invalid value for AssocId (%s)\n", strings.ToLower(id))
					return false
				}
				c.ids = append(c.ids, id)
			}
		case c.assocCond(w):
		default:
			return m.unknownCondition(w.arg, "")
		}
		return true
	})
	if !ok {
		return
	}
	def := "Cluster,Account,User,Part,Share,Priority,GrpJ,GrpTRES,GrpS,GrpWall,GrpTRESMins,MaxJ," +
		"MaxTRES,MaxTRESPerN,MaxS,MaxW,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins"
	cols, ok := m.columns(c, def)
	if !ok {
		return
	}
	d, ok := m.config(c.users...)
	if !ok {
		return
	}
	assocs := hierarchical(d.filterAssocs(d.assocs, c))
	io.WriteString(m.sio.Stdout, format.ListAssocs(cols, assocs, c.tree, m.out))
}

// validUint is get_uint's test: a number, or text strtol reads as one
// that is not 0.
func validUint(s string) bool {
	n, rest := cstrtolPrefix(s)
	return !(n == 0 && rest != "")
}

func cstrtolPrefix(s string) (int64, string) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j {
		return 0, s
	}
	n, _ := strconv.ParseInt(s[i:k], 10, 64)
	return n, s[k:]
}

func (m *sacctmgr) listQOS(argv []string) {
	c, ok := m.conditions(argv, func(w mgrWord, c *mgrCond) bool {
		switch {
		case w.is("Set", 3):
		case w.bare("WithDeleted", 5):
		case !w.hasEq || w.is("Names", 1) || w.is("QOSLevel", 1):
			c.names = format.AddToCharList(c.names, w.value)
		case w.is("Clusters", 1), w.is("Descriptions", 1), w.is("PreemptMode", 8):
		case w.is("Ids", 1):
			c.ids = format.AddToCharList(c.ids, w.value)
		default:
			return m.unknownCondition(w.arg, " Use keyword 'set' to modify SLURM_PRINT_VALUE\n")
		}
		return true
	})
	if !ok {
		return
	}
	cols, ok := m.columns(c, "Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,UsageThres,UsageFactor,"+
		"GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,MaxTRESMins,MaxW,"+
		"MaxTRESPerUser,MaxJobsPerUser,MaxSubmitJobsPerUser,MaxTRESPerAcct,MaxJobsPerAcct,MaxSubmitJobsPerAcct,MinTRES")
	if !ok {
		return
	}
	d, ok := m.config()
	if !ok {
		return
	}
	var qos []format.MgrQOS
	for _, q := range d.qos {
		if len(c.names) > 0 && cli.IndexFold(c.names, q.Name) < 0 ||
			len(c.ids) > 0 && !slices.Contains(c.ids, strconv.Itoa(q.ID)) {
			continue
		}
		qos = append(qos, q)
	}
	io.WriteString(m.sio.Stdout, format.ListQOS(cols, qos, m.out))
}

func (m *sacctmgr) listClusters(argv []string) {
	c, ok := m.conditions(argv, func(w mgrWord, c *mgrCond) bool {
		switch {
		case w.is("Set", 3):
		case w.bare("WithDeleted", 5), w.bare("WithFed", 5), w.bare("WOLimits", 3):
		case !w.hasEq || w.is("Names", 1) || w.is("Clusters", 1):
			c.names = format.AddToCharList(c.names, w.value)
		case w.is("Federations", 3), w.is("Classification", 3), w.is("flags", 2), w.is("PluginIDSelect", 1),
			w.is("RPCVersions", 1):
		default:
			return m.unknownCondition(w.arg, setValue)
		}
		return true
	})
	if !ok {
		return
	}
	cols, ok := m.columns(c, "Cl,Controlh,Controlp,RPC,Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,DefaultQOS")
	if !ok {
		return
	}
	d, ok := m.config()
	if !ok {
		return
	}
	var clusters []format.MgrCluster
	if len(c.names) == 0 || cli.IndexFold(c.names, d.cluster) >= 0 {
		// 9728 is 22.05's protocol version, which slurmdbd reports as RPC.
		clusters = append(clusters, format.MgrCluster{Name: d.cluster, ControlHost: d.host, RPC: 9728, QOS: d.qosNames})
	}
	io.WriteString(m.sio.Stdout, format.ListClusters(cols, clusters, m.out))
}

func (m *sacctmgr) listTRES(argv []string) {
	c, ok := m.conditions(argv, func(w mgrWord, c *mgrCond) bool {
		switch {
		case w.is("Set", 3):
		case w.bare("WithDeleted", 5):
		case !w.hasEq || w.is("Type", 2):
			c.qos = format.AddToCharList(c.qos, w.value) // types
		case w.is("Names", 1):
			c.names = format.AddToCharList(c.names, w.value)
		case w.is("Ids", 1):
			c.ids = format.AddToCharList(c.ids, w.value)
		default:
			return m.unknownCondition(w.arg, setValue)
		}
		return true
	})
	if !ok {
		return
	}
	cols, ok := m.columns(c, "Type,Name%15,ID")
	if !ok {
		return
	}
	d, ok := m.config()
	if !ok {
		return
	}
	var tres []format.MgrTRES
	for _, t := range d.tres {
		if len(c.qos) > 0 && cli.IndexFold(c.qos, t.Type) < 0 ||
			len(c.names) > 0 && cli.IndexFold(c.names, t.Name) < 0 ||
			len(c.ids) > 0 && !slices.Contains(c.ids, strconv.Itoa(t.ID)) {
			continue
		}
		tres = append(tres, t)
	}
	io.WriteString(m.sio.Stdout, format.ListTRES(cols, tres, m.out))
}

func mgrFileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
