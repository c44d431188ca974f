package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The sixth recording (job ids around 26300, golden/README.md "Command shapes
// used by workflow tools") printed every job with every squeue field
// (squeue_ood_O_all_fields.txt). Those rows are read back into jobs here, so
// that the other outputs of that moment (the orders of squeue -t all, the
// array records, the running tasks) are checked against the same jobs.

// The columns of squeue_ood_O_all_fields.txt.
const (
	oodAccount   = 0
	oodJobID     = 1
	oodMinCPUs   = 3
	oodCPUs      = 4
	oodShare     = 13
	oodJobArray  = 15
	oodName      = 17
	oodComment   = 19
	oodLimit     = 21
	oodMinMemory = 23
	oodTimeUsed  = 24
	oodNodeList  = 26
	oodCommand   = 27
	oodQOS       = 29
	oodPartition = 30
	oodPriority  = 31
	oodReason    = 32
	oodStart     = 33
	oodState     = 35
	oodUser      = 36
	oodUID       = 37
	oodSubmit    = 39
	oodWCKey     = 40
	oodNice      = 44
	oodWorkDir   = 47
	oodTRES      = 48
)

// g6Jobs reads the jobs of squeue_ood_O_all_fields.txt. Running jobs start
// their recorded time used before now; the others keep their recorded
// times. A job cancelled while pending has no start, only an end.
func g6Jobs(now time.Time) []api.Job {
	data, err := os.ReadFile(filepath.Join(goldenDir, "squeue_ood_O_all_fields.txt"))
	if err != nil {
		panic(err)
	}
	lines := strings.Split(string(data), "\n")
	var jobs []api.Job
	for _, line := range lines[3:] {
		if !strings.Contains(line, "\x1f") {
			break
		}
		jobs = append(jobs, oodJob(strings.Split(line, "\x1f"), now))
	}
	return jobs
}

func oodJob(f []string, now time.Time) api.Job {
	id, _ := strconv.ParseUint(f[oodJobID], 10, 32)
	b := newJob(uint32(id), f[oodName]).user(f[oodUser]).dir(f[oodWorkDir])
	b.j.Account, b.j.QOS, b.j.Partition = f[oodAccount], f[oodQOS], f[oodPartition]
	uid, _ := strconv.ParseUint(f[oodUID], 10, 32)
	b.j.UID = uint32(uid)
	prio, _ := strconv.ParseUint(f[oodPriority], 10, 32)
	b.j.Priority = uint32(prio)
	b.j.Nice, _ = strconv.Atoi(f[oodNice])
	if c := f[oodCommand]; c != "(null)" {
		b.j.Command = c
	}
	if c := f[oodComment]; c != "(null)" {
		b.j.Request.Comment = c
	}
	if w := f[oodWCKey]; w != "(null)" {
		b.j.Request.WCKey = w
	}
	if f[oodShare] == "NO" {
		b.j.Request.Sharing = jobscript.Exclusive
	}
	b.files(fmt.Sprintf("%s/slurm-%d.out", f[oodWorkDir], id))
	b.submitted(oodTime(f[oodSubmit]))

	// Arrays: "A_[2-3%2]" is the pending record, "A_T" a task.
	if a, rest, ok := strings.Cut(f[oodJobArray], "_"); ok {
		arrayID, _ := strconv.ParseUint(a, 10, 32)
		if inner, ok := strings.CutPrefix(rest, "["); ok {
			spec := strings.TrimSuffix(inner, "]")
			arr, err := slurmsyntax.ParseArray(spec, slurmsyntax.DefaultMaxArraySize)
			if err != nil {
				panic(err)
			}
			b.arrayRecord(arr.Tasks, arr.Limit)
		} else {
			t, _ := strconv.Atoi(rest)
			b.task(uint32(arrayID), t)
		}
	}

	// Resources: CPUs per task from MinCPUs; memory per CPU when it is the
	// recording's default (1000M), per node when given.
	cpus, _ := strconv.Atoi(f[oodCPUs])
	perTask, _ := strconv.Atoi(f[oodMinCPUs])
	b.j.Request.CPUsPerTask = perTask
	b.j.Request.NTasks = max(1, cpus/max(1, perTask))
	b.j.NumCPUs, b.j.NumTasks = cpus, b.j.Request.NTasks
	mem, _ := slurmsyntax.ParseSize(f[oodMinMemory], slurmsyntax.MiB)
	mib := uint64(mem / slurmsyntax.MiB)
	if mib == 1000 {
		b.j.Request.MemPerCPU, b.j.Request.MemPerNode = &mib, nil
	} else {
		b.j.Request.MemPerCPU, b.j.Request.MemPerNode = nil, &mib
	}
	if l := f[oodLimit]; l != "UNLIMITED" {
		d, err := slurmsyntax.ParseSeconds(l)
		if err != nil {
			panic(err)
		}
		b.j.TimeLimit, b.j.Limit = d, d
		b.j.Request.TimeLimit = jobscript.Limit(d)
	}

	st, _ := slurm.ParseJobState(f[oodState])
	start := oodTime(f[oodStart])
	switch {
	case st == slurm.Pending:
		b.pending(slurm.Reason(f[oodReason]))
	case st == slurm.Running:
		used, _ := slurmsyntax.ParseSeconds(f[oodTimeUsed])
		b.running(now.Add(-used-200*time.Millisecond), 0)
	case f[oodNodeList] == "":
		// Cancelled while pending: it ended, it never started.
		b.j.State, b.j.End, b.j.Reason = st, start, slurm.Reason(f[oodReason])
	default:
		used, _ := slurmsyntax.ParseSeconds(f[oodTimeUsed])
		b.ended(st, start, start.Add(used), 0)
		b.j.Reason = slurm.Reason(f[oodReason])
	}
	if started(&b.j) {
		b.j.Alloc.CPUs = make([]int, cpus)
		for i := range b.j.Alloc.CPUs {
			b.j.Alloc.CPUs[i] = i
		}
		b.j.Alloc.Mem = int64(tresCount(f[oodTRES], "mem")) << 20
		for i := range tresCount(f[oodTRES], "gres/gpu") {
			b.j.Alloc.GPUs = append(b.j.Alloc.GPUs, jobrec.GPUAlloc{Index: i, UUID: fmt.Sprint("GPU-", i)})
		}
	}
	if st == slurm.Cancelled {
		zero := uint32(0)
		b.j.CancelledBy = &zero
	}
	return b.build()
}

func started(j *api.Job) bool { return !j.Start.IsZero() && j.State != slurm.Pending }

// tresCount reads one TRES of "cpu=1,mem=1000M,...", memory in MiB.
func tresCount(tres, name string) int {
	for _, kv := range strings.Split(tres, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k != name {
			continue
		}
		if name == "mem" {
			b, _ := slurmsyntax.ParseSize(v, slurmsyntax.MiB)
			return int(b / slurmsyntax.MiB)
		}
		n, _ := strconv.Atoi(v)
		return n
	}
	return 0
}

func oodTime(s string) time.Time {
	if s == "N/A" || s == "" {
		return time.Time{}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
	if err != nil {
		panic(err)
	}
	return t
}

// g6Later moves the array 26383 on from the recorded moment:
// cancel0 cancels task 0 (tasks 1 and 2 run, 2 with the array's id), done
// also ends tasks 1 and 2.
func g6Later(jobs []api.Job, now time.Time, moment string) []api.Job {
	if moment == "" {
		return jobs
	}
	var out []api.Job
	for _, j := range jobs {
		switch j.ID {
		case 26383: // the record becomes task 2 when it starts
			j.ArrayPending, j.ArrayLimit, j.ArrayTasks, j.ArrayTaskID = nil, 0, "", 2
			j.State, j.Reason, j.Start = slurm.Running, slurm.ReasonNone, now.Add(-time.Second)
			j.Alloc = jobrec.Alloc{Node: "gpu01", CPUs: []int{2}, Mem: 1000 << 20}
		case 26384:
			j.State, j.End = slurm.Cancelled, now.Add(-2*time.Second)
		}
		if moment == "done" && (j.ID == 26383 || j.ID == 26385) {
			j.State, j.End = slurm.Completed, now
		}
		out = append(out, j)
	}
	return out
}

// g6Details adds what squeue did not show of the jobs scontrol printed at
// that moment: their output files, CPUs and array throttle.
func g6Details(jobs []api.Job) []api.Job {
	g := "/srv/slurm/work/root/g6/"
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.ID == 26382:
			j.StdOut, j.StdErr = g+"long-26382.out", g+"long-26382.out"
		case j.ArrayJobID == 26383:
			j.Request.Array = &jobscript.Array{Spec: "0-3%2", Tasks: []int{0, 1, 2, 3}, Limit: 2}
			// Eligible at the scheduler's first look at the array, a
			// second after its submission (scontrol_show_jobid_dd_*).
			j.Eligible = j.Submit.Add(time.Second)
			out := fmt.Sprintf("%sarr-26383_%d.out", g, j.ArrayTaskID)
			j.StdOut, j.StdErr = out, out
			if j.ID == 26384 || j.ID == 26385 {
				j.Alloc.CPUs = []int{int(j.ID - 26383)}
			}
		}
	}
	return jobs
}

// g6Sigjob is job 26404 (sigjob) running, as the scancel --signal
// recordings found it.
func g6Sigjob(now time.Time) api.Job {
	g := "/srv/slurm/work/root/g6"
	return newJob(26404, "sigjob").user("root").dir(g).files(g+"/slurm-26404.out").command(g+"/sigjob.sh").
		submitted(oodTime("2026-11-29T09:58:07")).running(now.Add(-3*time.Second), 3).priority(3500).build()
}

func init() {
	scenarios["g6"] = func(now time.Time, opt map[string]string) fakeState {
		jobs := g6Details(g6Later(g6Jobs(now), now, opt["moment"]))
		if opt["sigjob"] == "1" {
			jobs = append(jobs, g6Sigjob(now))
		}
		return fakeState{jobs: jobs}
	}
}
