package sched

import (
	"fmt"
	"math"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// depResult is where a job's dependencies stand.
type depResult int

const (
	depMet depResult = iota
	depWaiting
	// depNever: a dependency can no longer be met (afterok on a job that
	// failed, afternotok on one that completed).
	depNever
)

type singleKey struct{ user, name string }

type singleState struct {
	running    bool
	minPending uint32
}

// depIndex holds, for the jobs some dependency names, where they are in the
// snapshot, and for singleton dependencies, who else runs under the name.
// It is built from one scan of the jobs and only keeps what is referenced,
// so finished jobs cost no allocation.
type depIndex struct {
	byID      map[uint32][]int
	singleton map[singleKey]singleState
}

func (p *pass) buildDepIndex() {
	jobs := p.snap.Jobs
	refs := map[uint32]bool{}
	singles := map[singleKey]singleState{}
	for i := range jobs {
		j := &jobs[i]
		if !isPending(j.State) {
			continue
		}
		for _, d := range j.Deps.Items {
			if d.Type == DepSingleton {
				singles[singleKey{j.User, j.Name}] = singleState{minPending: math.MaxUint32}
			} else {
				refs[d.JobID] = true
			}
		}
	}
	if len(refs) == 0 && len(singles) == 0 {
		return
	}
	p.deps.byID = map[uint32][]int{}
	p.deps.singleton = singles
	for i := range jobs {
		j := &jobs[i]
		if refs[j.ID] {
			p.deps.byID[j.ID] = append(p.deps.byID[j.ID], i)
		}
		if j.ArrayJobID != 0 && j.ArrayJobID != j.ID && refs[j.ArrayJobID] {
			p.deps.byID[j.ArrayJobID] = append(p.deps.byID[j.ArrayJobID], i)
		}
		if len(singles) > 0 && !j.State.Finished() {
			k := singleKey{j.User, j.Name}
			if s, ok := singles[k]; ok {
				if isPending(j.State) {
					s.minPending = min(s.minPending, j.ID)
				} else {
					s.running = true
				}
				singles[k] = s
			}
		}
	}
}

// depState evaluates a job's dependencies as Slurm's test_job_dependency
// does: after waits for the other job to leave PENDING, afterany for it to
// end, afterok for it to complete (anything else can never satisfy it),
// afternotok for it to end other than COMPLETED; singleton for the user's
// other jobs of the same name to end; a job that no longer exists satisfies
// the dependency. With ',' every item must hold and one failure fails all;
// with '?' one satisfied item suffices.
func (p *pass) depState(j *Job) (depResult, string) {
	var waiting, never string
	nWait, nNever, nMet := 0, 0, 0
	for _, d := range j.Deps.Items {
		r, why := p.depItem(j, d)
		switch r {
		case depMet:
			nMet++
		case depWaiting:
			nWait++
			if waiting == "" {
				waiting = why
			}
		case depNever:
			nNever++
			if never == "" {
				never = why
			}
		}
	}
	if j.Deps.Any {
		switch {
		case nMet > 0:
			return depMet, ""
		case nWait == 0 && nNever > 0:
			return depNever, never
		case nWait > 0:
			return depWaiting, waiting
		}
		return depMet, ""
	}
	switch {
	case nNever > 0:
		return depNever, never
	case nWait > 0:
		return depWaiting, waiting
	}
	return depMet, ""
}

func (p *pass) depItem(j *Job, d DepItem) (depResult, string) {
	if d.Type == DepSingleton {
		s := p.deps.singleton[singleKey{j.User, j.Name}]
		if s.running || s.minPending < j.ID {
			return depWaiting, fmt.Sprintf("singleton: another job named %q of user %s is queued or running", j.Name, j.User)
		}
		return depMet, ""
	}
	complete, finished, pending, state, found := p.depTarget(d)
	if !found {
		return depMet, "" // the job is gone: Slurm lifts the dependency
	}
	ref := depName(d)
	switch d.Type {
	case DepAfter:
		if pending {
			return depWaiting, fmt.Sprintf("waits for job %s to start", ref)
		}
		// after:ID+MIN: MIN minutes after the job started. One that
		// ended without starting (cancelled while pending) has no start
		// to count from and satisfies the item at once.
		if start := p.depStart(d); d.Delay > 0 && !start.IsZero() && p.snap.Now.Before(start.Add(d.Delay)) {
			return depWaiting, fmt.Sprintf("waits until %s after job %s started", slurmMinutes(d.Delay), ref)
		}
		return depMet, ""
	case DepAfterAny:
		if finished {
			return depMet, ""
		}
		return depWaiting, fmt.Sprintf("waits for job %s to end", ref)
	case DepAfterOK:
		switch {
		case !finished:
			return depWaiting, fmt.Sprintf("waits for job %s to complete", ref)
		case complete:
			return depMet, ""
		}
		return depNever, fmt.Sprintf("afterok:%s can never be met: the job ended %s", ref, state)
	case DepAfterNotOK:
		switch {
		case !finished:
			return depWaiting, fmt.Sprintf("waits for job %s to fail", ref)
		case !complete:
			return depMet, ""
		}
		return depNever, fmt.Sprintf("afternotok:%s can never be met: the job completed", ref)
	}
	return depMet, ""
}

// depStart is when the job an item names started: for a whole array, when
// its last task did; zero when none of them started.
func (p *pass) depStart(d DepItem) time.Time {
	var last time.Time
	for _, i := range p.deps.byID[d.JobID] {
		t := &p.snap.Jobs[i]
		if d.Task >= 0 && (t.ArrayTaskID != d.Task || t.ID != d.JobID && t.ArrayJobID != d.JobID) {
			continue
		}
		if t.Start.After(last) {
			last = t.Start
		}
	}
	return last
}

// slurmMinutes prints a delay as the minutes it was given in.
func slurmMinutes(d time.Duration) string {
	m := int64(d / time.Minute)
	if m == 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", m)
}

func depName(d DepItem) string {
	if d.Task >= 0 {
		return fmt.Sprintf("%d_%d", d.JobID, d.Task)
	}
	return fmt.Sprint(d.JobID)
}

// depTarget finds the job (or array task, or whole array) an item names
// and reports whether it completed, ended, or is still pending; for a whole
// array: all tasks completed, all ended, any pending.
func (p *pass) depTarget(d DepItem) (complete, finished, pending bool, state slurm.JobState, found bool) {
	idx := p.deps.byID[d.JobID]
	array := false
	for _, i := range idx {
		if p.snap.Jobs[i].ArrayJobID == d.JobID {
			array = true
		}
	}
	complete, finished = true, true
	for _, i := range idx {
		t := &p.snap.Jobs[i]
		switch {
		case d.Task >= 0:
			if t.ArrayJobID != d.JobID && t.ID != d.JobID || t.ArrayTaskID != d.Task {
				continue
			}
		case array:
			if t.ArrayJobID != d.JobID {
				continue
			}
		default:
			if t.ID != d.JobID {
				continue
			}
		}
		found = true
		if t.State != slurm.Completed {
			complete = false
			if state == "" || t.State.Finished() {
				state = t.State
			}
		}
		if !t.State.Finished() {
			finished = false
		}
		if isPending(t.State) {
			pending = true
		}
	}
	return complete, finished, pending, state, found
}
