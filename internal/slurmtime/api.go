package slurmtime

// This file fixes the package's API so that other packages can be written
// against it while the implementation lands. Bodies live in the files named
// after each format (limit.go, size.go, array.go, ...).

import (
	"errors"
	"syscall"
	"time"
)

// Infinite is the time limit Slurm prints as UNLIMITED (INFINITE, -1 and,
// for sbatch, 0 all parse to it).
const Infinite time.Duration = 1<<63 - 1

// ParseTimeLimit parses a time limit in every form sbatch accepts:
// "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds", "UNLIMITED",
// "INFINITE", "-1". The result is whole minutes, seconds rounded up (Slurm's
// time_str2mins), or Infinite. "0" is Infinite as in sbatch.
func ParseTimeLimit(s string) (time.Duration, error) { return 0, errTODO }

// FormatDuration prints d as squeue prints times: "1-02:03:04", "2:03:04",
// "3:04", "0:00"; Infinite prints as "UNLIMITED". Negative prints "INVALID".
func FormatDuration(d time.Duration) string { return "" }

// Bytes is a size in bytes.
type Bytes int64

// Size units, powers of 1024 as in Slurm.
const (
	KiB Bytes = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
	PiB
)

// ParseSize parses "16G", "500M", "2T", "1024K", "3" (in defaultUnit),
// with optional "B"/"iB" suffixes lower- or upper-case.
func ParseSize(s string, defaultUnit Bytes) (Bytes, error) { return 0, errTODO }

// FormatSize prints a size as Slurm does in scontrol/sinfo: the largest unit
// that divides it exactly among M, G, T ("16000M", "80G").
func FormatSize(b Bytes) string { return "" }

// Array is a parsed --array spec.
type Array struct {
	// Tasks are the task ids, ascending and distinct.
	Tasks []int
	// Limit is the %N throttle: at most Limit tasks run at once; 0 means none.
	Limit int
}

// ParseArray parses "0-15", "1,3,5-9:2", "0-99%8". maxSize is MaxArraySize:
// every task id must be below it.
func ParseArray(s string, maxSize int) (Array, error) { return Array{}, errTODO }

// String prints the array compactly as squeue does in A_[...] ("0-15%4",
// "1,3,5-9:2" is printed expanded as "1,3,5,7,9").
func (a Array) String() string { return "" }

// DepType is a dependency kind.
type DepType string

// Dependency kinds of --dependency.
const (
	DepAfter      DepType = "after"
	DepAfterAny   DepType = "afterany"
	DepAfterOK    DepType = "afterok"
	DepAfterNotOK DepType = "afternotok"
	DepAfterCorr  DepType = "aftercorr"
	DepAfterBurst DepType = "afterburstbuffer"
	DepSingleton  DepType = "singleton"
)

// JobRef names a job or one task of an array job; Task is -1 for a whole job.
type JobRef struct {
	JobID uint32
	Task  int
}

// DepTerm is one "type:id[:id...]" clause. For "after:ID+MIN", Delay holds
// the minutes.
type DepTerm struct {
	Type  DepType
	Jobs  []JobRef
	Delay time.Duration
}

// Dependency is a parsed --dependency spec: all terms must hold (","), or
// any one of them ("?") when Any is set. Slurm forbids mixing "," and "?".
type Dependency struct {
	Terms []DepTerm
	Any   bool
}

// ParseDependency parses "afterok:12:13,afterany:14", "afterok:5?afterany:6",
// "singleton", "after:5+10", "afterok:7_2".
func ParseDependency(s string) (Dependency, error) { return Dependency{}, errTODO }

// String prints the spec in Slurm's canonical form as scontrol shows it.
func (d Dependency) String() string { return "" }

// ParseBegin parses a --begin time relative to now, in now's location:
// "now+1hour", "now+30" (seconds), "16:00", "16:00:30", "2026-12-01",
// "2026-12-01T08:00", "2026-12-01T08:00:30", "MM/DD[/YY]", "midnight",
// "noon", "elevenses", "fika", "teatime", "today", "tomorrow", with
// Slurm's rules for a past hour of day (tomorrow) and units
// (seconds default, minutes, hours, days, weeks).
func ParseBegin(s string, now time.Time) (time.Time, error) { return time.Time{}, errTODO }

// SignalSpec is a parsed --signal=[{R|B}:]SIG[@secs].
type SignalSpec struct {
	Signal syscall.Signal
	// Seconds before the time limit; Slurm's default is 60.
	Seconds int
	// Batch: send to the batch shell only ("B:").
	Batch bool
	// Reservation: "R:" (accepted, recorded).
	Reservation bool
}

// ParseSignal parses "USR1", "SIGUSR1@30", "B:USR1@30", "10@120".
func ParseSignal(s string) (SignalSpec, error) { return SignalSpec{}, errTODO }

// SignalName returns Slurm's short name for sig ("USR1", "TERM").
func SignalName(sig syscall.Signal) string { return "" }

// PatternVars are the values of an output filename pattern.
type PatternVars struct {
	JobID       uint32 // %j
	ArrayJobID  uint32 // %A (JobID when not an array)
	ArrayTaskID int    // %a; -1 when not an array (expands to 4294967294 as Slurm)
	JobName     string // %x
	User        string // %u
	Node        string // %N, %n
	StepID      int    // %s; -1 for the batch step
	TaskID      int    // %t
}

// ExpandPattern expands "%j %x %u %A %a %N %n %s %t %%" and zero-padded
// forms such as "%4a" in an --output/--error pattern, as Slurm does.
func ExpandPattern(pattern string, v PatternVars) string { return "" }

var errTODO = errors.New("not implemented yet")
