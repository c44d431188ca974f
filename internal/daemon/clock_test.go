package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// fakeClock is a Clock that moves only when the test says.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
	// passes counts the passes of the daemon that runs on the clock.
	passes passCount
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// clockDaemon is a real daemon (store, socket, loop; no GPUs, so no job
// runs) on a fake clock, started over a state directory that seed may fill
// first. It returns a client, a function that stops the daemon, and the
// state directory.
func clockDaemon(t *testing.T, conf string, clock Clock, seed func(st *store.Store)) (*sockclient.Client, func(), string) {
	t.Helper()
	return clockDaemonIn(t, t.TempDir(), conf, clock, seed)
}

// clockDaemonIn is clockDaemon in the directory dir: a second daemon
// started in the same one is the first restarted.
func clockDaemonIn(t *testing.T, dir, conf string, clock Clock, seed func(st *store.Store)) (*sockclient.Client, func(), string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	sock, state := filepath.Join(dir, "d.sock"), filepath.Join(dir, "state")
	path := filepath.Join(dir, "conf.toml")
	conf = fmt.Sprintf("SocketPath        = %q\nStateSaveLocation = %q\n", sock, state) + conf
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if seed != nil {
		st, err := store.Open(state)
		if err != nil {
			t.Fatal(err)
		}
		seed(st)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	nd := &nvmlDaemon{t: t, dir: dir, logs: &syncBuffer{}}
	opts := Options{ConfigPath: path, Clock: clock}
	if fc, ok := clock.(*fakeClock); ok {
		opts.Passed = fc.passes.add
	}
	stop := nd.run(opts, false)
	return nd.c, stop, state
}

// aliceUsage is alice's raw usage in lab, as sshare shows it.
func aliceUsage(t *testing.T, c *sockclient.Client) float64 {
	t.Helper()
	var rows []api.ShareRow
	if err := c.Do(context.Background(), "GET", api.PathShares, nil, &rows); err != nil {
		t.Fatalf("sshare: %v", err)
	}
	for _, r := range rows {
		if r.Account == "lab" && r.User == "alice" {
			return r.RawUsage
		}
	}
	t.Fatalf("sshare has no row for alice in lab: %+v", rows)
	return 0
}

// Fair-share usage decays by half every PriorityDecayHalfLife of the
// daemon's clock: hours of decay pass in no time on a fake clock, and
// sshare shows exactly the configured halving. The loop's passes run on
// the same clock, so the usage a pass decays and the daemon saves when it
// stops is the fake clock's too.
func TestFairShareUsageDecaysOnTheDaemonsClock(t *testing.T) {
	t.Parallel()
	const (
		halfLife = 2 * time.Hour
		raw      = 7200.0 // alice's stored usage: two GPU-hours
	)
	t0 := time.Date(2030, time.January, 7, 9, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	conf := `GPUSampleInterval = 1

[Node]
NodeName = "gpu01"
CPUs     = 4
GPUs     = "none"

[Priority]
DecayHalfLife = "2:00:00"

[[Account]]
Name  = "lab"
Users = ["alice"]
`
	c, stop, state := clockDaemon(t, conf, clock, func(st *store.Store) {
		err := st.Update(context.Background(), func(tx *store.Tx) error {
			return tx.PutUsage(store.Usage{Account: "lab", User: "alice", Raw: raw, AsOf: t0})
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	steps := []struct {
		advance time.Duration
		want    float64
	}{
		{0, raw},
		{halfLife, raw / 2},     // one half-life
		{2 * halfLife, raw / 8}, // three in all
	}
	for _, s := range steps {
		clock.advance(s.advance)
		if got := aliceUsage(t, c); got != s.want {
			t.Errorf("after %v of the daemon's clock: alice's raw usage = %v, want %v (%v halved every %v)",
				clock.Now().Sub(t0), got, s.want, raw, halfLife)
		}
	}

	// The loop passes every GPUSampleInterval (real time) at the fake
	// clock's now; the usage it decays is written when the daemon stops.
	// Wait for a pass to have charged up to the clock's now: sshare
	// cannot tell, so wait for one that began after the last advance.
	clock.passes.wait(t, 1, "a pass at the clock's now")
	stop()
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	us, err := st.Usage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Usage{{Account: "lab", User: "alice", Raw: raw / 8, AsOf: t0.Add(3 * halfLife)}}
	if diff := cmp.Diff(want, us, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("usage saved at stop (-want +got):\n%s", diff)
	}
}

// A pending job's age factor grows with the daemon's clock up to
// PriorityMaxAge: sprio shows WeightAge times the wait over MaxAge, in
// whole seconds, after an hour of the fake clock and at the cap after
// six. The job waits in a DOWN partition, so that nothing runs. The
// priority is recomputed every CalcPeriod (5 minutes, passed at once by
// each step), at the first pass after it: the test waits for that pass
// (the loop's, every GPUSampleInterval of real time).
func TestAgePriorityGrowsOnTheDaemonsClock(t *testing.T) {
	t.Parallel()
	const (
		weight = 1000
		maxAge = 4 * time.Hour
	)
	// The job's submit time is the store's commit, on the machine's clock:
	// the fake one starts there, and the wait is counted from the submit
	// time the job shows.
	clock := &fakeClock{t: time.Now().Truncate(time.Second)}
	conf := `GPUSampleInterval = 1

[Node]
NodeName = "gpu01"
CPUs     = 4
GPUs     = "none"

[Priority]
WeightAge = 1000
MaxAge    = "4:00:00"

[[Partition]]
PartitionName = "debug"
Default       = true
State         = "DOWN"
`
	c, _, _ := clockDaemon(t, conf, clock, nil)
	ctx := context.Background()
	cl, err := jobscript.ParseCommandLine([]string{"job.sh"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\ntrue\n"), Command: cl, Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var sub api.Submitted
	if err := c.Do(ctx, "POST", api.PathJobs, api.Submit{Request: *req, Env: []string{"PATH=/usr/bin:/bin"}, Cwd: t.TempDir()}, &sub); err != nil {
		t.Fatalf("submitting: %v", err)
	}
	var jobs []api.Job
	if err := c.Do(ctx, "GET", fmt.Sprintf("%s?id=%d", api.PathJobs, sub.JobID), nil, &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("job %d: %v (%d rows)", sub.JobID, err, len(jobs))
	}
	submit := jobs[0].Submit
	if lag := submit.Unix() - clock.Now().Unix(); lag < 0 || lag > 1 {
		t.Fatalf("the job was submitted at %v, %ds from the fake clock's start %v: the waits below would not be the clock's", submit, lag, clock.Now())
	}
	t.Cleanup(func() {
		_ = c.Do(ctx, "POST", api.PathCancel, api.Cancel{Jobs: []string{fmt.Sprint(sub.JobID)}}, nil)
	})
	age := func() float64 {
		t.Helper()
		var rows []api.PriorityRow
		if err := c.Do(ctx, "GET", api.PathPriorities, nil, &rows); err != nil {
			t.Fatalf("sprio: %v", err)
		}
		for _, r := range rows {
			if r.JobID == fmt.Sprint(sub.JobID) {
				return r.Age
			}
		}
		t.Fatalf("sprio has no row for job %d: %+v", sub.JobID, rows)
		return 0
	}
	for _, step := range []time.Duration{time.Hour, 5 * time.Hour} {
		clock.advance(step)
		wait := clock.Now().Unix() - submit.Unix()
		want := float64(weight) * min(1, float64(wait)/maxAge.Seconds())
		clock.passes.wait(t, 1, "a pass on the moved clock, which recomputes the priorities")
		if got := age(); got != want {
			t.Errorf("after %ds of waiting on the daemon's clock: age factor %v, want %v (WeightAge %d, MaxAge %v)",
				wait, got, want, weight, maxAge)
		}
	}
}

// PriorityUsageResetPeriod clears all usage at its boundaries of the
// daemon's clock (DAILY: midnight, local time), and the cleared usage is
// what a restart finds; NOW clears it when the daemon starts.
func TestUsageResetPeriodClearsUsage(t *testing.T) {
	t.Parallel()
	const raw = 7200.0
	t0 := time.Date(2030, time.January, 7, 23, 0, 0, 0, time.Local)
	conf := func(period string) string {
		return `GPUSampleInterval = 1

[Node]
NodeName = "gpu01"
CPUs     = 4
GPUs     = "none"

[Priority]
DecayHalfLife    = "0"
UsageResetPeriod = "` + period + `"

[[Account]]
Name  = "lab"
Users = ["alice"]
`
	}
	seed := func(st *store.Store) {
		err := st.Update(context.Background(), func(tx *store.Tx) error {
			return tx.PutUsage(store.Usage{Account: "lab", User: "alice", Raw: raw, AsOf: t0})
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	t.Run("DAILY", func(t *testing.T) {
		clock := &fakeClock{t: t0}
		c, stop, state := clockDaemon(t, conf("DAILY"), clock, seed)
		clock.advance(30 * time.Minute)
		if got := aliceUsage(t, c); got != raw {
			t.Fatalf("before midnight: alice's usage %v, want %v", got, raw)
		}
		clock.advance(time.Hour) // 00:30: midnight came by
		// A pass makes the reset; they run every GPUSampleInterval.
		clock.passes.wait(t, 1, "a pass after midnight")
		if got := aliceUsage(t, c); got != 0 {
			t.Fatalf("after midnight: alice's usage %v, want 0", got)
		}
		stop()
		st, err := store.Open(state)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		us, err := st.Usage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(us) != 1 || us[0].Raw != 0 || us[0].AsOf.Before(t0.Add(time.Hour)) {
			t.Errorf("stored usage after the reset: %+v, want alice's 0 as of midnight or later", us)
		}
	})
	t.Run("NOW", func(t *testing.T) {
		clock := &fakeClock{t: t0}
		c, _, _ := clockDaemon(t, conf("NOW"), clock, seed)
		if got := aliceUsage(t, c); got != 0 {
			t.Errorf("a daemon started with NOW: alice's usage %v, want 0", got)
		}
	})
}

// CheckpointKeepDays: the first pass removes the checkpoint directory of a
// job that ended longer ago than that, and keeps a younger one's.
func TestCheckpointKeepDaysRemovesOldCheckpoints(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: checkpoint directories belong to the jobs' users")
	}
	t0 := time.Date(2030, time.January, 20, 12, 0, 0, 0, time.UTC)
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	pattern := ckpt + "/%u/%j"
	old := store.Job{ID: 1, User: "root", State: "COMPLETED", ArrayTaskID: -1,
		Submit: t0.Add(-9 * 24 * time.Hour), Start: t0.Add(-9 * 24 * time.Hour), End: t0.Add(-8 * 24 * time.Hour)}
	young := old
	young.ID, young.End = 2, t0.Add(-6*24*time.Hour)
	for _, j := range []store.Job{old, young} {
		dir := checkpointDir(pattern, j)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "weights"), []byte("w"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`GPUSampleInterval = 1
CheckpointDir      = %q
CheckpointKeepDays = 7

[Node]
NodeName = "gpu01"
CPUs     = 4
GPUs     = "none"
`, pattern)
	clock := &fakeClock{t: t0}
	clockDaemon(t, conf, clock, func(st *store.Store) {
		if _, err := st.Submit(context.Background(), []store.NewJob{{Job: old}, {Job: young}}); err != nil {
			t.Fatal(err)
		}
	})
	gone := func(j store.Job) bool {
		_, err := os.Stat(checkpointDir(pattern, j))
		return errors.Is(err, os.ErrNotExist)
	}
	clock.passes.wait(t, 1, "a pass, which sweeps the checkpoints")
	if !gone(old) {
		t.Errorf("the checkpoint of job 1, ended 8 days ago, is still there (CheckpointKeepDays = 7)")
	}
	if gone(young) {
		t.Errorf("the checkpoint of job 2, ended 6 days ago, was removed (CheckpointKeepDays = 7)")
	}
}
