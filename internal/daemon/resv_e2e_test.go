package daemon

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// TestReservationsRecurAndSurviveARestart moves the daemon's clock over a
// DAILY reservation's window: after it, the reservation shows its next
// window (as slurmctld moves it at its end) and stays; in that window a
// job naming it starts on its GPUs while a job outside it that needs
// them waits with Slurm's reason; a restart keeps it, and the audit trail
// says who made it. A reservation that does not recur is removed at its
// end, by the daemon; a MAGNETIC one draws in a job that names none.
func TestReservationsRecurAndSurviveARestart(t *testing.T) {
	t.Parallel()
	dir := openTempDir(t)
	// A Monday, 17:00 local time: the clock is the test's, not today's.
	t0 := time.Date(2026, 3, 2, 17, 0, 0, 0, time.Local)
	clock := &fakeClock{t: t0}
	machine := newWebMachine() // eight GPUs
	wd := startWebDaemon(t, dir, machine, clock)
	ctx := context.Background()
	change := func(wd *webDaemon, ch api.ResvChange) {
		t.Helper()
		if err := wd.c.Do(ctx, "POST", api.PathReservations, ch, nil); err != nil {
			t.Fatalf("%s %v: %v", ch.Action, ch.Words, err)
		}
	}
	list := func(wd *webDaemon) []api.Reservation {
		t.Helper()
		var out api.Reservations
		if err := wd.c.Do(ctx, "GET", api.PathReservations, nil, &out); err != nil {
			t.Fatal(err)
		}
		return out.List
	}
	find := func(wd *webDaemon, name string) (api.Reservation, bool) {
		l := list(wd)
		i := slices.IndexFunc(l, func(r api.Reservation) bool { return r.Name == name })
		if i < 0 {
			return api.Reservation{}, false
		}
		return l[i], true
	}

	// "The evening is for long runs": six of the eight GPUs, from 18:00
	// for four hours, every day, for root.
	change(wd, api.ResvChange{Action: api.ResvCreate, Words: []string{"ReservationName=evening",
		"StartTime=now+1hour", "Duration=4:00:00", "Users=root", "TRES=gres/gpu=6", "Flags=DAILY"}})
	r, _ := find(wd, "evening")
	if want := t0.Add(time.Hour); !r.ShowStart.Equal(want) || r.Active {
		t.Fatalf("before its window: starts %v (active %v), want %v", r.ShowStart, r.Active, want)
	}

	// After the window it shows tomorrow's.
	clock.advance(6 * time.Hour)
	r, ok := find(wd, "evening")
	if want := t0.Add(25 * time.Hour); !ok || !r.ShowStart.Equal(want) || !r.ShowEnd.Equal(want.Add(4*time.Hour)) {
		t.Fatalf("after its window: %+v (found %v), want it to start at %v", r, ok, want)
	}

	// Tomorrow at 18:30 it is in force: a job naming it starts, a 4-GPU
	// job outside it waits (two GPUs are left outside it).
	clock.advance(19*time.Hour + 30*time.Minute)
	if r, _ := find(wd, "evening"); !r.Active {
		t.Fatalf("at 18:30 the next day it is not active: %+v", r)
	}
	in := wd.submit("sleep 300", "--reservation=evening", "--gpus=6", "-t", "60")
	wd.waitState(in, slurm.Running)
	out := wd.submit("sleep 300", "--gpus=4", "-t", "60")
	wd.waitFor(func() bool {
		j := wd.job(out)
		return j.Reason == slurm.ReasonReqNodeNotAvail && j.StateDesc == "ReqNodeNotAvail, May be reserved for other job"
	}, "the job outside waiting for the reservation")

	// A one-off reservation is removed at its end.
	change(wd, api.ResvChange{Action: api.ResvCreate, Words: []string{"ReservationName=once",
		"StartTime=now+1hour", "Duration=10", "Users=root", "TRES=gres/gpu=1", "Flags=IGNORE_JOBS"}})
	clock.advance(2 * time.Hour)
	wd.waitFor(func() bool { _, ok := find(wd, "once"); return !ok }, "the ended reservation removed")

	// A restart keeps the daily one.
	wd.stop()
	wd = startWebDaemon(t, dir, machine, clock)
	if _, ok := find(wd, "evening"); !ok {
		t.Fatal("the restart lost the reservation")
	}
	// A MAGNETIC reservation draws in a job that may use it without
	// naming it, and the job records it.
	change(wd, api.ResvChange{Action: api.ResvCreate, Words: []string{"ReservationName=magnet",
		"StartTime=now", "Duration=60", "Users=root", "TRES=gres/gpu=1", "Flags=MAGNETIC,IGNORE_JOBS"}})
	drawn := wd.submit("sleep 300", "--gpus=1", "-t", "10")
	if j := wd.waitState(drawn, slurm.Running); j.Request.Reservation != "magnet" {
		t.Errorf("the job drawn in runs in reservation %q, want magnet", j.Request.Reservation)
	}

	var events []api.Event
	if err := wd.c.Do(ctx, "GET", api.PathEvents+"?node=1", nil, &events); err != nil {
		t.Fatal(err)
	}
	var made []string
	for _, e := range events {
		if e.Action == string(evResvCreate) || e.Action == string(evResvDelete) {
			made = append(made, e.ActorName+" "+e.Action)
		}
	}
	want := []string{"root reservation_create", "root reservation_create", "slurmd-lite reservation_delete", "root reservation_create"}
	if !slices.Equal(made, want) {
		t.Errorf("the audit trail's reservation events: %q, want %q", made, want)
	}

	// PURGE_COMP: an active reservation with no job in it for its time
	// (one minute here) is removed, by the daemon.
	change(wd, api.ResvChange{Action: api.ResvCreate, Words: []string{"ReservationName=purged",
		"StartTime=now", "Duration=120", "Users=root", "TRES=gres/gpu=1", "Flags=PURGE_COMP=1,IGNORE_JOBS"}})
	if _, ok := find(wd, "purged"); !ok {
		t.Fatal("the PURGE_COMP reservation went before its idle time")
	}
	// The first pass that sees it notes it idle from then: each look
	// moves the clock on a minute, until a pass finds it idle long enough.
	wd.waitFor(func() bool {
		clock.advance(time.Minute)
		_, ok := find(wd, "purged")
		return !ok
	}, "the idle PURGE_COMP reservation purged")
	if err := wd.c.Do(ctx, "GET", api.PathEvents+"?node=1", nil, &events); err != nil {
		t.Fatal(err)
	}
	if last := events[len(events)-1]; last.Action != string(evResvDelete) || !strings.Contains(last.Detail, "ReservationName=purged ") ||
		!strings.Contains(last.Detail, "purged: idle for its PURGE_COMP time") {
		t.Errorf("the last event is %+v, want the purge", last)
	}
}
