// Package slurm holds Slurm's vocabulary: job states with their squeue short
// codes, and the pending-reason words squeue prints. Every package that speaks
// Slurm imports it by name (slurm.Pending, slurm.ReasonResources), so the words
// are spelled once.
package slurm

import (
	"strconv"
	"strings"
)

// Version is the Slurm release whose behaviour and output we follow;
// every command's --version prints it, because tools check it.
const Version = "slurm 22.05.8"

// JobState is a job's state as Slurm names it.
type JobState string

// Job states, spelled as squeue -l / scontrol / sacct print them.
const (
	Pending     JobState = "PENDING"
	Running     JobState = "RUNNING"
	Suspended   JobState = "SUSPENDED"
	Completing  JobState = "COMPLETING"
	Completed   JobState = "COMPLETED"
	Cancelled   JobState = "CANCELLED"
	Failed      JobState = "FAILED"
	Timeout     JobState = "TIMEOUT"
	NodeFail    JobState = "NODE_FAIL"
	Preempted   JobState = "PREEMPTED"
	OutOfMemory JobState = "OUT_OF_MEMORY"
	BootFail    JobState = "BOOT_FAIL"
	Deadline    JobState = "DEADLINE"
	Requeued    JobState = "REQUEUED"
	Resizing    JobState = "RESIZING"
	// SpecialExit is how Slurm shows a job requeued held by an exit code
	// in RequeueExitHold: a pending job, with this flag.
	SpecialExit JobState = "SPECIAL_EXIT"
)

var shortCodes = map[JobState]string{
	Pending:     "PD",
	Running:     "R",
	Suspended:   "S",
	Completing:  "CG",
	Completed:   "CD",
	Cancelled:   "CA",
	Failed:      "F",
	Timeout:     "TO",
	NodeFail:    "NF",
	Preempted:   "PR",
	OutOfMemory: "OOM",
	BootFail:    "BF",
	Deadline:    "DL",
	Requeued:    "RQ",
	Resizing:    "RS",
	SpecialExit: "SE",
}

// Short returns squeue's compact state code (%t): "PD", "R", "CD", ...
func (s JobState) Short() string {
	if c, ok := shortCodes[s]; ok {
		return c
	}
	return string(s)
}

// Finished reports whether the state is terminal.
func (s JobState) Finished() bool {
	switch s {
	case Pending, Running, Suspended, Completing, Requeued, Resizing:
		return false
	}
	return true
}

// ParseJobState accepts a state as squeue -t takes it: the long name or the
// short code, in any case.
func ParseJobState(s string) (JobState, bool) {
	up := upper(s)
	for st, code := range shortCodes {
		if up == string(st) || up == code {
			return st, true
		}
	}
	return "", false
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// Reason is a pending (or ending) reason as squeue's %R and scontrol's Reason=
// print it.
type Reason string

// Slurm's reason words (src/common/slurm_protocol_defs.c job_reason_string).
const (
	ReasonNone                     Reason = "None"
	ReasonPriority                 Reason = "Priority"
	ReasonResources                Reason = "Resources"
	ReasonDependency               Reason = "Dependency"
	ReasonDependencyNeverSatisfied Reason = "DependencyNeverSatisfied"
	ReasonJobHeldUser              Reason = "JobHeldUser"
	ReasonJobHoldMaxRequeue        Reason = "JobHoldMaxRequeue"
	ReasonJobHeldAdmin             Reason = "JobHeldAdmin"
	ReasonBeginTime                Reason = "BeginTime"
	ReasonPartitionTimeLimit       Reason = "PartitionTimeLimit"
	ReasonPartitionDown            Reason = "PartitionDown"
	ReasonPartitionInactive        Reason = "PartitionInactive"
	ReasonPartitionNodeLimit       Reason = "PartitionNodeLimit"
	ReasonQOSMaxGRESPerUser        Reason = "QOSMaxGRESPerUser"
	ReasonQOSMaxJobsPerUserLimit   Reason = "QOSMaxJobsPerUserLimit"
	ReasonQOSMaxCpuPerUserLimit    Reason = "QOSMaxCpuPerUserLimit"
	// QOS limits on one job, and the rest of a user's (slurm_protocol_defs.c).
	ReasonQOSMaxWallDurationPerJobLimit Reason = "QOSMaxWallDurationPerJobLimit"
	ReasonQOSMaxCpuPerJobLimit          Reason = "QOSMaxCpuPerJobLimit"
	ReasonQOSMaxGRESPerJob              Reason = "QOSMaxGRESPerJob"
	ReasonQOSMaxMemoryPerJob            Reason = "QOSMaxMemoryPerJob"
	ReasonQOSMaxNodePerJobLimit         Reason = "QOSMaxNodePerJobLimit"
	ReasonQOSMaxBillingPerJob           Reason = "QOSMaxBillingPerJob"
	ReasonQOSMaxMemoryPerUser           Reason = "QOSMaxMemoryPerUser"
	ReasonQOSMaxNodePerUserLimit        Reason = "QOSMaxNodePerUserLimit"
	ReasonQOSMaxBillingPerUser          Reason = "QOSMaxBillingPerUser"
	ReasonJobArrayTaskLimit             Reason = "JobArrayTaskLimit"
	// An association's GrpTRESMins spent (slurm_protocol_defs.c).
	ReasonAssocGrpGRESMinutes    Reason = "AssocGrpGRESMinutes"
	ReasonAssocGrpCPUMinutes     Reason = "AssocGrpCPUMinutesLimit"
	ReasonAssocGrpBillingMinutes Reason = "AssocGrpBillingMinutes"
	// A QOS's GrpTRESMins spent (slurm_protocol_defs.c).
	ReasonQOSGrpGRESMinutes    Reason = "QOSGrpGRESMinutes"
	ReasonQOSGrpCPUMinutes     Reason = "QOSGrpCPUMinutesLimit"
	ReasonQOSGrpBillingMinutes Reason = "QOSGrpBillingMinutes"
	// An association's other limits (slurm_protocol_defs.c).
	ReasonAssocMaxJobsLimit             Reason = "AssocMaxJobsLimit"
	ReasonAssocGrpGRES                  Reason = "AssocGrpGRES"
	ReasonAssocGrpCpuLimit              Reason = "AssocGrpCpuLimit"
	ReasonAssocGrpBilling               Reason = "AssocGrpBilling"
	ReasonAssocGrpGRESRunMinutes        Reason = "AssocGrpGRESRunMinutes"
	ReasonAssocGrpCPURunMinutesLimit    Reason = "AssocGrpCPURunMinutesLimit"
	ReasonAssocGrpBillingRunMinutes     Reason = "AssocGrpBillingRunMinutes"
	ReasonAssocMaxGRESMinutesPerJob     Reason = "AssocMaxGRESMinutesPerJob"
	ReasonAssocMaxCpuMinutesPerJobLimit Reason = "AssocMaxCpuMinutesPerJobLimit"
	ReasonAssocMaxBillingMinutesPerJob  Reason = "AssocMaxBillingMinutesPerJob"
	ReasonNodeDown                      Reason = "NodeDown"
	ReasonBadConstraints                Reason = "BadConstraints"
	ReasonInvalidAccount                Reason = "InvalidAccount"
	ReasonInvalidQOS                    Reason = "InvalidQOS"
	ReasonReqNodeNotAvail               Reason = "ReqNodeNotAvail"
	// ReasonReservation: the job waits for its reservation's window.
	ReasonReservation      Reason = "Reservation"
	ReasonJobLaunchFailure Reason = "JobLaunchFailure"
	ReasonNonZeroExitCode  Reason = "NonZeroExitCode"
	ReasonTimeLimit        Reason = "TimeLimit"
	ReasonInactiveLimit    Reason = "InactiveLimit"
)

// FormatPorts is a list of ports (MpiParams' reserved ports) as Slurm writes SLURM_STEP_RESV_PORTS
// and ResvPorts: ascending runs, "12000-12003" or "12000-12001,12005".
func FormatPorts(ports []int) string { return FormatRanges(ports) }

// FormatRanges writes ascending, distinct numbers as runs of consecutive
// ones "a-b", others alone, joined by commas ("0-3,7,9-10"), never cut
// short: reserved ports, and the store's pending array tasks.
func FormatRanges(ids []int) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}
