package sacctmgr

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
)

// mgrData is the accounting database sacctmgr would find after the
// configuration had been loaded into one (as `sacctmgr add cluster`, then
// the accounts, then the users, in the file's order): the root account and
// root's association with it exist whatever the file says, as Slurm
// creates them with the cluster.
type mgrData struct {
	cluster string
	// assocs are every association in slurmdbd's lft order
	// (config.AssocNumbers): each account before what is under it, its
	// sub-accounts and users newest first.
	assocs   []format.MgrAssoc
	users    []format.MgrUser    // by name
	accounts []format.MgrAccount // by name
	qos      []format.MgrQOS
	qosNames []string // sorted, for associations' QOS
	host     string
	// tres are AccountingStorageTRES, as scontrol show config prints it.
	tres []format.MgrTRES
}

// implicit are the users holding the implicit account's association
// (api.Config.ImplicitUsers): with no accounts configured that is every
// association of a user, root's included, since root's jobs are charged
// there too; with AllowUnlistedUsers they sit beside the configured ones.
func newMgrData(cfg *config.Config, implicit []string) *mgrData {
	d := &mgrData{cluster: cfg.ClusterName, host: cfg.Node.NodeName}
	qosID := map[string]int{}
	for i, q := range cfg.QOS {
		qosID[q.Name] = i + 1
		d.qos = append(d.qos, mgrQOS(i+1, q))
		d.qosNames = append(d.qosNames, q.Name)
	}
	slices.Sort(d.qosNames)
	qosOf := func(names []string) ([]string, []int) {
		if len(names) == 0 {
			names = d.qosNames
		}
		names = slices.Sorted(slices.Values(names))
		ids := make([]int, 0, len(names))
		for _, n := range names {
			ids = append(ids, qosID[n])
		}
		slices.Sort(ids)
		return names, ids
	}

	// Accounts and their children, in the order they would be created.
	tree := cfg.AccountTree()
	subs := map[string][]config.Account{}
	parentOf := map[string]string{}
	for _, a := range tree {
		p := a.Parent
		if p == "" {
			p = config.RootAccount
		}
		subs[p] = append(subs[p], a)
		parentOf[a.Name] = p
	}
	all := slices.Clone(cfg.Users)
	for _, n := range implicit {
		all = append(all, config.User{Name: n, Account: cfg.ImplicitAccount(), Shares: 1})
	}
	users := map[string][]config.User{}
	for _, u := range all {
		users[u.Account] = append(users[u.Account], u)
	}
	// Root's association with the root account, which Slurm makes with the
	// cluster, whatever else is configured (with no accounts, root's jobs
	// are charged to the implicit account like everyone's, but root/root is
	// there, as the exported sacctmgr.sh leaves it, and Fair Tree counts it).
	if !slices.ContainsFunc(users[config.RootAccount], func(u config.User) bool { return u.Name == "root" }) {
		users[config.RootAccount] = append(users[config.RootAccount], config.User{Name: "root", Account: config.RootAccount, Shares: 1})
	}

	// An account's limits as sacctmgr prints them: TRES by name
	// (billing,cpu,gres/gpu), where sshare prints them in id order.
	tresStr := func(t config.TRES) string {
		if len(t) == 0 {
			return ""
		}
		m := map[string]uint64{}
		for n, v := range t {
			m[n] = uint64(v)
		}
		return format.TRESSet(slices.Sorted(maps.Keys(m)), m)
	}
	byName := map[string]config.Account{}
	for _, a := range tree {
		byName[a.Name] = a
	}

	// MaxTRESMinsPerJob and MaxJobs (max_* limits) are inherited: an
	// association that sets none shows its parent's.
	var walk func(name, parent string, shares int, maxTM string, maxJobs int)
	walk = func(name, parent string, shares int, maxTM string, maxJobs int) {
		q, qi := qosOf(nil)
		a := byName[name]
		if t := tresStr(a.MaxTRESMinsPerJob); t != "" {
			maxTM = t
		}
		if a.MaxJobs > 0 {
			maxJobs = a.MaxJobs
		}
		d.assocs = append(d.assocs, format.MgrAssoc{Cluster: d.cluster,
			Account: name, Parent: parent, Shares: shares, QOS: q, QOSIDs: qi,
			GrpTRESMins: tresStr(a.GrpTRESMins), GrpTRES: tresStr(a.GrpTRES),
			GrpTRESRunMins: tresStr(a.GrpTRESRunMins), MaxTRESMins: maxTM, MaxJobs: maxJobs})
		for _, s := range subs[name] {
			walk(s.Name, name, s.Shares, maxTM, maxJobs)
		}
		for _, u := range users[name] {
			q, qi := qosOf(u.QOS)
			uj := maxJobs
			if u.MaxJobs > 0 {
				uj = u.MaxJobs
			}
			d.assocs = append(d.assocs, format.MgrAssoc{Cluster: d.cluster, Account: name, User: u.Name,
				Shares: u.Shares, QOS: q, QOSIDs: qi, MaxTRESMins: maxTM, MaxJobs: uj})
		}
	}
	walk(config.RootAccount, "", 1, "", 0)
	nums := cfg.AssocNumbers(implicit)
	for i, a := range d.assocs {
		n := nums[config.AssocKey{Account: a.Account, User: a.User}]
		d.assocs[i].ID, d.assocs[i].ParentID, d.assocs[i].LFT, d.assocs[i].RGT = n.ID, n.ParentID, n.Lft, n.Rgt
	}
	slices.SortFunc(d.assocs, func(a, b format.MgrAssoc) int { return a.LFT - b.LFT })

	// Users, by name, with their associations in lft order.
	names := []string{"root"}
	for _, u := range all {
		if !slices.Contains(names, u.Name) {
			names = append(names, u.Name)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		u := format.MgrUser{Name: n, Admin: cfg.AdminLevel(n)}
		if accts, ok := cfg.UserAccounts(n); ok && len(accts) > 0 {
			u.DefaultAccount = accts[0]
		}
		if n == "root" && cfg.HasAccounts() {
			// Slurm makes root's association with the root account, its
			// default, with the cluster; adding root to other accounts
			// leaves that default.
			u.DefaultAccount = config.RootAccount
		}
		for _, a := range d.assocs {
			if a.User == n {
				u.Assocs = append(u.Assocs, a)
			}
		}
		d.users = append(d.users, u)
	}

	// Accounts, by name: the description is the name, the organization
	// the parent's name below the top (sacctmgr add account's defaults).
	acctNames := []string{config.RootAccount}
	for _, a := range tree {
		acctNames = append(acctNames, a.Name)
	}
	slices.Sort(acctNames)
	for _, n := range acctNames {
		a := format.MgrAccount{Name: n, Description: n, Organization: n}
		switch p := parentOf[n]; {
		case n == config.RootAccount:
			a.Description = "default root account"
		case p != config.RootAccount:
			a.Organization = p
		}
		for _, as := range d.assocs {
			if as.Account == n {
				a.Assocs = append(a.Assocs, as)
			}
		}
		d.accounts = append(d.accounts, a)
	}

	tres := func(id int, typ, name string) format.MgrTRES { return format.MgrTRES{ID: id, Type: typ, Name: name} }
	d.tres = []format.MgrTRES{tres(1, "cpu", ""), tres(2, "mem", ""), tres(3, "energy", ""), tres(4, "node", ""),
		tres(5, "billing", ""), tres(6, "fs", "disk"), tres(7, "vmem", ""), tres(8, "pages", ""),
		tres(1001, "gres", "gpu")}
	return d
}

// qosFlags lists a QOS's flags in slurmdb_qos_flags_str's order.
var qosFlagOrder = []string{"DenyOnLimit", "EnforceUsageThreshold", "NoReserve", "PartitionMaxNodes",
	"PartitionMinNodes", "OverPartQOS", "PartitionTimeLimit", "RequiresReservation", "NoDecay", "UsageFactorSafe"}

func mgrQOS(id int, q config.QOS) format.MgrQOS {
	m := format.MgrQOS{ID: id, Name: q.Name, Description: q.Name, Priority: q.Priority,
		UsageFactor: q.UsageFactor, MaxTRESPerJob: q.MaxTRESPerJob.String(), MaxTRESPU: q.MaxTRESPerUser.String(),
		MaxCPUsPU: q.MaxTRESPerUser["cpu"], MaxNodesPU: q.MaxTRESPerUser["node"], MaxNodes: q.MaxTRESPerJob["node"],
		MaxJobsPU: q.MaxJobsPerUser, MaxSubmitPU: q.MaxSubmitJobsPerUser, MaxWallMinutes: int64(q.MaxWall.Minutes())}
	if len(q.GrpTRESMins) > 0 {
		// By name, as sacctmgr prints an association's (recorded).
		t := map[string]uint64{}
		for n, v := range q.GrpTRESMins {
			t[n] = uint64(v)
		}
		m.GrpTRESMins = format.TRESSet(slices.Sorted(maps.Keys(t)), t)
	}
	if q.Name == config.DefaultQOS {
		m.Description = "Normal QOS default"
	}
	var flags []string
	for _, f := range qosFlagOrder {
		if q.HasFlag(f) {
			flags = append(flags, f)
		}
	}
	m.Flags = strings.Join(flags, ",")
	return m
}

// filterAssocs keeps the associations the conditions select, as slurmdbd
// would: a user list selects user associations ("" selects accounts'),
// an account list those accounts' associations (and with
// WithSubAccounts, those of the accounts under them).
func (d *mgrData) filterAssocs(assocs []format.MgrAssoc, c mgrCond) []format.MgrAssoc {
	accounts := c.accounts
	if c.subAccounts && len(accounts) > 0 {
		for _, a := range d.assocs {
			if a.User == "" && d.below(a.Account, accounts) && cli.IndexFold(accounts, a.Account) < 0 {
				accounts = append(accounts, a.Account)
			}
		}
	}
	defaults := map[string]string{}
	for _, u := range d.users {
		defaults[u.Name] = u.DefaultAccount
	}
	var out []format.MgrAssoc
	for _, a := range assocs {
		switch {
		case len(c.clusters) > 0 && cli.IndexFold(c.clusters, a.Cluster) < 0,
			len(accounts) > 0 && cli.IndexFold(accounts, a.Account) < 0,
			c.usersGiven && cli.IndexFold(c.users, a.User) < 0,
			len(c.partitions) > 0 && cli.IndexFold(c.partitions, "") < 0,
			len(c.parents) > 0 && (a.User != "" || cli.IndexFold(c.parents, a.Parent) < 0),
			len(c.ids) > 0 && !slices.Contains(c.ids, strconv.Itoa(a.ID)),
			len(c.qos) > 0 && !slices.ContainsFunc(c.qos, func(q string) bool { return cli.IndexFold(a.QOS, q) >= 0 }),
			len(c.defQOS) > 0,
			c.onlyDefs && (a.User == "" || defaults[a.User] != a.Account):
			continue
		}
		out = append(out, a)
	}
	return out
}

// below reports whether account sits under one of accounts.
func (d *mgrData) below(account string, accounts []string) bool {
	parent := map[string]string{}
	for _, a := range d.assocs {
		if a.User == "" {
			parent[a.Account] = a.Parent
		}
	}
	seen := map[string]bool{}
	for p := parent[account]; p != "" && !seen[p]; p = parent[p] {
		seen[p] = true
		if cli.IndexFold(accounts, p) >= 0 {
			return true
		}
	}
	return false
}

// hierarchical is slurmdb_sort_hierarchical_assoc_list: each association
// under its parent when the parent is listed too (else at the top), every
// level with users first, then by name, ties in lft order.
func hierarchical(assocs []format.MgrAssoc) []format.MgrAssoc {
	type node struct {
		a        format.MgrAssoc
		children []*node
	}
	byID := map[int]*node{}
	var top []*node
	for _, a := range assocs {
		n := &node{a: a}
		if p, ok := byID[a.ParentID]; ok && a.ParentID != 0 {
			p.children = append(p.children, n)
		} else {
			top = append(top, n)
		}
		if a.User == "" {
			byID[a.ID] = n
		}
	}
	sortName := func(n *node) string {
		if n.a.User != "" {
			return n.a.User
		}
		return n.a.Account
	}
	var out []format.MgrAssoc
	var walk func(level []*node)
	walk = func(level []*node) {
		slices.SortStableFunc(level, func(x, y *node) int {
			return cmp.Or(boolFirstUser(x.a.User != "", y.a.User != ""), strings.Compare(sortName(x), sortName(y)))
		})
		for _, n := range level {
			out = append(out, n.a)
			walk(n.children)
		}
	}
	walk(top)
	return out
}

func boolFirstUser(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
