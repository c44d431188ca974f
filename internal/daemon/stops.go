package daemon

import "sync"

// stopKind is what a stop the daemon asked of a running job's supervisor
// leads to once the supervisor has ended the job (settle).
type stopKind uint8

const (
	// stopOwn is no stop of the daemon's: the job ended by itself, or by
	// a cancel or its time limit, as its supervisor's status tells.
	stopOwn stopKind = iota
	// stopRequeue is scontrol requeue: back to PENDING, same id.
	stopRequeue
	// stopPreempt is a preemption: requeued if it may be, else PREEMPTED.
	stopPreempt
	// stopYield is a yield (scontrol yield, or the scheduler's shrink,
	// regrow or payback): requeued with its new request, its priority
	// and its eligible time (yieldPlan).
	stopYield
	// stopNodeFail is a lost GPU: NODE_FAIL, requeued if it may be.
	stopNodeFail
)

// String is the stop's word in the log.
func (k stopKind) String() string {
	switch k {
	case stopRequeue:
		return "requeue"
	case stopPreempt:
		return "preempt"
	case stopYield:
		return "yield"
	case stopNodeFail:
		return "nodefail"
	}
	return ""
}

// stopIntent is why the daemon is stopping one running job, from the
// request to the supervisor until the job's end is recorded.
type stopIntent struct {
	kind stopKind
	// note says why the stop came, for the requeued run's notes
	// (stopNote); "" for none.
	note string
	// yield is a stopYield's plan; nil where the daemon that planned it
	// is gone (a restart), or once the end has used it.
	yield *yieldPlan
}

// stopIntents owns every stop in progress, with a lock of its own (a
// leaf: nothing is locked under it): one intent per job, so that two stops
// of a job cannot cross (the second is told one is under way).
type stopIntents struct {
	mu sync.Mutex
	// byJob are the stops asked of supervisors whose jobs have not
	// ended yet.
	byJob map[uint32]stopIntent
	// unsettled are the jobs whose ends could not be recorded (a full
	// disk), with what their stop was meant to lead to: each pass tries
	// again (settleAgain).
	unsettled map[uint32]stopIntent
}

// claim makes in job id's stop, unless a stop of it is under way: false
// then, and nothing changes.
func (s *stopIntents) claim(id uint32, in stopIntent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, busy := s.byJob[id]; busy {
		return false
	}
	if s.byJob == nil {
		s.byJob = map[uint32]stopIntent{}
	}
	s.byJob[id] = in
	return true
}

// busy says whether a stop of job id is under way.
func (s *stopIntents) busy(id uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, busy := s.byJob[id]
	return busy
}

// take ends job id's stop and returns it: the zero intent (stopOwn) when
// the daemon asked none.
func (s *stopIntents) take(id uint32) stopIntent {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.byJob[id]
	delete(s.byJob, id)
	return in
}

// keepUnsettled keeps what job id's stop was meant to lead to, its end not
// recorded, for retry. A yield's plan is not kept: the end has used it
// (finishYield, dropYield), and the next try requeues it plainly.
func (s *stopIntents) keepUnsettled(id uint32, in stopIntent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unsettled == nil {
		s.unsettled = map[uint32]stopIntent{}
	}
	in.yield = nil
	s.unsettled[id] = in
}

// retry puts the unsettled stops back under way and returns their jobs,
// for finish to record their ends again.
func (s *stopIntents) retry() []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []uint32
	for id, in := range s.unsettled {
		ids = append(ids, id)
		if in.kind == stopOwn && in.note == "" {
			continue
		}
		if s.byJob == nil {
			s.byJob = map[uint32]stopIntent{}
		}
		s.byJob[id] = in
	}
	s.unsettled = nil
	return ids
}
