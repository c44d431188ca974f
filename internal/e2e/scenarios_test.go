package e2e

import (
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The recorded cluster's users, with this machine's uids where it has them
// (squeue -u resolves names here, as Slurm resolves them on the cluster).
var testUIDs = func() map[string]uint32 {
	ids := map[string]uint32{"root": 0, "alice": 1001, "bob": 1002}
	for name := range ids {
		if u, err := user.Lookup(name); err == nil {
			id, _ := strconv.ParseUint(u.Uid, 10, 32)
			ids[name] = uint32(id)
		}
	}
	return ids
}()

// at is a time of the recording day (2026-11-29), in local time as the
// commands print it.
func at(hms string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", "2026-11-29 "+hms, time.Local)
	if err != nil {
		panic(err)
	}
	return t
}

// jobBuilder makes test jobs the way the recorded cluster had them: user
// root, account lab, partition gpu, QOS normal, one CPU with 1000M per CPU
// (the recording's DefMemPerCPU), requeueable, no time limit.
type jobBuilder struct{ j api.Job }

func newJob(id uint32, name string) *jobBuilder {
	mem := uint64(1000)
	b := &jobBuilder{j: api.Job{Job: jobrec.Job{
		ID: id, ArrayTaskID: jobrec.NoTask, Name: name, User: "root",
		Account: "lab", Partition: "gpu", QOS: "normal",
		State: slurm.Pending, Reason: slurm.ReasonPriority, Requeue: true,
		TimeLimit: slurmsyntax.Infinite,
		Request:   jobscript.Request{JobName: name, NTasks: 1, MemPerCPU: &mem},
	}}}
	b.j.Limit = slurmsyntax.Infinite
	b.j.NumCPUs, b.j.NumTasks = 1, 1
	b.j.Priority = 11000
	b.j.StdIn = "/dev/null"
	return b
}

func (b *jobBuilder) user(name string) *jobBuilder {
	b.j.User, b.j.UID, b.j.GID = name, testUIDs[name], testUIDs[name]
	return b
}

func (b *jobBuilder) dir(d string) *jobBuilder {
	b.j.WorkDir, b.j.SubmitDir = d, d
	return b
}

// files sets StdOut and StdErr to one file.
func (b *jobBuilder) files(path string) *jobBuilder {
	b.j.StdOut, b.j.StdErr = path, path
	return b
}

func (b *jobBuilder) command(c string) *jobBuilder { b.j.Command = c; return b }

func (b *jobBuilder) submitted(t time.Time) *jobBuilder {
	b.j.Submit, b.j.Eligible = t, t
	return b
}

// eligible sets when the job became eligible, where that was not at its
// submission.
func (b *jobBuilder) eligible(t time.Time) *jobBuilder { b.j.Eligible = t; return b }

func (b *jobBuilder) pending(r slurm.Reason) *jobBuilder {
	b.j.State, b.j.Reason = slurm.Pending, r
	return b
}

// running started the job at start on the node, holding CPU cpu.
func (b *jobBuilder) running(start time.Time, cpu int) *jobBuilder {
	b.j.State, b.j.Reason, b.j.Start = slurm.Running, slurm.ReasonNone, start
	b.j.Alloc = jobrec.Alloc{Node: "gpu01", CPUs: []int{cpu}, Mem: 1000 << 20}
	return b
}

// ended finished the job in state st at end.
func (b *jobBuilder) ended(st slurm.JobState, start, end time.Time, cpu int) *jobBuilder {
	b.running(start, cpu)
	b.j.State, b.j.End = st, end
	return b
}

func (b *jobBuilder) gpus(n uint64) *jobBuilder {
	b.j.Request.GPUs = []jobscript.Gres{{Name: "gpu", Count: n}}
	return b
}

func (b *jobBuilder) priority(p uint32) *jobBuilder { b.j.Priority = p; return b }

func (b *jobBuilder) held(h jobrec.Hold) *jobBuilder {
	b.j.Hold, b.j.Priority = h, 0
	b.j.Reason = slurm.ReasonJobHeldUser
	if h == jobrec.HoldAdmin {
		b.j.Reason = slurm.ReasonJobHeldAdmin
	}
	b.j.Eligible = time.Time{}
	return b
}

// arrayRecord makes the job an array's pending record of tasks.
func (b *jobBuilder) arrayRecord(tasks []int, limit int) *jobBuilder {
	b.j.ArrayJobID, b.j.ArrayPending, b.j.ArrayLimit = b.j.ID, tasks, limit
	b.j.ArrayTasks = slurmsyntax.FormatTasks(tasks, limit)
	return b
}

// task makes the job task t of array a.
func (b *jobBuilder) task(a uint32, t int) *jobBuilder {
	b.j.ArrayJobID, b.j.ArrayTaskID = a, t
	return b
}

func (b *jobBuilder) build() api.Job { return b.j }

// asUser makes the jobs of one user the caller's (for --me, recorded as
// "su bob -c"), giving the caller's uid to nobody else.
func asUser(jobs []api.Job, name string) []api.Job {
	if name == "" {
		return jobs
	}
	me := uint32(os.Geteuid())
	for i := range jobs {
		switch {
		case jobs[i].User == name:
			jobs[i].UID = me
		case jobs[i].UID == me:
			jobs[i].UID = 60000 + jobs[i].UID
		}
	}
	return jobs
}

// anchorJobs are the jobs of the first recording (golden squeue_default):
// 25 and 26 running for 9 s, 27-31 pending behind them.
func anchorJobs(now time.Time) []api.Job {
	ran := now.Add(-9*time.Second - 200*time.Millisecond)
	g := "/srv/slurm/work/root/g"
	return []api.Job{
		newJob(25, "bigrun").user("root").dir(g).files(g+"/slurm-25.out").command(g+"/sleep.sh 900").
			submitted(at("08:50:04")).running(ran, 0).gpus(4).build(),
		newJob(26, "cpujob").user("alice").dir("/srv/slurm/work/alice").files("/srv/slurm/work/alice/slurm-26.out").
			submitted(at("08:50:04")).running(ran, 1).build(),
		newJob(27, "alicegpu").user("alice").dir("/srv/slurm/work/alice").files("/srv/slurm/work/alice/slurm-27.out").
			submitted(at("08:50:06")).pending(slurm.ReasonResources).gpus(2).build(),
		newJob(28, "bobgpu").user("bob").dir("/srv/slurm/work/bob").files("/srv/slurm/work/bob/slurm-28.out").
			submitted(at("08:50:06")).pending(slurm.ReasonPriority).gpus(1).build(),
		newJob(29, "afterbig").user("root").dir(g).files(g + "/slurm-29.out").command(g + "/hello.sh").
			submitted(at("08:50:06")).pending(slurm.ReasonDependency).build(),
		newJob(30, "held").user("root").dir(g).files(g + "/slurm-30.out").command(g + "/hello.sh").
			submitted(at("08:50:06")).held(jobrec.HoldUser).build(),
		// An array is eligible from the scheduler's first look at it,
		// two seconds after its submission here (scontrol_show_job_array).
		newJob(31, "arr").user("root").dir(g).files(g+"/slurm-31_4294967294.out").command(g+"/hello.sh").
			submitted(at("08:50:06")).eligible(at("08:50:08")).pending(slurm.ReasonPriority).arrayRecord([]int{0, 1, 2, 3}, 0).gpus(1).build(),
	}
}

func init() {
	scenarios["empty"] = func(now time.Time, opt map[string]string) fakeState {
		return fakeState{}
	}
}
