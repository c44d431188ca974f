package slurmdcmd

import (
	"fmt"
	"slices"

	"github.com/slurm-lite/slurm-lite/internal/cmdio"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/safepath"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// printInForce ends `slurmd-lite config`: after the summary, every setting
// in force (defaults included: QOS limits, YieldGroup, AllowGroups,
// GraceTime, IdleGPUTimeout, ...) as a configuration file that reads back
// as the same configuration, then a warning on stderr for each setting that
// will not do what it says here (config.SiteWarnings: a group this machine
// lacks, a mail program that cannot run, a node larger than the machine),
// as the daemon logs at start, and
// an error for each directory the daemon would refuse to start with
// (config.DaemonDirs: one another user could replace), as if it ran as
// the caller.
func printInForce(cfg *config.Config, sio cmdio.IO) int {
	w := sio.Stdout
	fmt.Fprintln(w)
	fmt.Fprintln(w, "# Every setting in force, defaults included (this reads back as a configuration file):")
	if err := inForce(cfg).WriteTOML(w); err != nil {
		fmt.Fprintf(sio.Stderr, "slurmd-lite: error: %v\n", err)
		return 1
	}
	host, _ := config.DetectHost()
	for _, warning := range cfg.SiteWarnings(config.Machine{Host: host, GroupExists: groupExists, Runnable: config.Runnable}) {
		fmt.Fprintf(sio.Stderr, "slurmd-lite: warning: %s\n", warning)
	}
	code := 0
	for _, dir := range cfg.DaemonDirs() {
		// What exists of it: the daemon makes the rest.
		if err := safepath.Check(dir.Path); err != nil {
			fmt.Fprintf(sio.Stderr, "slurmd-lite: error: %s: %v; slurmd-lite refuses to start with it\n", dir.What, err)
			code = 1
		}
	}
	return code
}

// inForce is cfg with the values the daemon applies where the file left a
// key to another: a partition's DefaultTime is its MaxTime when unset (0),
// and says so, as the summary above it does (not "0", which reads as no
// limit at all). cfg is not changed.
func inForce(cfg *config.Config) *config.Config {
	c := *cfg
	c.Partitions = slices.Clone(cfg.Partitions)
	for i := range c.Partitions {
		c.Partitions[i].DefaultTime = c.Partitions[i].DefaultLimit()
	}
	return &c
}

// groupExists asks the group database as the commands do (/etc/group, then
// getent for LDAP or SSSD groups).
func groupExists(name string) bool {
	_, err := userdb.GroupByName(name)
	return err == nil
}
