package daemon

import (
	"context"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Fair-share usage in the daemon.
//
// d.usage is every association's decayed usage as of d.usageAt: what the
// jobs that ran until then cost, in TRES-billing seconds. It moves forward
// in two places, and only forward:
//
//  1. every pass charges the jobs the store has running from d.usageAt to
//     the pass's time (advanceUsage);
//  2. the end of every run (recordEnd, requeue) first charges the jobs
//     still running, the ending one included, up to the run's end
//     (chargeUntil), and stores the result with the end, in one commit.
//
// So a run's last stretch is charged before the store stops calling it
// running, a restart resumes from the stored usage's time (running jobs are
// charged from there by the first pass), and the jobs that ended while the
// daemon was away are charged up to their ends as reattach records them.
//
// Decay is continuous: each instant's charge is decayed from that instant
// (sched.AdvanceUsage). Slurm decays in steps of PriorityCalcPeriod; at
// the end of each period both give the same usage for what ran before it.
//
// Fair share and pending jobs' priorities are recomputed as Slurm's decay
// thread does, every PriorityCalcPeriod (Priority.Recalc "period", the
// default): the pass due at or after the period's end keeps the usage as
// of then (d.calc), and the core takes fair share and priorities from it
// (sched.Snapshot.Calc) until the next. The first pass after a start
// makes one, as slurmctld's decay thread does when it starts; so nothing
// of it is stored. With Recalc "pass" every pass recomputes them.

// usageClock is the time usage is charged up to: whole seconds, as Slurm
// charges it (time_t) and as the scheduler counts every other time (a
// job's start and limit, the pass's now). Charged to the nanosecond,
// the milliseconds a real start and end take made two accounts whose
// usage per share the simulator finds equal differ by a part in a
// thousand, and their jobs start in another order.
func usageClock(t time.Time) time.Time { return t.Truncate(time.Second) }

// advanceUsage is usage (as of from) moved to `to`: decayed, with the jobs
// snap has running charged for the time between. snap is not changed.
func advanceUsage(snap sched.Snapshot, usage []sched.Usage, from, to time.Time) []sched.Usage {
	if !to.After(from) {
		return usage
	}
	snap.Now, snap.Usage = from, usage
	return sched.AdvanceUsage(snap, to)
}

// usageNow is the usage as of snap.Now, for the views (sshare, sprio)
// between passes: the stored advance plus what the running jobs in snap
// have cost since. It changes nothing.
func (d *Daemon) usageNow(snap sched.Snapshot) []sched.Usage {
	fs := d.liveView().fs
	return advanceUsage(snap, fs.usage, fs.usageAt, usageClock(snap.Now))
}

// withCalc sets what a view's snapshot needs of fair share: the usage now
// (usageNow) and the last recalculation. Between recalculations sshare's
// RawUsage is as Slurm's: what was charged at the last one and at the
// ends of runs since, not the running jobs' time since the last one
// (Slurm charges that at the next).
func (d *Daemon) withCalc(snap *sched.Snapshot) {
	snap.Usage = d.usageNow(*snap)
	snap.Calc = d.liveView().fs.calc
	snap.Usage = chargedUsage(*snap)
}

// chargedUsage is snap.Usage (the usage as of snap.Now, running jobs
// charged as they run) as Slurm has charged it by then when fair share is
// recalculated every period (snap.Calc set): less what the jobs running
// now have cost since the last recalculation, which Slurm charges at the
// next (or at their end). Without a recalculation it is snap.Usage.
func chargedUsage(snap sched.Snapshot) []sched.Usage {
	now := usageClock(snap.Now)
	if snap.Calc.At.IsZero() || !now.After(snap.Calc.At) {
		return snap.Usage
	}
	running := snap
	running.Usage = nil
	running.Now = snap.Calc.At
	since := sched.AdvanceUsage(running, now)
	type key struct{ account, user string }
	less := map[key]float64{}
	for _, u := range since {
		less[key{u.Account, u.User}] += u.Raw
	}
	out := make([]sched.Usage, len(snap.Usage))
	for i, u := range snap.Usage {
		u.Raw = max(0, u.Raw-less[key{u.Account, u.User}])
		out[i] = u
	}
	return out
}

// recalcLocked makes the recalculation due at `at` (usage just advanced
// to it): the first after a start, then the first pass at or after each
// CalcPeriod since, the schedule kept from the first as the decay
// thread's (a pass that comes late does not move the next). With Recalc
// "pass" it clears d.calc: the core then recomputes at every pass. d.mu
// is held.
func (d *Daemon) recalcLocked(pr config.Priority, at time.Time) {
	if pr.Recalc == config.RecalcPass || pr.CalcPeriod <= 0 {
		d.calc, d.nextCalc = sched.Calc{}, time.Time{}
		return
	}
	if !d.calc.At.IsZero() && at.Before(d.nextCalc) {
		return
	}
	if d.nextCalc.IsZero() || d.calc.At.IsZero() {
		d.nextCalc = at
	}
	for !d.nextCalc.After(at) {
		d.nextCalc = d.nextCalc.Add(pr.CalcPeriod)
	}
	d.calc = sched.Calc{At: at, Usage: slices.Clone(d.usage)}
	d.log.Debug("fair share and priorities recalculated", "at", at, "next", d.nextCalc)
}

// chargeUntil advances usage to t, where a run ends at t: every job the
// store still has running, the ending one included, is charged up to t. It
// returns the usage to store with the end. A t before the last advance (the
// pass that read the job still running came after its end) charges nothing
// more: the pass already charged it, by at most the time between.
func (d *Daemon) chargeUntil(ctx context.Context, t time.Time) []store.Usage {
	cfg := d.config()
	jobs, err := d.st.JobRefs(ctx, store.Filter{Since: d.now().Add(-max(cfg.MinJobAge, time.Minute)),
		States: []slurm.JobState{slurm.Running}})
	if err != nil {
		d.log.Error("reading running jobs to charge usage", "err", err)
		jobs = nil
	}
	gs := d.liveView().sample()
	t = usageClock(t)
	snap := mapSnapshot(cfg, gs, false, t, jobs) // billing needs no drain, no dependencies
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.After(d.usageAt) {
		d.usage = advanceUsage(snap.Snapshot, d.usage, d.usageAt, t)
		d.usageAt = t
		d.publishLocked()
	}
	return storeUsage(d.usage)
}

// resetUsageLocked clears all usage when PriorityUsageResetPeriod's next
// reset after the last advance has come by at: the jobs running are
// charged up to the reset first, and usage counts from it. It returns the
// reset's time, zero when none was due. A reset that came while the daemon
// was away is made at the first pass. d.mu is held.
func (d *Daemon) resetUsageLocked(snap sched.Snapshot, period string, at time.Time) time.Time {
	next := sched.NextUsageReset(period, d.usageAt, time.Local)
	if next.IsZero() || at.Before(next) {
		return time.Time{}
	}
	charged := advanceUsage(snap, d.usage, d.usageAt, next)
	d.usage, d.usageAt = sched.ResetUsage(charged, next), next
	return next
}

// loadUsage reads the stored usage at start-up; usage resumes from the
// time it was stored at, so that the first pass charges the jobs that kept
// running while the daemon was away. With UsageResetPeriod NOW it starts
// from nothing (slurmctld clears usage when it starts with NOW).
func (d *Daemon) loadUsage(ctx context.Context, now time.Time) error {
	us, err := d.st.Usage(ctx)
	if err != nil {
		return err
	}
	if d.config().Priority.UsageResetPeriod == "NOW" && len(us) > 0 {
		d.usage, d.usageAt = sched.ResetUsage(schedUsage(us), usageClock(now)), usageClock(now)
		d.usageSaved = time.Time{}
		d.log.Info("fair-share usage cleared (Priority.UsageResetPeriod NOW)")
		return nil
	}
	d.usage, d.usageAt = schedUsage(us), usageClock(now)
	if len(us) > 0 {
		d.usageAt = slices.MaxFunc(us, func(a, b store.Usage) int { return a.AsOf.Compare(b.AsOf) }).AsOf
		if d.usageAt.After(now) { // a clock set back: charge nothing twice
			d.usageAt = usageClock(now)
		}
	}
	d.usageSaved = d.usageAt
	return nil
}

// usageSaveEvery is how often a pass writes usage that no job's end has
// written: PriorityCalcPeriod, at most a minute (a daemon killed without
// warning loses no usage that ended runs charged, and running jobs are
// charged again from the stored time after a restart, so this bounds only
// the work a restart redoes).
func usageSaveEvery(calc time.Duration) time.Duration {
	return min(max(calc, time.Second), time.Minute)
}

// lastUsageSave is when usage was last written.
func (d *Daemon) lastUsageSave() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.usageSaved
}

// saveUsage writes the decayed usage, so a restart keeps fair share.
func (d *Daemon) saveUsage(ctx context.Context) {
	d.mu.Lock()
	us := storeUsage(d.usage)
	d.usageSaved = d.now()
	d.mu.Unlock()
	if len(us) == 0 {
		return
	}
	if err := d.st.Update(ctx, func(tx *store.Tx) error { return tx.PutUsage(us...) }); err != nil {
		d.log.Error("saving usage", "err", err)
	}
}
