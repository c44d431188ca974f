package sched_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// TestAResumedJobRunsItsMinimum: job 10 resumed after a yield `ran` ago;
// the scheduler's own stops (a payback yield, a shrink, a regrowth) spare
// it until it has run Config.YieldMinRun, or the checkpoint interval it
// declared when that is longer. A job that was never yielded is spared
// only its first second, as before; Slurm's preemption of a REQUEUE
// partition by a higher tier keeps Slurm's rules.
func TestAResumedJobRunsItsMinimum(t *testing.T) {
	h := time.Hour
	running := func(ran time.Duration) *st.JobBuilder {
		return st.Job(10).User("bob").GPUs(4).Yieldable().Priority(100).Time(10*h).Running(st.Epoch.Add(-ran), "gpu01", 0, 1, 2, 3)
	}
	waiting := st.Job(20).User("alice").GPUs(1).Priority(200).Time(30 * time.Minute)
	minRun := func(d time.Duration) func(*sched.Config) {
		return func(c *sched.Config) { yieldOn(false)(c); c.YieldMinRun = d }
	}
	stopped := []sched.Preempt{{JobID: 10, For: 20}}
	tests := []struct {
		name string
		cfg  func(*sched.Config)
		job  *st.JobBuilder
		want []sched.Preempt
	}{
		{"a resumed job that has not run its minimum is not yielded", minRun(10 * time.Minute), running(9*time.Minute + 59*time.Second).Resumed(), nil},
		{"once it has, it is", minRun(10 * time.Minute), running(10 * time.Minute).Resumed(), stopped},
		{"a longer checkpoint interval it declared counts instead", minRun(10 * time.Minute), running(15 * time.Minute).Resumed().CheckpointInterval(20 * time.Minute), nil},
		{"and once run, it is yielded", minRun(10 * time.Minute), running(20 * time.Minute).Resumed().CheckpointInterval(20 * time.Minute), stopped},
		{"a shorter one does not shorten the minimum", minRun(10 * time.Minute), running(5 * time.Minute).Resumed().CheckpointInterval(time.Minute), nil},
		{"without a minimum the declared interval counts", minRun(0), running(90 * time.Second).Resumed().CheckpointInterval(2 * time.Minute), nil},
		{"without either, a resumed job is spared its first second only", minRun(0), running(time.Second).Resumed(), stopped},
		{"a job that was never yielded is spared its first second only", minRun(10 * time.Minute), running(time.Second), stopped},
		{"nor in that second", minRun(10 * time.Minute), running(0), nil},
	}
	own := func(c *sched.Config) { yieldOn(true)(c); c.YieldMinRun = 10 * time.Minute }
	higher := func(ran time.Duration) *st.JobBuilder {
		return st.Job(10).User("alice").GPUs(4).Yieldable().Priority(300).Time(10*h).Running(st.Epoch.Add(-ran), "gpu01", 0, 1, 2, 3)
	}
	tests = append(tests, []struct {
		name string
		cfg  func(*sched.Config)
		job  *st.JobBuilder
		want []sched.Preempt
	}{
		// YieldOwn reorders a user's own queue, but not between two
		// resumed jobs, which the order ranks by priority: two of one
		// account that did not fit together stopped each other in turn.
		{"YieldOwn stops the same user's job of higher priority", own, higher(time.Hour), stopped},
		{"and one resumed after a yield, past its minimum", own, higher(time.Hour).Resumed(), stopped},
	}...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := st.Cycle(t, fourGPUs().Configure(tc.cfg).Job(tc.job, waiting).Build())
			if diff := cmp.Diff(tc.want, plan.Preempts); diff != "" {
				t.Errorf("preempts (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a resumed job that has not run its minimum is not shrunk", func(t *testing.T) {
		for _, ran := range []time.Duration{5 * time.Minute, 10 * time.Minute} {
			snap := fourGPUs().Configure(func(c *sched.Config) { c.Shrink, c.YieldMinRun = true, 10*time.Minute }).
				Job(running(ran).Resumed(), waiting).Build()
			plan := st.Cycle(t, snap)
			if got, want := len(plan.Shrinks), map[bool]int{false: 0, true: 1}[ran >= 10*time.Minute]; got != want {
				t.Errorf("after %s: %d shrinks, want %d: %+v", ran, got, want, plan.Shrinks)
			}
		}
	})
	t.Run("nor grown back", func(t *testing.T) {
		for _, ran := range []time.Duration{5 * time.Minute, 10 * time.Minute} {
			snap := fourGPUs().Configure(func(c *sched.Config) {
				c.ShrinkRegrow, c.YieldCost, c.YieldMinRun = true, 12*time.Minute, 10*time.Minute
			}).
				Job(st.Job(10).User("bob").GPUs(2).Shrunk(4).Resumed().Yieldable().Time(10*h).Running(st.Epoch.Add(-ran), "gpu01", 0, 1)).Build()
			plan := st.Cycle(t, snap)
			if got, want := len(plan.Grows), map[bool]int{false: 0, true: 1}[ran >= 10*time.Minute]; got != want {
				t.Errorf("after %s: %d grows, want %d: %+v", ran, got, want, plan.Grows)
			}
		}
	})
	t.Run("YieldOwn does not let a resumed job stop another resumed job", func(t *testing.T) {
		snap := fourGPUs().Configure(own).Job(higher(time.Hour).Resumed(),
			st.Job(20).User("alice").GPUs(1).Priority(200).Time(30*time.Minute).Resumed()).Build()
		if plan := st.Cycle(t, snap); len(plan.Preempts) != 0 {
			t.Errorf("preempts %+v, want none", plan.Preempts)
		}
	})
	t.Run("a higher tier's preemption of a REQUEUE partition keeps Slurm's rules", func(t *testing.T) {
		snap := fourGPUs().Configure(minRun(10*time.Minute)).
			Part(st.Part("gpu").Default().Tier(1), st.Part("scav").Tier(0).Requeue()).
			Job(running(time.Minute).Partition("scav").Resumed(), waiting).Build()
		plan := st.Cycle(t, snap)
		if diff := cmp.Diff(stopped, plan.Preempts); diff != "" {
			t.Errorf("preempts (-want +got):\n%s", diff)
		}
	})
}

// TestResumedJobsDoNotThrash plays the thrash of issue 24 (item 11) out
// on the harness, a pass every second. Job 10 (2 GPUs, yieldable, low
// priority) resumed after a yield; three short jobs of higher priority
// wait for the two GPUs that job 1 does not hold. The order puts the
// resumed job first, so it starts; a second later the first short job,
// which outranks it, found it worth stopping, and the next short job did
// the same after each start: job 10 ran a second at a time. Now each of
// its runs after a yield lasts at least the 10-minute minimum, so it
// reaches a checkpoint every time, and the short jobs still go ahead of
// it once it has.
func TestResumedJobsDoNotThrash(t *testing.T) {
	for _, tc := range []struct {
		minRun time.Duration
		// shortest is the shortest run of job 10 that a yield ended.
		shortest time.Duration
	}{
		{0, time.Second},
		{10 * time.Minute, 10 * time.Minute},
	} {
		t.Run(fmt.Sprintf("YieldMinRun=%s", tc.minRun), func(t *testing.T) {
			snap := fourGPUs().Configure(func(c *sched.Config) { yieldOn(false)(c); c.YieldMinRun = tc.minRun }).Job(
				st.Job(1).User("carol").GPUs(2).Priority(900).Time(10*time.Hour).Running(st.Epoch.Add(-time.Hour), "gpu01", 0, 1),
				st.Job(10).User("bob").GPUs(2).Yieldable().Nice(1_000_000).Time(time.Hour).Resumed(),
				st.Job(21).User("alice").GPUs(2).Priority(200).Time(10*time.Minute),
				st.Job(22).User("alice").GPUs(2).Priority(200).Time(10*time.Minute),
				st.Job(23).User("alice").GPUs(2).Priority(200).Time(10*time.Minute),
			).Build()
			h := st.NewHarness(t, snap)
			for id := uint32(21); id <= 23; id++ {
				h.Runtime(id, 5*time.Minute)
			}
			var runs []time.Duration // job 10's runs that a yield ended
			for range 3 * 3600 {
				j := h.Job(10)
				plan := h.Cycle()
				for _, p := range plan.Preempts {
					if p.JobID == 10 {
						runs = append(runs, h.Snap.Now.Sub(j.Start))
					}
				}
				if h.Job(10).State == slurm.Completed || h.Job(10).State == slurm.Timeout {
					break
				}
				h.Advance(time.Second)
			}
			if len(runs) == 0 {
				t.Fatalf("job 10 was never yielded: the scene does not play")
			}
			if got := slices.Min(runs); got != tc.shortest {
				t.Errorf("job 10's runs ended by a yield: %v; the shortest %s, want %s", runs, got, tc.shortest)
			}
			for id := uint32(21); id <= 23; id++ {
				if s := h.Job(id).State; s != slurm.Completed {
					t.Errorf("job %d is %s at the end, want COMPLETED", id, s)
				}
			}
			t.Logf("job 10 was yielded %d times; its first runs: %v", len(runs), runs[:min(len(runs), 8)])
		})
	}
}
