package api

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// PathSqueueJobs lists jobs as PathJobs does (same query), in the compact
// form of SqueueJobs: what squeue's common formats, sorts and filters read,
// without the request, paths and command of each job. With 10,000 jobs the
// full records cost the daemon and squeue most of squeue's time.
const PathSqueueJobs = "/v1/squeue/jobs"

// SqueueJobs is a job list in columns, one slice per field, all of the
// same length: a handful of slices encode and decode (gob) in a fraction of
// the time of as many structs, and times travel as Unix nanoseconds (0 for
// none) instead of a binary marshalling each.
type SqueueJobs struct {
	ID, ArrayJobID                              []uint32
	ArrayTaskID, ArrayLimit                     []int
	ArrayPending                                [][]int
	ArrayTasks                                  []string
	User, Account, Partition, QOS, Name, Node   []string
	UID, GID, Priority                          []uint32
	State                                       []slurm.JobState
	Reason                                      []slurm.Reason
	StateDesc                                   []string
	Submit, Eligible, Start, End, ExpectedStart []int64
	TimeLimit, Limit                            []time.Duration
	Hold                                        []jobrec.Hold
	NumCPUs, NumTasks                           []int
}

// CompactJobs is the list in columns. Only the fields SqueueJobs has
// travel; Jobs gives them back.
func CompactJobs(jobs []Job) SqueueJobs {
	c := NewSqueueJobs(len(jobs))
	for i := range jobs {
		l := jobs[i].Live()
		c.Append(&jobs[i].Job, &l)
	}
	return c
}

// NewSqueueJobs is an empty list with room for n jobs.
func NewSqueueJobs(n int) SqueueJobs {
	return SqueueJobs{
		ID: make([]uint32, 0, n), ArrayJobID: make([]uint32, 0, n),
		ArrayTaskID: make([]int, 0, n), ArrayLimit: make([]int, 0, n),
		ArrayPending: make([][]int, 0, n), ArrayTasks: make([]string, 0, n),
		User: make([]string, 0, n), Account: make([]string, 0, n), Partition: make([]string, 0, n),
		QOS: make([]string, 0, n), Name: make([]string, 0, n), Node: make([]string, 0, n),
		UID: make([]uint32, 0, n), GID: make([]uint32, 0, n), Priority: make([]uint32, 0, n),
		State: make([]slurm.JobState, 0, n), Reason: make([]slurm.Reason, 0, n), StateDesc: make([]string, 0, n),
		Submit: make([]int64, 0, n), Eligible: make([]int64, 0, n), Start: make([]int64, 0, n),
		End: make([]int64, 0, n), ExpectedStart: make([]int64, 0, n),
		TimeLimit: make([]time.Duration, 0, n), Limit: make([]time.Duration, 0, n),
		Hold: make([]jobrec.Hold, 0, n), NumCPUs: make([]int, 0, n), NumTasks: make([]int, 0, n),
	}
}

// Append adds a stored job, with what the daemon adds to it, to the
// columns. The reason is the live one.
func (c *SqueueJobs) Append(j *jobrec.Job, l *Live) {
	c.ID, c.ArrayJobID = append(c.ID, j.ID), append(c.ArrayJobID, j.ArrayJobID)
	c.ArrayTaskID, c.ArrayLimit = append(c.ArrayTaskID, j.ArrayTaskID), append(c.ArrayLimit, j.ArrayLimit)
	c.ArrayPending, c.ArrayTasks = append(c.ArrayPending, j.ArrayPending), append(c.ArrayTasks, l.ArrayTasks)
	c.User, c.Account = append(c.User, j.User), append(c.Account, j.Account)
	c.Partition, c.QOS = append(c.Partition, j.Partition), append(c.QOS, j.QOS)
	c.Name, c.Node = append(c.Name, j.Name), append(c.Node, j.Alloc.Node)
	c.UID, c.GID, c.Priority = append(c.UID, j.UID), append(c.GID, j.GID), append(c.Priority, l.Priority)
	c.State, c.Reason = append(c.State, j.State), append(c.Reason, l.Reason)
	c.StateDesc = append(c.StateDesc, l.StateDesc)
	c.Submit, c.Eligible = append(c.Submit, unixNano(j.Submit)), append(c.Eligible, unixNano(j.Eligible))
	c.Start, c.End = append(c.Start, unixNano(j.Start)), append(c.End, unixNano(j.End))
	c.ExpectedStart = append(c.ExpectedStart, unixNano(l.ExpectedStart))
	c.TimeLimit, c.Limit = append(c.TimeLimit, j.TimeLimit), append(c.Limit, l.Limit)
	c.Hold, c.NumCPUs, c.NumTasks = append(c.Hold, j.Hold), append(c.NumCPUs, l.NumCPUs), append(c.NumTasks, l.NumTasks)
}

// Len is the number of jobs.
func (c *SqueueJobs) Len() int { return len(c.ID) }

// SqueueJob is one job of a SqueueJobs: the fields squeue's common
// formats, sorts and filters read, named as in Job (Node is Alloc.Node). A
// few hundred bytes against a Job's 1.6 kB: squeue's 10,000 jobs fill
// 16 MB less of fresh memory, which on a VM costs more than the printing.
type SqueueJob struct {
	ID, ArrayJobID                              uint32
	ArrayTaskID, ArrayLimit                     int
	ArrayPending                                []int
	ArrayTasks                                  string
	User, Account, Partition, QOS, Name, Node   string
	UID, GID, Priority                          uint32
	State                                       slurm.JobState
	Reason                                      slurm.Reason
	StateDesc                                   string
	Submit, Eligible, Start, End, ExpectedStart time.Time
	TimeLimit, Limit                            time.Duration
	Hold                                        jobrec.Hold
	NumCPUs, NumTasks                           int
}

// ShownState is the state squeue and scontrol show: the job's own, but
// SPECIAL_EXIT for a pending job held by RequeueExitHold, as Slurm shows
// its JOB_SPECIAL_EXIT flag.
func (j *SqueueJob) ShownState() slurm.JobState {
	if j.State == slurm.Pending && j.Hold == jobrec.HoldSpecialExit {
		return slurm.SpecialExit
	}
	return j.State
}

// ArrayRecord reports whether the job is an array's pending record, as
// jobrec.Job's.
func (j *SqueueJob) ArrayRecord() bool {
	return j.ArrayJobID != 0 && j.ArrayTaskID == jobrec.NoTask
}

// Squeue is the job's SqueueJob: what it gives through CompactJobs and
// Jobs.
func (j *Job) Squeue() SqueueJob {
	return SqueueJob{
		ID: j.ID, ArrayJobID: j.ArrayJobID, ArrayTaskID: j.ArrayTaskID, ArrayLimit: j.ArrayLimit,
		ArrayPending: j.ArrayPending, ArrayTasks: j.ArrayTasks,
		User: j.User, Account: j.Account, Partition: j.Partition, QOS: j.QOS, Name: j.Name, Node: j.Alloc.Node,
		UID: j.UID, GID: j.GID, Priority: j.Priority,
		State: j.State, Reason: j.Reason, StateDesc: j.StateDesc,
		Submit: j.Submit, Eligible: j.Eligible, Start: j.Start, End: j.End, ExpectedStart: j.ExpectedStart,
		TimeLimit: j.TimeLimit, Limit: j.Limit, Hold: j.Hold, NumCPUs: j.NumCPUs, NumTasks: j.NumTasks,
	}
}

// Jobs is the list back as one SqueueJob per job. A list whose columns
// differ in length (not one CompactJobs made) gives the jobs all columns
// have.
func (c *SqueueJobs) Jobs() []SqueueJob {
	n := c.Len()
	for _, l := range []int{len(c.ArrayJobID), len(c.ArrayTaskID), len(c.ArrayLimit), len(c.ArrayPending),
		len(c.ArrayTasks), len(c.User), len(c.Account), len(c.Partition), len(c.QOS), len(c.Name),
		len(c.Node), len(c.UID), len(c.GID), len(c.Priority), len(c.State), len(c.Reason),
		len(c.StateDesc), len(c.Submit), len(c.Eligible), len(c.Start), len(c.End),
		len(c.ExpectedStart), len(c.TimeLimit), len(c.Limit), len(c.Hold), len(c.NumCPUs), len(c.NumTasks)} {
		n = min(n, l)
	}
	jobs := make([]SqueueJob, n)
	for i := range jobs {
		j := &jobs[i]
		j.ID, j.ArrayJobID = c.ID[i], c.ArrayJobID[i]
		j.ArrayTaskID, j.ArrayLimit = c.ArrayTaskID[i], c.ArrayLimit[i]
		j.ArrayPending, j.ArrayTasks = c.ArrayPending[i], c.ArrayTasks[i]
		j.User, j.Account, j.Partition = c.User[i], c.Account[i], c.Partition[i]
		j.QOS, j.Name, j.Node = c.QOS[i], c.Name[i], c.Node[i]
		j.UID, j.GID, j.Priority = c.UID[i], c.GID[i], c.Priority[i]
		j.State, j.Reason, j.StateDesc = c.State[i], c.Reason[i], c.StateDesc[i]
		j.Submit, j.Eligible = fromUnixNano(c.Submit[i]), fromUnixNano(c.Eligible[i])
		j.Start, j.End = fromUnixNano(c.Start[i]), fromUnixNano(c.End[i])
		j.ExpectedStart = fromUnixNano(c.ExpectedStart[i])
		j.TimeLimit, j.Limit = c.TimeLimit[i], c.Limit[i]
		j.Hold, j.NumCPUs, j.NumTasks = c.Hold[i], c.NumCPUs[i], c.NumTasks[i]
	}
	return jobs
}

// Live is what the daemon adds to a stored job when it lists it: the
// fields of Job beyond jobrec.Job that squeue reads, and the job's reason
// as the scheduler last gave it. The daemon computes it from the stored
// job in place: copying each large record into a Job cost squeue's list
// more than the rest.
type Live struct {
	Priority      uint32
	Reason        slurm.Reason
	ReasonDetail  string
	StateDesc     string
	ExpectedStart time.Time
	Limit         time.Duration
	ArrayTasks    string
	NumCPUs       int
	NumTasks      int
	DepReason     slurm.Reason
}

// Live is what the daemon added to the job.
func (j *Job) Live() Live {
	return Live{Priority: j.Priority, Reason: j.Reason, ReasonDetail: j.ReasonDetail, StateDesc: j.StateDesc,
		ExpectedStart: j.ExpectedStart, Limit: j.Limit, ArrayTasks: j.ArrayTasks, NumCPUs: j.NumCPUs, NumTasks: j.NumTasks,
		DepReason: j.DepReason}
}

// SetLive sets what the daemon adds to the job.
func (j *Job) SetLive(l Live) {
	j.Priority, j.Reason, j.ReasonDetail, j.StateDesc = l.Priority, l.Reason, l.ReasonDetail, l.StateDesc
	j.ExpectedStart, j.Limit, j.ArrayTasks, j.NumCPUs, j.NumTasks = l.ExpectedStart, l.Limit, l.ArrayTasks, l.NumCPUs, l.NumTasks
	j.DepReason = l.DepReason
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
