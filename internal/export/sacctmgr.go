package export

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

// sacctmgr is sacctmgr.sh: the cluster, QOS, accounts and users with their
// shares and limits. sacctmgr refuses to add what exists ("Nothing new
// added", exit 1) but modifies without complaint, so the script adds only
// what `sacctmgr show` does not list and sets every value with modify:
// running it again is safe, and it brings a changed configuration over.
func (g gen) sacctmgr() string {
	c := g.cfg
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	g.header(&b, "sacctmgr.sh: associations and QOS for real Slurm")
	b.WriteString(`#
# Run it as root (or SlurmUser) where sacctmgr reaches slurmdbd, once slurmdbd
# and then slurmctld have started: slurmctld registers the TRES (gres/gpu,
# gres/shard) that QOS limits name. It adds what is missing and sets every value,
# so running it again is safe. SACCTMGR=/path/to/sacctmgr picks the command.
set -euo pipefail
sacctmgr=${SACCTMGR:-sacctmgr}
`)
	fmt.Fprintf(&b, "cluster=%s\n", shellQuote(c.ClusterName))
	b.WriteString(`
# missing ARGS...: sacctmgr show ARGS lists nothing.
missing() {
	local out
	out=$("$sacctmgr" -n -P show "$@") || exit 1
	[[ -z $out ]]
}
# run ARGS...: sacctmgr ARGS, said first.
run() {
	echo "sacctmgr $*"
	"$sacctmgr" -i "$@"
}
# update ARGS...: sacctmgr modify ARGS; a value already in place (sacctmgr:
# "Nothing modified", exit 1) is no error.
update() {
	echo "sacctmgr modify $*"
	local out rc=0
	out=$("$sacctmgr" -i modify "$@" 2>&1) || rc=$?
	printf '%s\n' "$out"
	if ((rc != 0)) && ! grep -q "Nothing modified" <<<"$out"; then
		return "$rc"
	fi
}

if missing cluster "$cluster" format=cluster; then
	run add cluster "$cluster"
fi
`)
	b.WriteString(tresWait(c))

	b.WriteString(clusterLimits(c))

	b.WriteString("\n# QOS (\"normal\" always exists). Limits not set here are left as they are.\n")
	for _, q := range c.QOS {
		name := shellQuote(q.Name)
		fmt.Fprintf(&b, "if missing qos %s format=name; then\n\trun add qos %s\nfi\n", name, name)
		fmt.Fprintf(&b, "update qos where name=%s set %s\n", name, strings.Join(qosSettings(q), " "))
	}

	b.WriteString("\n# Accounts, parents first, with their shares (Fairshare).\n")
	for _, a := range accountOrder(c.AccountTree()) {
		name := shellQuote(a.Name)
		parent := a.Parent
		if parent == "" {
			parent = config.RootAccount
		}
		shares := max(a.Shares, 1)
		fmt.Fprintf(&b, "if missing account %s format=account; then\n\trun add account %s Parent=%s Fairshare=%d\nfi\n",
			name, name, shellQuote(parent), shares)
		// Parent apart: sacctmgr moves the account, a different operation.
		fmt.Fprintf(&b, "update account where name=%s cluster=\"$cluster\" set Parent=%s\n", name, shellQuote(parent))
		fmt.Fprintf(&b, "update account where name=%s cluster=\"$cluster\" set Fairshare=%d\n", name, shares)
		if a.Priority > 0 {
			fmt.Fprintf(&b, "update account where name=%s cluster=\"$cluster\" set Priority=%d\n", name, a.Priority)
		}
		if lim := assocLimits(a); len(lim) > 0 {
			fmt.Fprintf(&b, "update account where name=%s cluster=\"$cluster\" set %s\n", name, strings.Join(lim, " "))
		}
	}

	b.WriteString("\n# Users: one association per account, with its shares.\n")
	b.WriteString(g.implicitUsers())
	added := map[string]bool{}
	for _, u := range c.Users {
		name, acct := shellQuote(u.Name), shellQuote(u.Account)
		var opts []string
		if !added[u.Name] {
			if d := u.DefaultAccount; d != "" {
				opts = append(opts, "DefaultAccount="+shellQuote(d))
			}
			if level := adminLevel(c, u); level != config.AdminNone {
				opts = append(opts, "AdminLevel="+level)
			}
		}
		added[u.Name] = true
		if len(u.QOS) > 0 {
			opts = append(opts, "QOS="+shellQuote(strings.Join(u.QOS, ",")))
		}
		shares := max(u.Shares, 1)
		fmt.Fprintf(&b, "if missing assoc where cluster=\"$cluster\" account=%s user=%s format=user; then\n\trun add user %s Account=%s Fairshare=%d\nfi\n",
			acct, name, name, acct, shares)
		fmt.Fprintf(&b, "update user where name=%s account=%s cluster=\"$cluster\" set Fairshare=%d\n",
			name, acct, shares)
		if u.Priority > 0 {
			fmt.Fprintf(&b, "update user where name=%s account=%s cluster=\"$cluster\" set Priority=%d\n",
				name, acct, u.Priority)
		}
		if u.MaxJobs > 0 {
			fmt.Fprintf(&b, "update user where name=%s account=%s cluster=\"$cluster\" set MaxJobs=%d\n",
				name, acct, u.MaxJobs)
		}
		if len(opts) > 0 {
			fmt.Fprintf(&b, "update user where name=%s set %s\n", name, strings.Join(opts, " "))
		}
	}
	for _, op := range c.Operators {
		if op != "root" && !added[op] {
			fmt.Fprintf(&b, "# Operator %s is in no account; Slurm keeps AdminLevel on a user with one:\n", op)
			fmt.Fprintf(&b, "#   sacctmgr -i add user %s Account=ACCOUNT AdminLevel=Operator\n", shellQuote(op))
		}
	}
	b.WriteString("echo \"sacctmgr.sh: done\"\n")
	return b.String()
}

// implicitUsers adds the users of the implicit account, as slurm-lite's
// fair-share tree holds them (every user who ran a job there, and root
// when no accounts are configured, root's jobs being charged there too),
// so that Slurm ranks the same associations (Fair Tree counts every user
// association, root/root included). Slurm refuses jobs of users without
// an association, so any user added later needs a line too.
func (g gen) implicitUsers() string {
	c := g.cfg
	if c.HasAccounts() && !c.AllowUnlistedUsers {
		return ""
	}
	var b strings.Builder
	acct := shellQuote(c.ImplicitAccount())
	fmt.Fprintf(&b, "# slurm-lite lets users named in no account run jobs in %q; Slurm needs an association\n", c.ImplicitAccount())
	fmt.Fprintf(&b, "# for each (1 share, as here). A user who comes later: sacctmgr -i add user NAME Account=%s\n", c.ImplicitAccount())
	users := slices.Clone(g.in.ImplicitUsers)
	if !c.HasAccounts() {
		users = append(users, "root")
	}
	slices.Sort(users)
	users = slices.Compact(users)
	if !g.in.ImplicitKnown {
		b.WriteString("# slurmd-lite was not running when this was exported, so the users it has seen are not\n")
		b.WriteString("# listed: export again while it runs, or add each by hand.\n")
	}
	for _, u := range users {
		if c.HasAccounts() && u == "root" {
			continue // root's own association is root/root
		}
		name := shellQuote(u)
		fmt.Fprintf(&b, "if missing assoc where cluster=\"$cluster\" account=%s user=%s format=user; then\n\trun add user %s Account=%s Fairshare=1\nfi\n",
			acct, name, name, acct)
	}
	if !c.HasAccounts() {
		// Root's jobs run in the implicit account here; in Slurm root
		// keeps root/root (made with the cluster) as its default unless told.
		fmt.Fprintf(&b, "update user where name=root set DefaultAccount=%s\n", acct)
	}
	return b.String()
}

// tresWait stops the script until slurmctld has registered the gres TRES
// that its QOS limits name (sacctmgr refuses a limit on an unknown TRES):
// those only. It waited for gres/gpu and gres/shard alike, so a cluster
// whose slurm.conf has no shards (or a slurmctld that did not register
// them) could never run it, though no limit named gres/shard.
func tresWait(c *config.Config) string {
	named := map[string]bool{}
	for _, q := range c.QOS {
		for _, t := range []config.TRES{q.MaxTRESPerUser, q.MaxTRESPerJob} {
			for k := range t {
				if name, ok := strings.CutPrefix(k, "gres/"); ok {
					named[name] = true
				}
			}
		}
	}
	if len(named) == 0 {
		return "# No QOS limit names a gres TRES: nothing here waits for slurmctld to register one.\n"
	}
	names := slices.Sorted(maps.Keys(named))
	return fmt.Sprintf(`# The QOS limits below name gres/%s: slurmctld must have registered it.
for t in %s; do
	if missing tres type=gres name="$t" format=name; then
		echo "sacctmgr.sh: gres/$t is no TRES yet: start slurmctld with this slurm.conf (it registers AccountingStorageTRES), then run this again" >&2
		exit 1
	fi
done
`, strings.Join(names, ", gres/"), strings.Join(names, " "))
}

// clusterLimits sets the limits of the cluster's association, which every
// association under it inherits unless it sets its own (Slurm's limit
// hierarchy: QOS, user, accounts, then the cluster's). MaxJobCountPerUser
// has no key in Slurm; the cluster's MaxSubmitJobs is its nearest: per
// user as slurm-lite's, and refused at submission with the same words
// (ESLURM_ACCOUNTING_POLICY). A QOS MaxSubmitJobsPerUser default would be
// per QOS (a user of two QOS could hold twice the share), and association
// limits are where a real cluster's admins look for them.
func clusterLimits(c *config.Config) string {
	var b strings.Builder
	n := c.MaxJobCountPerUser.Of(c.MaxJobCount)
	b.WriteString("\n# The cluster's association: its limits hold for every association under it that\n")
	if n <= 0 {
		b.WriteString("# sets none of its own. MaxJobCountPerUser = 0 (no limit): MaxSubmitJobs is cleared.\n")
		b.WriteString("update cluster where name=\"$cluster\" set MaxSubmitJobs=-1\n")
		return b.String()
	}
	share := string(c.MaxJobCountPerUser)
	if _, pct := c.MaxJobCountPerUser.Percent(); pct {
		share = fmt.Sprintf("%q of MaxJobCount %d", share, c.MaxJobCount)
	}
	fmt.Fprintf(&b, "# sets none of its own. MaxJobCountPerUser (%s) is its\n", share)
	b.WriteString("# MaxSubmitJobs: Slurm counts a user's pending and running jobs in each of their\n")
	b.WriteString("# accounts, root's too; slurm-lite counted every job a user held, ended ones until\n")
	b.WriteString("# MinJobAge, and exempted root.\n")
	fmt.Fprintf(&b, "update cluster where name=\"$cluster\" set MaxSubmitJobs=%d\n", n)
	return b.String()
}

// adminLevel is the user's Slurm AdminLevel: its own, or Operator when the
// Operators list names it.
func adminLevel(c *config.Config, u config.User) string {
	if u.AdminLevel != "" && u.AdminLevel != config.AdminNone {
		return u.AdminLevel
	}
	if u.Name != "root" && slices.Contains(c.Operators, u.Name) {
		return config.AdminOperator
	}
	return config.AdminNone
}

// qosSettings are sacctmgr's "set" words for a QOS: every value this
// project configures, limits only where one is set (0 is none).
func qosSettings(q config.QOS) []string {
	s := []string{"Priority=" + strconv.Itoa(q.Priority)}
	if len(q.MaxTRESPerUser) > 0 {
		s = append(s, "MaxTRESPerUser="+q.MaxTRESPerUser.String())
	}
	if len(q.MaxTRESPerJob) > 0 {
		s = append(s, "MaxTRESPerJob="+q.MaxTRESPerJob.String())
	}
	if q.MaxJobsPerUser > 0 {
		s = append(s, "MaxJobsPerUser="+strconv.Itoa(q.MaxJobsPerUser))
	}
	if q.MaxSubmitJobsPerUser > 0 {
		s = append(s, "MaxSubmitJobsPerUser="+strconv.Itoa(q.MaxSubmitJobsPerUser))
	}
	if q.MaxWall > 0 {
		s = append(s, "MaxWall="+clock(q.MaxWall))
	}
	if len(q.GrpTRESMins) > 0 {
		s = append(s, "GrpTRESMins="+q.GrpTRESMins.String())
	}
	s = append(s, "UsageFactor="+strconv.FormatFloat(q.UsageFactor, 'f', -1, 64))
	if len(q.Flags) > 0 {
		s = append(s, "Flags="+strings.Join(q.Flags, ","))
	}
	return s
}

// accountOrder sorts accounts so that each comes after its parent (config
// has refused cycles), keeping the configured order otherwise.
func accountOrder(accts []config.Account) []config.Account {
	done := map[string]bool{config.RootAccount: true}
	var out []config.Account
	for len(out) < len(accts) {
		progress := false
		for _, a := range accts {
			parent := a.Parent
			if parent == "" {
				parent = config.RootAccount
			}
			if !done[a.Name] && done[parent] {
				done[a.Name] = true
				out = append(out, a)
				progress = true
			}
		}
		if !progress { // a parent that is no account: keep the rest as given
			for _, a := range accts {
				if !done[a.Name] {
					done[a.Name] = true
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// shellQuote quotes s for bash when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,=:", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// assocLimits are an account's limits as sacctmgr sets them: its budget
// and the limits beside it, which Slurm enforces with
// AccountingStorageEnforce's limits (a budget against the same usage,
// decayed by PriorityDecayHalfLife and cleared by
// PriorityUsageResetPeriod).
func assocLimits(a config.Account) []string {
	var s []string
	for _, l := range []struct {
		k string
		t config.TRES
	}{{"GrpTRES", a.GrpTRES}, {"GrpTRESMins", a.GrpTRESMins}, {"GrpTRESRunMins", a.GrpTRESRunMins}, {"MaxTRESMinsPerJob", a.MaxTRESMinsPerJob}} {
		if len(l.t) > 0 {
			s = append(s, l.k+"="+l.t.String())
		}
	}
	if a.MaxJobs > 0 {
		s = append(s, fmt.Sprintf("MaxJobs=%d", a.MaxJobs))
	}
	return s
}
