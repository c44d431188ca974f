package stepd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Status is a job as its supervisor saw it: RUNNING while it runs (the
// control socket's "status"), then final in status.json. It holds what
// sacct shows of the job and of its batch step, and what a yield reports.
type Status struct {
	JobID uint32         `json:"job_id"`
	State slurm.JobState `json:"state"`
	// ExitCode is the job's exit code as scontrol shows it, "code:signal":
	// "3:0", "0:9"; for a job the supervisor ended (cancelled, timed out)
	// its script's status all the same, which sacct's job line shows as
	// 0:0 (jobrec.Job.AccountedExitCode).
	ExitCode string `json:"exit_code"`
	// Batch is the batch step (sacct's "N.batch" line): the script's own
	// exit status, and a state that follows it (see final).
	Batch StepStatus `json:"batch"`
	// Reason is Slurm's reason word when the job failed to launch
	// (JobLaunchFailure); Error says what went wrong.
	Reason slurm.Reason `json:"reason,omitempty"`
	Error  string       `json:"error,omitempty"`

	// Start and End are the supervisor's own readings of its clock. The
	// daemon records a job's times on its own clock (daemon/finish.go) and
	// takes these only for a run that ended while no daemon ran: then
	// they are the only witness.
	Start time.Time `json:"start"`
	// End is when the job ended in Slurm's sense: when the supervisor
	// decided to end it (time limit, cancel), else when the script ended.
	End time.Time `json:"end,omitzero"`

	// Ending is set when the supervisor ended the job: why, who asked and
	// when the first signal went out.
	Ending *Ending `json:"ending,omitempty"`
	// ExitedAfterSignal: the script ended by itself after the ending
	// signal and before SIGKILL. Killed: SIGKILL was needed, for the
	// script or for a process it left. StopTime: from the ending signal
	// to the last process's end.
	ExitedAfterSignal bool          `json:"exited_after_signal,omitempty"`
	Killed            bool          `json:"killed,omitempty"`
	StopTime          time.Duration `json:"stop_time,omitempty"`

	// PeakRSS is the peak memory in bytes: the cgroup's memory.peak when
	// there is one, else the largest single process's peak RSS (0 when
	// unknown). OOMKills counts the cgroup's oom_kill events.
	PeakRSS  int64 `json:"peak_rss,omitempty"`
	OOMKills int   `json:"oom_kills,omitempty"`

	JobPID int `json:"job_pid,omitempty"`
	// Tracking is TrackCgroup or TrackSubreaper; TrackingDetail names the
	// cgroup, or says why there is none.
	Tracking       string `json:"tracking,omitempty"`
	TrackingDetail string `json:"tracking_detail,omitempty"`
	// Warnings are what the supervisor could not do as asked (a memory
	// limit without a memory controller, CPUs it could not pin).
	Warnings []string `json:"warnings,omitempty"`
	// MemLimitUnenforced: the job had a memory limit (MemLimit) and its
	// cgroup no memory controller to enforce it, or it had no cgroup.
	MemLimitUnenforced bool `json:"mem_limit_unenforced,omitempty"`
}

// StepStatus is the batch step's line in sacct.
type StepStatus struct {
	State    slurm.JobState `json:"state"`
	ExitCode string         `json:"exit_code"`
	End      time.Time      `json:"end,omitzero"`
	// UserCPU and SystemCPU are the CPU time of every process of the job
	// that was reaped (the supervisor's own children's, RUSAGE_CHILDREN:
	// the batch shell and all it waited for, srun's tasks included, and
	// the orphans the supervisor reaped). The daemon takes the steps'
	// own times from them to get the batch step's.
	UserCPU   time.Duration `json:"user_cpu,omitempty"`
	SystemCPU time.Duration `json:"system_cpu,omitempty"`
}

// Ending is why and how the supervisor ended a job.
type Ending struct {
	// Why is the end of the line the job's output gets: WhyTimeLimit,
	// WhyRequeue, WhyPreemption, WhyNodeFail or "" for a plain cancel. It
	// is also how a restarted daemon learns what a stop it asked for was
	// meant to lead to.
	Why string    `json:"why,omitempty"`
	By  *uint32   `json:"by,omitempty"`
	At  time.Time `json:"at"`
	// Signal is the first signal sent (SIGTERM unless asked otherwise).
	Signal syscall.Signal `json:"signal"`
}

// Reasons for ending a job, as the "*** JOB ... CANCELLED AT ... DUE TO
// ... ***" line spells them.
const (
	WhyTimeLimit  = "TIME LIMIT"
	WhyRequeue    = "JOB REQUEUE"
	WhyPreemption = "PREEMPTION"
	WhyNodeFail   = "NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"
)

// launchFailureExit is what sacct showed for a job whose batch step could
// not start (golden/sacct_output_dir_missing.txt).
const launchFailureExit = "0:53"

// oomExit is Slurm's exit code for a job killed by the cgroup OOM killer.
const oomExit = "0:125"

// exitCode formats a wait status as Slurm's "code:signal".
func exitCode(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "0:" + strconv.Itoa(int(ws.Signal()))
	}
	return strconv.Itoa(ws.ExitStatus()) + ":0"
}

// outcome is what happened to a job, from which its final Status follows.
type outcome struct {
	launchErr error
	wait      syscall.WaitStatus
	ending    *Ending
	oomKills  int
}

// final decides a job's state and exit codes as slurmctld does:
//  1. a batch step that never started: FAILED, 0:53, JobLaunchFailure;
//  2. a job the supervisor ended: TIMEOUT or CANCELLED, with the batch
//     script's real exit status ("0:15", "0:9", "143:0" for a script that
//     traps SIGTERM and exits 143), which slurmctld takes as the job's
//     when it comes in after the end (accounting keeps 0:0 for the job
//     line: jobrec.Job.AccountedExitCode); the batch step's state follows
//     its status as slurmdbd's step completion decides it: CANCELLED by a
//     signal, FAILED by a non-zero exit, COMPLETED by 0
//     (golden/sacct_n_P_timeout_*.txt, sacct_n_P_cancelled_cwrap.txt);
//  3. an OOM kill in the job's cgroup: OUT_OF_MEMORY, 0:125, even when the
//     script went on to exit 0;
//  4. otherwise the script's status: COMPLETED 0:0, or FAILED with its
//     exit code ("3:0") or the signal that killed it ("0:11").
func final(o outcome) (job slurm.JobState, exit string, batch StepStatus) {
	switch {
	case o.launchErr != nil:
		return slurm.Failed, launchFailureExit, StepStatus{State: slurm.Cancelled, ExitCode: launchFailureExit}
	case o.ending != nil:
		code := exitCode(o.wait)
		b := StepStatus{State: slurm.Completed, ExitCode: code}
		switch {
		case o.wait.Signaled():
			b.State = slurm.Cancelled
		case o.wait.ExitStatus() != 0:
			b.State = slurm.Failed
		}
		if o.ending.Why == WhyTimeLimit {
			return slurm.Timeout, code, b
		}
		return slurm.Cancelled, code, b
	case o.oomKills > 0:
		return slurm.OutOfMemory, oomExit, StepStatus{State: slurm.OutOfMemory, ExitCode: oomExit}
	case o.wait.Exited() && o.wait.ExitStatus() == 0:
		return slurm.Completed, "0:0", StepStatus{State: slurm.Completed, ExitCode: "0:0"}
	}
	code := exitCode(o.wait)
	return slurm.Failed, code, StepStatus{State: slurm.Failed, ExitCode: code}
}

// ReadStatus reads a job's final status from its state directory; the
// error wraps os.ErrNotExist while the supervisor has not written it.
func ReadStatus(dir string) (Status, error) {
	var st Status
	b, err := os.ReadFile(filepath.Join(dir, StatusFile))
	if err != nil {
		return st, fmt.Errorf("reading job status: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("reading job status %s: %w", filepath.Join(dir, StatusFile), err)
	}
	return st, nil
}

func writeStatus(dir string, st Status) error {
	b, err := json.MarshalIndent(st, "", "\t")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, StatusFile), append(b, '\n'))
}
