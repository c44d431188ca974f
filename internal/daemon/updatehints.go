package daemon

import (
	"fmt"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// updateHint is slurm-lite's line after scontrol update's refusal of j in
// Slurm's words (code, from change): what was asked, what the job or the
// configuration allows, and the fix. It finds the change refused by
// trying change's steps in change's order.
func updateHint(j store.Job, ch changes, who updater, cfg *config.Config, prio uint32, code slurm.Errno) string {
	switch code {
	case slurm.ErrJobFinished:
		return fmt.Sprintf("job %d has ended (%s): a finished job changes no more", j.ID, j.State)
	case slurm.ErrUserIDMissing:
		return fmt.Sprintf("job %d is %s's: only its owner, root and operators may change it", j.ID, j.User)
	case slurm.ErrJobNotPending:
		if ch.Partition != nil || ch.Gres != nil || ch.GPUs != nil {
			return fmt.Sprintf("job %d is %s: its partition and GPUs change only while it is pending", j.ID, j.State)
		}
		return fmt.Sprintf("job %d is %s: only a pending job may be held", j.ID, j.State)
	case slurm.ErrInvalidPartitionName:
		if ch.Partition != nil {
			return fmt.Sprintf("asked for partition %q; the partitions here are %s", *ch.Partition, partitionList(cfg))
		}
	case slurm.ErrPartitionNotAvail:
		if ch.Partition != nil {
			if p := cfg.Partition(*ch.Partition); p != nil {
				return fmt.Sprintf("partition %s is %s: it takes no new jobs; the partitions here are %s", p.PartitionName, p.State, partitionList(cfg))
			}
		}
	case slurm.ErrInvalidGRES:
		if ch.gresErr != nil {
			return fmt.Sprintf("%v: write Gres=gpu:N, gpu:TYPE:N or shard:N (none to clear it)", ch.gresErr)
		}
	case slurm.ErrInvalidTimeLimit:
		return "TimeLimit must be above 0: write minutes, [days-]hh:mm:ss or UNLIMITED"
	case slurm.ErrInvalidTimeMinLimit:
		if ch.TimeLimit != nil {
			return fmt.Sprintf("asked for a time limit of %s, below the job's --time-min of %s: give %s or more",
				slurmsyntax.FormatDuration(*ch.TimeLimit), slurmsyntax.FormatDuration(j.Request.TimeMin.Duration()), slurmsyntax.FormatDuration(j.Request.TimeMin.Duration()))
		}
	case slurm.ErrJobHeld:
		return fmt.Sprintf("job %d is held: release it first (scontrol release %d), then set its priority", j.ID, j.ID)
	case slurm.ErrPrioResetFail:
		if ch.Priority != nil {
			return fmt.Sprintf("asked for priority %d, below the job's own %d: only root and operators may lower it; change nice instead (Nice=N)", *ch.Priority, prio)
		}
	case slurm.ErrAccessDenied:
		return accessHint(j, ch, who, cfg, prio)
	}
	return ""
}

// accessHint says which change only an operator may make.
func accessHint(j store.Job, ch changes, who updater, cfg *config.Config, prio uint32) string {
	if ch.TimeLimit != nil {
		if _, c := changeLimit(j, *ch.TimeLimit, who, cfg); c == slurm.ErrAccessDenied {
			old, asked := effectiveLimit(cfg, &j), *ch.TimeLimit
			h := fmt.Sprintf("asked to raise job %d's time limit from %s to %s: only root and operators may raise a time limit",
				j.ID, slurmsyntax.FormatDuration(old), slurmsyntax.FormatDuration(asked))
			if j.State == slurm.Pending {
				h += fmt.Sprintf(", except a pending job's owner, up to partition %s's MaxTime (%s)", j.Partition, slurmsyntax.FormatDuration(partMaxTime(cfg, j.Partition)))
			}
			return h
		}
	}
	if ch.Priority != nil {
		if _, c := changePriority(j, *ch.Priority, who, prio); c == slurm.ErrAccessDenied {
			if j.Hold == store.HoldAdmin {
				return fmt.Sprintf("job %d was held by an operator: only root and operators may release it", j.ID)
			}
			return fmt.Sprintf("asked for priority %d, above the job's own %d: only root and operators may raise a priority", *ch.Priority, prio)
		}
	}
	if ch.Nice != nil && *ch.Nice < 0 {
		return fmt.Sprintf("asked for Nice=%d: only root and operators may give a negative nice; give 0 or more, which lowers the job's priority", *ch.Nice)
	}
	return ""
}

// partitionList names the configured partitions, the default marked "*".
func partitionList(cfg *config.Config) string {
	var names []string
	for _, p := range cfg.Partitions {
		n := p.PartitionName
		if p.Default {
			n += "*"
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}
