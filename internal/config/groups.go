package config

import "fmt"

// GroupWarnings names each Unix group the configuration mentions that does
// not exist on this machine (exists says whether one does): YieldGroup and
// every partition's AllowGroups. A missing group is not an error (the file
// may be written before the group is made, or shared between machines),
// but it silently gives its rights to nobody, so the daemon says so when
// it starts and `slurmd-lite config` says so too, with the fix.
func (c *Config) GroupWarnings(exists func(group string) bool) []string {
	var out []string
	if g := c.YieldGroup; g != "" && !exists(g) {
		out = append(out, fmt.Sprintf("YieldGroup %q is not a group on this machine, so nobody may yield other users' jobs through it: "+
			"create it (groupadd %s, then usermod -aG %s USER for each member) or set YieldGroup = \"\"", g, g, g))
	}
	for _, p := range c.Partitions {
		for _, g := range p.AllowGroups {
			if g == "ALL" || exists(g) {
				continue
			}
			out = append(out, fmt.Sprintf("partition %s: AllowGroups names %q, which is not a group on this machine, so no user is in it: "+
				"create it (groupadd %s) or take it out of AllowGroups", p.PartitionName, g, g))
		}
	}
	return out
}
