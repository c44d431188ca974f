package slurm

import "strconv"

// Errno is a Slurm error number (slurm/slurm_errno.h of 22.05): 0 for
// success, a system errno below 1000, Slurm's own from 1000 up. The
// daemon answers a refusal Slurm also makes with its Errno, and the
// commands print its words (Error) as Slurm's slurm_strerror does.
type Errno int

// The error numbers slurm-lite uses, with Slurm's names
// (ESLURM_INVALID_PARTITION_NAME is ErrInvalidPartitionName).
const (
	// Success is SLURM_SUCCESS. scontrol update prints its words, "No
	// error", beside the array tasks it changed.
	Success Errno = 0
	// EAGAIN is the system's: MaxJobCount reached. sbatch prints "Slurm
	// temporarily unable to accept job, sleeping and retrying" and tries
	// again.
	EAGAIN Errno = 11
	// EINVAL is the system's: slurm-lite answers it for a control character
	// in a job's strings, which Slurm accepts. It has no words in the
	// table: its refusals carry their own, which name the field.
	EINVAL Errno = 22

	ErrInvalidPartitionName           Errno = 2000
	ErrAccessDenied                   Errno = 2002
	ErrTooManyRequestedCPUs           Errno = 2005
	ErrInvalidNodeCount               Errno = 2006
	ErrUserIDMissing                  Errno = 2010
	ErrPathnameTooLong                Errno = 2012
	ErrRequestedNodeConfigUnavailable Errno = 2014
	ErrNodesBusy                      Errno = 2016
	ErrInvalidJobID                   Errno = 2017
	ErrInvalidNodeName                Errno = 2018
	ErrTransitionStateNoUpdate        Errno = 2020
	ErrAlreadyDone                    Errno = 2021
	ErrJobPending                     Errno = 2024
	ErrInvalidNodeState               Errno = 2028
	ErrNotSupported                   Errno = 2036
	ErrDisabled                       Errno = 2037
	ErrDependency                     Errno = 2038
	ErrBatchOnly                      Errno = 2039
	ErrJobHeld                        Errno = 2042
	ErrInvalidTaskMemory              Errno = 2044
	ErrInvalidAccount                 Errno = 2045
	ErrAccountingPolicy               Errno = 2050
	ErrInvalidTimeLimit               Errno = 2051
	ErrInvalidQOS                     Errno = 2066
	ErrPartitionNotAvail              Errno = 2070
	ErrInvalidGRES                    Errno = 2072
	ErrJobNotPending                  Errno = 2073
	ErrInvalidArray                   Errno = 2081
	ErrJobFinished                    Errno = 2084
	ErrJobNotRunning                  Errno = 2085
	ErrJobNotPendingNorRunning        Errno = 2086
	ErrPrioResetFail                  Errno = 2095
	ErrInvalidNice                    Errno = 2123
	ErrInvalidTimeMinLimit            Errno = 2124
)

// errtab is Slurm's words for each (slurm_errtab in src/common/slurm_errno.c
// of 22.05; EAGAIN's are the C library's strerror).
var errtab = map[Errno]string{
	Success:                           "No error",
	EAGAIN:                            "Resource temporarily unavailable",
	ErrInvalidPartitionName:           "Invalid partition name specified",
	ErrAccessDenied:                   "Access/permission denied",
	ErrTooManyRequestedCPUs:           "More processors requested than permitted",
	ErrInvalidNodeCount:               "Node count specification invalid",
	ErrUserIDMissing:                  "Invalid user id",
	ErrPathnameTooLong:                "Pathname of a file, directory or other parameter too long",
	ErrRequestedNodeConfigUnavailable: "Requested node configuration is not available",
	ErrNodesBusy:                      "Requested nodes are busy",
	ErrInvalidJobID:                   "Invalid job id specified",
	ErrInvalidNodeName:                "Invalid node name specified",
	ErrTransitionStateNoUpdate:        "Job can not be altered now, try again later",
	ErrAlreadyDone:                    "Job/step already completing or completed",
	ErrJobPending:                     "Job is pending execution",
	ErrInvalidNodeState:               "Invalid node state specified",
	ErrNotSupported:                   "Requested operation not supported on this system",
	ErrDisabled:                       "Requested operation is presently disabled",
	ErrDependency:                     "Job dependency problem",
	ErrBatchOnly:                      "Only batch jobs are accepted or processed",
	ErrJobHeld:                        "Job is in held state, pending scheduler release",
	ErrInvalidTaskMemory:              "Memory required by task is not available",
	ErrInvalidAccount:                 "Invalid account or account/partition combination specified",
	ErrAccountingPolicy:               "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
	ErrInvalidTimeLimit:               "Requested time limit is invalid (missing or exceeds some limit)",
	ErrInvalidQOS:                     "Invalid qos specification",
	ErrPartitionNotAvail:              "Required partition not available (inactive or drain)",
	ErrInvalidGRES:                    "Invalid generic resource (gres) specification",
	ErrJobNotPending:                  "Job is no longer pending execution",
	ErrInvalidArray:                   "Invalid job array specification",
	ErrJobFinished:                    "Job has already finished",
	ErrJobNotRunning:                  "Job is not running",
	ErrJobNotPendingNorRunning:        "Job is not pending nor running",
	ErrPrioResetFail:                  "Changes to job priority are not persistent, change nice instead",
	ErrInvalidNice:                    "Invalid --nice value",
	ErrInvalidTimeMinLimit:            "Invalid time-min specification (exceeds job's time or other limits)",
}

// Words returns Slurm's words for e, and whether the table has them.
func (e Errno) Words() (string, bool) {
	w, ok := errtab[e]
	return w, ok
}

// Error is slurm_strerror: Slurm's words for e, or "Unknown error N".
func (e Errno) Error() string {
	if w, ok := errtab[e]; ok {
		return w
	}
	return "Unknown error " + strconv.Itoa(int(e))
}

// String is Error, so that %v and %s print Slurm's words; %d prints the
// number.
func (e Errno) String() string { return e.Error() }
