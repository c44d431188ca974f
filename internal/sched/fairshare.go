package sched

import (
	"cmp"
	"math"
	"slices"
	"time"
)

const rootAccount = "root"

// ShareRow is one line of sshare -l: an account, or a user's association
// with an account.
type ShareRow struct {
	Account string
	// User is "" on account rows.
	User string
	// Depth is 0 for the root, 1 for its children, and so on (sshare indents
	// by it).
	Depth        int
	RawShares    int
	NormShares   float64
	RawUsage     float64
	NormUsage    float64
	EffectvUsage float64
	// FairShare is the user's fair-share factor; 0 on account rows.
	FairShare float64
	// LevelFS is Fair Tree's NormShares/EffectvUsage among siblings: +Inf
	// without usage. NaN on the root and under NO_FAIR_TREE.
	LevelFS float64
}

// FairShareTree returns every row sshare -a -l prints, in sshare's order:
// depth first, users before sub-accounts, each group by name.
//
// With a recalculation (snap.Calc), RawUsage is the usage now, and the
// other usage columns, LevelFS and FairShare are as of the recalculation,
// as sshare shows them between two of Slurm's decay thread's runs.
func FairShareTree(snap Snapshot) []ShareRow {
	t := buildShareTree(calcView(&snap))
	now := t
	if !snap.Calc.At.IsZero() {
		now = buildShareTree(&snap)
	}
	rows := make([]ShareRow, 0, len(t.nodes))
	var walk func(i int)
	walk = func(i int) {
		n := &t.nodes[i]
		row := ShareRow{
			Account:      n.account,
			Depth:        n.depth,
			RawShares:    n.shares,
			NormShares:   n.normShares,
			RawUsage:     now.rawOf(t, i),
			EffectvUsage: n.effUsage,
			LevelFS:      n.levelFS,
		}
		if t.nodes[0].raw > 0 {
			row.NormUsage = min(1, n.raw/t.nodes[0].raw)
		}
		if n.user {
			row.User = n.name
			row.FairShare = n.fs
		}
		if i == 0 {
			row.RawShares = 0
			row.NormShares = 0
			row.EffectvUsage = 1
			row.NormUsage = 1
			row.LevelFS = math.NaN()
		}
		rows = append(rows, row)
		for _, c := range t.displayOrder(i) {
			walk(c)
		}
	}
	walk(0)
	return rows
}

// assocNode is an account or a user's association in the share tree.
type assocNode struct {
	name     string // account name, or user name
	account  string // the account (for users, the one they hang from)
	user     bool
	parent   int // -1 for the root
	children []int
	depth    int
	shares   int
	// prio is the association's Priority: its own, else its nearest
	// ancestor's (Slurm's associations inherit it).
	prio int
	own  float64 // usage charged to the node itself
	raw  float64 // own plus the subtree's
	// Computed by Fair Tree or the classic formula.
	normShares float64
	effUsage   float64
	levelFS    float64
	fs         float64
}

type assocKey struct{ account, user string }

type shareTree struct {
	nodes      []assocNode
	accounts   map[string]int
	assocs     map[assocKey]int
	defaults   map[string]string // user -> first account listing them
	configured bool
	defAccount string
	unlisted   bool
	userCount  int
	// maxPrio is the largest association Priority, the association
	// factor's denominator (assoc_mgr's g_assoc_max_priority).
	maxPrio int
}

// calcView is the snapshot as the last recalculation saw it: its usage as
// of its time. Without one it is snap itself.
func calcView(snap *Snapshot) *Snapshot {
	if snap.Calc.At.IsZero() {
		return snap
	}
	v := *snap
	v.Now, v.Usage = snap.Calc.At, snap.Calc.Usage
	return &v
}

// rawOf is the raw usage in t of the node that is node i of o (the same
// association; trees of one snapshot at two times differ at most in
// associations found from usage records).
func (t *shareTree) rawOf(o *shareTree, i int) float64 {
	if t == o {
		return t.nodes[i].raw
	}
	n := &o.nodes[i]
	if n.user {
		if k, ok := t.assocs[assocKey{n.account, n.name}]; ok {
			return t.nodes[k].raw
		}
		return 0
	}
	if k, ok := t.accounts[n.name]; ok {
		return t.nodes[k].raw
	}
	return 0
}

// buildShareTree builds the association tree with usage decayed to Now and
// computes every fair-share value.
func buildShareTree(snap *Snapshot) *shareTree {
	cfg := &snap.Config
	t := &shareTree{
		accounts:   map[string]int{rootAccount: 0},
		assocs:     map[assocKey]int{},
		defaults:   map[string]string{},
		configured: len(snap.Accounts) > 0,
		defAccount: cfg.defaultAccount(),
		unlisted:   cfg.AllowUnlistedUsers,
	}
	t.nodes = append(t.nodes, assocNode{name: rootAccount, account: rootAccount, parent: -1, shares: 1})
	for _, a := range snap.Accounts {
		if a.Name == rootAccount {
			t.nodes[0].prio = a.Priority
		}
		if _, dup := t.accounts[a.Name]; dup || a.Name == "" {
			continue
		}
		t.accounts[a.Name] = len(t.nodes)
		t.nodes = append(t.nodes, assocNode{name: a.Name, account: a.Name, parent: -1, shares: a.Shares, prio: a.Priority})
	}
	for _, a := range snap.Accounts {
		i, ok := t.accounts[a.Name]
		if !ok || i == 0 {
			continue
		}
		p, ok := t.accounts[a.Parent]
		if !ok || t.isBelow(p, i) {
			p = 0 // unknown parent, or a loop: hang it from the root
		}
		t.nodes[i].parent = p
	}
	for i := 1; i < len(t.nodes); i++ {
		if t.nodes[i].parent < 0 {
			t.nodes[i].parent = 0
		}
	}
	explicit := map[string]bool{}
	for _, a := range snap.Accounts {
		ai, ok := t.accounts[a.Name]
		if !ok {
			continue
		}
		for _, u := range a.Users {
			t.nodes[t.addUser(ai, u.Name, u.Shares)].prio = u.Priority
			if _, ok := t.defaults[u.Name]; !ok || (u.Default && !explicit[u.Name]) {
				t.defaults[u.Name] = a.Name
				explicit[u.Name] = u.Default
			}
		}
	}
	if !t.configured || t.unlisted {
		t.discoverUsers(snap)
	}
	if cfg.RootAssoc {
		t.addUser(0, rootAccount, 1)
	}
	for i := 1; i < len(t.nodes); i++ {
		p := t.nodes[i].parent
		t.nodes[p].children = append(t.nodes[p].children, i)
	}
	t.setDepth(0, 0)
	t.inheritPriority(0, 0)
	t.chargeUsage(snap)
	if cfg.Flags&FlagNoFairTree != 0 {
		t.classic(cfg)
	} else {
		t.fairTree()
	}
	return t
}

// isBelow reports whether node a sits in the subtree of b (or is b),
// following parents set so far.
func (t *shareTree) isBelow(a, b int) bool {
	for steps := 0; a >= 0 && steps <= len(t.nodes); steps++ {
		if a == b {
			return true
		}
		a = t.nodes[a].parent
	}
	return false
}

func (t *shareTree) addUser(account int, user string, shares int) int {
	k := assocKey{t.nodes[account].name, user}
	if i, ok := t.assocs[k]; ok {
		return i
	}
	i := len(t.nodes)
	t.assocs[k] = i
	t.nodes = append(t.nodes, assocNode{name: user, account: k.account, user: true, parent: account, shares: shares})
	t.userCount++
	return i
}

// discoverUsers puts the users of live jobs and of usage records that no
// account lists into the default account, one share each: Slurm-lite's
// "every user shares one default account equally".
func (t *shareTree) discoverUsers(snap *Snapshot) {
	var users []string
	seen := map[string]bool{}
	note := func(user, account string) {
		if user == "" || seen[user] {
			return
		}
		if t.configured {
			if _, listed := t.defaults[user]; listed {
				return
			}
			if account != "" && account != t.defAccount {
				return
			}
		}
		seen[user] = true
		users = append(users, user)
	}
	if snap.JobUsers != nil {
		// The pairs the jobs give, each once: note's answer depends on
		// the pair alone, and the users are sorted below.
		for _, u := range snap.JobUsers {
			note(u.User, u.Account)
		}
	} else {
		// A queue is mostly runs of one user's jobs under one account:
		// a job like the one before it is skipped without the map, as
		// note would do nothing for it (the same pair gives the same
		// answer; the user is seen, or refused again).
		var lastUser, lastAccount string
		for i := range snap.Jobs {
			j := &snap.Jobs[i]
			if (j.User == lastUser && j.Account == lastAccount) || j.State.Finished() {
				continue
			}
			lastUser, lastAccount = j.User, j.Account
			note(j.User, j.Account)
		}
	}
	for _, u := range snap.Usage {
		note(u.User, u.Account)
	}
	for _, u := range snap.Users {
		note(u, "")
	}
	slices.Sort(users)
	// The implicit account is there, users or not: sacctmgr lists it, and
	// jobs may name it.
	acct, ok := t.accounts[t.defAccount]
	if !ok {
		acct = len(t.nodes)
		t.accounts[t.defAccount] = acct
		t.nodes = append(t.nodes, assocNode{name: t.defAccount, account: t.defAccount, parent: 0, shares: 1})
	}
	for _, u := range users {
		if _, ok := t.assocs[assocKey{t.defAccount, u}]; !ok {
			t.addUser(acct, u, 1)
		}
	}
}

// inheritPriority gives every association without a Priority of its own
// its parent's, and finds the largest (as_mysql_assoc.c fills an unset
// priority from the parent; assoc_mgr.c keeps the maximum).
func (t *shareTree) inheritPriority(i, parent int) {
	n := &t.nodes[i]
	if n.prio <= 0 {
		n.prio = parent
	}
	t.maxPrio = max(t.maxPrio, n.prio)
	for _, c := range n.children {
		t.inheritPriority(c, n.prio)
	}
}

func (t *shareTree) setDepth(i, d int) {
	t.nodes[i].depth = d
	for _, c := range t.nodes[i].children {
		t.setDepth(c, d+1)
	}
}

// chargeUsage decays every usage record to Now and sums it up the tree.
func (t *shareTree) chargeUsage(snap *Snapshot) {
	for _, u := range snap.Usage {
		raw := DecayUsage(u.Raw, snap.Now.Sub(u.AsOf), snap.Config.DecayHalfLife)
		i, ok := t.assocs[assocKey{u.Account, u.User}]
		if !ok && u.User != "" && !t.configured {
			i, ok = t.assocs[assocKey{t.defAccount, u.User}]
		}
		if !ok {
			// Usage of an association no longer configured stays with
			// its account, or with the root.
			i = t.accounts[u.Account]
		}
		t.nodes[i].own += raw
	}
	var sum func(i int) float64
	sum = func(i int) float64 {
		n := &t.nodes[i]
		n.raw = n.own
		for _, c := range n.children {
			n.raw += sum(c)
		}
		return n.raw
	}
	sum(0)
}

// levelShares sums the shares of i's children.
func (t *shareTree) levelShares(i int) int {
	s := 0
	for _, c := range t.nodes[i].children {
		s += max(0, t.nodes[c].shares)
	}
	return s
}

// fairTree computes LevelFS and ranks users as fair_tree.shtml describes
// ("Algorithm" and "Level Fairshare Calculation"): LF = S/U with S the shares
// among siblings and U the usage among siblings; siblings are visited by
// LF, highest first, users are ranked in that pre-order and FairShare is
// rank/count.
//
// Ties follow Slurm 22.05's fair_tree.c rather than the document: sibling
// users with equal LF share a rank, a user tied with a sibling account sorts
// first, and an account tied with its predecessor passes the tie to its
// first child. The document's merging of tied sibling accounts never
// happens in 22.05 (its tie counter stops at the first account), so it does
// not happen here either.
func (t *shareTree) fairTree() {
	for i := range t.nodes {
		n := &t.nodes[i]
		if i == 0 {
			n.levelFS = math.NaN()
			continue
		}
		p := &t.nodes[n.parent]
		if ls := t.levelShares(n.parent); ls > 0 {
			n.normShares = float64(max(0, n.shares)) / float64(ls)
		}
		if p.raw > 0 {
			n.effUsage = n.raw / p.raw
		}
		switch {
		case n.normShares == 0:
			n.levelFS = 0
		case n.effUsage == 0:
			n.levelFS = math.Inf(1)
		default:
			n.levelFS = n.normShares / n.effUsage
		}
	}
	rank, rnt := t.userCount, t.userCount
	t.rank(0, &rank, &rnt, false)
}

func (t *shareTree) rank(i int, rank, rnt *int, accountTied bool) {
	kids := slices.Clone(t.nodes[i].children)
	// 1. LevelFS, highest first; 2. users before accounts; 3. name, so
	// that the walk is deterministic.
	slices.SortFunc(kids, func(a, b int) int {
		na, nb := &t.nodes[a], &t.nodes[b]
		return cmp.Or(
			-cmp.Compare(na.levelFS, nb.levelFS),
			boolFirst(na.user, nb.user),
			cmp.Compare(na.name, nb.name),
		)
	})
	prev := math.NaN()
	for k, c := range kids {
		n := &t.nodes[c]
		tied := n.levelFS == prev
		if k == 0 {
			tied = accountTied
		}
		if n.user {
			if !tied {
				*rank = *rnt
			}
			if t.userCount > 0 {
				n.fs = float64(*rank) / float64(t.userCount)
			}
			*rnt--
		} else {
			t.rank(c, rank, rnt, tied)
		}
		prev = n.levelFS
	}
}

// classic computes the pre-19.05 fair share, classic_fair_share.shtml
// ("The Slurm Fair-Share Formula"): NormShares is the product of the share
// fractions down the tree, EffectvUsage UE = UA + (UEparent - UA) ×
// Schild/Sall_siblings (plain normalised usage just under the root), and
// F = 2^(-UE/S/d).
func (t *shareTree) classic(cfg *Config) {
	damp := float64(max(1, cfg.DampeningFactor))
	root := &t.nodes[0]
	root.normShares, root.effUsage, root.levelFS = 1, 1, math.NaN()
	var walk func(i int)
	walk = func(i int) {
		p := &t.nodes[i]
		ls := t.levelShares(i)
		for _, c := range p.children {
			n := &t.nodes[c]
			n.levelFS = math.NaN()
			frac := 0.0
			if ls > 0 {
				frac = float64(max(0, n.shares)) / float64(ls)
			}
			n.normShares = p.normShares * frac
			ua := 0.0
			if root.raw > 0 {
				ua = min(1, n.raw/root.raw)
			}
			switch {
			case i == 0:
				n.effUsage = ua
			case ls == 0:
				n.effUsage = p.effUsage
			default:
				n.effUsage = ua + (p.effUsage-ua)*frac
			}
			if n.user && n.normShares > 0 {
				n.fs = math.Pow(2, -(n.effUsage/n.normShares)/damp)
			}
			walk(c)
		}
	}
	walk(0)
}

// displayOrder is sshare's order of i's children: users first, then
// accounts, each by name.
func (t *shareTree) displayOrder(i int) []int {
	kids := slices.Clone(t.nodes[i].children)
	slices.SortFunc(kids, func(a, b int) int {
		na, nb := &t.nodes[a], &t.nodes[b]
		return cmp.Or(boolFirst(na.user, nb.user), cmp.Compare(na.name, nb.name))
	})
	return kids
}

// assoc finds the association a job charges: its account (or the user's
// default) and its user. ok is false when accounts are configured and none
// admits the user.
func (t *shareTree) assoc(account, user string) (int, bool) {
	if !t.configured {
		if account != "" && account != t.defAccount {
			return -1, false // the implicit account is the only one
		}
		i, ok := t.assocs[assocKey{t.defAccount, user}]
		return i, ok
	}
	if account == "" {
		account = t.defaults[user]
		if account == "" && t.unlisted {
			account = t.defAccount
		}
	}
	i, ok := t.assocs[assocKey{account, user}]
	return i, ok
}

// DecayUsage ages usage by PriorityDecayHalfLife: after one half-life it is
// half (priority_multifactor.shtml, PriorityDecayHalfLife). A half-life of 0
// means no decay.
func DecayUsage(raw float64, elapsed, halfLife time.Duration) float64 {
	if halfLife <= 0 || elapsed <= 0 {
		return raw
	}
	return raw * math.Exp2(-elapsed.Seconds()/halfLife.Seconds())
}

// boolFirst orders true before false.
func boolFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
