package gpu

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// JobSample is what one sample saw of one running job.
type JobSample struct {
	// Memory is what the job's processes hold on each GPU, by UUID,
	// including GPUs it was not given.
	Memory map[string]uint64
	PIDs   []int // its processes seen on GPUs, sorted
	// Utilization is the mean over its GPUs of the SM utilization of its
	// processes (or, where NVML gives none per process, of the GPU), in
	// percent; -1 when unknown.
	Utilization float64
}

// Peak is the most memory the job holds on one GPU.
func (s JobSample) Peak() uint64 {
	var p uint64
	for _, m := range s.Memory {
		p = max(p, m)
	}
	return p
}

// Total is the memory the job holds over all GPUs.
func (s JobSample) Total() uint64 {
	var t uint64
	for _, m := range s.Memory {
		t += m
	}
	return t
}

// Usage accumulates a job's samples over its life: peak GPU memory and
// mean utilization, for accounting. It is a value; Add returns the new one,
// so the daemon can keep and store it as it likes.
type Usage struct {
	Samples     int
	PeakMemory  uint64  // most memory held on one GPU in any sample
	PeakTotal   uint64  // most memory held over all its GPUs in any sample
	UtilSamples int     // samples whose utilization was known
	UtilSum     float64 // sum of those utilizations, percent
}

// Add returns u with s counted.
func (u Usage) Add(s JobSample) Usage {
	u.Samples++
	u.PeakMemory = max(u.PeakMemory, s.Peak())
	u.PeakTotal = max(u.PeakTotal, s.Total())
	if s.Utilization >= 0 {
		u.UtilSamples++
		u.UtilSum += s.Utilization
	}
	return u
}

// MeanUtilization is the mean GPU utilization in percent; ok is false when
// no sample knew it.
func (u Usage) MeanUtilization() (mean float64, ok bool) {
	if u.UtilSamples == 0 {
		return 0, false
	}
	return u.UtilSum / float64(u.UtilSamples), true
}

// Note tells the job's owner when the peak memory on a GPU stayed far
// below what the job asked for per GPU (under a quarter of it): asking for
// less lets more jobs share. "" when there is nothing to say. For a job
// that asked for whole GPUs, pass the GPU's memory.
func (u Usage) Note(askedPerGPU uint64) string {
	// Begins with LowMemoryNote: the daemon tells GPU_MEM_LOW by it.
	if u.Samples == 0 || askedPerGPU == 0 || u.PeakMemory*4 >= askedPerGPU {
		return ""
	}
	return fmt.Sprintf(LowMemoryNote+"%s of %s asked per GPU", formatSize(u.PeakMemory), formatSize(askedPerGPU))
}

// LowMemoryNote begins Usage.Note's note.
const LowMemoryNote = "peak GPU memory "

// Release answers "is it released?" for a job that ended or was yielded.
type Release struct {
	// Released: none of the job's processes is on any GPU, and each of
	// its GPUs has its memory back: they may be offered again.
	Released bool
	// Survivors are the job's processes still on a GPU; the daemon kills
	// them.
	Survivors []int
	// Pending are the job's GPUs (UUIDs) not back yet, within the bound.
	Pending []string
	// Drained are the job's GPUs that did not come back within
	// Options.ReleaseTimeout (or are lost): drained, never offered again
	// until resumed.
	Drained []string
}

// Done reports whether there is nothing left to wait for: every GPU is
// either back or drained.
func (r Release) Done() bool { return len(r.Pending) == 0 }

// ViolationKind names a way a job broke its word.
type ViolationKind string

const (
	// OverMemory: more GPU memory than it asked for, on a GPU it shares.
	OverMemory ViolationKind = "over-memory"
	// WrongGPU: processes on a GPU it was not given.
	WrongGPU ViolationKind = "wrong-gpu"
)

// Violation is a running job that broke its word on one GPU. The daemon
// applies the configured policy (warn, yield, kill).
type Violation struct {
	JobID  string
	Kind   ViolationKind
	GPU    string // UUID
	Index  int
	PIDs   []int
	Memory uint64 // what the job holds on that GPU
	Asked  uint64 // what it asked for per GPU (OverMemory)
	Text   string
}

// holding is what one job's processes hold on one GPU.
type holding struct {
	mem  uint64
	pids []int
	util int // sum of its processes' SM utilization; -1 unknown
}

// attribute says whose each process is: the job whose PIDs include it
// (the caller knows its process trees), else the job named by SLURM_JOB_ID
// in its environment or its cgroup (processes the caller does not know
// yet, e.g. after a daemon restart), provided that job is one of the jobs
// given and, when the job's user is known, the process is that user's.
// Anything else is foreign. /proc answers are kept for as long as the PID
// stays on a GPU.
func (inv *Inventory) attribute(devs []deviceReading, jobs []Job) [][]procInfo {
	byPID := map[int]string{}
	byID := map[string]Job{}
	for _, j := range jobs {
		byID[j.ID] = j
		for _, p := range j.PIDs {
			byPID[p] = j.ID
		}
	}
	seen := map[int]procInfo{}
	out := make([][]procInfo, len(devs))
	for i, d := range devs {
		out[i] = make([]procInfo, len(d.procs))
		for k, p := range d.procs {
			info, ok := seen[p.pid]
			if !ok {
				if info, ok = inv.procs[p.pid]; !ok && p.pid > 0 {
					info.user, _ = inv.opts.Procs.User(p.pid)
					info.job, _ = inv.opts.Procs.JobID(p.pid)
				}
				seen[p.pid] = info
			}
			job := p.job
			if job == "" {
				job = byPID[p.pid]
			}
			if j, ok := byID[info.job]; job == "" && ok && (j.User == "" || j.User == info.user) {
				job = j.ID
			}
			user := info.user
			if p.pid <= 0 && job != "" {
				// A simulated GPU's stand-in for a job whose PIDs the
				// caller did not give: no process to ask, but the job's.
				user = byID[job].User
			}
			out[i][k] = procInfo{user: user, job: job}
		}
	}
	inv.procs = seen
	return out
}

// judge looks at each job against the rows: usage and violations of
// running jobs, release of ended ones.
func (inv *Inventory) judge(now time.Time, jobs []Job, rows []*row, byUUID map[string]*row) (map[string]JobSample, map[string]Release, []Violation) {
	held := map[string]map[string]*holding{} // job -> GPU -> holding
	present := map[string]map[string]bool{}  // GPU -> jobs present or given it
	for _, j := range jobs {
		for _, u := range j.GPUs {
			addTo(present, u, j.ID)
		}
	}
	for _, r := range rows {
		for _, p := range r.Processes {
			if p.JobID == "" {
				continue
			}
			addTo(present, r.UUID, p.JobID)
			if held[p.JobID] == nil {
				held[p.JobID] = map[string]*holding{}
			}
			h := held[p.JobID][r.UUID]
			if h == nil {
				h = &holding{util: -1}
				held[p.JobID][r.UUID] = h
			}
			h.mem += p.Memory
			h.pids = append(h.pids, p.PID)
			if p.Utilization >= 0 {
				h.util = max(h.util, 0) + p.Utilization
			}
		}
	}

	samples := map[string]JobSample{}
	releases := map[string]Release{}
	var violations []Violation
	for _, j := range jobs {
		mine := held[j.ID]
		if !j.running() {
			releases[j.ID] = inv.release(now, j, mine, byUUID)
			continue
		}
		samples[j.ID] = sampleJob(j, mine, byUUID)
		for _, u := range slices.Sorted(maps.Keys(mine)) {
			h, r := mine[u], byUUID[u]
			v := Violation{JobID: j.ID, GPU: u, Index: r.Index, PIDs: slices.Sorted(slices.Values(h.pids)), Memory: h.mem}
			switch {
			case !slices.Contains(j.GPUs, u):
				v.Kind = WrongGPU
				v.Text = fmt.Sprintf("job %s has processes on GPU %d (%s), which it was not given: pids %s",
					j.ID, r.Index, u, joinInts(v.PIDs))
			case j.MemPerGPU > 0 && h.mem > j.MemPerGPU && len(present[u]) > 1:
				others := slices.Sorted(maps.Keys(present[u]))
				others = slices.DeleteFunc(others, func(id string) bool { return id == j.ID })
				v.Kind, v.Asked = OverMemory, j.MemPerGPU
				v.Text = fmt.Sprintf("job %s holds %s on GPU %d, over the %s it asked for, while sharing it with job %s",
					j.ID, formatSize(h.mem), r.Index, formatSize(j.MemPerGPU), strings.Join(others, ", "))
			default:
				continue
			}
			violations = append(violations, v)
		}
	}
	return samples, releases, violations
}

func addTo(m map[string]map[string]bool, k, v string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][v] = true
}

// sampleJob sums up a running job's holdings. Its utilization counts the
// GPUs it was given: its own processes' SM utilization where NVML reports
// it per process, else the GPU's (exact when it has the GPU to itself).
func sampleJob(j Job, mine map[string]*holding, byUUID map[string]*row) JobSample {
	s := JobSample{Memory: map[string]uint64{}, Utilization: -1}
	for u, h := range mine {
		s.Memory[u] = h.mem
		s.PIDs = append(s.PIDs, h.pids...)
	}
	slices.Sort(s.PIDs)
	s.PIDs = slices.Compact(s.PIDs)
	var sum, n int
	for _, u := range j.GPUs {
		r := byUUID[u]
		if r == nil || r.gone {
			continue
		}
		util := r.Utilization
		if h := mine[u]; h != nil && h.util >= 0 {
			util = min(h.util, 100)
		}
		if util >= 0 {
			sum += util
			n++
		}
	}
	if n > 0 {
		s.Utilization = float64(sum) / float64(n)
	}
	return s
}

// release checks an ended job's GPUs: each is back when none of the job's
// processes is on it and its memory came back; one that is not back
// ReleaseTimeout after the job ended is drained.
func (inv *Inventory) release(now time.Time, j Job, mine map[string]*holding, byUUID map[string]*row) Release {
	var rel Release
	for _, h := range mine {
		rel.Survivors = append(rel.Survivors, h.pids...)
	}
	slices.Sort(rel.Survivors)
	rel.Survivors = slices.Compact(rel.Survivors)
	for _, u := range j.GPUs {
		r := byUUID[u]
		switch {
		case r == nil || r.gone:
			rel.Drained = append(rel.Drained, u)
		case mine[u] == nil && memoryBack(r, inv.opts.ReleaseSlack):
		case now.Sub(j.Ended) >= inv.opts.ReleaseTimeout:
			inv.drain(u, fmt.Sprintf("memory of job %s not released after %s", j.ID, inv.opts.ReleaseTimeout))
			rel.Drained = append(rel.Drained, u)
		default:
			rel.Pending = append(rel.Pending, u)
		}
	}
	rel.Released = len(rel.Survivors) == 0 && len(rel.Pending) == 0 && len(rel.Drained) == 0
	return rel
}

// memoryBack reports whether a GPU's memory came back: what NVML counts as
// used beyond what the listed processes hold is no more than the GPU
// showed when idle, plus slack. When NVML does not say what each process
// holds, the processes being gone is all there is to go by.
func memoryBack(r *row, slack uint64) bool {
	if !r.procsKnown || r.procMemUnknown || !r.haveBaseline {
		return true
	}
	return r.unattributed <= r.baseline+slack
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
