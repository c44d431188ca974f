package config

import "slices"

// AssocKey names an association: an account's own (User "") or a user's
// in an account.
type AssocKey struct{ Account, User string }

// AssocNumber is what slurmdbd numbers an association with: its id, its
// parent account's id (0 for the root account) and its place in the nested
// sets Slurm 22.05 keeps the tree in (Lft and Rgt, as sacctmgr show assoc
// and scontrol show assoc_mgr print them).
type AssocNumber struct{ ID, ParentID, Lft, Rgt int }

// AssocNumbers numbers every association the configuration holds as
// slurmdbd would have, had the configuration been loaded into it in its
// order (as slurmd-lite export's sacctmgr.sh adds them): the root account
// and root's association with it (which Slurm makes with the cluster),
// the accounts, then the users ([[User]] entries first, then the users
// the accounts list), then implicit, the users holding the implicit
// account's association (api.Config.ImplicitUsers). sacctmgr and the
// daemon's assoc_mgr route both show these numbers, so they are made in
// one place.
//
// Ids go in that order of creation. Lft and Rgt are the nested sets
// slurmdbd leaves: it puts each new association first under its parent
// (as_mysql_add_assocs inserts at the parent's lft + 1), so siblings lie
// newest first, whether accounts or users.
func (c *Config) AssocNumbers(implicit []string) map[AssocKey]AssocNumber {
	var created []AssocKey
	parent := map[AssocKey]string{}
	add := func(k AssocKey, p string) {
		if _, dup := parent[k]; !dup {
			created = append(created, k)
			parent[k] = p
		}
	}
	add(AssocKey{RootAccount, ""}, "")
	add(AssocKey{RootAccount, "root"}, RootAccount)
	for _, a := range c.AccountTree() {
		p := a.Parent
		if p == "" {
			p = RootAccount
		}
		add(AssocKey{a.Name, ""}, p)
	}
	for _, u := range c.Users {
		add(AssocKey{u.Account, u.Name}, u.Account)
	}
	for _, n := range implicit {
		add(AssocKey{c.ImplicitAccount(), n}, c.ImplicitAccount())
	}
	return numberAssocs(created, parent)
}

// numberAssocs gives associations in creation order their ids (from 1)
// and nested sets: depth first from the root account, each parent's
// children newest first. parent names an association's parent account
// ("" for the root account).
func numberAssocs(created []AssocKey, parent map[AssocKey]string) map[AssocKey]AssocNumber {
	out := make(map[AssocKey]AssocNumber, len(created))
	children := map[string][]AssocKey{}
	for i, k := range created {
		out[k] = AssocNumber{ID: i + 1}
		if p := parent[k]; p != "" {
			children[p] = append(children[p], k)
		}
	}
	for k, n := range out {
		if p := parent[k]; p != "" {
			n.ParentID = out[AssocKey{p, ""}].ID
			out[k] = n
		}
	}
	next := 0
	var walk func(k AssocKey)
	walk = func(k AssocKey) {
		n := out[k]
		next++
		n.Lft = next
		if k.User == "" {
			// A user's association has no children, though an account's
			// name may be a user's.
			for _, c := range slices.Backward(children[k.Account]) {
				walk(c)
			}
		}
		next++
		n.Rgt = next
		out[k] = n
	}
	walk(AssocKey{RootAccount, ""})
	return out
}
