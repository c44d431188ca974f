package daemon

import (
	"context"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// When a job becomes eligible.
//
// store.Job.Eligible is slurmctld's details->begin_time, which sacct shows
// as Eligible and from which a job's age counts (acct_policy.c sets
// accrue_time to it): set once, at the first of
//
//  1. the submission, for a job that is not held and waits on no
//     dependency and no begin time; a --begin time in the future is the
//     eligible time from the submission on (held or not), as Slurm keeps
//     it; an array is left to the first pass, as slurmctld's scheduler
//     sets an array's when it first looks at it;
//  2. the release of a held job (scontrol release, update Priority);
//  3. the pass that finds a job's dependencies met, or its begin time
//     passed while it waited on a dependency (sched.Plan.Eligible);
//  4. the start, for a job none of the above reached (a safety net).
//
// A requeue makes the job eligible again at once (the store's Requeue);
// a yield keeps the time, and with it the job's age.

// eligibleAtSubmit is a new job's Eligible time (1. above): now, its
// future begin time, or zero while a hold or a dependency keeps it.
func eligibleAtSubmit(j *store.Job, now time.Time) time.Time {
	r := &j.Request
	if r.Dependency != nil && len(r.Dependency.Parsed.Terms) > 0 {
		return time.Time{}
	}
	if r.Begin.After(now) {
		return r.Begin
	}
	if j.Hold != store.HoldNone || r.Array != nil {
		return time.Time{}
	}
	return now
}

// releasedEligible makes a job just released eligible now, unless it
// already was (held after it became eligible, or with a begin time) or a
// dependency still keeps it (the pass then records it, 3. above).
func releasedEligible(j *store.Job, now time.Time) {
	r := &j.Request
	if !j.Eligible.IsZero() || (r.Dependency != nil && len(r.Dependency.Parsed.Terms) > 0) {
		return
	}
	j.Eligible = now
}

// recordEligible stores the Eligible times a pass found (3. above), on the
// stored job: an array task still in its array's pending record gives the
// record its time.
func (d *Daemon) recordEligible(ctx context.Context, snap snapshot, found []sched.Eligibility) {
	if len(found) == 0 {
		return
	}
	at := map[uint32]time.Time{}
	for _, e := range found {
		id := e.JobID
		if k, ok := snap.placeholder[id]; ok {
			id = k.array
		}
		if _, seen := at[id]; !seen {
			at[id] = e.At
		}
	}
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		for id, t := range at {
			cur, err := tx.Job(id)
			if err != nil {
				continue // gone since the pass read it
			}
			if !cur.Eligible.IsZero() || cur.State != slurm.Pending {
				continue
			}
			cur.Eligible = t
			if err := tx.PutJob(cur); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		d.log.Error("recording when jobs became eligible", "err", err)
	}
}
