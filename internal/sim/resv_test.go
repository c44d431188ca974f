package sim

import (
	"strings"
	"testing"
)

// A nightly reservation of the one node's two GPUs, from the trace's
// second 3600 for an hour (--reservation's words, read at the first
// submission): a job whose limit would run into it waits until it ends,
// and the replay passes at that end with nothing else happening; a job
// that ends before it runs at once; the next day's window holds again.
func TestReplayHoldsAReservation(t *testing.T) {
	tr := trace(t, "0,0,a,2,600,1800\n1,0,a,2,600,7200\n2,90000,a,2,600,7200\n")
	r, err := simReservation("ReservationName=night StartTime=now+3600 Duration=60 Users=nobody TRES=gres/gpu=2 Flags=DAILY", tr)
	if err != nil {
		t.Fatal(err)
	}
	opt := options(1, 2)
	opt.Reservations = append(opt.Reservations, r)
	run, err := Simulate(tr, policy(t, "P2"), opt)
	if err != nil {
		t.Fatal(err)
	}
	got := []int64{run.Outcomes[0].FirstStart, run.Outcomes[1].FirstStart, run.Outcomes[2].FirstStart}
	// Job 1 waits for the first window's end (7200); job 2, submitted at
	// 90000 inside the next window (90000 is 3600 + 86400), for its end
	// at 93600.
	want := []int64{0, 7200, 93600}
	if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("first starts %v, want %v", got, want)
	}
}

func TestReplayReservationErrors(t *testing.T) {
	tr := trace(t, "0,0,a,1,60,60\n")
	for words, want := range map[string]string{
		"StartTime=now Duration=60 TRES=gres/gpu=1":                          "Either Users/Groups and/or Accounts",
		"StartTime=now Duration=60 Users=x Nodes=gpu01":                      "not Nodes=",
		"StartTime=now Duration=60 Users=x TRES=gres/gpu=1 Flags=PURGE_COMP": "means nothing in a replay",
	} {
		if _, err := simReservation(words, tr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", words, err, want)
		}
	}
}
