package sched

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// What slurmctld's association manager counts of each association and
// QOS (scontrol show assoc_mgr): every TRES, not only the budgeted ones.

// AssocTRES are the TRES the association manager counts, in Slurm's TRES
// id order: the built-in ones and AccountingStorageTRES's gres/gpu (as
// scontrol show config prints AccountingStorageTRES).
var AssocTRES = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu"}

// NTRES is len(AssocTRES).
const NTRES = 9

// AssocCounts is what the association manager counts of one association
// or QOS.
type AssocCounts struct {
	// Account and User name an association (User "" for an account's
	// own); a QOS's counts have its name in Account.
	Account, User string
	// TRESSecs is usage_tres_raw: each TRES × seconds × the QOS
	// UsageFactor of every run since since, decayed as fair-share usage
	// is (AccountTRESUsage's integral), in AssocTRES's order.
	TRESSecs [NTRES]float64
	// Billing is usage_raw counted the same way (billing × seconds ×
	// UsageFactor): a QOS's UsageRaw.
	Billing float64
	// WallSecs is grp_used_wall: the runs' seconds, decayed, without the
	// UsageFactor.
	WallSecs float64
	// Held is grp_used_tres: what the running jobs hold; RunSecs is
	// grp_used_tres_run_secs: that × the seconds left to their limits.
	Held    [NTRES]float64
	RunSecs [NTRES]float64
	// Jobs are the running jobs, Submitted the pending and running ones,
	// Accruing the pending ones that accrue age (eligible, not held).
	Jobs, Submitted, Accruing int
}

// QOSUser is a QOS's count of one account's or one user's jobs in it
// (Slurm's used_limits): Name is the account, or the user.
type QOSUser struct {
	Name                      string
	Jobs, Submitted, Accruing int
	Held                      [NTRES]float64
}

// QOSCounts is a QOS's counts and its used_limits lists: the accounts and
// users that have had a job in it, in the order they first did.
type QOSCounts struct {
	AssocCounts
	Accounts, Users []QOSUser
}

// runTRES is a job's TRES counts in AssocTRES's order: memory in MiB, a
// node, billing as fair share bills it.
func runTRES(j *Job, snap *Snapshot) [NTRES]float64 {
	mem := j.Req.Mem
	if len(j.Alloc.GPUs) > 0 || len(j.Alloc.CPUs) > 0 {
		mem = j.Alloc.Mem
	}
	return [NTRES]float64{
		0: jobCPUs(j),
		1: float64(mem / (1 << 20)),
		3: 1,
		4: billing(j, partitionOf(snap, j.Partition), snap),
		8: jobGPUs(j, snap),
	}
}

// runLimit is a running job's effective time limit (its own, else its
// partition's DefaultTime, else MaxTime, capped by its QOS's MaxWall when
// it gave none), and a year when it has none, as sshare counts
// TRESRunMins.
func runLimit(j *Job, snap *Snapshot) time.Duration {
	const year = 365 * 24 * time.Hour
	limit := j.TimeLimit
	if p := partitionOf(snap, j.Partition); p != nil && limit <= 0 {
		limit = p.DefaultTime
		if limit <= 0 {
			limit = p.MaxTime
		}
	}
	if j.TimeLimit <= 0 {
		for _, q := range snap.QOS {
			if q.Name == j.QOS && q.MaxWall > 0 && (limit <= 0 || limit >= Unlimited || limit > q.MaxWall) {
				limit = q.MaxWall
			}
		}
	}
	if limit <= 0 || limit >= Unlimited {
		return year
	}
	return limit
}

// AssocMgrCounts is what the association manager counts at snap.Now:
// each association's (keyed by account and user) and each QOS's (by
// name). Usage counts the runs since `since` (the last
// PriorityUsageResetPeriod reset) as AccountTRESUsage does, charged to
// the job's user association, every account above it, its QOS and its
// partition's QOS (a QOS with NoDecay undecayed); the running and pending
// counts come from snap.Jobs. Runs and jobs whose association is not in
// the tree count for their QOS only. A QOS lists the accounts and users of
// the jobs in snap.Jobs and of the runs submitted since started (when
// slurmctld started: its lists live in its memory).
func AssocMgrCounts(snap Snapshot, runs []Run, since, started time.Time) (map[[2]string]*AssocCounts, map[string]*QOSCounts) {
	t := buildShareTree(&snap)
	parent := accountParents(&snap)
	hl := snap.Config.DecayHalfLife.Seconds()
	noDecay := map[string]bool{}
	for _, q := range snap.QOS {
		noDecay[q.Name] = q.NoDecay
	}
	now := snap.Now
	assocs := map[[2]string]*AssocCounts{}
	qos := map[string]*QOSCounts{}
	assocOf := func(k [2]string) *AssocCounts {
		a := assocs[k]
		if a == nil {
			a = &AssocCounts{Account: k[0], User: k[1]}
			assocs[k] = a
		}
		return a
	}
	qosOf := func(name string) *QOSCounts {
		q := qos[name]
		if q == nil {
			q = &QOSCounts{AssocCounts: AssocCounts{Account: name}}
			qos[name] = q
		}
		return q
	}
	// chain is the job's user association and every account above it.
	chain := func(j *Job) []*AssocCounts {
		ai, ok := t.assoc(j.Account, j.User)
		if !ok {
			return nil
		}
		n := t.nodes[ai]
		out := []*AssocCounts{assocOf([2]string{n.account, n.name})}
		seen := map[string]bool{}
		for a := n.account; a != "" && !seen[a]; a = parent[a] {
			seen[a] = true
			out = append(out, assocOf([2]string{a, ""}))
		}
		return out
	}
	qosNames := func(j *Job) []string {
		names := []string{j.QOS}
		if part := partitionOf(&snap, j.Partition); part != nil && part.QOS != "" && part.QOS != j.QOS {
			names = append(names, part.QOS)
		}
		return slices.DeleteFunc(names, func(n string) bool { return n == "" })
	}
	charge := func(c *AssocCounts, tres [NTRES]float64, bill, factor, wall float64) {
		for i, v := range tres {
			c.TRESSecs[i] += v * factor
		}
		c.Billing += bill * factor
		c.WallSecs += wall
	}
	for i := range runs {
		r := &runs[i]
		j := &r.Job
		from, to, ok := runSpan(r, since, now)
		if !ok {
			continue
		}
		tres := runTRES(j, &snap)
		uf := usageFactor(&snap, j.QOS)
		length := decayedLength(from, to, now, hl)
		for _, c := range chain(j) {
			charge(c, tres, tres[4], uf*length, length)
		}
		for _, n := range qosNames(j) {
			l := length
			if noDecay[n] {
				l = decayedLength(from, to, now, 0)
			}
			charge(&qosOf(n).AssocCounts, tres, tres[4], uf*l, l)
		}
	}

	// The live counts, and the QOSes' used_limits lists in the order their
	// accounts and users first submitted.
	live := map[uint32]bool{}
	jobs := slices.Clone(snap.Jobs)
	for _, j := range jobs {
		live[j.ID] = true
	}
	for i := range runs {
		if j := runs[i].Job; !live[j.ID] && !j.Submit.Before(started) {
			live[j.ID] = true
			j.State = slurm.Completed // listed, counted nowhere
			jobs = append(jobs, j)
		}
	}
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Or(a.Submit.Compare(b.Submit), cmp.Compare(a.ID, b.ID)) })
	for i := range jobs {
		j := &jobs[i]
		running, pending := j.State == slurm.Running, j.State == slurm.Pending
		var tres, run [NTRES]float64
		if running {
			tres = runTRES(j, &snap)
			left := runLimit(j, &snap) - now.Sub(time.Unix(j.Start.Unix(), 0)).Truncate(time.Second)
			for k, v := range tres {
				run[k] = v * max(0, left.Seconds())
			}
		}
		accruing := pending && j.Hold == 0 && !j.Eligible.IsZero()
		count := func(jobs, submitted, accrue *int, held *[NTRES]float64) {
			if running {
				*jobs++
				for k, v := range tres {
					held[k] += v
				}
			}
			if running || pending {
				*submitted++
			}
			if accruing {
				*accrue++
			}
		}
		for _, c := range chain(j) {
			count(&c.Jobs, &c.Submitted, &c.Accruing, &c.Held)
			for k, v := range run {
				c.RunSecs[k] += v
			}
		}
		for _, n := range qosNames(j) {
			q := qosOf(n)
			count(&q.Jobs, &q.Submitted, &q.Accruing, &q.Held)
			for k, v := range run {
				q.RunSecs[k] += v
			}
			account := j.Account
			if ai, ok := t.assoc(j.Account, j.User); ok {
				account = t.nodes[ai].account
			}
			for _, l := range []struct {
				list *[]QOSUser
				name string
			}{{&q.Accounts, account}, {&q.Users, j.User}} {
				k := slices.IndexFunc(*l.list, func(u QOSUser) bool { return strings.EqualFold(u.Name, l.name) })
				if k < 0 {
					*l.list = append(*l.list, QOSUser{Name: l.name})
					k = len(*l.list) - 1
				}
				u := &(*l.list)[k]
				count(&u.Jobs, &u.Submitted, &u.Accruing, &u.Held)
			}
		}
	}
	return assocs, qos
}
