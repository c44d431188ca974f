package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// inResv builds a job naming a reservation.
func inResv(b *st.JobBuilder, name string) sched.Job {
	j := b.Build()
	j.Reservation = name
	return j
}

func TestReservations(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	// alice2 holds two of the four GPUs from +1h to +3h.
	alice2 := func(f func(*sched.Reservation)) sched.Reservation {
		r := sched.Reservation{Name: "deadline", Start: now.Add(h), End: now.Add(3 * h), Users: []string{"alice"}, GPUs: 2}
		if f != nil {
			f(&r)
		}
		return r
	}
	type pend struct {
		Reason slurm.Reason
		Desc   string
		In     time.Duration
	}
	type result struct {
		Started []uint32
		Pending map[uint32]pend
	}
	tests := []struct {
		name  string
		resvs []sched.Reservation
		jobs  []sched.Job
		want  result
	}{
		{
			name:  "a 4-GPU job outside waits until the reservation ends",
			resvs: []sched.Reservation{alice2(nil)},
			jobs:  []sched.Job{st.Job(1).User("bob").GPUs(4).Time(2 * h).Build()},
			want: result{Pending: map[uint32]pend{
				1: {slurm.ReasonReqNodeNotAvail, "ReqNodeNotAvail, May be reserved for other job", 3 * h}}},
		},
		{
			name:  "a 2-GPU job whose limit ends before the window starts at once",
			resvs: []sched.Reservation{alice2(nil)},
			jobs:  []sched.Job{st.Job(1).User("bob").GPUs(4).Time(30 * time.Minute).Build()},
			want:  result{Started: []uint32{1}},
		},
		{
			name:  "a 2-GPU job whose limit crosses into the window still fits beside it",
			resvs: []sched.Reservation{alice2(nil)},
			jobs:  []sched.Job{st.Job(1).User("bob").GPUs(2).Time(2 * h).Build()},
			want:  result{Started: []uint32{1}},
		},
		{
			name:  "a 2-GPU job crossing into the window waits when the other two are busy",
			resvs: []sched.Reservation{alice2(nil)},
			jobs: []sched.Job{
				st.Job(1).User("root").GPUs(2).Time(10*h).Running(now, "gpu01", 0, 1).Build(),
				st.Job(2).User("bob").GPUs(2).Time(2 * h).Build()},
			want: result{Pending: map[uint32]pend{
				2: {slurm.ReasonReqNodeNotAvail, "ReqNodeNotAvail, May be reserved for other job", 3 * h}}},
		},
		{
			name:  "a job in the reservation waits for its start, with reason Reservation",
			resvs: []sched.Reservation{alice2(nil)},
			jobs:  []sched.Job{inResv(st.Job(1).User("alice").GPUs(1).Time(h), "deadline")},
			want:  result{Pending: map[uint32]pend{1: {slurm.ReasonReservation, "", h}}},
		},
		{
			name:  "a job in an active reservation starts on its GPUs",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now })},
			jobs: []sched.Job{
				st.Job(1).User("root").GPUs(2).Time(10*h).Running(now, "gpu01", 0, 1).Build(),
				inResv(st.Job(2).User("alice").GPUs(2).Time(h), "deadline")},
			want: result{Started: []uint32{2}},
		},
		{
			name:  "a job outside waits for a reservation whose own job holds its GPUs, with the reservation's reason",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now })},
			jobs: []sched.Job{
				inResv(st.Job(1).User("alice").GPUs(2).Time(h).Running(now, "gpu01", 0, 1), "deadline"),
				st.Job(2).User("bob").GPUs(4).Time(h).Build()},
			want: result{Pending: map[uint32]pend{
				2: {slurm.ReasonReqNodeNotAvail, "ReqNodeNotAvail, May be reserved for other job", 3 * h}}},
		},
		{
			name:  "a job in the reservation may not use more than its GPUs",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now })},
			jobs:  []sched.Job{inResv(st.Job(1).User("alice").GPUs(3).Time(h), "deadline")},
			want:  result{Pending: map[uint32]pend{1: {slurm.ReasonResources, "", -1}}},
		},
		{
			name:  "a job in the reservation may not outlive it",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now })},
			jobs:  []sched.Job{inResv(st.Job(1).User("alice").GPUs(1).Time(4*h), "deadline")},
			want:  result{Pending: map[uint32]pend{1: {slurm.ReasonResources, "", -1}}},
		},
		{
			name:  "with FLEX it may",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now; r.Flags.Flex = true })},
			jobs:  []sched.Job{inResv(st.Job(1).User("alice").GPUs(3).Time(4*h), "deadline")},
			want:  result{Started: []uint32{1}},
		},
		{
			name:  "a MAINT reservation's reason",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now; r.GPUs = 0; r.Flags.Maint = true })},
			jobs:  []sched.Job{st.Job(1).User("bob").GPUs(1).Time(h).Build()},
			want: result{Pending: map[uint32]pend{
				1: {slurm.ReasonReqNodeNotAvail, "ReqNodeNotAvail, Reserved for maintenance", 3 * h}}},
		},
		{
			name:  "a MAGNETIC reservation draws in a job that may use it",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) { r.Start = now; r.Flags.Magnetic = true })},
			jobs: []sched.Job{
				st.Job(1).User("root").GPUs(2).Time(10*h).Running(now, "gpu01", 0, 1).Build(),
				st.Job(2).User("alice").GPUs(2).Time(h).Build()},
			want: result{Started: []uint32{2}},
		},
		{
			name:  "a job naming a reservation that is gone waits with reason Reservation",
			resvs: nil,
			jobs:  []sched.Job{inResv(st.Job(1).User("alice").GPUs(1).Time(h), "deadline")},
			want:  result{Pending: map[uint32]pend{1: {slurm.ReasonReservation, "", -1}}},
		},
		{
			name: "a DAILY reservation that ended holds its next window",
			resvs: []sched.Reservation{alice2(func(r *sched.Reservation) {
				r.Start, r.End, r.GPUs, r.Flags.Daily = now.Add(-23*h), now.Add(-22*h), 0, true
			})},
			jobs: []sched.Job{st.Job(1).User("bob").GPUs(1).Time(2 * h).Build()},
			want: result{Pending: map[uint32]pend{
				1: {slurm.ReasonReqNodeNotAvail, "ReqNodeNotAvail, May be reserved for other job", 2 * h}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := fourGPUs().Build()
			snap.Jobs = tt.jobs
			snap.Reservations = tt.resvs
			plan := st.Cycle(t, snap)
			got := result{Started: st.Started(plan), Pending: map[uint32]pend{}}
			for _, d := range plan.Pending {
				in := time.Duration(-1)
				if !d.ExpectedStart.IsZero() {
					in = d.ExpectedStart.Sub(now)
				}
				got.Pending[d.JobID] = pend{d.Reason, d.StateDesc, in}
			}
			if len(got.Pending) == 0 {
				got.Pending = nil
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestReservationWindow(t *testing.T) {
	// 2001-09-09 (st.Epoch's day) is a Sunday.
	loc := time.UTC
	start := time.Date(2026, 12, 4, 18, 0, 0, 0, loc) // a Friday
	end := start.Add(4 * time.Hour)
	tests := []struct {
		name  string
		flags sched.ResvFlags
		now   time.Time
		want  time.Time
		ok    bool
	}{
		{"before it, the first window", sched.ResvFlags{}, start.Add(-time.Hour), start, true},
		{"inside it, the same", sched.ResvFlags{}, start.Add(time.Hour), start, true},
		{"after it, none", sched.ResvFlags{}, end, start, false},
		{"DAILY moves on a day", sched.ResvFlags{Daily: true}, end, start.AddDate(0, 0, 1), true},
		{"DAILY moves on many days", sched.ResvFlags{Daily: true}, end.AddDate(0, 0, 3), start.AddDate(0, 0, 4), true},
		{"WEEKDAY skips the weekend", sched.ResvFlags{Weekday: true}, end, start.AddDate(0, 0, 3), true},
		{"WEEKEND goes to Saturday", sched.ResvFlags{Weekend: true}, end, start.AddDate(0, 0, 1), true},
		{"WEEKLY moves on a week", sched.ResvFlags{Weekly: true}, end, start.AddDate(0, 0, 7), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sched.Reservation{Start: start, End: end, Flags: tt.flags}
			s, e, ok := r.Window(tt.now)
			if ok != tt.ok || !s.Equal(tt.want) || (ok && e.Sub(s) != 4*time.Hour) {
				t.Errorf("Window(%v) = %v, %v, %v; want %v, %v", tt.now, s, e, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestResvConflict(t *testing.T) {
	now := st.Epoch
	h := time.Hour
	base := sched.Reservation{Name: "a", Start: now.Add(h), End: now.Add(2 * h), Users: []string{"alice"}, GPUs: 2}
	snap := fourGPUs().Build()
	if got := sched.ResvConflict(snap, base); got != "" {
		t.Fatalf("an empty machine: %q", got)
	}
	snap.Reservations = []sched.Reservation{base}
	b := base
	b.Name = "b"
	if got := sched.ResvConflict(snap, b); got != "" {
		t.Errorf("two of two beside two: %q", got)
	}
	b.GPUs = 3
	if got, want := sched.ResvConflict(snap, b), "Requested reservation overlaps with another reservation"; got != want {
		t.Errorf("three beside two: %q, want %q", got, want)
	}
	b.GPUs = 1
	snap.Reservations = append(snap.Reservations, sched.Reservation{Name: "c", Start: now, End: now.Add(90 * time.Minute), Users: []string{"bob"}, GPUs: 2})
	if got, want := sched.ResvConflict(snap, b), "Requested reservation overlaps with another reservation"; got != want {
		t.Errorf("one beside two and two: %q, want %q", got, want)
	}
	snap.Reservations = nil
	snap.Jobs = []sched.Job{st.Job(1).GPUs(3).Time(5*h).Running(now, "gpu01", 0, 1, 2).Build()}
	if got, want := sched.ResvConflict(snap, base), "Requested nodes are busy"; got != want {
		t.Errorf("over a running job: %q, want %q", got, want)
	}
	base.Flags.IgnoreJobs = true
	if got := sched.ResvConflict(snap, base); got != "" {
		t.Errorf("IGNORE_JOBS: %q", got)
	}
}
