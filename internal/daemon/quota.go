package daemon

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// Budgets (an [[Account]]'s GrpTRESMins) in the daemon.
//
// The usage a budget is checked against is a function of the job records:
// every run since the last PriorityUsageResetPeriod reset, decayed by
// PriorityDecayHalfLife (sched.AccountTRESUsage). Each pass reads those
// runs when some account has a budget, so a budget needs no counter of its
// own: a restart, a requeue or a job that ended while the daemon was away
// are counted from the records as sacct counts them.

// hasBudgets reports whether some account or QOS has a GrpTRESMins.
func hasBudgets(cfg *config.Config) bool {
	for _, a := range cfg.Accounts {
		if len(a.GrpTRESMins) > 0 {
			return true
		}
	}
	for _, q := range cfg.QOS {
		if len(q.GrpTRESMins) > 0 {
			return true
		}
	}
	return false
}

// budgetSince is where budget usage starts counting at now: the last
// reset (for NOW, the daemon's start, when slurmctld clears usage), or,
// with no reset, far enough back that older usage has decayed to nothing
// (2^-40 of it is left after 40 half-lives).
func budgetSince(cfg *config.Config, now, started time.Time) time.Time {
	switch p := cfg.Priority.UsageResetPeriod; p {
	case "NOW":
		return started
	case "NONE", "":
		for _, q := range cfg.QOS {
			if len(q.GrpTRESMins) > 0 && q.HasFlag("NoDecay") {
				return time.Time{} // its usage never decays: all of it counts
			}
		}
		if hl := cfg.Priority.DecayHalfLife; hl > 0 {
			return now.Add(-40 * hl)
		}
		return time.Time{}
	default:
		return sched.PrevUsageReset(p, now, time.Local)
	}
}

// budgetRuns is the runs a budget counts, kept between passes: reading
// every run since the last reset at each pass costs a second and more
// for 10,000 runs (store BenchmarkRunsSince). Ended runs do not change, so
// they are kept; each pass adds those its own job list (every job not
// ended before MinJobAge, at least a minute) shows ended, and reads the
// running ones from it. It reads the store again when the window moves (a
// reset), at the first pass, and when a run it saw running is not in the
// pass's list as it was (a requeue archived it, or it ended out of the
// list's window).
type budgetRuns struct {
	since   time.Time
	ended   map[runKey]sched.Run
	running map[runKey]bool
}

type runKey struct {
	id       uint32
	restarts int
}

// addBudgets puts each account's and QOS's usage per TRES and the next
// reset into snap, for the core's GrpTRESMins checks, and keeps the usage
// for the views (sshare, /metrics). jobs is the pass's own job list.
// Nothing when no account or QOS has a budget.
func (d *Daemon) addBudgets(ctx context.Context, cfg *config.Config, snap *sched.Snapshot, jobs []*store.Job) {
	if !hasBudgets(cfg) {
		d.mu.Lock()
		d.budgetUsage, d.qosBudgetUsage = nil, nil
		d.publishLocked()
		d.mu.Unlock()
		return
	}
	now := snap.Now
	snap.Config.NextUsageReset = sched.NextUsageReset(cfg.Priority.UsageResetPeriod, now, time.Local)
	since := budgetSince(cfg, now, d.started)
	runs, err := d.budgetRunsAt(ctx, cfg, snap.Nodes[0], since, jobs)
	if err != nil {
		if ctx.Err() != nil {
			return // stopping
		}
		// Without the records no budget can be judged: keep the last
		// usage known rather than let every job through.
		d.log.Error("reading runs for GrpTRESMins", "err", err)
		fs := d.liveView().fs
		snap.TRESUsage, snap.QOSUsage = fs.budgetUsage, fs.qosBudgetUsage
		return
	}
	snap.TRESUsage = sched.AccountTRESUsage(*snap, runs, since)
	snap.QOSUsage = sched.QOSTRESUsage(*snap, runs, since)
	d.mu.Lock()
	d.budgetUsage, d.qosBudgetUsage = snap.TRESUsage, snap.QOSUsage
	d.publishLocked()
	d.mu.Unlock()
	d.tellBudgets(cfg, snap.TRESUsage, now, snap.Config.NextUsageReset)
}

// budgetRunsAt is every run since `since`: the kept ended runs and the
// running ones, read again from the store when budgetRuns says so.
func (d *Daemon) budgetRunsAt(ctx context.Context, cfg *config.Config, node sched.Node, since time.Time, jobs []*store.Job) ([]sched.Run, error) {
	c := &d.budgetRuns
	listed := map[runKey]bool{}
	for i := range jobs {
		listed[runKey{jobs[i].ID, jobs[i].Restarts}] = true
	}
	full := c.ended == nil || !c.since.Equal(since)
	for k := range c.running {
		full = full || !listed[k]
	}
	if full {
		all, err := d.st.Runs(ctx, store.Filter{Since: since})
		if err != nil {
			c.ended = nil
			return nil, err
		}
		jobs = make([]*store.Job, len(all))
		for i := range all {
			jobs[i] = &all[i]
		}
		c.since, c.ended = since, map[runKey]sched.Run{}
	}
	c.running = map[runKey]bool{}
	var running []sched.Run
	for _, j := range jobs {
		if j.Start.IsZero() {
			continue
		}
		sj := schedJob(j, j.ID, j.ArrayTaskID, cfg.ShardSize, node)
		sj.Alloc = schedAlloc(j.Alloc)
		k := runKey{j.ID, j.Restarts}
		if j.End.IsZero() {
			running = append(running, sched.Run{Job: sj})
			c.running[k] = true
			continue
		}
		c.ended[k] = sched.Run{Job: sj, End: j.End}
	}
	// In a fixed order, so that the sums are the same at every pass.
	keys := slices.SortedFunc(maps.Keys(c.ended), func(a, b runKey) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.restarts, b.restarts))
	})
	runs := make([]sched.Run, 0, len(keys)+len(running))
	for _, k := range keys {
		runs = append(runs, c.ended[k])
	}
	return append(runs, running...), nil
}

// tellBudgets sends BUDGET_80 and BUDGET_100 (webhooks, and mail to the
// account's users) when an account's usage of a budget first reaches 80 %
// or all of it; once usage falls back (a reset, decay), the next crossing
// is told again. Called by the loop alone. What was told lives in memory:
// a restarted daemon tells a spent budget once more.
func (d *Daemon) tellBudgets(cfg *config.Config, usage []sched.TRESUsage, now, resets time.Time) {
	if d.budgetTold == nil {
		d.budgetTold = map[string]int{}
	}
	used := map[string]sched.TRESUsage{}
	for _, u := range usage {
		used[u.Account] = u
	}
	for _, a := range cfg.Accounts {
		for _, tres := range []string{"cpu", "billing", "gres/gpu"} {
			limit := a.GrpTRESMins[tres]
			if limit == 0 {
				continue
			}
			u := used[a.Name]
			secs := map[string]float64{"cpu": u.CPU, "billing": u.Billing, "gres/gpu": u.GPU}[tres]
			mins := int64(secs / 60)
			level := 0
			switch {
			case mins >= limit:
				level = 100
			case mins*100 >= 80*limit:
				level = 80
			}
			key := a.Name + "\x00" + tres
			told := d.budgetTold[key]
			d.budgetTold[key] = level
			if level <= told {
				continue
			}
			kind := notify.Budget80
			if level == 100 {
				kind = notify.Budget100
			}
			b := &notify.Budget{Account: a.Name, TRES: tres, Used: mins, Limit: limit, Resets: resets, Users: accountUsers(cfg, a.Name)}
			d.log.Info("budget used", "account", a.Name, "tres", tres, "used_minutes", mins, "limit_minutes", limit, "event", kind)
			d.notifier.Load().Send(notify.Event{Kind: kind, Time: now, Budget: b})
		}
	}
}

// accountUsers are the users of an account, in the configuration's order.
func accountUsers(cfg *config.Config, account string) []string {
	var out []string
	add := func(u string) {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	for _, a := range cfg.Accounts {
		if a.Name == account {
			for _, u := range a.Users {
				add(u)
			}
		}
	}
	for _, u := range cfg.Users {
		if u.Account == account {
			add(u.Name)
		}
	}
	return out
}

// lastBudgets puts the usage per TRES the last pass counted, and the next
// reset, into snap: what a submission (and --test-only) is judged by.
func (d *Daemon) lastBudgets(cfg *config.Config, snap *sched.Snapshot) {
	if !hasBudgets(cfg) {
		return
	}
	snap.Config.NextUsageReset = sched.NextUsageReset(cfg.Priority.UsageResetPeriod, snap.Now, time.Local)
	fs := d.liveView().fs
	snap.TRESUsage, snap.QOSUsage = fs.budgetUsage, fs.qosBudgetUsage
}

// budgets are the GPU-minute budgets (GrpTRESMins gres/gpu) with the usage
// the last pass counted, for the dashboard and /metrics.
func (d *Daemon) budgets(cfg *config.Config, now time.Time) []web.Budget {
	usage := d.liveView().fs.budgetUsage
	var resets int64
	if r := sched.NextUsageReset(cfg.Priority.UsageResetPeriod, now, time.Local); !r.IsZero() {
		resets = r.Unix()
	}
	var out []web.Budget
	for _, a := range cfg.Accounts {
		limit := a.GrpTRESMins["gres/gpu"]
		if limit == 0 {
			continue
		}
		b := web.Budget{Account: a.Name, Limit: limit, Resets: resets}
		for _, u := range usage {
			if u.Account == a.Name {
				b.Used = u.GPU / 60
			}
		}
		out = append(out, b)
	}
	return out
}
