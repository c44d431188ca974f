package schedtest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Cycle runs one pass and fails the test if the pass modified its input.
func Cycle(t testing.TB, snap sched.Snapshot) sched.Plan {
	t.Helper()
	before := Clone(snap)
	plan := sched.Cycle(snap)
	if diff := cmp.Diff(before, snap); diff != "" {
		t.Errorf("sched.Cycle modified its input snapshot (-before +after):\n%s", diff)
	}
	return plan
}

// Record is one pass the harness ran.
type Record struct {
	At   time.Time
	Plan sched.Plan
}

// Harness runs scheduling passes on a fixed clock and plays their plans
// out: started jobs run until their time limit (or the runtime a test set),
// preempted and shrunk jobs go back to pending, usage accrues through
// sched.AdvanceUsage. It is the simulator in miniature.
type Harness struct {
	t    testing.TB
	Snap sched.Snapshot
	// Plans are the passes run so far.
	Plans   []Record
	runtime map[uint32]time.Duration
}

// NewHarness starts a harness on a snapshot (which it copies).
func NewHarness(t testing.TB, snap sched.Snapshot) *Harness {
	return &Harness{t: t, Snap: Clone(snap), runtime: map[uint32]time.Duration{}}
}

// Runtime makes job id end after running d, before its time limit.
func (h *Harness) Runtime(id uint32, d time.Duration) { h.runtime[id] = d }

// Cycle runs one pass at the harness's clock, checks the input was left
// alone, records the plan and applies it.
func (h *Harness) Cycle() sched.Plan {
	h.t.Helper()
	plan := Cycle(h.t, h.Snap)
	h.Plans = append(h.Plans, Record{At: h.Snap.Now, Plan: plan})
	for _, s := range plan.Starts {
		j := h.job(s.JobID)
		j.State, j.Start, j.Alloc, j.TimeLimit = slurm.Running, h.Snap.Now, s.Alloc, s.TimeLimit
		j.FixedPriority = 0 // Resumed stays: this run follows a yield (sched.Job.Resumed)
		j.YieldedFor = 0
		h.yieldDone(s.JobID)
	}
	for _, p := range plan.Preempts {
		h.requeue(h.job(p.JobID), p.For)
	}
	for _, s := range plan.Shrinks {
		j := h.job(s.JobID)
		h.requeue(j, s.For)
		j.Req.GPUs = s.ToGPUs
	}
	h.refreshFree()
	return plan
}

// requeue puts a job back to pending as a yield does: same id, same
// submit and eligible time, first in its tier, behind the job it yielded
// for (forID) until that one has started.
func (h *Harness) requeue(j *sched.Job, forID uint32) {
	if j.Eligible.IsZero() {
		j.Eligible = j.Submit
	}
	j.State, j.Start, j.Alloc, j.Resumed, j.YieldedFor = slurm.Pending, time.Time{}, sched.Alloc{}, true, forID
}

// yieldDone clears YieldedFor on the jobs that yielded for job id, which
// has started, as the daemon and the simulator do.
func (h *Harness) yieldDone(id uint32) {
	for i := range h.Snap.Jobs {
		if j := &h.Snap.Jobs[i]; j.YieldedFor == id && j.State != slurm.Running {
			j.YieldedFor = 0
		}
	}
}

// Advance moves the clock by d, ending jobs at their time limit or runtime
// on the way and charging usage for what ran.
func (h *Harness) Advance(d time.Duration) {
	end := h.Snap.Now.Add(d)
	for {
		next := end
		for _, j := range h.Snap.Jobs {
			if e, ok := h.endOf(j); ok && e.Before(next) {
				next = e
			}
		}
		if next.Before(h.Snap.Now) {
			next = h.Snap.Now // a job already past its end stops now
		}
		h.Snap.Usage = sched.AdvanceUsage(h.Snap, next)
		h.Snap.Now = next
		for i := range h.Snap.Jobs {
			j := &h.Snap.Jobs[i]
			if e, ok := h.endOf(*j); ok && !e.After(next) {
				j.State = slurm.Timeout
				if d, ok := h.runtime[j.ID]; ok && (j.TimeLimit <= 0 || d < j.TimeLimit) {
					j.State = slurm.Completed
				}
				j.Alloc = sched.Alloc{}
			}
		}
		h.refreshFree()
		if !next.Before(end) {
			return
		}
	}
}

func (h *Harness) endOf(j sched.Job) (time.Time, bool) {
	if j.State != slurm.Running {
		return time.Time{}, false
	}
	if d, ok := h.runtime[j.ID]; ok && (j.TimeLimit <= 0 || d < j.TimeLimit) {
		return j.Start.Add(d), true
	}
	if j.TimeLimit <= 0 || j.TimeLimit >= sched.Unlimited {
		return time.Time{}, false
	}
	return j.Start.Add(j.TimeLimit), true
}

// refreshFree recomputes each GPU's free memory as the driver would show
// it: total, less foreign memory, less what running jobs' processes hold.
func (h *Harness) refreshFree() {
	for ni := range h.Snap.Nodes {
		n := &h.Snap.Nodes[ni]
		for gi := range n.GPUs {
			g := &n.GPUs[gi]
			g.FreeMem = g.TotalMem - g.ForeignMem
			for _, j := range h.Snap.Jobs {
				for _, a := range j.Alloc.GPUs {
					if a.UUID == g.UUID && j.Alloc.Node == n.Name {
						g.FreeMem -= a.Used
					}
				}
			}
		}
	}
}

// Job returns job id's current state.
func (h *Harness) Job(id uint32) sched.Job { return *h.job(id) }

func (h *Harness) job(id uint32) *sched.Job {
	i := slices.IndexFunc(h.Snap.Jobs, func(j sched.Job) bool { return j.ID == id })
	if i < 0 {
		h.t.Fatalf("no job %d in the harness", id)
	}
	return &h.Snap.Jobs[i]
}

// Submit adds jobs to the queue, submitted now.
func (h *Harness) Submit(jobs ...*JobBuilder) {
	for _, b := range jobs {
		j := b.Build()
		j.Submit = h.Snap.Now
		h.Snap.Jobs = append(h.Snap.Jobs, j)
	}
}

// Started lists the ids of the jobs a plan starts.
func Started(p sched.Plan) []uint32 {
	var ids []uint32
	for _, s := range p.Starts {
		ids = append(ids, s.JobID)
	}
	return ids
}

// Reasons maps each pending job of a plan to its reason word.
func Reasons(p sched.Plan) map[uint32]slurm.Reason {
	m := map[uint32]slurm.Reason{}
	for _, d := range p.Pending {
		m[d.JobID] = d.Reason
	}
	return m
}

// Decision returns the plan's decision for a job, or false.
func Decision(p sched.Plan, id uint32) (sched.Decision, bool) {
	for _, d := range p.Pending {
		if d.JobID == id {
			return d, true
		}
	}
	return sched.Decision{}, false
}
