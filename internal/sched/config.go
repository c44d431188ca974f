package sched

import (
	"fmt"
	"strings"
	"time"
)

// PriorityType selects how priorities are computed (slurm.conf PriorityType).
type PriorityType string

// Priority plugins. "" means Slurm's default, priority/basic.
const (
	PriorityBasic       PriorityType = "priority/basic"
	PriorityMultifactor PriorityType = "priority/multifactor"
)

// SchedulerType selects the scheduling loop (slurm.conf SchedulerType).
type SchedulerType string

// Scheduler plugins. "" means Slurm's default, sched/backfill.
const (
	SchedBackfill SchedulerType = "sched/backfill"
	// SchedBuiltin is plain FIFO: the pass stops starting jobs at the first
	// job that cannot start.
	SchedBuiltin SchedulerType = "sched/builtin"
)

// PriorityFlags are slurm.conf's PriorityFlags.
type PriorityFlags uint

// The PriorityFlags this core honours.
const (
	// FlagNoFairTree selects the classic fair-share formula
	// 2^(-EffectvUsage/NormShares).
	FlagNoFairTree PriorityFlags = 1 << iota
	// FlagMaxTRES bills the largest weighted TRES instead of their sum.
	FlagMaxTRES
	// FlagNoNormalPart uses PriorityJobFactor as the partition factor as is.
	FlagNoNormalPart
	// FlagNoNormalQOS uses the QOS priority as the QOS factor as is.
	FlagNoNormalQOS
	// FlagAccrueAlways lets age grow from submission despite holds and
	// dependencies.
	FlagAccrueAlways
	// FlagNoNormalAssoc uses the association's Priority as the association
	// factor as is.
	FlagNoNormalAssoc
	// FlagNoNormalTRES uses each TRES count as its TRES factor as is,
	// instead of its share of the partition's.
	FlagNoNormalTRES
	// FlagSmallRelativeToTime divides the job size by the time limit
	// (SMALL_RELATIVE_TO_TIME).
	FlagSmallRelativeToTime
)

// FlagNoNormalAll is NO_NORMAL_ALL: every NO_NORMAL_* flag.
const FlagNoNormalAll = FlagNoNormalAssoc | FlagNoNormalPart | FlagNoNormalQOS | FlagNoNormalTRES

var flagNames = []struct {
	name string
	flag PriorityFlags
}{
	{"NO_FAIR_TREE", FlagNoFairTree},
	{"MAX_TRES", FlagMaxTRES},
	{"NO_NORMAL_PART", FlagNoNormalPart},
	{"NO_NORMAL_QOS", FlagNoNormalQOS},
	{"ACCRUE_ALWAYS", FlagAccrueAlways},
	{"NO_NORMAL_ASSOC", FlagNoNormalAssoc},
	{"NO_NORMAL_TRES", FlagNoNormalTRES},
	{"NO_NORMAL_ALL", FlagNoNormalAll},
	{"SMALL_RELATIVE_TO_TIME", FlagSmallRelativeToTime},
}

// ParsePriorityFlags reads PriorityFlags as slurm.conf spells them, in any
// case.
func ParsePriorityFlags(names []string) (PriorityFlags, error) {
	var f PriorityFlags
next:
	for _, n := range names {
		for _, fn := range flagNames {
			if strings.EqualFold(n, fn.name) {
				f |= fn.flag
				continue next
			}
		}
		return 0, fmt.Errorf("priority flags: unknown flag %q", n)
	}
	return f, nil
}

// Weights are the PriorityWeight* settings.
type Weights struct {
	Age       uint32
	FairShare uint32
	JobSize   uint32
	Partition uint32
	QOS       uint32
	// Assoc weighs the association factor: the job's association's
	// Priority over the largest association Priority.
	Assoc uint32
	// TRES is PriorityWeightTRES, in Slurm's TRES order (the order sprio
	// lists them in). Weights may be negative.
	TRES []TRESWeight
}

// TRESWeight is one TRES of PriorityWeightTRES.
type TRESWeight struct {
	// Name is Slurm's TRES name in lower case: cpu, mem, node, billing,
	// gres/gpu, gres/gpu:TYPE or gres/shard.
	Name   string
	Weight float64
}

// Backfill holds the SchedulerParameters the backfill loop honours.
type Backfill struct {
	// Window is bf_window: how far ahead reservations are made (default
	// 1440 minutes). A job expected to start later gets a start time but
	// no reservation.
	Window time.Duration
	// MaxJobTest is bf_max_job_test: how many jobs that cannot start now a
	// pass evaluates against resources (default 500). The rest wait with
	// reason Priority.
	MaxJobTest int
	// Resolution is bf_resolution: reservations are widened to multiples of
	// it (default 60 s).
	Resolution time.Duration
}

// Config is the scheduling configuration. Fields are taken literally, like
// slurm.conf, except where a comment names the default a zero stands for;
// DefaultConfig returns Slurm's defaults.
type Config struct {
	PriorityType  PriorityType
	SchedulerType SchedulerType
	Weights       Weights
	// MaxAge is PriorityMaxAge: the wait at which the age factor reaches 1.
	MaxAge time.Duration
	// DecayHalfLife is PriorityDecayHalfLife; 0 means no decay.
	DecayHalfLife time.Duration
	// FavorSmall is PriorityFavorSmall.
	FavorSmall bool
	Flags      PriorityFlags
	// DampeningFactor is FairShareDampeningFactor (classic only; 0 means 1).
	DampeningFactor int
	Backfill        Backfill
	// MaxJobCount counts every job record, finished ones still kept
	// included; 0 means 10000.
	MaxJobCount int
	// MaxJobCountPerUser is how many of those records one user may hold
	// (slurm-lite's MaxJobCountPerUser, resolved to a count); 0 is no
	// limit. The daemon leaves it 0 for a job whose owner is exempt.
	MaxJobCountPerUser int
	// MaxArraySize bounds array task ids; 0 means 1001.
	MaxArraySize int
	// EnforcePartLimits refuses at submission a time limit over the
	// partition's MaxTime (slurm.conf's EnforcePartLimits=ALL; with one
	// node, ANY is the same); without it the job is taken and pends with
	// reason PartitionTimeLimit until its limit or the partition changes.
	EnforcePartLimits bool
	// AllowUnlistedUsers lets users in no account submit; they share
	// DefaultAccount.
	AllowUnlistedUsers bool
	// DefaultAccount is where users go when no account lists them; "" means
	// "root", the top of the tree.
	DefaultAccount string
	// SafeLimits is AccountingStorageEnforce's safe: a job starts only if
	// its time limit × TRES fits what is left of its account's
	// GrpTRESMins beside what the running jobs may still use.
	SafeLimits bool
	// NextUsageReset is when PriorityUsageResetPeriod next clears usage
	// (zero: never); a job waiting on a spent GrpTRESMins says so.
	NextUsageReset time.Time
	// RootAssoc puts root's own association root/root (1 share) in the
	// fair-share tree beside the top accounts, as `sacctmgr add cluster`
	// creates it in Slurm: it counts among the users Fair Tree ranks.
	RootAssoc bool
	// Shrink lets a blocked job shrink a running yieldable multi-GPU job.
	Shrink bool
	// ShrinkTries is how many blocked jobs of a pass may each shrink a
	// running job; 0 means only the first blocked job of the pass.
	ShrinkTries int
	// ShrinkPayback shrinks a job only when the shrink saves the waiting
	// job more time than it costs the shrunk one: the waiting job would
	// otherwise start W seconds from now, and the shrunk job, with L
	// seconds left of its time limit, loses L × (from − to) / to seconds
	// if its speed is proportional to its GPUs. A shrink goes ahead only
	// when W is larger.
	ShrinkPayback bool
	// ShrinkRegrow gives a shrunk job its GPUs back: after every pending
	// job of a pass has been placed, a running job with fewer GPUs than
	// its FullGPUs is requeued at that size (Plan.Grows) when the GPUs it
	// lacks are free on its node for its whole time limit there, and the
	// time it saves (its time left × the GPUs it lacks ÷ FullGPUs, at a
	// speed proportional to GPUs) is longer than YieldCost.
	ShrinkRegrow bool
	// YieldPayback lets a blocked job that no preemption or shrink
	// starts stop (yield and requeue) running yieldable jobs that rank
	// below it (a lower tier, or its own tier and a lower priority), on
	// one node or, for a job larger than a node, on whole nodes, when
	// that pays back: the job would otherwise
	// start W seconds from now, and each stopped job is delayed by about
	// the job's time limit plus YieldCost; the yield goes ahead only when
	// W is larger than the sum of those delays. Lower-tier REQUEUE jobs
	// on the same nodes go with them at no cost. A stopped job names the
	// job it yielded for (Job.YieldedFor) so that it does not take its
	// GPUs back first.
	YieldPayback bool
	// YieldOwn lets YieldPayback also stop the waiting job's own
	// association's jobs whatever their priority: which of one user's jobs
	// runs first changes nobody's fair share, and a user may yield their
	// own jobs anyway.
	YieldOwn bool
	// YieldCost is what a yield costs the stopped job besides waiting for
	// the job it yielded to: stopping, restarting and redoing the work
	// since its last checkpoint.
	YieldCost time.Duration
	// YieldMinRun is how long a job that resumed after a yield runs
	// before the scheduler's own stops (a payback yield, a shrink, a
	// regrowth) may reach it again, unless the job declared a longer
	// Job.CheckpointInterval: time to reach a checkpoint, so that every
	// run after a yield makes progress. Preemption of a REQUEUE partition
	// by a higher tier is Slurm's and keeps Slurm's rules.
	YieldMinRun time.Duration
	// ForeignMemSlack is how much memory other people's processes may hold
	// on a GPU that is still given whole.
	ForeignMemSlack int64
	// ShardSize is the GPU memory one gres/shard stands for, for the
	// gres/shard TRES of the priority's TRES factor; 0 counts no shards.
	ShardSize int64
}

// DefaultConfig returns Slurm's defaults with the multifactor plugin and
// backfill, as slurm-lite runs without a configuration file.
func DefaultConfig() Config {
	return Config{
		PriorityType:  PriorityMultifactor,
		SchedulerType: SchedBackfill,
		Weights:       Weights{Age: 1000, FairShare: 10000, Partition: 1000},
		MaxAge:        7 * 24 * time.Hour,
		DecayHalfLife: 7 * 24 * time.Hour,
		Backfill: Backfill{
			Window:     1440 * time.Minute,
			MaxJobTest: 500,
			Resolution: 60 * time.Second,
		},
		MaxJobCount:       10000,
		MaxArraySize:      1001,
		EnforcePartLimits: true,
	}
}

// Resolved defaults, in seconds where time is involved.
func (c *Config) bfWindow() int64 {
	if c.Backfill.Window <= 0 {
		return 1440 * 60
	}
	return ceilSeconds(c.Backfill.Window)
}

func (c *Config) bfMaxJobTest() int {
	if c.Backfill.MaxJobTest <= 0 {
		return 500
	}
	return c.Backfill.MaxJobTest
}

func (c *Config) bfResolution() int64 {
	if c.Backfill.Resolution <= 0 {
		return 60
	}
	return max(1, ceilSeconds(c.Backfill.Resolution))
}

func (c *Config) maxJobCount() int {
	if c.MaxJobCount <= 0 {
		return 10000
	}
	return c.MaxJobCount
}

func (c *Config) maxArraySize() int {
	if c.MaxArraySize <= 0 {
		return 1001
	}
	return c.MaxArraySize
}

func (c *Config) defaultAccount() string {
	if c.DefaultAccount == "" {
		return rootAccount
	}
	return c.DefaultAccount
}

func (c *Config) multifactor() bool { return c.PriorityType == PriorityMultifactor }
func (c *Config) fifo() bool        { return c.SchedulerType == SchedBuiltin }

// ceilSeconds converts a duration to whole seconds, rounding up, with
// Unlimited kept as the largest value.
func ceilSeconds(d time.Duration) int64 {
	if d >= Unlimited {
		return forever
	}
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}
