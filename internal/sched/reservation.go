package sched

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// This file is advance reservations (Slurm's scontrol create reservation,
// https://slurm.schedmd.com/reservations.html): GPUs set aside over a
// window for some users or accounts.
//
// In the pass a reservation is an input like a running job: its GPUs (and,
// for a whole node, its CPUs and memory) are taken off the timeline over
// each of its windows, so jobs outside it never get them there, and a job
// whose time limit would cross into a window cannot be placed on them
// before it either (backfill counts the reservation as taken from its
// start). A job that names the reservation is searched with the
// reservation's hold given back and every other GPU of the node taken, and
// only inside the window (unless Flags=FLEX): it uses only the
// reservation's GPUs, and ends by the window's end.
//
// Which GPUs: those running jobs of the reservation hold, then those idle
// at its start, then the lowest indices; fixed for the pass.

// Reservation is one advance reservation.
type Reservation struct {
	Name string
	// Start and End are the first window as created; recurring ones move
	// on by their period (Window).
	Start, End time.Time
	// Users may use it; with ExcludeUsers, everyone but them (Users=-bob).
	Users        []string
	ExcludeUsers bool
	// Accounts may use it. With both Users and Accounts, a job must match
	// both.
	Accounts []string
	// Partition is the partition its jobs run in; "" for the job's own.
	Partition string
	// Node is the node it holds GPUs on; "" for the first node.
	Node string
	// GPUs it holds (TRES=gres/gpu=N); 0 holds the whole node (Nodes=).
	GPUs    int
	GPUType string
	Flags   ResvFlags
}

// ResvFlags are a reservation's Flags that change scheduling.
type ResvFlags struct {
	// Maint: jobs it holds back wait with "Reserved for maintenance".
	Maint bool
	// IgnoreJobs: created over running jobs' time (checked at creation).
	IgnoreJobs bool
	// Recurrence: at most one of them.
	Daily, Weekday, Weekend, Weekly bool
	// Flex: its jobs may start before it, end after it and use GPUs
	// outside it.
	Flex bool
	// Magnetic: a job that may use it runs in it without naming it.
	Magnetic bool
	// PurgeComp: deleted once idle this long while active (the daemon).
	PurgeComp time.Duration
}

// Recurring reports whether the reservation repeats.
func (r *Reservation) Recurring() bool {
	f := r.Flags
	return f.Daily || f.Weekday || f.Weekend || f.Weekly
}

// next moves a window on by one period: a day (DAILY, and WEEKDAY/WEEKEND
// skipping the other days), or a week. Days are calendar days in the
// times' location, as slurmctld adds them to local time.
func (r *Reservation) next(start, end time.Time) (time.Time, time.Time) {
	if r.Flags.Weekly {
		return start.AddDate(0, 0, 7), end.AddDate(0, 0, 7)
	}
	for {
		start, end = start.AddDate(0, 0, 1), end.AddDate(0, 0, 1)
		wd := start.Weekday()
		weekend := wd == time.Saturday || wd == time.Sunday
		switch {
		case r.Flags.Weekday && weekend, r.Flags.Weekend && !weekend:
			continue
		}
		return start, end
	}
}

// Window is the reservation's window in force at now or next after it: a
// recurring reservation whose window ended has moved on (as slurmctld
// moves it when it ends). ok is false when it ended and does not recur.
func (r *Reservation) Window(now time.Time) (start, end time.Time, ok bool) {
	start, end = r.Start, r.End
	if !end.After(start) {
		return start, end, false
	}
	for !end.After(now) {
		if !r.Recurring() {
			return start, end, false
		}
		start, end = r.next(start, end)
	}
	return start, end, true
}

// Active reports whether now is inside a window.
func (r *Reservation) Active(now time.Time) bool {
	s, _, ok := r.Window(now)
	return ok && !s.After(now)
}

// windows lists the windows that end after now and start before until,
// at most maxResvWindows of them.
func (r *Reservation) windows(now, until time.Time) [][2]int64 {
	s, e, ok := r.Window(now)
	var out [][2]int64
	for ok && s.Before(until) && len(out) < maxResvWindows {
		out = append(out, [2]int64{s.Unix(), e.Unix()})
		if !r.Recurring() {
			break
		}
		s, e = r.next(s, e)
	}
	return out
}

// maxResvWindows bounds how many windows of a recurring reservation the
// plan holds: two weeks of a daily one.
const maxResvWindows = 15

// resvHorizon is how far ahead the plan holds recurring windows: beyond
// bf_window, since a long job started now may run into tomorrow's.
const resvHorizon = 14 * 24 * time.Hour

// Allows reports whether a job of user and account may use the
// reservation (Slurm's _valid_job_access_resv).
func (r *Reservation) Allows(user, account string) bool {
	if len(r.Users) == 0 && len(r.Accounts) == 0 {
		return false
	}
	if len(r.Users) > 0 && slices.Contains(r.Users, user) == r.ExcludeUsers {
		return false
	}
	if len(r.Accounts) > 0 && !slices.Contains(r.Accounts, account) {
		return false
	}
	return true
}

// resv is a reservation as the pass placed it.
type resv struct {
	r    *Reservation
	node int
	// slots are the GPU slots it holds; hold the deltas that take them
	// (and for a whole node its CPUs and memory) away.
	slots   []int
	hold    []colDelta
	windows [][2]int64
}

// buildReservations places each reservation and takes its hold off the
// timeline over its windows. Called once running jobs are on it.
func (p *pass) buildReservations() {
	until := p.snap.Now.Add(resvHorizon)
	for i := range p.snap.Reservations {
		r := &p.snap.Reservations[i]
		ws := r.windows(p.snap.Now, until)
		if len(ws) == 0 {
			continue
		}
		n := 0
		if r.Node != "" {
			var ok bool
			if n, ok = p.nodeIdx[r.Node]; !ok {
				continue
			}
		}
		if n >= len(p.snap.Nodes) {
			continue
		}
		rv := resv{r: r, node: n, windows: ws}
		rv.slots = p.resvSlots(r, n, ws[0][0])
		for _, s := range rv.slots {
			rv.hold = append(rv.hold, colDelta{busyCol(p.slots[s].local), -excl})
		}
		if r.GPUs == 0 {
			node := &p.snap.Nodes[n]
			rv.hold = append(rv.hold, colDelta{p.cpuCol(n), -int64(node.CPUs)}, colDelta{p.hmemCol(n), -node.Mem})
		}
		for _, w := range ws {
			p.add(n, w[0], w[1], rv.hold)
		}
		p.resvs = append(p.resvs, rv)
	}
}

// resvSlots picks the reservation's GPUs on node n: of the requested type,
// those its running jobs hold first, then those idle at its start, then by
// index.
func (p *pass) resvSlots(r *Reservation, n int, start int64) []int {
	held := map[int]bool{}
	for i := range p.running {
		ri := &p.running[i]
		if ri.job.Reservation != r.Name || ri.node != n {
			continue
		}
		for _, g := range ri.job.Alloc.GPUs {
			if s, ok := p.slotUUID[g.UUID]; ok {
				held[s] = true
			}
		}
	}
	tl := p.tls[n]
	row := tl.row(tl.rowAt(start))
	rank := func(s int) int {
		switch {
		case held[s]:
			return 0
		case row[busyCol(p.slots[s].local)] == 0:
			return 1
		}
		return 2
	}
	var cand []int
	for _, s := range p.nodeSlots[n] {
		if typeMatches(p.slots[s].gpu.Type, r.GPUType) {
			cand = append(cand, s)
		}
	}
	slices.SortStableFunc(cand, func(a, b int) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(p.slots[a].gpu.Index, p.slots[b].gpu.Index))
	})
	if r.GPUs > 0 && r.GPUs < len(cand) {
		cand = cand[:r.GPUs]
	}
	return cand
}

// resvOf finds the placed reservation a job names; nil when none is.
func (p *pass) resvOf(name string) *resv {
	for i := range p.resvs {
		if p.resvs[i].r.Name == name {
			return &p.resvs[i]
		}
	}
	return nil
}

// enter turns the timeline into what a job of rv sees (sign 1) or back
// (-1): the reservation's hold given back over its windows, and unless
// FLEX, every other GPU of the node taken, and its own GPUs outside its
// windows, so that the job fits only inside.
func (p *pass) enter(rv *resv, sign int64) {
	for _, w := range rv.windows {
		p.add(rv.node, w[0], w[1], scaled(rv.hold, -sign))
	}
	if rv.r.Flags.Flex {
		return
	}
	var other, own []colDelta
	mine := map[int]bool{}
	for _, s := range rv.slots {
		mine[s] = true
		own = append(own, colDelta{busyCol(p.slots[s].local), -excl * sign})
	}
	for _, s := range p.nodeSlots[rv.node] {
		if !mine[s] {
			other = append(other, colDelta{busyCol(p.slots[s].local), -excl * sign})
		}
	}
	p.add(rv.node, p.now, forever, other)
	// Its own GPUs are only its own inside the windows.
	at := p.now
	for _, w := range rv.windows {
		p.add(rv.node, at, w[0], own)
		at = w[1]
	}
	p.add(rv.node, at, forever, own)
	for n := range p.snap.Nodes {
		if n != rv.node {
			p.add(n, p.now, forever, p.allOf(n, sign))
		}
	}
}

// allOf takes (sign 1) or gives back every GPU and CPU of node n.
func (p *pass) allOf(n int, sign int64) []colDelta {
	var d []colDelta
	for _, s := range p.nodeSlots[n] {
		d = append(d, colDelta{busyCol(p.slots[s].local), -excl * sign})
	}
	return append(d, colDelta{p.cpuCol(n), -int64(p.snap.Nodes[n].CPUs) * sign})
}

func scaled(ds []colDelta, by int64) []colDelta {
	out := make([]colDelta, len(ds))
	for i, d := range ds {
		out[i] = colDelta{d.col, d.delta * by}
	}
	return out
}

// heldBackByResv reports whether reservations alone keep a job from
// starting now, and whether one of them is MAINT: with their holds given
// back it would fit now.
func (p *pass) heldBackByResv(sh *shape) (held, maint bool) {
	var hit []*resv
	for i := range p.resvs {
		rv := &p.resvs[i]
		if rv.windows[0][0] < satAdd(p.now, sh.key.length) {
			hit = append(hit, rv)
		}
	}
	if len(hit) == 0 {
		return false, false
	}
	// Its GPUs, and what its own running jobs hold, as if it were not
	// there: slurmctld words it so whoever holds the reserved GPUs now.
	var inside []*runInfo
	for i := range p.running {
		ri := &p.running[i]
		if ri.node >= 0 && ri.job.Reservation != "" && slices.ContainsFunc(hit, func(rv *resv) bool { return rv.r.Name == ri.job.Reservation }) {
			inside = append(inside, ri)
		}
	}
	for _, rv := range hit {
		p.add(rv.node, rv.windows[0][0], rv.windows[0][1], scaled(rv.hold, -1))
	}
	for _, ri := range inside {
		p.add(ri.node, p.now, ri.end, ri.rel.deltas)
	}
	res := p.earliest(sh, p.now)
	for _, ri := range inside {
		p.add(ri.node, p.now, ri.end, scaled(ri.rel.deltas, -1))
	}
	for _, rv := range hit {
		p.add(rv.node, rv.windows[0][0], rv.windows[0][1], rv.hold)
		maint = maint || rv.r.Flags.Maint
	}
	return res.ok && res.start == p.now, maint
}

// magneticFor is the first MAGNETIC reservation, active now, that a job
// naming none may use; nil when there is none.
func (p *pass) magneticFor(j *Job) *resv {
	for i := range p.resvs {
		rv := &p.resvs[i]
		if rv.r.Flags.Magnetic && rv.windows[0][0] <= p.now && rv.r.Allows(j.User, j.Account) {
			return rv
		}
	}
	return nil
}

// Reservation descriptions Slurm 22.05 gives a job that a reservation
// keeps from its nodes (squeue's %r prints them).
const (
	descResvOther = "ReqNodeNotAvail, May be reserved for other job"
	descResvMaint = "ReqNodeNotAvail, Reserved for maintenance"
)

// ResvConflict says why a new or changed reservation cannot be placed,
// as slurmctld refuses it: "" when it can. Other reservations overlapping
// it in time may not together hold more GPUs of the node than it has; and
// unless IGNORE_JOBS, running jobs (other than its own) that run into its
// first window must leave it its GPUs.
func ResvConflict(snap Snapshot, r Reservation) string {
	n := 0
	if r.Node != "" {
		n = slices.IndexFunc(snap.Nodes, func(nd Node) bool { return nd.Name == r.Node })
	}
	if n < 0 || n >= len(snap.Nodes) {
		return "Invalid node name specified"
	}
	node := &snap.Nodes[n]
	total := 0
	for _, g := range node.GPUs {
		if typeMatches(g.Type, r.GPUType) {
			total++
		}
	}
	want := r.GPUs
	if want == 0 {
		want = len(node.GPUs)
	}
	if r.GPUs > total {
		return fmt.Sprintf("Requested node configuration is not available: %d GPUs asked, the node has %d", r.GPUs, total)
	}
	until := snap.Now.Add(resvHorizon)
	mine := r.windows(snap.Now, until)
	if len(mine) == 0 {
		return ""
	}
	// Per window of its own, the GPUs of every other reservation that
	// overlaps it (whether or not those overlap each other: on the safe
	// side).
	for _, w := range mine {
		held := want
		for i := range snap.Reservations {
			o := &snap.Reservations[i]
			if o.Name == r.Name || (o.Node != r.Node && o.Node != "" && r.Node != "") {
				continue
			}
			og := o.GPUs
			if og == 0 {
				og = len(node.GPUs)
			}
			if slices.ContainsFunc(o.windows(snap.Now, until), func(ow [2]int64) bool { return ow[0] < w[1] && w[0] < ow[1] }) {
				held += og
			}
		}
		if held > len(node.GPUs) {
			return "Requested reservation overlaps with another reservation"
		}
	}
	if r.Flags.IgnoreJobs {
		return ""
	}
	taken := map[string]bool{}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if !holdsResources(j.State) || j.Reservation == r.Name || (j.Alloc.Node != node.Name && j.Alloc.Node != "") {
			continue
		}
		end := forever
		if j.TimeLimit > 0 && j.TimeLimit < Unlimited {
			end = satAdd(j.Start.Unix(), ceilSeconds(j.TimeLimit))
		}
		if end > mine[0][0] {
			for _, g := range j.Alloc.GPUs {
				taken[g.UUID] = true
			}
		}
	}
	busy := len(taken)
	if busy+want > len(node.GPUs) {
		return "Requested nodes are busy"
	}
	return ""
}

// resvTry is a pending job's reservation step. A job naming a reservation
// gets it back (rv, to be searched inside), or waits with reason
// Reservation when it is gone (ok false, d filled in). A job naming none
// that a MAGNETIC reservation active now admits is tried inside it first:
// started is its start when it fits there now.
func (p *pass) resvTry(pj *pjob, sh *shape, d *Decision, fifoBlocked bool) (rv *resv, started *Start, ok bool) {
	j := pj.job
	if j.Reservation != "" {
		if rv = p.resvOf(j.Reservation); rv == nil {
			d.Reason = slurm.ReasonReservation
			d.Detail = fmt.Sprintf("reservation %s has ended or was deleted; scontrol update job %d Reservation= runs it outside", j.Reservation, j.ID)
			return nil, nil, false
		}
		return rv, nil, true
	}
	mg := p.magneticFor(j)
	if mg == nil || fifoBlocked {
		return nil, nil, true
	}
	p.enter(mg, 1)
	defer p.enter(mg, -1)
	if res := p.earliest(sh, p.now); res.ok && res.start == p.now {
		st := p.start(pj, sh, res, false)
		st.Reservation = mg.r.Name
		return nil, &st, true
	}
	return nil, nil, true
}

// resvHolds sets the reason of an outside job that reservations alone
// keep from starting now, as Slurm words it, and reports whether it did.
func (p *pass) resvHolds(sh *shape, d *Decision) bool {
	held, maint := p.heldBackByResv(sh)
	if !held {
		return false
	}
	d.Reason, d.StateDesc = slurm.ReasonReqNodeNotAvail, descResvOther
	if maint {
		d.StateDesc = descResvMaint
	}
	return true
}
