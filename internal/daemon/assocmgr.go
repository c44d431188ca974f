package daemon

import (
	"context"
	"math"
	"net/http"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// scontrol show assoc_mgr: slurmctld's association manager as it would
// hold this machine's accounts (assoc_mgr_info_get_pack_msg).
//
// The associations are sshare's tree (sched.FairShareTree: slurmctld's
// hierarchical order, users before sub-accounts, each by name) with the
// ids and Lft slurmdbd would have given them had the configuration been
// loaded in its order (config.AssocNumbers, as sacctmgr shows them too).
// Usage per TRES is counted from the job
// records since the last PriorityUsageResetPeriod reset
// (sched.AssocMgrCounts), as budgets are.
//
// Who sees what is the daemon's to decide, as slurmctld's: under
// PrivateData=users a user sees only their own user record, under
// PrivateData=usage only their own associations; root and operators see
// everything.

// assocMgrFlags are the sections asked for (the query's flags).
type assocMgrFlags struct{ assoc, users, qos bool }

func parseAssocMgrFlags(vals []string) assocMgrFlags {
	var f assocMgrFlags
	for _, v := range vals {
		v = strings.ToLower(v)
		f.users = f.users || strings.Contains(v, "users")
		f.assoc = f.assoc || strings.Contains(v, "assoc")
		f.qos = f.qos || strings.Contains(v, "qos")
	}
	if !f.assoc && !f.users && !f.qos {
		return assocMgrFlags{true, true, true}
	}
	return f
}

// listQuery is a query's names for key: repeated, or comma-separated.
func listQuery(q map[string][]string, key string) []string {
	var out []string
	for _, v := range q[key] {
		for _, n := range strings.Split(v, ",") {
			if n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

func hasFold(list []string, name string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, name) })
}

// uidOf is a user's uid; Slurm's NO_VAL for a name the system does not
// know.
func uidOf(name string) uint32 {
	if u, err := user.Lookup(name); err == nil {
		if n, err := strconv.ParseUint(u.Uid, 10, 32); err == nil {
			return uint32(n)
		}
	}
	return 0xfffffffe
}

// assocMgrLimits is a limit per TRES in sched.AssocTRES's order.
func assocMgrLimits(t config.TRES) []int64 {
	out := make([]int64, len(sched.AssocTRES))
	for i, n := range sched.AssocTRES {
		out[i] = api.NoLimit
		if v, ok := t[n]; ok {
			out[i] = v
		}
	}
	return out
}

func noLimits() []int64 { return assocMgrLimits(nil) }

func tresUsed(v [sched.NTRES]float64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = uint64(max(0, math.Floor(x)))
	}
	return out
}

func limitOr(n int) int64 {
	if n > 0 {
		return int64(n)
	}
	return api.NoLimit
}

// assocMgr answers scontrol show assoc_mgr.
func (d *Daemon) assocMgr(ctx context.Context, req *localapi.Request[struct{}]) (api.AssocMgr, error) {
	cfg := d.config()
	q := req.Query
	flags := parseAssocMgrFlags(q["flags"])
	users, accounts, qosNames := listQuery(q, "users"), listQuery(q, "accounts"), listQuery(q, "qos")
	v := d.viewer(req.Caller)
	private := (v.privateUsage || cfg.Private(config.PrivateUsers)) && !v.admin

	snap, err := d.submitSnapshot(ctx, d.now(), true)
	if err != nil {
		return api.AssocMgr{}, err
	}
	d.withCalc(&snap)
	// As sshare: the implicit account's users known to the store, the
	// caller, and the named users that exist.
	snap.Users = d.implicitUsers(ctx, cfg, append(namedUsers(map[string][]string{"user": users}), req.Caller.User)...)
	now := snap.Now
	since := budgetSince(cfg, now, d.started)
	recs, err := d.st.Runs(ctx, store.Filter{Since: since})
	if err != nil {
		return api.AssocMgr{}, err
	}
	runs := make([]sched.Run, 0, len(recs))
	for i := range recs {
		j := &recs[i]
		if j.Start.IsZero() {
			continue
		}
		sj := schedJob(j, j.ID, j.ArrayTaskID, cfg.ShardSize, snap.Nodes[0])
		sj.Alloc = schedAlloc(j.Alloc)
		runs = append(runs, sched.Run{Job: sj, End: j.End})
	}
	counts, qosCounts := sched.AssocMgrCounts(snap, runs, since, d.started)
	rows := sched.FairShareTree(snap)

	out := api.AssocMgr{TRES: slices.Clone(sched.AssocTRES)}
	// The user records: everyone holding an association, by name.
	var names []string
	for _, r := range rows {
		if r.User != "" && !slices.Contains(names, r.User) {
			names = append(names, r.User)
		}
	}
	slices.Sort(names)
	if private && !slices.Contains(names, req.Caller.User) {
		// slurmctld answers a user it has no record of with nothing.
		return api.AssocMgr{}, localapi.Errorf(http.StatusForbidden,
			"PrivateData=%s: user %s has no association, so the association manager shows them nothing",
			strings.Join(cfg.PrivateData, ","), req.Caller.User)
	}
	if flags.users {
		for _, n := range names {
			if cfg.Private(config.PrivateUsers) && !v.admin && n != req.Caller.User {
				continue
			}
			if len(users) > 0 && !hasFold(users, n) {
				continue
			}
			u := api.AssocMgrUser{Name: n, UID: uidOf(n), AdminLevel: cfg.AdminLevel(n)}
			if accts, ok := cfg.UserAccounts(n); ok && len(accts) > 0 {
				u.DefAccount = accts[0]
			}
			if n == "root" && cfg.HasAccounts() {
				// Slurm makes root's association with the root account,
				// its default, with the cluster.
				u.DefAccount = config.RootAccount
			}
			out.Users = append(out.Users, u)
		}
	}
	if flags.assoc {
		for _, a := range assocMgrAssocs(cfg, rows, snap.Users, counts) {
			switch {
			case len(users) > 0 && a.User != "" && !hasFold(users, a.User),
				len(accounts) > 0 && !hasFold(accounts, a.Account),
				v.privateUsage && !v.admin && (a.User == "" || a.User != req.Caller.User):
				continue
			}
			out.Assocs = append(out.Assocs, a)
		}
	}
	if flags.qos {
		all := assocMgrQOS(cfg, qosCounts)
		if len(qosNames) == 0 {
			out.QOS = all
		}
		for _, n := range qosNames {
			if i := slices.IndexFunc(all, func(q api.AssocMgrQOS) bool { return strings.EqualFold(q.Name, n) }); i >= 0 {
				out.QOS = append(out.QOS, all[i])
			}
		}
	}
	return out, nil
}

// assocMgrAssocs are the associations in the tree's order with their ids
// and Lft (config.AssocNumbers: implicit are the implicit account's
// users), shares, usage and limits.
func assocMgrAssocs(cfg *config.Config, rows []sched.ShareRow, implicit []string, counts map[[2]string]*sched.AssocCounts) []api.AssocMgrAssoc {
	type key = [2]string
	// Each row's parent account row (by index; -1 for the root).
	parent := make([]int, len(rows))
	var stack []int
	for i, r := range rows {
		stack = stack[:min(len(stack), r.Depth)]
		parent[i] = -1
		if len(stack) > 0 {
			parent[i] = stack[len(stack)-1]
		}
		if r.User == "" {
			stack = append(stack, i)
		}
	}
	// Each row's children, for its level's shares.
	children := make([][]int, len(rows))
	for i := range rows {
		if p := parent[i]; p >= 0 {
			children[p] = append(children[p], i)
		}
	}
	nums := cfg.AssocNumbers(implicit)

	accts := map[string]config.Account{}
	for _, a := range cfg.AccountTree() {
		accts[a.Name] = a
	}
	userOf := map[key]config.User{}
	for _, u := range cfg.Users {
		userOf[key{u.Account, u.Name}] = u
	}
	// Priority, MaxTRESMinsPerJob and MaxJobs are inherited down the tree
	// by an association that sets none.
	type inherited struct {
		prio    int
		maxTM   config.TRES
		maxJobs int
	}
	inh := make([]inherited, len(rows))
	out := make([]api.AssocMgrAssoc, 0, len(rows))
	for i, r := range rows {
		var h inherited
		if p := parent[i]; p >= 0 {
			h = inh[p]
		}
		num := nums[config.AssocKey{Account: r.Account, User: r.User}]
		a := api.AssocMgrAssoc{Cluster: cfg.ClusterName, Account: r.Account, User: r.User, ID: num.ID, Lft: num.Lft,
			SharesRaw: r.RawShares, SharesNorm: r.NormShares, LevelShares: 1, FSFactor: r.FairShare,
			UsageRaw: r.RawUsage, UsageNorm: r.NormUsage, UsageEfctv: r.EffectvUsage,
			GrpJobs: api.NoLimit, GrpJobsAccrue: api.NoLimit, GrpSubmitJobs: api.NoLimit, GrpWall: api.NoLimit,
			GrpTRES: noLimits(), GrpTRESMins: noLimits(), GrpTRESRunMins: noLimits(),
			MaxJobsAccrue: api.NoLimit, MaxSubmitJobs: api.NoLimit, MaxWallPJ: api.NoLimit,
			MaxTRESPJ: noLimits(), MaxTRESPN: noLimits(), MinPrioThreshold: api.NoLimit}
		if p := parent[i]; p >= 0 {
			level := 0
			for _, c := range children[p] {
				level += rows[c].RawShares
			}
			a.LevelShares = level
		} else {
			// The root: its usage is the whole (Slurm's usage_norm and
			// usage_efctv of the root are 1), its shares slurmdbd's
			// default 1.
			a.UsageNorm, a.UsageEfctv, a.SharesRaw = 1, 1, 1
		}
		if r.User == "" {
			ac := accts[r.Account]
			if p := parent[i]; p >= 0 {
				a.ParentAccount = rows[p].Account
				a.ParentID = num.ParentID
			}
			if ac.Priority > 0 {
				h.prio = ac.Priority
			}
			if len(ac.MaxTRESMinsPerJob) > 0 {
				h.maxTM = ac.MaxTRESMinsPerJob
			}
			if ac.MaxJobs > 0 {
				h.maxJobs = ac.MaxJobs
			}
			a.GrpTRES, a.GrpTRESMins, a.GrpTRESRunMins = assocMgrLimits(ac.GrpTRES), assocMgrLimits(ac.GrpTRESMins), assocMgrLimits(ac.GrpTRESRunMins)
		} else {
			a.UID = uidOf(r.User)
			u := userOf[key{r.Account, r.User}]
			if u.Priority > 0 {
				h.prio = u.Priority
			}
			if u.MaxJobs > 0 {
				h.maxJobs = u.MaxJobs
			}
			if accts, ok := cfg.UserAccounts(r.User); ok && len(accts) > 0 {
				a.IsDefault = accts[0] == r.Account
			}
			if r.User == "root" && cfg.HasAccounts() {
				a.IsDefault = r.Account == config.RootAccount
			}
		}
		inh[i] = h
		a.Priority = uint32(h.prio)
		a.MaxTRESMinsPJ = assocMgrLimits(h.maxTM)
		a.MaxJobs = limitOr(h.maxJobs)
		c := counts[key{r.Account, r.User}]
		if c == nil {
			c = &sched.AssocCounts{}
		}
		a.UsedJobs, a.AccrueCount, a.UsedSubmit, a.UsedWallSecs = c.Jobs, c.Accruing, c.Submitted, c.WallSecs
		a.GrpTRESUsed, a.TRESUsageSecs, a.TRESRunSecs = tresUsed(c.Held), tresUsed(c.TRESSecs), tresUsed(c.RunSecs)
		out = append(out, a)
	}
	return out
}

// assocMgrQOS is every QOS, in the configuration's order (ids from 1, as
// sacctmgr numbers them), with its usage and limits.
func assocMgrQOS(cfg *config.Config, counts map[string]*sched.QOSCounts) []api.AssocMgrQOS {
	var out []api.AssocMgrQOS
	for i, q := range cfg.QOS {
		r := api.AssocMgrQOS{Name: q.Name, ID: i + 1, PreemptMode: "OFF", Priority: uint32(max(0, q.Priority)),
			GrpJobs: api.NoLimit, GrpJobsAccrue: api.NoLimit, GrpSubmitJobs: api.NoLimit, GrpWall: api.NoLimit,
			GrpTRES: noLimits(), GrpTRESMins: assocMgrLimits(q.GrpTRESMins), GrpTRESRunMins: noLimits(),
			MaxWallPJ: api.NoLimit, MaxTRESPJ: assocMgrLimits(q.MaxTRESPerJob), MaxTRESPN: noLimits(),
			MaxTRESMinsPJ: noLimits(), MinPrioThreshold: api.NoLimit, MinTRESPJ: noLimits(),
			MaxJobsPA: api.NoLimit, MaxJobsAccruePA: api.NoLimit, MaxSubmitPA: api.NoLimit, MaxTRESPA: noLimits(),
			MaxJobsPU: limitOr(q.MaxJobsPerUser), MaxJobsAccruePU: api.NoLimit, MaxSubmitPU: limitOr(q.MaxSubmitJobsPerUser),
			MaxTRESPU: assocMgrLimits(q.MaxTRESPerUser)}
		if q.MaxWall > 0 {
			r.MaxWallPJ = int64(q.MaxWall.Minutes())
		}
		c := counts[q.Name]
		if c == nil {
			c = &sched.QOSCounts{}
		}
		r.UsageRaw = c.Billing
		r.UsedJobs, r.AccrueCount, r.UsedSubmit, r.UsedWallSecs = c.Jobs, c.Accruing, c.Submitted, c.WallSecs
		r.GrpTRESUsed, r.TRESUsageSecs, r.TRESRunSecs = tresUsed(c.Held), tresUsed(c.TRESSecs), tresUsed(c.RunSecs)
		for _, a := range c.Accounts {
			r.Accounts = append(r.Accounts, api.AssocMgrQOSUsage{Name: a.Name, Jobs: a.Jobs, Accruing: a.Accruing,
				Submitted: a.Submitted, TRES: tresUsed(a.Held)})
		}
		for _, u := range c.Users {
			r.Users = append(r.Users, api.AssocMgrQOSUsage{UID: uidOf(u.Name), Jobs: u.Jobs, Accruing: u.Accruing,
				Submitted: u.Submitted, TRES: tresUsed(u.Held)})
		}
		out = append(out, r)
	}
	return out
}
