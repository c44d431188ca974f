package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// jobCols lists a job row's columns in the order jobArgs writes them and
// scanJob reads them; jobs and runs share it. This file is the only place
// that knows the mapping.
const jobCols = `id, array_job_id, array_task_id, array_pending, array_limit, script_id,
	user, uid, gid, account, partition, qos, name, state, reason,
	submit_time, eligible_time, start_time, end_time, time_limit, exit_status, exit_signal,
	restarts, requeue, hold, priority, nice, request, submit_dir, alloc, batch_size,
	checkpoint_dir, cancelled_by, requeued_by, yielded_by, peak_gpu_mem, mean_gpu_util, notes, yielded_for, full_gpus`

var jobColCount = strings.Count(jobCols, ",") + 1

// placeholders is "?, ?, ..." for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// jobArgs is j's values for jobCols; scriptID is the row its script is in.
func jobArgs(j *Job, scriptID uint32) ([]any, error) {
	req := j.Request
	req.Script = "" // kept in scripts, apart
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("job %d: encoding its request: %w", j.ID, err)
	}
	allocJSON, err := json.Marshal(j.Alloc)
	if err != nil {
		return nil, fmt.Errorf("job %d: encoding its allocation: %w", j.ID, err)
	}
	notes := j.Notes
	if notes == nil {
		notes = []string{} // "[]", as the column's default, not "null"
	}
	notesJSON, err := json.Marshal(notes)
	if err != nil {
		return nil, fmt.Errorf("job %d: encoding its notes: %w", j.ID, err)
	}
	return []any{
		j.ID, j.ArrayJobID, j.ArrayTaskID, formatTasks(j.ArrayPending), j.ArrayLimit, scriptID,
		j.User, j.UID, j.GID, j.Account, j.Partition, j.QOS, j.Name, string(j.State), string(j.Reason),
		timeArg(j.Submit), timeArg(j.Eligible), timeArg(j.Start), timeArg(j.End),
		int64(j.TimeLimit), j.ExitCode.Status, j.ExitCode.Signal,
		j.Restarts, j.Requeue, int(j.Hold), j.Priority, j.Nice, string(reqJSON), j.SubmitDir,
		string(allocJSON), j.BatchSize, j.CheckpointDir,
		uidArg(j.CancelledBy), uidArg(j.RequeuedBy), uidArg(j.YieldedBy),
		j.PeakGPUMem, j.MeanGPUUtil, string(notesJSON), j.YieldedFor, j.FullGPUs,
	}, nil
}

type scanner interface{ Scan(dest ...any) error }

// scanJob reads one row of jobCols; it also returns the row's script id.
func scanJob(row scanner) (Job, uint32, error) {
	var (
		j                                             Job
		scriptID                                      uint32
		pending, state, reason, reqJSON, alloc, notes string
		submit, eligible, start, end                  sql.NullInt64
		limit                                         int64
		hold                                          int
		cancelledBy, requeuedBy, yieldedBy            sql.NullInt64
	)
	err := row.Scan(
		&j.ID, &j.ArrayJobID, &j.ArrayTaskID, &pending, &j.ArrayLimit, &scriptID,
		&j.User, &j.UID, &j.GID, &j.Account, &j.Partition, &j.QOS, &j.Name, &state, &reason,
		&submit, &eligible, &start, &end, &limit, &j.ExitCode.Status, &j.ExitCode.Signal,
		&j.Restarts, &j.Requeue, &hold, &j.Priority, &j.Nice, &reqJSON, &j.SubmitDir,
		&alloc, &j.BatchSize, &j.CheckpointDir,
		&cancelledBy, &requeuedBy, &yieldedBy, &j.PeakGPUMem, &j.MeanGPUUtil, &notes, &j.YieldedFor, &j.FullGPUs,
	)
	if err != nil {
		return Job{}, 0, err
	}
	j.State, j.Reason, j.Hold = slurm.JobState(state), slurm.Reason(reason), Hold(hold)
	j.Submit, j.Eligible, j.Start, j.End = timeOf(submit), timeOf(eligible), timeOf(start), timeOf(end)
	j.TimeLimit = time.Duration(limit)
	j.CancelledBy, j.RequeuedBy, j.YieldedBy = uidOf(cancelledBy), uidOf(requeuedBy), uidOf(yieldedBy)
	if j.ArrayPending, err = parseTasks(pending); err != nil {
		return Job{}, 0, fmt.Errorf("job %d: %w", j.ID, err)
	}
	if err := json.Unmarshal([]byte(reqJSON), &j.Request); err != nil {
		return Job{}, 0, fmt.Errorf("job %d: decoding its request: %w", j.ID, err)
	}
	// A pending job's allocation is "{}" and most jobs' notes "[]" (or
	// "null" from older rows): nothing to decode into the zero values they
	// already are (none notes read back as nil, below), and encoding/json
	// costs a microsecond each even so (sacct reads thousands).
	if alloc != "{}" {
		if err := json.Unmarshal([]byte(alloc), &j.Alloc); err != nil {
			return Job{}, 0, fmt.Errorf("job %d: decoding its allocation: %w", j.ID, err)
		}
	}
	if notes != "[]" && notes != "null" {
		if err := json.Unmarshal([]byte(notes), &j.Notes); err != nil {
			return Job{}, 0, fmt.Errorf("job %d: decoding its notes: %w", j.ID, err)
		}
	}
	if len(j.Notes) == 0 {
		j.Notes = nil // none reads back as none, however it was written
	}
	return j, scriptID, nil
}

// Times are Unix nanoseconds; the zero time is NULL (its UnixNano is not
// defined).
func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func timeOf(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

func uidArg(u *uint32) any {
	if u == nil {
		return nil
	}
	return int64(*u)
}

func uidOf(n sql.NullInt64) *uint32 {
	if !n.Valid {
		return nil
	}
	u := uint32(n.Int64)
	return &u
}

// encodeEnv keeps the environment as /proc/PID/environ does: entries ended
// by NUL bytes, so any value survives byte for byte (JSON would mangle
// values that are not UTF-8).
func encodeEnv(env []string) []byte {
	var b strings.Builder
	for _, e := range env {
		b.WriteString(e)
		b.WriteByte(0)
	}
	return []byte(b.String())
}

func decodeEnv(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\x00"), "\x00")
}

const stepCols = `job_id, run, step_id, name, state, start_time, end_time, exit_status, exit_signal,
	ntasks, user_cpu, system_cpu, max_rss, peak_gpu_mem, mean_gpu_util`

func stepArgs(st *Step) []any {
	return []any{
		st.JobID, st.Run, st.ID, st.Name, string(st.State), timeArg(st.Start), timeArg(st.End),
		st.ExitCode.Status, st.ExitCode.Signal, st.NTasks, int64(st.UserCPU), int64(st.SystemCPU),
		st.MaxRSS, st.PeakGPUMem, st.MeanGPUUtil,
	}
}

func scanStep(row scanner) (Step, error) {
	var (
		st              Step
		state           string
		start, end      sql.NullInt64
		userCPU, sysCPU int64
	)
	err := row.Scan(&st.JobID, &st.Run, &st.ID, &st.Name, &state, &start, &end,
		&st.ExitCode.Status, &st.ExitCode.Signal, &st.NTasks, &userCPU, &sysCPU,
		&st.MaxRSS, &st.PeakGPUMem, &st.MeanGPUUtil)
	if err != nil {
		return Step{}, err
	}
	st.State, st.Start, st.End = slurm.JobState(state), timeOf(start), timeOf(end)
	st.UserCPU, st.SystemCPU = time.Duration(userCPU), time.Duration(sysCPU)
	return st, nil
}
