package sched_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// sshare prints six decimals; compare at that precision.
var sixDecimals = cmp.Options{cmpopts.EquateApprox(0, 5e-7), cmpopts.EquateNaNs()}

var inf = math.Inf(1)

func TestFairShareTreeMatchesGoldenSshare(t *testing.T) {
	tests := []struct {
		name string
		snap sched.Snapshot
		want []sched.ShareRow
	}{
		{
			// sshare_a.txt / sshare_l.txt: no usage yet, every LevelFS is
			// infinite and every user ties at rank 4 of 4.
			name: "before any usage every user has FairShare 1",
			snap: st.Anchor().Build(),
			want: []sched.ShareRow{
				{Account: "root", Depth: 0, EffectvUsage: 1, NormUsage: 1, LevelFS: math.NaN()},
				{Account: "root", User: "root", Depth: 1, RawShares: 1, NormShares: 0.5, FairShare: 1, LevelFS: inf},
				{Account: "lab", Depth: 1, RawShares: 1, NormShares: 0.5, LevelFS: inf},
				{Account: "lab", User: "alice", Depth: 2, RawShares: 2, NormShares: 0.5, FairShare: 1, LevelFS: inf},
				{Account: "lab", User: "bob", Depth: 2, RawShares: 1, NormShares: 0.25, FairShare: 1, LevelFS: inf},
				{Account: "lab", User: "root", Depth: 2, RawShares: 1, NormShares: 0.25, FairShare: 1, LevelFS: inf},
			},
		},
		{
			// sshare_after_usage_al.txt: usage in the ratio 8:1:2 gave
			// alice 0.25, bob 0.75, root 0.5 (README: "Fair Tree after some
			// usage").
			name: "after usage Fair Tree ranks bob, then lab's root, then alice",
			snap: st.Anchor().Usage("lab", "alice", 80).Usage("lab", "bob", 10).Usage("lab", "root", 20).Build(),
			want: []sched.ShareRow{
				{Account: "root", Depth: 0, RawUsage: 110, EffectvUsage: 1, NormUsage: 1, LevelFS: math.NaN()},
				{Account: "root", User: "root", Depth: 1, RawShares: 1, NormShares: 0.5, FairShare: 1, LevelFS: inf},
				{Account: "lab", Depth: 1, RawShares: 1, NormShares: 0.5, RawUsage: 110, NormUsage: 1, EffectvUsage: 1, LevelFS: 0.5},
				{Account: "lab", User: "alice", Depth: 2, RawShares: 2, NormShares: 0.5, RawUsage: 80, NormUsage: 0.727273, EffectvUsage: 0.727273, FairShare: 0.25, LevelFS: 0.6875},
				{Account: "lab", User: "bob", Depth: 2, RawShares: 1, NormShares: 0.25, RawUsage: 10, NormUsage: 0.090909, EffectvUsage: 0.090909, FairShare: 0.75, LevelFS: 2.75},
				{Account: "lab", User: "root", Depth: 2, RawShares: 1, NormShares: 0.25, RawUsage: 20, NormUsage: 0.181818, EffectvUsage: 0.181818, FairShare: 0.5, LevelFS: 1.375},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := st.Clone(tt.snap)
			got := sched.FairShareTree(tt.snap)
			if diff := cmp.Diff(tt.want, got, sixDecimals); diff != "" {
				t.Errorf("FairShareTree (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.snap); diff != "" {
				t.Errorf("FairShareTree modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

// classicExample is the worked example of classic_fair_share.shtml
// ("Example", figure 3): accounts A (40 shares) and D (60) under the root, B
// (30) and C (10) under A, E (25) and F (35) under D; user 1 in B, users 2
// and 3 in C, user 4 in E, user 5 in F; users 1, 2 and 4 used 0.2, 0.25 and
// 0.25 of the machine. The remaining 0.3 of the machine's usage is charged
// to the root itself so that usage normalises to the machine as in the
// document.
func classicExample() sched.Snapshot {
	return st.Snap().
		Configure(func(c *sched.Config) { c.Flags |= sched.FlagNoFairTree }).
		Account("A", "", 40).Account("D", "", 60).
		Account("B", "A", 30, st.U("u1", 1)).
		Account("C", "A", 10, st.U("u2", 1), st.U("u3", 1)).
		Account("E", "D", 25, st.U("u4", 1)).
		Account("F", "D", 35, st.U("u5", 1)).
		Usage("B", "u1", 200).Usage("C", "u2", 250).Usage("E", "u4", 250).Usage("root", "", 300).
		Build()
}

func TestClassicFairShareReproducesTheWorkedExample(t *testing.T) {
	rows := sched.FairShareTree(classicExample())
	type got struct{ NormShares, EffectvUsage, FairShare float64 }
	byName := map[string]got{}
	for _, r := range rows {
		name := r.Account
		if r.User != "" {
			name = r.User
		}
		byName[name] = got{round3(r.NormShares), round3(r.EffectvUsage), round3(r.FairShare)}
	}
	// The document's numbers, to three decimals.
	want := map[string]got{
		"root": {0, 1, 0},
		"A":    {0.4, 0.45, 0},
		"D":    {0.6, 0.25, 0},
		"B":    {0.3, 0.388, 0}, // 0.3875
		"C":    {0.1, 0.3, 0},
		"E":    {0.25, 0.25, 0},
		"F":    {0.35, 0.146, 0}, // 0.1458
		"u1":   {0.3, 0.388, 0.408},
		"u2":   {0.05, 0.275, 0.022},
		"u3":   {0.05, 0.15, 0.125},
		"u4":   {0.25, 0.25, 0.5},
		"u5":   {0.35, 0.146, 0.749},
	}
	if diff := cmp.Diff(want, byName); diff != "" {
		t.Errorf("classic fair share (-want +got):\n%s", diff)
	}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func TestFairTreeTies(t *testing.T) {
	tests := []struct {
		name string
		snap sched.Snapshot
		want map[string]float64 // "account/user" -> FairShare
	}{
		{
			name: "sibling users with equal LevelFS share a rank",
			snap: st.Snap().Account("a", "", 1, st.U("x", 1), st.U("y", 1), st.U("z", 1)).
				Usage("a", "x", 10).Usage("a", "y", 10).Usage("a", "z", 40).Build(),
			want: map[string]float64{"a/x": 1, "a/y": 1, "a/z": 1.0 / 3},
		},
		{
			name: "all of a better-served account's users rank above the other account's",
			snap: st.Snap().
				Account("hi", "", 1, st.U("h1", 1), st.U("h2", 1)).
				Account("lo", "", 1, st.U("l1", 1), st.U("l2", 1)).
				Usage("hi", "h1", 5).Usage("hi", "h2", 15).
				Usage("lo", "l1", 1).Usage("lo", "l2", 79).Build(),
			// hi has LevelFS 0.5/0.2 = 2.5, lo 0.5/0.8: every hi user first,
			// even l1 whose own usage is the smallest.
			want: map[string]float64{"hi/h1": 1, "hi/h2": 0.75, "lo/l1": 0.5, "lo/l2": 0.25},
		},
		{
			name: "a user tied with a sibling account ranks with the account's best user",
			snap: st.Snap().
				Account("top", "", 1, st.U("solo", 1)).
				Account("sub", "top", 1, st.U("s1", 1), st.U("s2", 1)).Build(),
			want: map[string]float64{"top/solo": 1, "sub/s1": 1, "sub/s2": 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]float64{}
			for _, r := range sched.FairShareTree(tt.snap) {
				if r.User != "" {
					got[r.Account+"/"+r.User] = r.FairShare
				}
			}
			if diff := cmp.Diff(tt.want, got, sixDecimals); diff != "" {
				t.Errorf("FairShare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsersWithoutAccountsShareTheDefaultAccountEqually(t *testing.T) {
	snap := st.Snap().Job(st.Job(1).User("carol"), st.Job(2).User("dave")).Build()
	got := sched.FairShareTree(snap)
	want := []sched.ShareRow{
		{Account: "root", EffectvUsage: 1, NormUsage: 1, LevelFS: math.NaN()},
		{Account: "root", User: "carol", Depth: 1, RawShares: 1, NormShares: 0.5, FairShare: 1, LevelFS: inf},
		{Account: "root", User: "dave", Depth: 1, RawShares: 1, NormShares: 0.5, FairShare: 1, LevelFS: inf},
	}
	if diff := cmp.Diff(want, got, sixDecimals); diff != "" {
		t.Errorf("FairShareTree (-want +got):\n%s", diff)
	}
}

func TestDecayUsage(t *testing.T) {
	week := 7 * 24 * time.Hour
	tests := []struct {
		name     string
		elapsed  time.Duration
		halfLife time.Duration
		want     float64
	}{
		{"one half-life halves usage", week, week, 50},
		{"two half-lives quarter it", 2 * week, week, 25},
		{"no time, no decay", 0, week, 100},
		{"a half-life of 0 means no decay", 10 * week, 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sched.DecayUsage(100, tt.elapsed, tt.halfLife); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("DecayUsage(100, %v, %v) = %v, want %v", tt.elapsed, tt.halfLife, got, tt.want)
			}
		})
	}
}

func TestUnlistedUsersShareTheDefaultAccount(t *testing.T) {
	snap := st.Snap().
		Configure(func(c *sched.Config) { c.AllowUnlistedUsers, c.DefaultAccount = true, "guests" }).
		Account("lab", "", 3, st.U("alice", 1)).
		Job(st.Job(1).User("alice"), st.Job(2).User("eve"), st.Job(3).User("frank")).Build()
	var got []string
	for _, r := range sched.FairShareTree(snap) {
		got = append(got, fmt.Sprintf("%d %s/%s %d", r.Depth, r.Account, r.User, r.RawShares))
	}
	want := []string{"0 root/ 0", "1 guests/ 1", "2 guests/eve 1", "2 guests/frank 1", "1 lab/ 3", "2 lab/alice 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	for _, d := range st.Cycle(t, snap).Pending {
		if d.Reason == slurm.ReasonInvalidAccount {
			t.Errorf("job %d is InvalidAccount despite AllowUnlistedUsers", d.JobID)
		}
	}
}

func TestParsePriorityFlags(t *testing.T) {
	got, err := sched.ParsePriorityFlags([]string{"NO_FAIR_TREE", "max_tres"})
	if err != nil || got != sched.FlagNoFairTree|sched.FlagMaxTRES {
		t.Errorf("ParsePriorityFlags = %v, %v", got, err)
	}
	if _, err := sched.ParsePriorityFlags([]string{"FAIR_TREE_PLEASE"}); err == nil || err.Error() != `priority flags: unknown flag "FAIR_TREE_PLEASE"` {
		t.Errorf("unknown flag error = %v", err)
	}
}
