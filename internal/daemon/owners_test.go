package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
)

// stuck is how long a read-only route may take with mu held before the
// test calls it stuck. A route that takes mu waits until it is released,
// however long that is: the bound only says when to stop waiting.
const stuck = 30 * time.Second

// Every read-only route (every GET in routes(), walked from routes() so a
// new one cannot escape) and the web listener's state answer while
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
		if r.Method != "GET" {
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
