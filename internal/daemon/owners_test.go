package daemon

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
)

// stuck is how long a read-only route may take with mu held before the
// test calls it stuck. A route that takes mu waits until it is released,
// however long that is: the bound only says when to stop waiting.
const stuck = 30 * time.Second

// Every read-only route (every GET in routes(), walked from routes() so a
// new one cannot escape), sbatch's submission and the web listener's
// state answer while
// another goroutine holds mu, as a scheduling pass does: they read the
// published view (liveView: configuration, decisions, priorities, the GPU
// sample, the usage), what was set at start, and state with a lock of its
// own, never mu. A route never waits for a scheduling pass.
func TestReadOnlyRoutesNeverTakeMu(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	ids := secretJobs(t, d)
	// Usage and a budget to publish, so that sshare, sprio and the web's
	// budgets read them (from the view) rather than skip them.
	d.mu.Lock()
	cfg := *d.cfg
	cfg.Accounts = append([]config.Account(nil), cfg.Accounts...)
	for i := range cfg.Accounts {
		cfg.Accounts[i].GrpTRESMins = config.TRES{"gres/gpu": 600}
	}
	d.cfg = &cfg
	d.usage, d.usageAt = []sched.Usage{{Account: "root", User: "alice", Raw: 3600}}, time.Now()
	d.budgetUsage = []sched.TRESUsage{{Account: "root", GPU: 60}}
	d.publishLocked()
	d.mu.Unlock()

	d.mu.Lock() // as a pass would, for as long as it likes
	defer d.mu.Unlock()
	answered := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(stuck):
			t.Errorf("%s did not answer in %v while mu was held: a read-only route must read the published view (liveView), not take mu", what, stuck)
		}
	}
	n := 0
	for _, r := range d.routes() {
		// sbatch too: its checks read the view and their own jobs.
		if r.Method != "GET" && (r.Method != "POST" || r.Path != api.PathJobs) {
			continue
		}
		req, _ := routeRequest(t, r, ids)
		answered(r.Method+" "+r.Path, func() { call(t, r, req, rootCaller, false) })
		n++
	}
	if n < 10 {
		t.Errorf("walked %d GET routes, want the 15 or so of routes()", n)
	}
	answered("the web listener's state", func() {
		if _, err := (webSource{d}).State(context.Background()); err != nil {
			t.Errorf("web state: %v", err)
		}
	})
}

// One stop per job: a second is refused while the first is under way
// (scontrol yield answers "already being stopped", a pass's preemption
// waits); its end takes it whole; an end that could not be recorded keeps
// what the stop meant, less a yield's plan (the end used it), for the
// next pass to record again.
func TestOneStopIntentPerJob(t *testing.T) {
	var s stopIntents
	plan := &yieldPlan{}
	if !s.claim(7, stopIntent{kind: stopYield, yield: plan}) {
		t.Fatal("the first stop of job 7 was refused")
	}
	if s.claim(7, stopIntent{kind: stopPreempt, note: "preempted for job 8"}) {
		t.Error("a second stop of job 7 was taken while the yield is under way")
	}
	if !s.busy(7) || s.busy(8) {
		t.Errorf("busy(7)=%v busy(8)=%v, want true false", s.busy(7), s.busy(8))
	}
	if in := s.take(7); in.kind != stopYield || in.yield != plan {
		t.Errorf("took %+v, want the yield with its plan", in)
	}
	if in := s.take(7); in.kind != stopOwn || s.busy(7) {
		t.Errorf("took %+v after the end, want none (the job's own end)", in)
	}
	s.keepUnsettled(7, stopIntent{kind: stopYield, yield: plan})
	s.keepUnsettled(9, stopIntent{kind: stopRequeue, note: "requeued by alice"})
	s.keepUnsettled(10, stopIntent{})
	ids := s.retry()
	slices.Sort(ids)
	if !slices.Equal(ids, []uint32{7, 9, 10}) {
		t.Errorf("retried %v, want [7 9 10]", ids)
	}
	if in := s.take(7); in.kind != stopYield || in.yield != nil {
		t.Errorf("job 7 retried as %+v, want a yield without its plan (a plain requeue)", in)
	}
	if in := s.take(9); in.kind != stopRequeue || in.note != "requeued by alice" {
		t.Errorf("job 9 retried as %+v, want the requeue with its note", in)
	}
	if s.busy(10) || len(s.retry()) != 0 {
		t.Error("a job's own end was kept as a stop, or the unsettled were kept after a retry")
	}
}
