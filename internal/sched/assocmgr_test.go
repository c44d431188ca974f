package sched_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
)

// What the association manager counts: usage of every TRES since the
// reset (the QOS's UsageFactor applied, not to the wall time) on the
// user's association, the accounts above it and the QOS; what running
// jobs hold and may still use, and the pending ones, from the live jobs;
// and a QOS's accounts and users in the order they first submitted.
func TestAssocMgrCounts(t *testing.T) {
	now := st.Epoch
	m := time.Minute
	const gib = 1 << 30
	snap := fourGPUs().Account("group", "", 1).Account("lab", "group", 1, st.U("alice", 1), st.U("bob", 1)).
		QOS(sched.QOS{Name: "normal", UsageFactor: 1}, sched.QOS{Name: "half", UsageFactor: 0.5}).
		Configure(func(c *sched.Config) { c.DecayHalfLife = 0 }).
		Job(
			// Alice's 2-GPU job has run 30 of its 60 minutes.
			st.Job(1).User("alice").Account("lab").QOS("normal").GPUs(2).CPUIDs(0, 1).HostMem(2*gib).Time(time.Hour).
				Submitted(now.Add(-40*m)).Running(now.Add(-30*m), "gpu01", 0, 1),
			// Bob's waits (eligible), then a held one.
			st.Job(2).User("bob").Account("lab").QOS("normal").GPUs(4).Submitted(now.Add(-20*m)).Eligible(now.Add(-20*m)),
			st.Job(3).User("bob").Account("lab").QOS("normal").GPUs(1).Submitted(now.Add(-10*m)).Hold(),
		).Build()
	// Alice's earlier 1-GPU run of 10 minutes at half price, half of it
	// after the reset.
	early := st.Job(4).User("alice").Account("lab").QOS("half").GPUs(1).CPUIDs(2).HostMem(gib).
		Submitted(now.Add(-2*time.Hour)).Running(now.Add(-2*time.Hour), "gpu01", 2).Build()
	runs := []sched.Run{{Job: early, End: now.Add(-110 * m)}, {Job: snap.Jobs[0]}}
	assocs, qos := sched.AssocMgrCounts(snap, runs, now.Add(-115*m), now.Add(-3*time.Hour))

	// gres/gpu-seconds: 5 minutes × 1 GPU × 0.5, and 30 × 2 (running).
	// mem in MiB; billing is the GPUs (default weights); wall unweighted.
	var usage [sched.NTRES]float64
	usage[0] = 150 + 2*1800         // cpu
	usage[1] = 1024*150 + 2048*1800 // mem
	usage[3] = 150 + 1800           // node
	usage[4], usage[8] = 150+3600, 150+3600
	var held, run [sched.NTRES]float64
	held[0], held[1], held[3], held[4], held[8] = 2, 2048, 1, 2, 2
	for i, v := range held {
		run[i] = v * 1800
	}
	alice := sched.AssocCounts{Account: "lab", User: "alice", TRESSecs: usage, Billing: 150 + 3600,
		WallSecs: 300 + 1800, Held: held, RunSecs: run, Jobs: 1, Submitted: 1}
	bob := sched.AssocCounts{Account: "lab", User: "bob", Submitted: 2, Accruing: 1}
	lab := alice
	lab.User, lab.Submitted, lab.Accruing = "", 3, 1
	group, root := lab, lab
	group.Account, root.Account = "group", "root"
	want := map[[2]string]*sched.AssocCounts{{"lab", "alice"}: &alice, {"lab", "bob"}: &bob,
		{"lab", ""}: &lab, {"group", ""}: &group, {"root", ""}: &root}
	if diff := cmp.Diff(want, assocs); diff != "" {
		t.Errorf("associations (-want +got):\n%s", diff)
	}

	if got := qos["half"]; got == nil || got.Billing != 150 || got.WallSecs != 300 ||
		len(got.Accounts) != 1 || got.Accounts[0].Name != "lab" || got.Accounts[0].Jobs != 0 {
		t.Errorf("QOS half: %+v; want 150 billing-seconds, 300 s of wall, lab listed with nothing running", got)
	}
	n := qos["normal"]
	if n == nil {
		t.Fatal("no counts for QOS normal")
	}
	wantUsers := []sched.QOSUser{
		{Name: "alice", Jobs: 1, Submitted: 1, Held: held},
		{Name: "bob", Submitted: 2, Accruing: 1},
	}
	if diff := cmp.Diff(wantUsers, n.Users); diff != "" {
		t.Errorf("QOS normal's users, in the order they first submitted (-want +got):\n%s", diff)
	}
	if n.Jobs != 1 || n.Submitted != 3 || n.Accruing != 1 || n.Held != held || n.RunSecs != run {
		t.Errorf("QOS normal: %+v", n.AssocCounts)
	}
}
