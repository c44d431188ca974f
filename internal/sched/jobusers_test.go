package sched_test

import (
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Snapshot.JobUsers given (the daemon's submission checks) changes no
// answer: the share tree, and so every check, priority and plan, is the
// one found from the jobs themselves, with accounts configured or not,
// unlisted users allowed or not, and finished jobs among them.
func TestJobUsersChangeNoAnswer(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		users := []string{"alice", "bob", "carol", "dave", ""}
		accounts := []string{"", "lab", "other", "default"}
		b := st.Snap().Configure(func(c *sched.Config) {
			c.AllowUnlistedUsers = rapid.Bool().Draw(rt, "unlisted")
		}).Part(st.Part("gpu").Default()).QOS(st.QOS("normal")).
			Node(st.Node("n0").CPUs(16).Mem(64*st.GiB).GPUs(4, "a100", 80*st.GiB))
		if rapid.Bool().Draw(rt, "configured") {
			b.Account("lab", "", 1, st.U("alice", 1), st.U("bob", 2))
		}
		for i := range rapid.IntRange(0, 3).Draw(rt, "usage") {
			b.Usage(rapid.SampledFrom(accounts).Draw(rt, "uacct"), rapid.SampledFrom(users).Draw(rt, "uuser"), float64(1000*(i+1)))
		}
		n := rapid.IntRange(0, 12).Draw(rt, "jobs")
		for i := range n {
			j := st.Job(uint32(i + 1)).User(rapid.SampledFrom(users).Draw(rt, "user")).
				Account(rapid.SampledFrom(accounts).Draw(rt, "acct")).GPUs(rapid.IntRange(0, 2).Draw(rt, "gpus"))
			switch rapid.IntRange(0, 2).Draw(rt, "state") {
			case 1:
				j.State(slurm.Completed, 0)
			case 2:
				j.Hold()
			}
			b.Job(j)
		}
		plain := b.Build()
		given := plain
		given.JobUsers = sched.JobUsersOf(plain.Jobs)
		job := st.Job(uint32(n + 1)).User(rapid.SampledFrom(users[:4]).Draw(rt, "new user")).
			Account(rapid.SampledFrom(accounts).Draw(rt, "new acct")).GPUs(1).Build()
		if a, b := fmt.Sprint(sched.CheckSubmit(job, plain)), fmt.Sprint(sched.CheckSubmit(job, given)); a != b {
			rt.Fatalf("CheckSubmit: %q from the jobs, %q with JobUsers", a, b)
		}
		if a, b := sched.Priorities(plain), sched.Priorities(given); !reflect.DeepEqual(a, b) {
			rt.Fatalf("Priorities differ:\n%+v\n%+v", a, b)
		}
		if a, b := sched.Cycle(plain), sched.Cycle(given); !reflect.DeepEqual(a, b) {
			rt.Fatalf("Cycle differs:\n%+v\n%+v", a, b)
		}
	})
}
