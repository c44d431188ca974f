package notify

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Kinds of events. The first group are Slurm's --mail-type words, which a
// job's mail follows; all of them can be sent to webhooks.
const (
	Begin         = "BEGIN"
	End           = "END"
	Fail          = "FAIL"
	Requeue       = "REQUEUE"
	InvalidDepend = "INVALID_DEPEND"
	TimeLimit     = "TIME_LIMIT"
	TimeLimit90   = "TIME_LIMIT_90"
	TimeLimit80   = "TIME_LIMIT_80"
	TimeLimit50   = "TIME_LIMIT_50"

	Yield     = "YIELD"
	Preempt   = "PREEMPT"
	Cancel    = "CANCEL"
	Hold      = "HOLD"
	Release   = "RELEASE"
	Drain     = "DRAIN"
	Resume    = "RESUME"
	GPUMemLow = "GPU_MEM_LOW"

	// All, in a webhook's Events, is every kind.
	All = "ALL"
)

// Kinds are the words a webhook's Events may hold.
var Kinds = []string{Begin, End, Fail, Requeue, InvalidDepend, TimeLimit, TimeLimit90, TimeLimit80, TimeLimit50,
	Yield, Preempt, Cancel, Hold, Release, Drain, Resume, GPUMemLow, Budget80, Budget100, All}

// mailWords is _mail_type_str: the word of each mailed kind in a subject.
var mailWords = map[string]string{
	InvalidDepend: "Invalid dependency",
	Begin:         "Began",
	End:           "Ended",
	Fail:          "Failed",
	Requeue:       "Requeued",
	TimeLimit:     "Reached time limit",
	TimeLimit90:   "Reached 90% of time limit",
	TimeLimit80:   "Reached 80% of time limit",
	TimeLimit50:   "Reached 50% of time limit",
}

// EndKind is the kind of a finished job's event, as slurmctld's
// job_completion_logger chooses its mail: FAIL for FAILED and every state
// after it in Slurm's order (TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY,
// ...), END for COMPLETED and CANCELLED.
func EndKind(s slurm.JobState) string {
	switch s {
	case slurm.Completed, slurm.Cancelled:
		return End
	}
	return Fail
}

// Array sums up an array job for its summary mail: the smallest and
// largest wait status of its tasks (exit status << 8 | signal, as
// slurmctld keeps min_exit_code and max_exit_code).
type Array struct {
	MinStatus, MaxStatus int
}

// ArrayTasks is --mail-type's word for a mail per array task.
const ArrayTasks = "ARRAY_TASKS"

// WaitStatus is a job's exit code as a wait status.
func WaitStatus(e jobrec.ExitCode) int { return e.Status<<8 | e.Signal }

// wantsMail reports whether ev's job asked for mail of this kind: its
// --mail-type holds the kind; an array task's own mail is sent only with
// ARRAY_TASKS, without it the array's summary (ev.Array) is.
func wantsMail(ev Event) bool {
	j := ev.Job
	if _, ok := mailWords[ev.Kind]; !ok || !slices.Contains(j.Request.MailType, ev.Kind) {
		return false
	}
	perTask := slices.Contains(j.Request.MailType, ArrayTasks)
	if ev.Array != nil {
		return !perTask
	}
	return j.ArrayTaskID == jobrec.NoTask || perTask
}

// ArraySubject is mail_job_info's message for an array's summary: the
// array's record j, and for an end the exit codes of all its tasks
// (_set_job_term_info's summary).
func ArraySubject(j *jobrec.Job, kind string, a Array) string {
	term := ""
	if kind == End || kind == Fail {
		term = arrayTerm(j, a)
	}
	return fmt.Sprintf("Slurm Array Summary Job_id=%d_* (%d) Name=%s %s%s", j.ArrayJobID, j.ArrayJobID, j.Name, mailWords[kind], term)
}

func arrayTerm(j *jobrec.Job, a Array) string {
	exited := func(s int) bool { return s&0x7f == 0 }
	switch {
	case exited(a.MinStatus) && exited(a.MaxStatus):
		lo, hi := a.MinStatus>>8, a.MaxStatus>>8
		state := string(j.State)
		if lo == 0 && hi > 0 {
			state = "Mixed"
		}
		return fmt.Sprintf(", %s, ExitCode [%d-%d]", state, lo, hi)
	case !exited(a.MaxStatus):
		return fmt.Sprintf(", Mixed, MaxSignal [%d]", a.MaxStatus&0x7f)
	default:
		return fmt.Sprintf(", Mixed, MaxExitCode [%d]", a.MaxStatus>>8)
	}
}

// MailUser is who a job's mail goes to: --mail-user, else the job's
// owner (slurmctld's default; MailDomain is never set here).
func MailUser(j *jobrec.Job) string {
	if j.Request.MailUser != "" {
		return j.Request.MailUser
	}
	return j.User
}

// Subject is mail_job_info's message for job j and kind at time now (a
// time limit's mail counts the run time up to now).
func Subject(j *jobrec.Job, kind string, now time.Time) string {
	jobTime, _ := jobTime(j, kind, now)
	term, _ := termInfo(j, kind)
	word := mailWords[kind]
	if j.ArrayTaskID != jobrec.NoTask {
		return fmt.Sprintf("Slurm Array Task Job_id=%d_%d (%d) Name=%s %s%s%s",
			j.ArrayJobID, j.ArrayTaskID, j.ID, j.Name, word, jobTime, term)
	}
	return fmt.Sprintf("Slurm Job_id=%d Name=%s %s%s%s", j.ID, j.Name, word, jobTime, term)
}

// jobTime is _set_job_time: ", Queued time T" for BEGIN, ", Run time T"
// for the ends, requeues and time limits; with the variable it sets.
func jobTime(j *jobrec.Job, kind string, now time.Time) (text, env string) {
	switch kind {
	case Begin:
		if j.Start.IsZero() || j.Submit.IsZero() {
			return "", ""
		}
		t := secs2time(j.Start.Unix() - j.Submit.Unix())
		return ", Queued time " + t, "SLURM_JOB_QUEUED_TIME=" + t
	case End, Fail, Requeue:
		if j.Start.IsZero() || j.End.IsZero() {
			return "", ""
		}
		t := secs2time(j.End.Unix() - j.Start.Unix())
		return ", Run time " + t, "SLURM_JOB_RUN_TIME=" + t
	case TimeLimit, TimeLimit90, TimeLimit80, TimeLimit50:
		if j.Start.IsZero() {
			return "", ""
		}
		t := secs2time(now.Unix() - j.Start.Unix())
		return ", Run time " + t, "SLURM_JOB_RUN_TIME=" + t
	}
	return "", ""
}

// termInfo is _set_job_term_info for one job (not an array's summary):
// ", STATE, ExitCode N" for an end, or ", STATE" when a signal ended it.
func termInfo(j *jobrec.Job, kind string) (text, env string) {
	if kind != End && kind != Fail {
		return "", ""
	}
	if j.ExitCode.Signal == 0 {
		return fmt.Sprintf(", %s, ExitCode %d", j.State, j.ExitCode.Status),
			"SLURM_JOB_EXIT_CODE_MAX=" + strconv.Itoa(j.ExitCode.Status)
	}
	return ", " + string(j.State), "SLURM_JOB_EXIT_CODE_MAX=0"
}

// secs2time is Slurm's secs2time_str: [D-]HH:MM:SS. Slurm's times are
// whole seconds (time_t), so an interval is the difference of two Unix
// times, not a duration cut to the second.
func secs2time(s int64) string {
	if s < 0 {
		return "INVALID"
	}
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// MailEnv is the environment slurmctld gives MailProg
// (job_common_env_vars, _build_mail_env, _set_job_time,
// _set_job_term_info), and nothing else. group names the job's group.
func MailEnv(j *jobrec.Job, kind, cluster, group string, now time.Time) []string {
	env := []string{"SLURM_JOB_ACCOUNT=" + j.Account}
	if kind == End || kind == Fail {
		raw := j.ExitCode.Status<<8 | j.ExitCode.Signal
		env = append(env,
			"SLURM_JOB_DERIVED_EC=0",
			fmt.Sprintf("SLURM_JOB_EXIT_CODE2=%d:%d", j.ExitCode.Status, j.ExitCode.Signal),
			fmt.Sprintf("SLURM_JOB_EXIT_CODE=%d", raw))
	}
	if j.ArrayTaskID != jobrec.NoTask {
		env = append(env, fmt.Sprintf("SLURM_ARRAY_JOB_ID=%d", j.ArrayJobID),
			fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", j.ArrayTaskID))
	}
	if cluster != "" {
		env = append(env, "SLURM_CLUSTER_NAME="+cluster)
	}
	if j.Request.Comment != "" {
		env = append(env, "SLURM_JOB_COMMENT="+j.Request.Comment)
	}
	env = append(env,
		fmt.Sprintf("SLURM_JOB_GID=%d", j.GID),
		"SLURM_JOB_GROUP="+group,
		fmt.Sprintf("SLURM_JOBID=%d", j.ID),
		fmt.Sprintf("SLURM_JOB_ID=%d", j.ID),
		"SLURM_JOB_NAME="+j.Name,
		"SLURM_JOB_NODELIST="+j.Alloc.Node,
		"SLURM_JOB_PARTITION="+j.Partition,
		fmt.Sprintf("SLURM_JOB_RESTART_COUNT=%d", j.Restarts),
		fmt.Sprintf("SLURM_JOB_UID=%d", j.UID),
		"SLURM_JOB_USER="+j.User,
	)
	if dir := workDir(j); dir != "" {
		env = append(env, "SLURM_JOB_WORK_DIR="+dir)
	}
	state := j.State
	if state == slurm.Completing {
		state = slurm.Running
	}
	env = append(env, "SLURM_JOB_STATE="+string(state), "SLURM_JOB_MAIL_TYPE="+mailWords[kind])
	if _, e := jobTime(j, kind, now); e != "" {
		env = append(env, e)
	}
	if _, e := termInfo(j, kind); e != "" {
		env = append(env, e)
	}
	return env
}

// workDir is where the job runs: --chdir, relative to the submission
// directory.
func workDir(j *jobrec.Job) string {
	if j.Request.Chdir == "" || filepath.IsAbs(j.Request.Chdir) {
		return cmp.Or(j.Request.Chdir, j.SubmitDir)
	}
	return filepath.Join(j.SubmitDir, j.Request.Chdir)
}
