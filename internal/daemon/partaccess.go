package daemon

import (
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// allowGroupsRefusal refuses a submission by caller to partition when the
// partition's AllowGroups leave the caller out, as slurmctld's
// validate_group does (ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP); root
// may always use the partition. The groups are the caller's as the kernel
// and NSS give them, so it lives here rather than in the pure core. nil
// when the caller may submit there (or the partition does not exist,
// which CheckSubmit refuses).
func allowGroupsRefusal(caller localapi.Identity, partition string, cfg *config.Config) *api.Error {
	p := cfg.Partition(partition)
	if p == nil || len(p.AllowGroups) == 0 || slices.Contains(p.AllowGroups, "ALL") || caller.UID == 0 {
		return nil
	}
	for _, name := range p.AllowGroups {
		g, err := user.LookupGroup(name)
		if err != nil {
			continue
		}
		gid, err := strconv.ParseUint(g.Gid, 10, 32)
		if err == nil && slices.Contains(caller.Groups, uint32(gid)) {
			return nil
		}
	}
	e := refusal(slurm.ErrPartitionGroupDenied, slurm.ErrPartitionGroupDenied.Error())
	fix := fmt.Sprintf("ask an administrator to add you (usermod -aG %s %s), then log in again", p.AllowGroups[0], caller.User)
	if open := openPartitions(cfg, p.PartitionName); open != "" {
		fix = "use a partition open to everyone (" + open + "), or " + fix
	}
	e.Hint = fmt.Sprintf("partition %s takes jobs of members of %s only (AllowGroups), and %s is in none: %s",
		p.PartitionName, strings.Join(p.AllowGroups, ", "), caller.User, fix)
	return e
}

// openPartitions names the partitions other than skip that any user may
// submit to; "" for none.
func openPartitions(cfg *config.Config, skip string) string {
	var names []string
	for _, p := range cfg.Partitions {
		if p.PartitionName != skip && (len(p.AllowGroups) == 0 || slices.Contains(p.AllowGroups, "ALL")) &&
			p.State != config.StateDrain && p.State != config.StateInactive {
			names = append(names, p.PartitionName)
		}
	}
	return strings.Join(names, ", ")
}

// qosAllowed refuses a job whose QOS its association does not allow: the
// [[User]] entry for the job's user and account lists the QOS it may use
// (sacctmgr's QOS=), all of them when it lists none. slurmctld answers
// "Invalid qos specification" (ESLURM_INVALID_QOS). nil when allowed, or
// when no entry names the association (CheckSubmit refuses what is no
// association at all).
func qosAllowed(cfg *config.Config, user, account, qos string) *api.Error {
	for _, u := range cfg.Users {
		if u.Name != user || u.Account != account || len(u.QOS) == 0 || slices.Contains(u.QOS, qos) {
			continue
		}
		e := refusal(slurm.ErrInvalidQOS, slurm.ErrInvalidQOS.Error())
		e.Hint = fmt.Sprintf("%s may use QOS %s in account %s, not %q: ask for one of them with --qos", user,
			strings.Join(u.QOS, ", "), account, qos)
		return e
	}
	return nil
}
