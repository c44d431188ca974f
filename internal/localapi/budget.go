package localapi

import (
	"cmp"
	"fmt"
	"net/http"
	"sync"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// budget accounts for the request bodies that the server holds in memory,
// from the moment a body's room is taken (its Content-Length before a byte
// of it is read, or step by step for a body without one) until its handler
// has returned. A body that would pass a bound is refused at once, never
// queued:
//
//   - per user (429): one uid may hold at most perUser bytes, so one user's
//     uploads, however many connections they open, cannot starve the others;
//   - in total (503): the daemon holds at most total bytes, whoever sends
//     them;
//   - small bodies first: bodies over small may together hold only
//     total-reserve (the big room), so that the reserve is always there
//     for the small requests that are most of the traffic (squeue, sbatch
//     of an ordinary script), however many big uploads are in flight;
//   - every user's big body: a user may hold share (the largest body) of
//     big bodies whenever the big room has it; beyond that, the big bodies
//     of all users together may take only half the big room (429 past it),
//     the other half being kept for the users who hold no more than their
//     share. One user's stalled big uploads, or several users', therefore
//     leave at least half the big room (48 MiB by default: three of the
//     largest bodies) to everyone else's sbatch of a big script. Before,
//     one user could hold 64 of the 96 MiB, and two others' uploads filled
//     the rest: a third user's big submission got 503 until a stalled body
//     timed out (issue 23 item 6).
//
// A request without a body (squeue, sinfo, scancel) takes nothing and is
// never refused by the budget.
type budget struct {
	total, perUser, small, reserve int64
	// share is the big bodies a user may hold wherever the big room has
	// them; kept is the part of the big room that bodies beyond a
	// user's share may not take.
	share, kept int64

	mu      sync.Mutex
	held    int64 // all bodies
	big     int64 // bodies over small
	peak    int64
	refused int64
	users   map[uint32]int64
	// bigUsers is each user's part of big.
	bigUsers map[uint32]int64
}

func newBudget(l Limits) *budget {
	reserve := l.MaxBodyBytesInFlight / 4
	return &budget{
		total:    l.MaxBodyBytesInFlight,
		perUser:  l.MaxUserBodyBytesInFlight,
		small:    l.SmallBodyBytes,
		reserve:  reserve,
		share:    min(cmp.Or(l.MaxBodyBytes, DefaultLimits.MaxBodyBytes), l.MaxUserBodyBytesInFlight),
		kept:     (l.MaxBodyBytesInFlight - reserve) / 2,
		users:    map[uint32]int64{},
		bigUsers: map[uint32]int64{},
	}
}

// hold is the room one request's body has taken.
type hold struct {
	b   *budget
	uid uint32
	who string // the caller, as messages name them
	n   int64
	big bool
}

func (b *budget) hold(uid uint32, who string) *hold {
	return &hold{b: b, uid: uid, who: who}
}

// grow raises h's room to n bytes, or says which bound refuses it; on a
// refusal h keeps what it had.
func (h *hold) grow(n int64) *api.Error {
	if n <= h.n {
		return nil
	}
	b := h.b
	add := n - h.n
	big := n > b.small
	bigAdd := int64(0)
	switch {
	case big && h.big:
		bigAdd = add
	case big:
		bigAdd = n
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if u := b.users[h.uid]; u+add > b.perUser {
		b.refused++
		return &api.Error{Status: http.StatusTooManyRequests, Message: fmt.Sprintf(
			"%s already has %s of requests in flight, and this one of %s would pass the limit of %s that one user may have in flight; wait for the others to be answered, then try again",
			h.who, amountText(u), amountText(n), sizeText(b.perUser))}
	}
	if ub := b.bigUsers[h.uid]; big && ub+bigAdd > b.share && b.big+bigAdd > b.total-b.reserve-b.kept {
		b.refused++
		return &api.Error{Status: http.StatusTooManyRequests, Message: fmt.Sprintf(
			"%s already has %s of requests over %s in flight; past %s of them, one user's share, such requests from all users may hold %s together (they hold %s), the rest being kept for other users' large requests, and this one of %s would pass that; wait for yours to be answered, then try again",
			h.who, amountText(ub), sizeText(b.small), sizeText(b.share), sizeText(b.total-b.reserve-b.kept), amountText(b.big), amountText(n))}
	}
	if b.held+add > b.total || (big && b.big+bigAdd > b.total-b.reserve) {
		b.refused++
		return &api.Error{Status: http.StatusServiceUnavailable, Message: fmt.Sprintf(
			"slurmd-lite is busy: it holds %s of requests in flight from all users, and this one of %s would pass its limit of %s (%s for requests over %s); try again in a moment",
			amountText(b.held), amountText(n), sizeText(b.total), sizeText(b.total-b.reserve), sizeText(b.small))}
	}
	b.users[h.uid] += add
	b.held += add
	b.big += bigAdd
	if bigAdd > 0 {
		b.bigUsers[h.uid] += bigAdd
	}
	h.n, h.big = n, big
	b.peak = max(b.peak, b.held)
	return nil
}

// release gives back everything h holds; it may be called more than once.
func (h *hold) release() {
	if h.n == 0 {
		return
	}
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= h.n
	if h.big {
		b.big -= h.n
		if b.bigUsers[h.uid] -= h.n; b.bigUsers[h.uid] <= 0 {
			delete(b.bigUsers, h.uid)
		}
	}
	if b.users[h.uid] -= h.n; b.users[h.uid] <= 0 {
		delete(b.users, h.uid)
	}
	h.n, h.big = 0, false
}

// BodyMemory is what a Server's request bodies hold: the figures behind its
// limits, for tests, logs and the fault suite.
type BodyMemory struct {
	// InFlight is the bytes held now by bodies being read or handled.
	InFlight int64
	// Peak is the most InFlight has been since the server started.
	Peak int64
	// Limit is Limits.MaxBodyBytesInFlight, which InFlight never passes.
	Limit int64
	// Users is how many users hold some of InFlight.
	Users int
	// Refused counts the requests refused by the budget (429 and 503).
	Refused int64
}

func (b *budget) stats() BodyMemory {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BodyMemory{InFlight: b.held, Peak: b.peak, Limit: b.total, Users: len(b.users), Refused: b.refused}
}

// amountText says how much is held, to a tenth of a MiB.
func amountText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
