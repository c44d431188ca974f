package jobscript

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurmtime"
)

// Request is a batch job as sbatch would send it to the controller: every
// option typed, after the script, the SBATCH_* environment and the command
// line have been applied in that order, and after sbatch's own defaults and
// consistency rules (_opt_verify). Fields left at their zero value were not
// given, unless their comment says otherwise.
type Request struct {
	// Script is the batch script as submitted; with --wrap, the script sbatch
	// writes around the command. The daemon stores it at submission.
	Script string `json:"script,omitempty"`
	// ScriptPath is the script operand as given ("" for standard input and
	// --wrap); ScriptName is what sbatch calls it in messages: its base name,
	// or "stdin".
	ScriptPath string   `json:"script_path,omitempty"`
	ScriptName string   `json:"script_name,omitempty"`
	Args       []string `json:"args,omitempty"`
	// Wrap is the --wrap command; HasWrap tells an empty one from none.
	Wrap    string `json:"wrap,omitempty"`
	HasWrap bool   `json:"has_wrap,omitempty"`

	// JobName is always set: --job-name, else "wrap" for --wrap, else the
	// script's base name, else "sbatch" (a script read from standard input).
	JobName   string `json:"job_name"`
	Partition string `json:"partition,omitempty"`
	Account   string `json:"account,omitempty"`
	QOS       string `json:"qos,omitempty"`

	// GPUs is --gpus/-G ([type:]count,...), GPUsPerNode --gpus-per-node,
	// GPUsPerTask --gpus-per-task, all with Name "gpu"; Gres is --gres
	// (name[:type][:count],...), names kept as given. Counts of 0 are
	// dropped as Slurm drops them. GresNone is --gres=none.
	GPUs        []Gres `json:"gpus,omitempty"`
	GPUsPerNode []Gres `json:"gpus_per_node,omitempty"`
	GPUsPerTask []Gres `json:"gpus_per_task,omitempty"`
	Gres        []Gres `json:"gres,omitempty"`
	GresNone    bool   `json:"gres_none,omitempty"`

	CPUsPerGPU  int `json:"cpus_per_gpu,omitempty"`
	CPUsPerTask int `json:"cpus_per_task,omitempty"`
	// NTasks is the number of tasks after sbatch's defaults (1, or one per
	// node, or nodes × --ntasks-per-node); NTasksSet reports that the user
	// gave -n or that sbatch derived it from --ntasks-per-node, which is
	// when jobs see SLURM_NTASKS.
	NTasks        int  `json:"ntasks"`
	NTasksSet     bool `json:"ntasks_set,omitempty"`
	NTasksPerNode int  `json:"ntasks_per_node,omitempty"`
	// ResvPorts is srun's --resv-ports=N for the allocation srun makes:
	// the ports of MpiParams' range the job holds (nil: its tasks + 1).
	// sbatch has no such option in Slurm 22.05.
	ResvPorts *int `json:"resv_ports,omitempty"`
	// Nodes is --nodes after sbatch's adjustments; Max 0 means no maximum.
	Nodes    NodeRange `json:"nodes"`
	NodesSet bool      `json:"nodes_set,omitempty"`

	// Memory in MiB. 0 is meaningful for --mem (all the node's memory), so
	// these are pointers: nil is "not given". Slurm keeps only the one given
	// on the command line or in the script when an environment variable
	// sets another.
	MemPerNode *uint64 `json:"mem_mib,omitempty"`
	MemPerCPU  *uint64 `json:"mem_per_cpu_mib,omitempty"`
	MemPerGPU  *uint64 `json:"mem_per_gpu_mib,omitempty"`

	TimeLimit Limit `json:"time_limit,omitzero"`
	TimeMin   Limit `json:"time_min,omitzero"`

	// Output, Error and Input are the file name patterns as given ("none"
	// already turned into /dev/null); relative ones are relative to Chdir.
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	Input  string `json:"input,omitempty"`
	// Chdir is --chdir/-D as given; a relative one is relative to the
	// submission directory, which the caller knows.
	Chdir string `json:"chdir,omitempty"`

	Array      *Array      `json:"array,omitempty"`
	Dependency *Dependency `json:"dependency,omitempty"`

	Begin    time.Time `json:"begin,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
	Hold     bool      `json:"hold,omitempty"`
	// Nice is --nice: 100 when given without a value.
	Nice *int `json:"nice,omitempty"`
	// Priority is --priority; PriorityTop for "TOP".
	Priority *uint32 `json:"priority,omitempty"`
	// Requeue is --requeue (true) or --no-requeue (false); nil leaves it to
	// the configuration (JobRequeue).
	Requeue *bool                 `json:"requeue,omitempty"`
	Signal  *slurmtime.SignalSpec `json:"signal,omitempty"`

	Export     *Export `json:"export,omitempty"`
	ExportFile string  `json:"export_file,omitempty"`
	// GetUserEnv is --get-user-env[=timeout[S|L]].
	GetUserEnv *GetUserEnv `json:"get_user_env,omitempty"`

	// MailType lists the --mail-type events in Slurm's order (BEGIN, END,
	// FAIL, REQUEUE, ...); empty with NONE. Slurm ORs every --mail-type it
	// reads, so script and command line add up.
	MailType []string `json:"mail_type,omitempty"`
	MailUser string   `json:"mail_user,omitempty"`
	Comment  string   `json:"comment,omitempty"`

	TestOnly bool `json:"test_only,omitempty"`
	Parsable bool `json:"parsable,omitempty"`
	Wait     bool `json:"wait,omitempty"`
	Quiet    bool `json:"quiet,omitempty"`
	Verbose  int  `json:"verbose,omitempty"`

	// Sharing is --exclusive[=user|mcs] or --oversubscribe/-s, the last one
	// given.
	Sharing Sharing `json:"sharing,omitempty"`
	// OpenMode is --open-mode: "append" or "truncate".
	OpenMode    string `json:"open_mode,omitempty"`
	WCKey       string `json:"wckey,omitempty"`
	Constraint  string `json:"constraint,omitempty"`
	NodeList    string `json:"nodelist,omitempty"`
	Exclude     string `json:"exclude,omitempty"`
	Reservation string `json:"reservation,omitempty"`
	Clusters    string `json:"clusters,omitempty"`
	Licenses    string `json:"licenses,omitempty"`
	// UID and GID are --uid and --gid as given. sbatch allows them to root
	// only: a caller that is not root refuses them with RequireRoot.
	UID string `json:"uid,omitempty"`
	GID string `json:"gid,omitempty"`

	// slurm-lite's extensions (#SLITE lines and the command line).
	GPUMem    slurmtime.Bytes `json:"gpu_mem,omitempty"`
	Yieldable bool            `json:"yieldable,omitempty"`
	BatchSize int             `json:"batch_size,omitempty"`
	// CheckpointInterval is how often the job saves a checkpoint, counted
	// from its start (--checkpoint-interval; 0: not said): a job resumed
	// after a yield runs at least this long, or [Yield] MinRun when that
	// is longer, before the scheduler yields it again.
	CheckpointInterval Limit `json:"checkpoint_interval,omitempty"`

	// Other holds every option that only matters on a cluster, by long name
	// in the order first given, with its last value ("" for a flag), so that
	// scontrol can show them.
	Other []Setting `json:"other,omitempty"`

	// Warnings are lines sbatch prints without failing, with their level
	// prefix ("error: Change from #SLURM to #SBATCH ...").
	Warnings []string `json:"warnings,omitempty"`
}

// Setting is one option as written: its long name and value.
type Setting struct {
	Name     string `json:"name"`
	Value    string `json:"value,omitempty"`
	HasValue bool   `json:"has_value,omitempty"`
}

// Gres is one generic resource request: name[:type]:count.
type Gres struct {
	Name  string `json:"name"`
	Type  string `json:"type,omitempty"`
	Count uint64 `json:"count"`
}

func (g Gres) String() string {
	if g.Type != "" {
		return fmt.Sprintf("%s:%s:%d", g.Name, g.Type, g.Count)
	}
	return fmt.Sprintf("%s:%d", g.Name, g.Count)
}

// NodeRange is --nodes=min[-max]; Max 0 means no maximum.
type NodeRange struct {
	Min int `json:"min"`
	Max int `json:"max,omitempty"`
}

// Array is --array: the spec as given, its task ids (ascending) and its
// %N throttle (0: none).
type Array struct {
	Spec  string `json:"spec"`
	Tasks []int  `json:"tasks"`
	Limit int    `json:"limit,omitempty"`
}

// Dependency is --dependency: the spec as given and its parsed form.
type Dependency struct {
	Spec   string               `json:"spec"`
	Parsed slurmtime.Dependency `json:"parsed"`
}

// Export is --export: ALL (the default, also when nil), NONE, or a list of
// variables, with or without ALL.
type Export struct {
	Spec string `json:"spec"`
	// None is --export=NONE.
	None bool `json:"none,omitempty"`
	// All is set by "ALL" alone or in the list.
	All bool `json:"all,omitempty"`
	// Vars are the listed variables in order; without a value a variable is
	// copied from the submitter's environment.
	Vars []ExportVar `json:"vars,omitempty"`
}

// ExportVar is one variable of an --export list.
type ExportVar struct {
	Name     string `json:"name"`
	Value    string `json:"value,omitempty"`
	HasValue bool   `json:"has_value,omitempty"`
}

// GetUserEnv is --get-user-env[=timeout[S|L]].
type GetUserEnv struct {
	// Timeout in seconds; 0 when not given.
	Timeout int `json:"timeout,omitempty"`
	// Mode is "S" (short) or "L" (long login), or "".
	Mode string `json:"mode,omitempty"`
}

// Sharing is how a job shares its node.
type Sharing string

// Values of Sharing.
const (
	Exclusive     Sharing = "exclusive"     // --exclusive
	ExclusiveUser Sharing = "user"          // --exclusive=user
	ExclusiveMCS  Sharing = "mcs"           // --exclusive=mcs
	Oversubscribe Sharing = "oversubscribe" // -s, --oversubscribe, --exclusive=oversubscribe
)

// PriorityTop is --priority=TOP (Slurm's NO_VAL - 1).
const PriorityTop uint32 = 0xfffffffd

// Limit is a time limit: whole minutes, or slurmtime.Infinite. The zero
// value means "not given". It prints in JSON as "90m0s" or "UNLIMITED".
type Limit time.Duration

// Duration is the limit as a time.Duration (slurmtime.Infinite if
// unlimited).
func (l Limit) Duration() time.Duration { return time.Duration(l) }

// Unlimited reports an infinite limit.
func (l Limit) Unlimited() bool { return time.Duration(l) == slurmtime.Infinite }

func (l Limit) String() string {
	if l.Unlimited() {
		return "UNLIMITED"
	}
	return time.Duration(l).String()
}

// MarshalJSON writes the limit as its String.
func (l Limit) MarshalJSON() ([]byte, error) { return json.Marshal(l.String()) }

// UnmarshalJSON reads what MarshalJSON writes.
func (l *Limit) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "UNLIMITED" {
		*l = Limit(slurmtime.Infinite)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("time limit %q: %w", s, err)
	}
	*l = Limit(d)
	return nil
}

// RequireRoot returns sbatch's error for --uid or --gid, which only root may
// give. A caller that is not root calls it after Parse.
func (r *Request) RequireRoot() error {
	switch {
	case r.UID != "":
		return &Error{Kind: KindInvalid, Exit: exitOption, Msg: MsgUIDNotRoot, Option: "--uid"}
	case r.GID != "":
		return &Error{Kind: KindInvalid, Exit: exitOption, Msg: MsgGIDNotRoot, Option: "--gid"}
	}
	return nil
}

// CheckIDs returns sbatch's error for a --uid or --gid that names no user
// or group; userOK and groupOK look a name or number up (Parse does no
// I/O, so the caller passes the system's databases in).
func (r *Request) CheckIDs(userOK, groupOK func(string) bool) error {
	switch {
	case r.UID != "" && !userOK(r.UID):
		return &Error{Kind: KindInvalid, Exit: exitOption, Msg: MsgUIDInvalid, Option: "--uid"}
	case r.GID != "" && !groupOK(r.GID):
		return &Error{Kind: KindInvalid, Exit: exitOption, Msg: MsgGIDInvalid, Option: "--gid"}
	}
	return nil
}

// OtherValue returns the value of an option kept in Other.
func (r *Request) OtherValue(name string) (string, bool) {
	for _, s := range r.Other {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}

// TmpMiB is --tmp in MiB (MinTmpDiskNode); 0 when not given.
func (r *Request) TmpMiB() uint64 {
	v, _ := r.OtherValue("tmp")
	mb, _ := strToMbytes(v)
	return mb
}

// DelayBoot is --delay-boot (whole minutes unless written with seconds,
// as time_str2secs reads it), slurmtime.Infinite for INFINITE; 0 when not
// given.
func (r *Request) DelayBoot() time.Duration {
	v, ok := r.OtherValue("delay-boot")
	if !ok {
		return 0
	}
	secs, valid := timeStr2Secs(v)
	switch {
	case !valid:
		return 0
	case secs < 0:
		return slurmtime.Infinite
	}
	return time.Duration(secs) * time.Second
}
