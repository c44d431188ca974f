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
	ErrDefaultPartitionNotSet         Errno = 2001
	ErrAccessDenied                   Errno = 2002
	ErrPartitionGroupDenied           Errno = 2003 // ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP
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
	ErrReservationAccess              Errno = 2052
	ErrReservationInvalid             Errno = 2053
	ErrInvalidTimeValue               Errno = 2054
	ErrReservationBusy                Errno = 2055
	ErrReservationOverlap             Errno = 2058
	ErrPortsBusy                      Errno = 2059
	ErrPortsInvalid                   Errno = 2060
	ErrInvalidQOS                     Errno = 2066
	ErrPartitionNotAvail              Errno = 2070
	ErrInvalidGRES                    Errno = 2072
	ErrJobNotPending                  Errno = 2073
	ErrInvalidArray                   Errno = 2081
	ErrReservationNameDup             Errno = 2082
	ErrJobFinished                    Errno = 2084
	ErrJobNotRunning                  Errno = 2085
	ErrJobNotPendingNorRunning        Errno = 2086
	ErrPrioResetFail                  Errno = 2095
	ErrInvalidNice                    Errno = 2123
	ErrInvalidTimeMinLimit            Errno = 2124
)

// Words is Slurm's words for e (slurm_errtab in src/common/slurm_errno.c
// of 22.05; EAGAIN's are the C library's strerror), and whether Slurm has
// any. A switch rather than a map: a map is built when the program starts,
// and every command would pay for it before its first line.
func (e Errno) Words() (string, bool) {
	switch e {
	case Success:
		return "No error", true
	case EAGAIN:
		return "Resource temporarily unavailable", true
	case ErrInvalidPartitionName:
		return "Invalid partition name specified", true
	case ErrDefaultPartitionNotSet:
		return "No partition specified or system default partition", true
	case ErrAccessDenied:
		return "Access/permission denied", true
	case ErrPartitionGroupDenied:
		return "User's group not permitted to use this partition", true
	case ErrTooManyRequestedCPUs:
		return "More processors requested than permitted", true
	case ErrInvalidNodeCount:
		return "Node count specification invalid", true
	case ErrUserIDMissing:
		return "Invalid user id", true
	case ErrPathnameTooLong:
		return "Pathname of a file, directory or other parameter too long", true
	case ErrRequestedNodeConfigUnavailable:
		return "Requested node configuration is not available", true
	case ErrNodesBusy:
		return "Requested nodes are busy", true
	case ErrInvalidJobID:
		return "Invalid job id specified", true
	case ErrInvalidNodeName:
		return "Invalid node name specified", true
	case ErrTransitionStateNoUpdate:
		return "Job can not be altered now, try again later", true
	case ErrAlreadyDone:
		return "Job/step already completing or completed", true
	case ErrJobPending:
		return "Job is pending execution", true
	case ErrInvalidNodeState:
		return "Invalid node state specified", true
	case ErrNotSupported:
		return "Requested operation not supported on this system", true
	case ErrDisabled:
		return "Requested operation is presently disabled", true
	case ErrDependency:
		return "Job dependency problem", true
	case ErrBatchOnly:
		return "Only batch jobs are accepted or processed", true
	case ErrJobHeld:
		return "Job is in held state, pending scheduler release", true
	case ErrInvalidTaskMemory:
		return "Memory required by task is not available", true
	case ErrInvalidAccount:
		return "Invalid account or account/partition combination specified", true
	case ErrAccountingPolicy:
		return "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)", true
	case ErrInvalidTimeLimit:
		return "Requested time limit is invalid (missing or exceeds some limit)", true
	case ErrInvalidQOS:
		return "Invalid qos specification", true
	case ErrPartitionNotAvail:
		return "Required partition not available (inactive or drain)", true
	case ErrInvalidGRES:
		return "Invalid generic resource (gres) specification", true
	case ErrJobNotPending:
		return "Job is no longer pending execution", true
	case ErrReservationAccess:
		return "Access denied to requested reservation", true
	case ErrReservationInvalid:
		return "Requested reservation is invalid", true
	case ErrInvalidTimeValue:
		return "Invalid time specified", true
	case ErrReservationBusy:
		return "Requested reservation is in use", true
	case ErrPortsBusy:
		return "Required ports are in use", true
	case ErrPortsInvalid:
		return "Requires more ports than can be reserved", true
	case ErrReservationOverlap:
		return "Requested reservation overlaps with another reservation", true
	case ErrReservationNameDup:
		return "Duplicate reservation name", true
	case ErrInvalidArray:
		return "Invalid job array specification", true
	case ErrJobFinished:
		return "Job has already finished", true
	case ErrJobNotRunning:
		return "Job is not running", true
	case ErrJobNotPendingNorRunning:
		return "Job is not pending nor running", true
	case ErrPrioResetFail:
		return "Changes to job priority are not persistent, change nice instead", true
	case ErrInvalidNice:
		return "Invalid --nice value", true
	case ErrInvalidTimeMinLimit:
		return "Invalid time-min specification (exceeds job's time or other limits)", true
	}
	return "", false
}

// Error is slurm_strerror: Slurm's words for e, or "Unknown error N".
func (e Errno) Error() string {
	if w, ok := e.Words(); ok {
		return w
	}
	return "Unknown error " + strconv.Itoa(int(e))
}

// String is Error, so that %v and %s print Slurm's words; %d prints the
// number.
func (e Errno) String() string { return e.Error() }
