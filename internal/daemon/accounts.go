package daemon

import (
	"context"
	"net/url"
	"os/user"
	"slices"
	"sync"

	"github.com/slurm-lite/slurm-lite/internal/config"
)

// Every user holds the implicit account's association where it is in use
// (no accounts configured, or AllowUnlistedUsers): slurm-lite has no
// `sacctmgr add user` to make one. What lists associations (sshare,
// sacctmgr, the fair-share tree behind priorities) lists the users that
// hold it as far as the daemon knows: root (with no accounts configured),
// every user the store has a job or usage of, and the user asking, so
// that a first-time user's `sacctmgr -n -s list user $USER` (Snakemake's
// account check) finds the account its jobs will be charged.

// knownUsers are the users the store has seen, read once and then kept up
// to date by submissions.
type knownUsers struct {
	mu     sync.Mutex
	loaded bool
	set    map[string]bool
}

// namedUsers are the users a query names (user=NAME, repeated) that exist
// on this machine: sacctmgr list user NAME and sshare -u NAME ask about
// users who may have run nothing yet, and every user holds the implicit
// association.
func namedUsers(q url.Values) []string {
	var out []string
	for i, name := range q["user"] {
		if i == 100 {
			break
		}
		if u, err := user.Lookup(name); err == nil {
			out = append(out, u.Username)
		}
	}
	return out
}

// noteUser records a user who submitted a job.
func (d *Daemon) noteUser(name string) (known bool) {
	k := &d.users
	k.mu.Lock()
	defer k.mu.Unlock()
	if name != "" {
		if k.set == nil {
			k.set = map[string]bool{}
		}
		known = k.loaded && k.set[name]
		k.set[name] = true
	}
	return known
}

// implicitUsers are the users holding the implicit association, with
// extra (whoever asks) added; nil where it is not in use. Users listed in
// a configured account are left to their accounts.
func (d *Daemon) implicitUsers(ctx context.Context, cfg *config.Config, extra ...string) []string {
	if cfg.HasAccounts() && !cfg.AllowUnlistedUsers {
		return nil
	}
	k := &d.users
	k.mu.Lock()
	if !k.loaded {
		users, err := d.st.Users(ctx)
		if err != nil {
			d.log.Error("reading the store's users", "err", err)
		} else {
			if k.set == nil {
				k.set = map[string]bool{}
			}
			for _, u := range users {
				k.set[u] = true
			}
			k.loaded = true
		}
	}
	var out []string
	for u := range k.set {
		out = append(out, u)
	}
	k.mu.Unlock()
	if !cfg.HasAccounts() {
		out = append(out, "root")
	}
	for _, u := range extra {
		if u != "" {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.DeleteFunc(out, func(u string) bool {
		if u == "root" && cfg.HasAccounts() {
			return true // root has its own association with root
		}
		accts, _ := cfg.UserAccounts(u)
		return cfg.HasAccounts() && len(accts) > 0 && accts[0] != cfg.ImplicitAccount()
	})
}
