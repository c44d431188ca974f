package sched

import (
	"math"
	"slices"
)

// forever is a time (in Unix seconds) later than any plan looks at; adding a
// duration to it cannot overflow.
const forever int64 = math.MaxInt64 / 4

// excl is how much a whole-GPU holder weighs in a GPU's busy column, so that
// one number tells "idle" (0), "shared" (-1, -2, ...) and "owned" (-excl or
// less) apart.
const excl int64 = 1 << 40

// timeline is the backfill map: what is free from now on, as a step function
// of time. Row k holds what is free during [times[k], times[k+1]); the last
// row lasts forever. Each row has, per GPU slot s, the negated busy count in
// column 2s and the free memory in column 2s+1, and per node n the free CPUs
// in column 2S+2n and free host memory in 2S+2n+1 (S GPU slots). Running
// jobs free their share at their end (start + time limit); reservations and
// jobs started in this pass hold theirs over their window. Like Slurm's
// node_space, but per GPU, so reservations name specific GPUs.
type timeline struct {
	cols    int
	times   []int64
	vals    []int64
	version int // bumped on every change, for the search memo
}

type colDelta struct {
	col   int
	delta int64
}

func newTimeline(now int64, row []int64) *timeline {
	return &timeline{cols: len(row), times: []int64{now}, vals: slices.Clone(row)}
}

func (tl *timeline) row(k int) []int64 { return tl.vals[k*tl.cols : (k+1)*tl.cols] }

// rowAt is the row in force at time t (t ≥ times[0]).
func (tl *timeline) rowAt(t int64) int {
	k, found := slices.BinarySearch(tl.times, t)
	if found {
		return k
	}
	return max(0, k-1)
}

// split makes a row start at t and returns its index.
func (tl *timeline) split(t int64) int {
	k, found := slices.BinarySearch(tl.times, t)
	if found {
		return k
	}
	// t falls inside row k-1: copy that row in front of row k.
	tl.times = slices.Insert(tl.times, k, t)
	prev := tl.vals[(k-1)*tl.cols : k*tl.cols]
	tl.vals = slices.Insert(tl.vals, k*tl.cols, prev...)
	return k
}

// add applies the deltas over [from, to); to ≥ forever means to the end.
func (tl *timeline) add(from, to int64, deltas []colDelta) {
	from = max(from, tl.times[0])
	if to <= from || len(deltas) == 0 {
		return
	}
	a := tl.split(from)
	b := len(tl.times)
	if to < forever {
		b = tl.split(to)
	}
	for k := a; k < b; k++ {
		r := tl.row(k)
		for _, d := range deltas {
			r[d.col] += d.delta
		}
	}
	tl.version++
}

// window is a sliding minimum over the rows of a timeline, for a chosen set
// of columns: the least free amount of each column over the rows pushed
// and not yet dropped. Each column keeps a monotonic deque of row indices,
// so sliding over all rows costs O(rows × columns).
type window struct {
	cols       []int
	dq         []int32 // per column, a deque of capacity rows
	head, tail []int32
	rows       int
}

func (w *window) reset(cols []int, rows int) {
	w.cols = cols
	w.rows = rows
	n := len(cols) * rows
	if cap(w.dq) < n {
		w.dq = make([]int32, n)
	}
	w.dq = w.dq[:n]
	if cap(w.head) < len(cols) {
		w.head = make([]int32, len(cols))
		w.tail = make([]int32, len(cols))
	}
	w.head, w.tail = w.head[:len(cols)], w.tail[:len(cols)]
	clear(w.head)
	clear(w.tail)
}

func (w *window) push(tl *timeline, k int) {
	r := tl.row(k)
	for c, col := range w.cols {
		q := w.dq[c*w.rows : (c+1)*w.rows]
		t := w.tail[c]
		for t > w.head[c] && tl.vals[int(q[t-1])*tl.cols+col] >= r[col] {
			t--
		}
		q[t] = int32(k)
		w.tail[c] = t + 1
	}
}

// drop forgets rows before k.
func (w *window) drop(k int) {
	for c := range w.cols {
		q := w.dq[c*w.rows : (c+1)*w.rows]
		for w.head[c] < w.tail[c] && int(q[w.head[c]]) < k {
			w.head[c]++
		}
	}
}

// fill writes each column's minimum into agg (indexed by column).
func (w *window) fill(tl *timeline, agg []int64) {
	for c, col := range w.cols {
		if w.head[c] < w.tail[c] {
			agg[col] = tl.vals[int(w.dq[c*w.rows+int(w.head[c])])*tl.cols+col]
		}
	}
}

// minOver writes into agg the minimum of each column of cols over the rows
// covering [from, to), optionally adding back what the given releases
// free: release r adds its deltas in rows starting before its end. It is
// the one-window form of the search, for preemption and shrink.
func (tl *timeline) minOver(from, to int64, cols []int, agg []int64, releases []release) {
	for _, c := range cols {
		agg[c] = math.MaxInt64
	}
	first := tl.rowAt(from)
	for k := first; k < len(tl.times) && (tl.times[k] < to || k == first); k++ {
		r := tl.row(k)
		for _, c := range cols {
			v := r[c]
			for _, rel := range releases {
				if tl.times[k] < rel.end {
					v += rel.get(c)
				}
			}
			agg[c] = min(agg[c], v)
		}
	}
}

// release is what a running job would free if it stopped now.
type release struct {
	end    int64
	deltas []colDelta
}

func (r *release) get(col int) int64 {
	var v int64
	for _, d := range r.deltas {
		if d.col == col {
			v += d.delta
		}
	}
	return v
}

// satAdd adds a duration in seconds to a time, saturating at forever.
func satAdd(t, d int64) int64 {
	if d >= forever || t >= forever-d {
		return forever
	}
	return t + d
}

func floorTo(t, res int64) int64 { return t - t%res }

func ceilTo(t, res int64) int64 {
	if t >= forever || t%res == 0 {
		return t
	}
	return satAdd(t, res-t%res)
}
