package store

import "github.com/slurm-lite/slurm-lite/internal/jobrec"

// The records the store keeps are jobrec's (see there), named here as the
// store's own so that the daemon's code reads store.Job.
type (
	Job      = jobrec.Job
	Hold     = jobrec.Hold
	ExitCode = jobrec.ExitCode
	Alloc    = jobrec.Alloc
	GPUAlloc = jobrec.GPUAlloc
	NewJob   = jobrec.NewJob
	Script   = jobrec.Script
	Record   = jobrec.Record
	Step     = jobrec.Step
	Usage    = jobrec.Usage
	Drain    = jobrec.Drain
	Event    = jobrec.Event
)

// NoTask is Job.ArrayTaskID for a row that is not one array task.
const NoTask = jobrec.NoTask

// Holds (see jobrec.Hold).
const (
	HoldNone  = jobrec.HoldNone
	HoldUser  = jobrec.HoldUser
	HoldAdmin = jobrec.HoldAdmin
	// HoldSpecialExit, HoldLaunchFailed and HoldMaxRequeue are the
	// daemon's own holds (jobrec.Hold).
	HoldSpecialExit  = jobrec.HoldSpecialExit
	HoldLaunchFailed = jobrec.HoldLaunchFailed
	HoldMaxRequeue   = jobrec.HoldMaxRequeue
	// RequeueExitNote marks a run requeued by RequeueExit (jobrec).
	RequeueExitNote = jobrec.RequeueExitNote
)
