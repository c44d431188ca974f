package config

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"
)

// HasAccounts reports whether the file configures accounts or users. With
// none, every user runs jobs in the implicit account with equal shares.
func (c *Config) HasAccounts() bool { return len(c.Accounts) > 0 || len(c.Users) > 0 }

// ImplicitAccount is the account of users that no [[Account]] or [[User]]
// names: every user when no accounts are configured, and unlisted users
// when AllowUnlistedUsers is set. It is named after the cluster and sits
// under root with 1 share, unless an [[Account]] of that name exists.
func (c *Config) ImplicitAccount() string { return c.ClusterName }

func (c *Config) implicitAccountUsed() bool { return !c.HasAccounts() || c.AllowUnlistedUsers }

// AccountTree returns every account under root: the configured ones, and
// the implicit account when it is in use and not configured.
func (c *Config) AccountTree() []Account {
	tree := slices.Clone(c.Accounts)
	if c.implicitAccountUsed() && !c.hasAccount(c.ImplicitAccount()) {
		tree = append(tree, Account{Name: c.ImplicitAccount(), Parent: RootAccount, Shares: 1})
	}
	return tree
}

// accountsOf returns the accounts a user is listed in: its [[User]]
// entries in order, then the accounts whose Users name it.
func (c *Config) accountsOf(user string) []string {
	var accounts []string
	for _, u := range c.Users {
		if u.Name == user && !slices.Contains(accounts, u.Account) {
			accounts = append(accounts, u.Account)
		}
	}
	for _, a := range c.Accounts {
		if slices.Contains(a.Users, user) && !slices.Contains(accounts, a.Name) {
			accounts = append(accounts, a.Name)
		}
	}
	return accounts
}

// UserAccounts returns the accounts user may charge jobs to, the default
// first. ok is false when the user may not run jobs: accounts are
// configured, the user is in none of them, and AllowUnlistedUsers is off.
// Root may always run jobs, in the root account when listed nowhere (as
// Slurm's root association).
func (c *Config) UserAccounts(user string) (accounts []string, ok bool) {
	if !c.HasAccounts() {
		return []string{c.ImplicitAccount()}, true
	}
	if accounts = c.accountsOf(user); len(accounts) > 0 {
		for _, u := range c.Users {
			if u.Name == user && u.DefaultAccount != "" {
				if i := slices.Index(accounts, u.DefaultAccount); i > 0 {
					accounts = append([]string{u.DefaultAccount}, slices.Delete(accounts, i, i+1)...)
				}
				break
			}
		}
		return accounts, true
	}
	switch {
	case user == "root":
		return []string{RootAccount}, true
	case c.AllowUnlistedUsers:
		return []string{c.ImplicitAccount()}, true
	}
	return nil, false
}

// IsOperator reports whether user may act on every job: root, a member of
// Operators, or a user with AdminLevel Operator or Administrator.
func (c *Config) IsOperator(user string) bool {
	if user == "root" || slices.Contains(c.Operators, user) {
		return true
	}
	for _, u := range c.Users {
		if u.Name == user && (u.AdminLevel == AdminOperator || u.AdminLevel == AdminAdministrator) {
			return true
		}
	}
	return false
}

// AdminLevel is the user's Slurm AdminLevel as sacctmgr and scontrol show
// assoc_mgr print it: root is Slurm's Administrator, then the level a
// [[User]] entry of the user's sets, then Operator for a member of
// Operators.
func (c *Config) AdminLevel(user string) string {
	if user == "root" {
		return AdminAdministrator
	}
	for _, u := range c.Users {
		if u.Name == user && u.AdminLevel != "" && u.AdminLevel != AdminNone {
			return u.AdminLevel
		}
	}
	if slices.Contains(c.Operators, user) {
		return AdminOperator
	}
	return AdminNone
}

// GPUModelName is an NVML model name as Slurm's AutoDetect=nvml names GPU
// types: lower case, spaces as underscores ("NVIDIA A100-SXM4-80GB" is
// "nvidia_a100-sxm4-80gb").
func GPUModelName(model string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(model)), " ", "_")
}

// GPUType returns the Slurm GPU type of a GPU whose NVML model name is
// model: the TypeAliases key naming that model (compared as GPUModelName
// writes both), else the model's GPUModelName, which is the type Slurm's
// AutoDetect=nvml would give it.
func (n Node) GPUType(model string) string {
	m := GPUModelName(model)
	for _, t := range sortedKeys(n.TypeAliases) {
		if GPUModelName(n.TypeAliases[t]) == m {
			return t
		}
	}
	return m
}

// resolve fills in what the file leaves to be derived, once it is valid:
// inherited billing weights, users from Account.Users, and each user's
// DefaultAccount and AdminLevel on every one of its entries.
func (p *parser) resolve(c *Config) {
	c.Priority.WeightTRESText = p.texts[key("Priority", "WeightTRES").String()]
	// Checkpoints live with the rest of the state unless placed elsewhere:
	// moving StateSaveLocation moves them too.
	if !p.isGiven(key("CheckpointDir")) {
		c.CheckpointDir = c.StateSaveLocation + "/ckpt/%u/%j"
	}
	for i := range c.Partitions {
		if !p.isGiven(elem("Partition", i, "TRESBillingWeights")) {
			c.Partitions[i].TRESBillingWeights = maps.Clone(c.TRESBillingWeights)
		}
	}
	for _, a := range c.Accounts {
		for _, name := range a.Users {
			listed := slices.ContainsFunc(c.Users, func(u User) bool { return u.Name == name && u.Account == a.Name })
			if !listed {
				c.Users = append(c.Users, User{Name: name, Account: a.Name, Shares: 1})
			}
		}
	}
	def, lvl := map[string]string{}, map[string]string{}
	for i, u := range c.Users {
		if def[u.Name] == "" {
			def[u.Name] = u.Account // the first account, unless given
		}
		if p.isGiven(elem("User", i, "AdminLevel")) {
			lvl[u.Name] = u.AdminLevel
		}
	}
	// An explicit DefaultAccount on a later entry wins over "the first".
	for i, u := range c.Users {
		if p.isGiven(elem("User", i, "DefaultAccount")) {
			def[u.Name] = u.DefaultAccount
		}
	}
	for i := range c.Users {
		u := &c.Users[i]
		u.DefaultAccount = def[u.Name]
		u.AdminLevel = cmp.Or(lvl[u.Name], AdminNone)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
