package config

import (
	"slices"
	"time"
)

// View is what the commands that list and cancel jobs (squeue, sacct,
// scancel) read of the configuration: Settings, and what their output and
// filters use (format.Env). The daemon leaves it in the settings file with
// Settings (WriteSettings), so that these commands need not parse the TOML
// file either: for the example configuration the parse was most of
// scancel's time and a third of squeue's (docs/bench.md, "The fast
// paths"). A field that a listing command comes to need is added here,
// to ViewOf and to the settings file's layout (TestViewRoundTrips).
type View struct {
	Settings
	ClusterName string
	// TRESBillingWeights are the top-level weights, for a job whose
	// partition is not configured.
	TRESBillingWeights TRESWeights
	Partitions         []PartitionView
	// SimulatedGPUTypes are Node.SimulatedGPUs' types, each once, in
	// their order.
	SimulatedGPUTypes []string
	// Accounts are the [[Account]]s with their Users, in order.
	Accounts []AccountView
	// Users are the [[User]]s' names, in order.
	Users []string
}

// PartitionView is what View keeps of a partition.
type PartitionView struct {
	Name   string
	Hidden bool
	// DefaultLimit is Partition.DefaultLimit.
	DefaultLimit       time.Duration
	TRESBillingWeights TRESWeights
}

// AccountView is what View keeps of an account.
type AccountView struct {
	Name  string
	Users []string
}

// ViewOf is what c gives a listing command.
func ViewOf(c *Config) *View {
	v := &View{
		Settings:           SettingsOf(c),
		ClusterName:        c.ClusterName,
		TRESBillingWeights: c.TRESBillingWeights,
	}
	for i := range c.Partitions {
		p := &c.Partitions[i]
		v.Partitions = append(v.Partitions, PartitionView{Name: p.PartitionName, Hidden: p.Hidden,
			DefaultLimit: p.DefaultLimit(), TRESBillingWeights: p.TRESBillingWeights})
	}
	for _, g := range c.Node.SimulatedGPUs {
		if !slices.Contains(v.SimulatedGPUTypes, g.Type) {
			v.SimulatedGPUTypes = append(v.SimulatedGPUTypes, g.Type)
		}
	}
	for _, a := range c.Accounts {
		v.Accounts = append(v.Accounts, AccountView{Name: a.Name, Users: a.Users})
	}
	for _, u := range c.Users {
		v.Users = append(v.Users, u.Name)
	}
	return v
}

// Partition returns the partition named name, or nil.
func (v *View) Partition(name string) *PartitionView {
	for i := range v.Partitions {
		if v.Partitions[i].Name == name {
			return &v.Partitions[i]
		}
	}
	return nil
}

// HasUser says whether a [[User]] is named name.
func (v *View) HasUser(name string) bool { return slices.Contains(v.Users, name) }
