package config

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// Config is slurm-lite's whole configuration. Field tags name the TOML key
// (slurm.conf's own name); the conf tag says how a duration or size is
// written in the file (see decode.go).
type Config struct {
	// ClusterName is the cluster's name in accounting (sacct, sshare).
	ClusterName string `toml:"ClusterName"`
	// SocketPath is the daemon's Unix socket.
	SocketPath string `toml:"SocketPath"`
	// StateSaveLocation holds the database and per-job files.
	StateSaveLocation string `toml:"StateSaveLocation"`
	// Operators may act on any job, like root.
	Operators []string `toml:"Operators"`
	// PrivateData hides from users what belongs to others, as slurm.conf's
	// PrivateData: PrivateJobs, PrivateUsage, PrivateUsers. Root and
	// operators see all.
	// Whatever it says, a job's environment, script and --export values are
	// only ever shown to its owner, root and operators.
	PrivateData []string `toml:"PrivateData"`
	// YieldGroup's members may yield other users' yieldable jobs; "" is nobody.
	YieldGroup string `toml:"YieldGroup"`
	// KillWait is the time between SIGTERM and SIGKILL at a time limit.
	KillWait time.Duration `toml:"KillWait" conf:"seconds"`
	// MessageTimeout is how long a command waits for the daemon to answer
	// (and, for a request that takes long by design, to answer a ping)
	// before it says the daemon is not answering.
	MessageTimeout time.Duration `toml:"MessageTimeout" conf:"seconds"`
	// ShardSize is the GPU memory one gres/shard stands for.
	ShardSize slurmtime.Bytes `toml:"ShardSize"`
	// DefMemPerCPU and DefMemPerNode are slurm.conf's: the memory a job
	// that asks for none (no --mem, --mem-per-cpu or --mem-per-gpu) is
	// given at submission, per allocated CPU or for the job, as its
	// allocation, its cgroup limit and SLURM_MEM_PER_CPU or
	// SLURM_MEM_PER_NODE; an --exclusive job gets DefMemPerCPU x all the
	// CPUs. At most one of them; 0 (the default, Slurm's DefMemPerNode =
	// UNLIMITED): such a job has no memory limit, and an --exclusive one
	// holds all of RealMemory.
	DefMemPerCPU  slurmtime.Bytes `toml:"DefMemPerCPU"`
	DefMemPerNode slurmtime.Bytes `toml:"DefMemPerNode"`
	// MinJobAge is how long a finished job stays visible to squeue.
	MinJobAge time.Duration `toml:"MinJobAge" conf:"seconds"`
	// MaxArraySize bounds array task ids (ids are below it); 0 disables arrays.
	MaxArraySize int `toml:"MaxArraySize"`
	// MaxJobCount bounds the jobs held at once, pending, running and recently
	// finished (each array task counts).
	MaxJobCount int `toml:"MaxJobCount"`
	// MaxJobCountPerUser bounds the jobs one user may hold of MaxJobCount,
	// counted as MaxJobCount counts them: a count, or a percentage of
	// MaxJobCount ("50%", the default), so that one user's arrays cannot
	// fill the queue and lock everyone else out of submitting. Root and a
	// personal daemon's own user are exempt; "0" is no limit. slurm-lite's
	// own key: real Slurm has none, and export writes it as the cluster
	// association's MaxSubmitJobs.
	MaxJobCountPerUser Share `toml:"MaxJobCountPerUser"`
	// CheckpointDir is the pattern of $SLITE_CHECKPOINT_DIR (%u user, %j job).
	CheckpointDir string `toml:"CheckpointDir"`
	// CheckpointKeepDays is how long a finished job's checkpoint directory is
	// kept; 0 keeps it forever.
	CheckpointKeepDays int `toml:"CheckpointKeepDays"`
	// IdleGPUTimeout: a running job whose GPUs all stay idle this long counts
	// as idle (yieldable by YieldGroup members); 0 turns this off.
	IdleGPUTimeout time.Duration `toml:"IdleGPUTimeout" conf:"time"`
	// AllowUnlistedUsers lets users named in no account run jobs (in the
	// implicit account) when accounts are configured.
	AllowUnlistedUsers bool `toml:"AllowUnlistedUsers"`
	// EnforcePartLimits is slurm.conf's: "ALL" (or "ANY", "YES": the same
	// with one node) refuses at submission a job whose time limit exceeds
	// its partition's MaxTime; "NO" takes it, to pend with reason
	// PartitionTimeLimit. Default "ALL" (Slurm's is NO): a job that can
	// never start is better refused than left pending.
	EnforcePartLimits string `toml:"EnforcePartLimits"`
	// AccountingStorageEnforce is slurm.conf's, lower case: slurm-lite
	// always enforces associations, limits and qos; "safe" added starts a
	// job only if its time limit × TRES fits what is left of its
	// account's GrpTRESMins (SafeLimits).
	AccountingStorageEnforce string `toml:"AccountingStorageEnforce"`
	// GPUSampleInterval is the time between NVML samples.
	GPUSampleInterval time.Duration `toml:"GPUSampleInterval" conf:"seconds"`
	// GPUViolationPolicy is what happens to a job that breaks its word on a
	// GPU (more memory than it asked for on a shared GPU, or processes on a
	// GPU it was not given): ViolationWarn, ViolationYield or ViolationKill.
	GPUViolationPolicy string `toml:"GPUViolationPolicy"`
	// SchedulerType is SchedBackfill or SchedBuiltin.
	SchedulerType string `toml:"SchedulerType"`
	// PriorityType is PriorityMultifactor or PriorityBasic.
	PriorityType string `toml:"PriorityType"`
	// PreemptType is PreemptPartitionPrio or PreemptNone.
	PreemptType string `toml:"PreemptType"`
	// TRESBillingWeights is the default of every partition's weights.
	TRESBillingWeights TRESWeights `toml:"TRESBillingWeights"`

	SchedulerParameters SchedulerParameters `toml:"SchedulerParameters"`
	Node                Node                `toml:"Node"`
	Priority            Priority            `toml:"Priority"`
	Partitions          []Partition         `toml:"Partition"`
	QOS                 []QOS               `toml:"QOS"`
	Accounts            []Account           `toml:"Account"`
	Users               []User              `toml:"User"`
	// Yield turns on the scheduler's own shrinks and yields (off by
	// default): slurm-lite's, not slurm.conf's.
	Yield YieldPolicy `toml:"Yield"`
	// Routes send jobs that name no partition to one by their time limit,
	// as a lab's job_submit filter would: the first that matches wins.
	Routes []Route `toml:"Route"`

	// RequeueExit are the exit codes that requeue a batch job that ends
	// with one (slurm.conf's RequeueExit): it runs again, with
	// SLURM_RESTART_COUNT one higher, at most max_batch_requeue times.
	RequeueExit []int `toml:"RequeueExit"`
	// RequeueExitHold are the exit codes that requeue a batch job held, in
	// SPECIAL_EXIT, until its owner releases it (slurm.conf's).
	RequeueExitHold []int `toml:"RequeueExitHold"`

	// MpiParams is slurm.conf's MpiParams; only "ports=LO-HI" is taken:
	// the ports lent to jobs (a range of each job's own, and srun's
	// SLURM_STEP_RESV_PORTS); "" lends none. Ports reads it.
	MpiParams string `toml:"MpiParams"`

	// MailProg is the program --mail-type's mail is sent with, run as
	// slurmctld runs it (MailProg -s SUBJECT USER); "" is /usr/bin/mail,
	// else /bin/mail, where present (notify.go), and no mail otherwise.
	MailProg string `toml:"MailProg"`
	// Notify are the webhooks (see notify.go).
	Notify []NotifyHook `toml:"Notify"`
	// LogFormat is the daemon's log: LogText (default) or LogJSON.
	LogFormat string `toml:"LogFormat"`
	// JobMappingDir, when set, is kept as dcgm-exporter's
	// --hpc-job-mapping-dir: one file per GPU, named by its NVML index,
	// listing the ids of the jobs on it, one a line (internal/jobmap).
	JobMappingDir string `toml:"JobMappingDir"`
	// Web is the metrics and dashboard listener (internal/web); off
	// unless Listen is set.
	Web Web `toml:"Web"`
	// AuthAltTypes, as slurm.conf's: ["auth/jwt"] turns on scontrol token
	// and slurmrestd's API on the web listener (internal/slurmrest).
	AuthAltTypes []string `toml:"AuthAltTypes"`
	// AuthAltParameters, as slurm.conf's: "jwt_key=PATH", the HS256 key
	// file (0600); "" is jwt_hs256.key in StateSaveLocation, made at the
	// first start.
	AuthAltParameters string `toml:"AuthAltParameters"`
}

// AuthJWT is AuthAltTypes' one value.
const AuthJWT = "auth/jwt"

// JWT reports whether AuthAltTypes turns on auth/jwt.
func (c *Config) JWT() bool { return slices.Contains(c.AuthAltTypes, AuthJWT) }

// JWTKey is the jwt_key file, and whether it is the default one (made at
// the first start when missing).
func (c *Config) JWTKey() (path string, isDefault bool) {
	if v, ok := strings.CutPrefix(c.AuthAltParameters, "jwt_key="); ok {
		return v, false
	}
	return filepath.Join(c.StateSaveLocation, "jwt_hs256.key"), true
}

// Web is the [Web] table: an HTTP listener serving /metrics in
// Prometheus' text format and a read-only dashboard at /.
type Web struct {
	// Listen is "HOST:PORT" ("127.0.0.1:9341"); "" turns the listener off.
	Listen string `toml:"Listen"`
	// AllowedHosts are the names (or addresses) besides Listen's host and
	// the loopback's that requests may be sent to (their Host header):
	// any other is refused, so that a page elsewhere cannot read the
	// listener through DNS rebinding (internal/web's Hosts).
	AllowedHosts []string `toml:"AllowedHosts"`
}

// YieldPolicy is what the scheduler may do to running yieldable jobs by
// itself (sched.Config's fields of the same names): the P4 policy of
// docs/simulate.md is Shrink, ShrinkPayback, ShrinkRegrow, Payback and
// Own, with ShrinkTries 500, and a Route of jobs of an hour or less to a
// partition of higher PriorityTier.
type YieldPolicy struct {
	// Shrink lets a blocked job shrink a running yieldable multi-GPU job:
	// it is yielded and requeued with the GPUs the blocked job leaves it.
	Shrink bool `toml:"Shrink"`
	// ShrinkTries is how many blocked jobs of a pass may each shrink one;
	// 0 means the first blocked job only.
	ShrinkTries int `toml:"ShrinkTries"`
	// ShrinkPayback shrinks only when the waiting job gains more time than
	// the shrunk one loses.
	ShrinkPayback bool `toml:"ShrinkPayback"`
	// ShrinkRegrow gives a shrunk job its GPUs back when they are free.
	ShrinkRegrow bool `toml:"ShrinkRegrow"`
	// Payback lets a blocked job stop running yieldable jobs that rank
	// below it when its wait is longer than what the stops cost them.
	Payback bool `toml:"Payback"`
	// Own lets Payback stop the waiting user's own jobs whatever their
	// priority.
	Own bool `toml:"Own"`
	// Cost is what one yield costs the stopped job (stop, restart, work
	// since its last checkpoint). A time, to the second ("0:00:20" is 20
	// seconds; slurm.conf's times round up to minutes); default 3 minutes.
	Cost time.Duration `toml:"Cost" conf:"timesec"`
	// MinRun is how long a job resumed after a yield runs before the
	// scheduler's own stops (Shrink, ShrinkRegrow, Payback) may reach it
	// again, unless it declared a longer checkpoint interval (#SLITE
	// --checkpoint-interval): time to reach a checkpoint, so that every
	// run after a yield makes progress. A time, to the second; default
	// 10 minutes.
	MinRun time.Duration `toml:"MinRun" conf:"timesec"`
}

// Route sends a job that names no partition, and whose time limit is at
// most MaxTime, to Partition.
type Route struct {
	// MaxTime is the longest time limit the route takes. A time, to the
	// second.
	MaxTime time.Duration `toml:"MaxTime" conf:"timesec"`
	// Partition is where such jobs go.
	Partition string `toml:"Partition" conf:"name"`
}

// Values of PrivateData that slurm-lite supports (Slurm's others,
// accounts, cloud, events, nodes, partitions and reservations, are
// refused rather than ignored).
const (
	// PrivateJobs: users see only their own jobs in squeue, scontrol show
	// job, sacct and sprio, and only their own job ids on the node's GPUs.
	PrivateJobs = "jobs"
	// PrivateUsage: sshare shows users their own usage rows only, and
	// scontrol show assoc_mgr their own associations only.
	PrivateUsage = "usage"
	// PrivateUsers: scontrol show assoc_mgr shows users their own user
	// record only (what slurm.conf's PrivateData=users hides in
	// slurmctld; sacctmgr's users are slurmdbd.conf's, which it leaves).
	PrivateUsers = "users"
)

// Private reports whether PrivateData lists what (PrivateJobs, ...).
func (c *Config) Private(what string) bool { return slices.Contains(c.PrivateData, what) }

// Values of SchedulerType, PriorityType and PreemptType.
const (
	SchedBackfill        = "sched/backfill"
	SchedBuiltin         = "sched/builtin"
	PriorityMultifactor  = "priority/multifactor"
	PriorityBasic        = "priority/basic"
	PreemptPartitionPrio = "preempt/partition_prio"
	PreemptNone          = "preempt/none"
)

// SchedulerParameters are the backfill and queue-depth options of
// slurm.conf's SchedulerParameters, one key each.
type SchedulerParameters struct {
	// BFWindow is how far ahead backfill plans.
	BFWindow time.Duration `toml:"bf_window" conf:"minutes"`
	// BFMaxJobTest is how many pending jobs backfill considers per pass.
	BFMaxJobTest int `toml:"bf_max_job_test"`
	// BFResolution is the granularity of backfill's time map.
	BFResolution time.Duration `toml:"bf_resolution" conf:"seconds"`
	// BFInterval is the time between backfill passes.
	BFInterval time.Duration `toml:"bf_interval" conf:"seconds"`
	// BFContinue keeps a pass going over its original list after state changes.
	BFContinue bool `toml:"bf_continue"`
	// DefaultQueueDepth is how many jobs the quick scheduler tries on events.
	DefaultQueueDepth int `toml:"default_queue_depth"`
	// MaxScriptSize is the largest batch script accepted, in bytes
	// (Slurm's max_script_size: 4 MB by default, at most 512 MB).
	MaxScriptSize int `toml:"max_script_size"`
	// MaxBatchRequeue is how many times a job is requeued automatically
	// (RequeueExit, RequeueExitHold, a supervisor that failed to start)
	// before its next such end is final: FAILED, or held for a launch
	// failure. Slurm 22.05 has no such key (its MAX_BATCH_REQUEUE, 5, is
	// built in and counts launch failures only; 23.02's MaxBatchRequeue
	// holds the job instead of failing it).
	MaxBatchRequeue int `toml:"max_batch_requeue"`
}

// DefaultMaxBatchRequeue is max_batch_requeue's default: Slurm's
// MAX_BATCH_REQUEUE.
const DefaultMaxBatchRequeue = 5

// DefaultMaxScriptSize is Slurm's max_script_size default, 4 MB.
const DefaultMaxScriptSize = 4 << 20

// MaxScript is the script size limit in force: max_script_size, else
// Slurm's default.
func (s SchedulerParameters) MaxScript() int {
	if s.MaxScriptSize > 0 {
		return s.MaxScriptSize
	}
	return DefaultMaxScriptSize
}

// Node is the one machine.
type Node struct {
	// NodeName; "" until ApplyHost sets the short host name.
	NodeName string `toml:"NodeName"`
	// CPUs; 0 until ApplyHost sets the detected count.
	CPUs int `toml:"CPUs"`
	// RealMemory; 0 until ApplyHost sets the detected size.
	RealMemory slurmtime.Bytes `toml:"RealMemory"`
	// GPUs is where the GPU inventory comes from: GPUsNVML, GPUsNone or
	// GPUsSimulated.
	GPUs string `toml:"GPUs"`
	// SimulatedGPUs are the GPUs when GPUs is GPUsSimulated.
	SimulatedGPUs []SimulatedGPU `toml:"SimulatedGPU"`
	// TypeAliases maps a Slurm GPU type (as in --gres=gpu:a100:1) to the NVML
	// model it names. See GPUType.
	TypeAliases map[string]string `toml:"TypeAliases"`
}

// ShortGPUTypes are the configured short GPU type names (the simulated
// GPUs' types and the TypeAliases), which a detected GPU's model name is
// matched against: what the inventory and the export both need.
func (n *Node) ShortGPUTypes() []string {
	var types []string
	for _, g := range n.SimulatedGPUs {
		types = append(types, g.Type)
	}
	for alias := range n.TypeAliases {
		types = append(types, alias)
	}
	slices.Sort(types[len(n.SimulatedGPUs):]) // the map's order is random
	return types
}

// Values of Node.GPUs.
const (
	GPUsNVML      = "nvml"
	GPUsNone      = "none"
	GPUsSimulated = "simulated"
)

// SimulatedGPU is one group of identical simulated GPUs.
type SimulatedGPU struct {
	Type   string          `toml:"Type" conf:"name"`
	Memory slurmtime.Bytes `toml:"Memory"`
	Count  int             `toml:"Count"`
}

// Priority holds slurm.conf's Priority* keys without the prefix.
type Priority struct {
	WeightAge       int `toml:"WeightAge"`
	WeightFairshare int `toml:"WeightFairshare"`
	WeightPartition int `toml:"WeightPartition"`
	WeightQOS       int `toml:"WeightQOS"`
	WeightJobSize   int `toml:"WeightJobSize"`
	WeightAssoc     int `toml:"WeightAssoc"`
	// WeightTRES weighs each TRES of the job (may be negative, as in Slurm).
	WeightTRES TRESWeights `toml:"WeightTRES"`
	// WeightTRESText is WeightTRES as the file wrote it ("" when it did
	// not): sprio -w and scontrol show config print it as Slurm does.
	WeightTRESText string
	// DecayHalfLife halves past usage; 0 means no decay.
	DecayHalfLife time.Duration `toml:"DecayHalfLife" conf:"time"`
	// MaxAge is the wait that earns the full age factor.
	MaxAge time.Duration `toml:"MaxAge" conf:"time"`
	// CalcPeriod is PriorityCalcPeriod: how often usage is charged to fair
	// share and fair share and pending jobs' priorities are recomputed
	// (with Recalc "period").
	CalcPeriod time.Duration `toml:"CalcPeriod" conf:"time"`
	// Recalc is when fair share and priorities are recomputed: "period"
	// (every CalcPeriod, as Slurm's decay thread; the default) or "pass"
	// (at every scheduling pass: slurm-lite's own, no Slurm equivalent).
	Recalc string `toml:"Recalc"`
	// FavorSmall gives small jobs the larger job-size factor.
	FavorSmall bool `toml:"FavorSmall"`
	// UsageResetPeriod clears usage: NONE, NOW, DAILY, WEEKLY, MONTHLY,
	// QUARTERLY or YEARLY.
	UsageResetPeriod string `toml:"UsageResetPeriod"`
	// Flags are PriorityFlags, upper case (NO_FAIR_TREE, MAX_TRES, ...).
	Flags []string `toml:"Flags"`
}

// Priority.Recalc's values.
const (
	RecalcPeriod = "period"
	RecalcPass   = "pass"
)

// HasFlag reports whether flag (upper case) is among the priority flags.
func (p Priority) HasFlag(flag string) bool {
	return slices.Contains(p.Flags, flag)
}

// Partition is one partition. Durations are whole minutes or
// slurmtime.Infinite.
type Partition struct {
	PartitionName string `toml:"PartitionName" conf:"name"`
	// Default: jobs without --partition go here. After Parse exactly one
	// partition has it.
	Default bool `toml:"Default"`
	// MaxTime is the longest time limit; slurmtime.Infinite by default.
	MaxTime time.Duration `toml:"MaxTime" conf:"time"`
	// DefaultTime is the limit of jobs that give none; 0 means MaxTime (see
	// DefaultLimit).
	DefaultTime       time.Duration `toml:"DefaultTime" conf:"time"`
	PriorityTier      int           `toml:"PriorityTier"`
	PriorityJobFactor int           `toml:"PriorityJobFactor"`
	// PreemptMode is PreemptModeOff, PreemptModeRequeue or PreemptModeCancel:
	// what happens to this partition's jobs when a higher tier needs the GPUs.
	PreemptMode string `toml:"PreemptMode"`
	// GraceTime is the time a preempted job gets between SIGTERM and SIGKILL.
	GraceTime time.Duration `toml:"GraceTime" conf:"seconds"`
	// State is UP, DOWN, DRAIN or INACTIVE.
	State string `toml:"State"`
	// Hidden partitions are left out of sinfo/squeue unless -a.
	Hidden bool `toml:"Hidden"`
	// AllowAccounts; empty means all.
	AllowAccounts []string `toml:"AllowAccounts"`
	// AllowGroups; empty means all (root may always use the partition).
	AllowGroups []string `toml:"AllowGroups"`
	// QOS is the partition's QOS, whose limits apply to every job here; "" is none.
	QOS string `toml:"QOS"`
	// TRESBillingWeights; after Parse the top-level value when not given here.
	TRESBillingWeights TRESWeights `toml:"TRESBillingWeights"`
}

// Values of Partition.PreemptMode and Partition.State.
const (
	PreemptModeOff     = "OFF"
	PreemptModeRequeue = "REQUEUE"
	PreemptModeCancel  = "CANCEL"

	StateUp       = "UP"
	StateDown     = "DOWN"
	StateDrain    = "DRAIN"
	StateInactive = "INACTIVE"
)

// DefaultLimit is the time limit of a job that gives none: DefaultTime, or
// MaxTime when DefaultTime is unset (Slurm's rule).
func (p Partition) DefaultLimit() time.Duration {
	if p.DefaultTime > 0 {
		return p.DefaultTime
	}
	return p.MaxTime
}

// QOS is a quality of service with its limits. A zero limit means none.
type QOS struct {
	Name     string `toml:"Name" conf:"name"`
	Priority int    `toml:"Priority"`
	// MaxTRESPerUser caps what one user's running jobs hold together.
	MaxTRESPerUser TRES `toml:"MaxTRESPerUser"`
	// MaxTRESPerJob caps one job.
	MaxTRESPerJob TRES `toml:"MaxTRESPerJob"`
	// MaxJobsPerUser caps one user's running jobs.
	MaxJobsPerUser int `toml:"MaxJobsPerUser"`
	// MaxSubmitJobsPerUser caps one user's pending and running jobs.
	MaxSubmitJobsPerUser int `toml:"MaxSubmitJobsPerUser"`
	// MaxWall caps a job's time limit.
	MaxWall time.Duration `toml:"MaxWall" conf:"time"`
	// GrpTRESMins is a budget of TRES-minutes for all the QOS's jobs
	// together (cpu, billing, gres/gpu): decayed by DecayHalfLife unless
	// the QOS has NoDecay, cleared by UsageResetPeriod (QOSGrpGRESMinutes).
	GrpTRESMins TRES `toml:"GrpTRESMins"`
	// UsageFactor multiplies the usage charged to fair share.
	UsageFactor float64 `toml:"UsageFactor"`
	// Flags are sacctmgr's QOS flags in Slurm's spelling (DenyOnLimit, ...).
	Flags []string `toml:"Flags"`
}

// HasFlag reports whether the QOS has flag (Slurm's spelling).
func (q QOS) HasFlag(flag string) bool {
	return slices.Contains(q.Flags, flag)
}

// DefaultQOS is the QOS that always exists and that jobs get by default.
const DefaultQOS = "normal"

// RootAccount is the root of the account tree; it always exists.
const RootAccount = "root"

// Account is a fair-share account under RootAccount or another account.
type Account struct {
	Name string `toml:"Name" conf:"name"`
	// Parent; RootAccount by default.
	Parent string `toml:"Parent"`
	// Shares of the parent's share.
	Shares int `toml:"Shares"`
	// Priority is the association's Priority, the association factor of
	// job priority (Priority.WeightAssoc); 0 inherits the parent's.
	Priority int `toml:"Priority"`
	// Users is shorthand for one [[User]] each with 1 share in this account.
	Users []string `toml:"Users"`
	// GrpTRESMins is sacctmgr's GrpTRESMins: the TRES-minutes (gres/gpu,
	// cpu, billing) the account's jobs and its sub-accounts' may use
	// together, counted on usage as fair share decays and
	// Priority.UsageResetPeriod clears it. A job wanting a TRES whose
	// budget is spent waits (AssocGrpGRESMinutes, ...).
	GrpTRESMins TRES `toml:"GrpTRESMins"`
	// GrpTRES caps what the running jobs of the account and of the
	// accounts under it hold together (AssocGrpGRES, AssocGrpCpuLimit,
	// AssocGrpBilling).
	GrpTRES TRES `toml:"GrpTRES"`
	// GrpTRESRunMins caps the TRES-minutes those running jobs may still
	// use: each one's TRES × the time left to its limit, with the job
	// that would start (AssocGrpGRESRunMinutes, ...).
	GrpTRESRunMins TRES `toml:"GrpTRESRunMins"`
	// MaxTRESMinsPerJob caps one job's TRES × time limit, here and in the
	// accounts under it that set none (AssocMaxGRESMinutesPerJob, ...).
	MaxTRESMinsPerJob TRES `toml:"MaxTRESMinsPerJob"`
	// MaxJobs caps the running jobs of each user of the account (and of
	// the accounts under it) whose [[User]] sets none (AssocMaxJobsLimit).
	MaxJobs int `toml:"MaxJobs"`
}

// User is one user's association with one account (a user in two accounts
// has two entries).
type User struct {
	Name    string `toml:"Name" conf:"name"`
	Account string `toml:"Account"`
	Shares  int    `toml:"Shares"`
	// Priority is the association's Priority (Priority.WeightAssoc); 0
	// inherits the account's.
	Priority int `toml:"Priority"`
	// DefaultAccount is the account of jobs that give no --account; after
	// Parse, the user's first account when not given.
	DefaultAccount string `toml:"DefaultAccount"`
	// QOS the user may use; empty means every configured QOS.
	QOS []string `toml:"QOS"`
	// AdminLevel is AdminNone, AdminOperator or AdminAdministrator.
	AdminLevel string `toml:"AdminLevel"`
	// MaxJobs caps this association's running jobs; 0 takes the
	// account's (AssocMaxJobsLimit).
	MaxJobs int `toml:"MaxJobs"`
}

// Values of User.AdminLevel.
const (
	AdminNone          = "None"
	AdminOperator      = "Operator"
	AdminAdministrator = "Administrator"
)

// Default is the configuration used when there is no file: one machine,
// one default partition "gpu", QOS "normal" without limits, no accounts
// (every user in one implicit account, equal shares). Host facts are left
// for ApplyHost.
func Default() *Config {
	c := &Config{
		// "lab": the machine is a lab's shared box; a fixed name (rather
		// than the host name) keeps accounting stable if the host is renamed.
		ClusterName:              "lab",
		SocketPath:               "/run/slurm-lite/slurmd.sock",
		StateSaveLocation:        "/var/lib/slurm-lite",
		KillWait:                 30 * time.Second,
		MessageTimeout:           10 * time.Second,
		ShardSize:                slurmtime.GiB,
		MinJobAge:                300 * time.Second,
		MaxArraySize:             1001,
		MaxJobCount:              10000,
		MaxJobCountPerUser:       "50%",
		CheckpointDir:            "/var/lib/slurm-lite/ckpt/%u/%j",
		CheckpointKeepDays:       7,
		GPUSampleInterval:        5 * time.Second,
		GPUViolationPolicy:       ViolationWarn,
		EnforcePartLimits:        EnforceAll,
		AccountingStorageEnforce: "associations,limits,qos",
		SchedulerType:            SchedBackfill,
		// Slurm defaults to priority/basic (FIFO) and preempt/none; fair
		// share and filler partitions are what this project is for, and
		// with every partition at PreemptMode OFF partition_prio changes
		// nothing.
		PriorityType: PriorityMultifactor,
		PreemptType:  PreemptPartitionPrio,
		// Usage is counted in GPU-seconds; Slurm without weights bills CPUs.
		TRESBillingWeights: TRESWeights{"gres/gpu": 1},
		SchedulerParameters: SchedulerParameters{
			BFWindow:          1440 * time.Minute,
			BFMaxJobTest:      500,
			BFResolution:      60 * time.Second,
			BFInterval:        30 * time.Second,
			DefaultQueueDepth: 100,
			MaxScriptSize:     DefaultMaxScriptSize,
			MaxBatchRequeue:   DefaultMaxBatchRequeue,
		},
		Node:      Node{GPUs: GPUsNVML},
		LogFormat: LogText,
		Yield:     YieldPolicy{Cost: 3 * time.Minute, MinRun: 10 * time.Minute},
		Priority: Priority{
			// Slurm's weights all default to 0, which makes multifactor
			// FIFO; these are the recorded cluster's (golden/slurm.conf).
			WeightAge:        1000,
			WeightFairshare:  10000,
			WeightPartition:  1000,
			DecayHalfLife:    7 * 24 * time.Hour,
			MaxAge:           7 * 24 * time.Hour,
			CalcPeriod:       5 * time.Minute,
			Recalc:           RecalcPeriod,
			UsageResetPeriod: "NONE",
		},
	}
	p := Partition{PartitionName: "gpu", Default: true}
	p.setDefaults()
	p.TRESBillingWeights = maps.Clone(c.TRESBillingWeights)
	c.Partitions = []Partition{p}
	q := QOS{Name: DefaultQOS}
	q.setDefaults()
	c.QOS = []QOS{q}
	return c
}

// setDefaults gives a [[Partition]] Slurm's partition defaults before the
// file's keys are decoded over them.
func (p *Partition) setDefaults() {
	p.MaxTime = slurmtime.Infinite
	p.PriorityTier = 1
	p.PriorityJobFactor = 1
	p.PreemptMode = PreemptModeOff
	p.State = StateUp
}

func (q *QOS) setDefaults()          { q.UsageFactor = 1 }
func (a *Account) setDefaults()      { a.Parent, a.Shares = RootAccount, 1 }
func (u *User) setDefaults()         { u.Shares = 1 }
func (g *SimulatedGPU) setDefaults() { g.Count = 1 }

// DefaultPartition returns the default partition.
func (c *Config) DefaultPartition() *Partition {
	for i := range c.Partitions {
		if c.Partitions[i].Default {
			return &c.Partitions[i]
		}
	}
	return nil
}

// Partition returns the partition named name, or nil.
func (c *Config) Partition(name string) *Partition {
	for i := range c.Partitions {
		if c.Partitions[i].PartitionName == name {
			return &c.Partitions[i]
		}
	}
	return nil
}

// QOSByName returns the QOS named name, or nil.
func (c *Config) QOSByName(name string) *QOS {
	for i := range c.QOS {
		if c.QOS[i].Name == name {
			return &c.QOS[i]
		}
	}
	return nil
}

// Values of EnforcePartLimits (Slurm's; YES is ANY).
const (
	EnforceNo  = "NO"
	EnforceAny = "ANY"
	EnforceAll = "ALL"
	EnforceYes = "YES"
)

// SafeLimits reports whether AccountingStorageEnforce has safe.
func (c *Config) SafeLimits() bool {
	return slices.Contains(strings.Split(c.AccountingStorageEnforce, ","), "safe")
}

// PartLimitsEnforced reports whether a time limit over the partition's is
// refused at submission (EnforcePartLimits other than NO).
func (c *Config) PartLimitsEnforced() bool { return c.EnforcePartLimits != EnforceNo }

// Values of GPUViolationPolicy.
const (
	// ViolationWarn notes the violation in the job's record and the log.
	ViolationWarn = "warn"
	// ViolationYield also yields the job (checkpoint, stop, requeue), so
	// that the jobs sharing its GPU are not the ones to die of out-of-memory.
	ViolationYield = "yield"
	// ViolationKill also cancels the job.
	ViolationKill = "kill"
)
