package daemon

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// A submission's checks (sched.CheckSubmit: MaxJobCount and the user's
// share of it, the QOS's MaxSubmitJobsPerUser, whether the request fits
// the node) need the jobs
// that count, in the core's terms. Reading and converting every job for
// every submission made a submission cost O(jobs queued): with 5,000
// queued, 40 a second. Instead the daemon keeps the core's jobs of the last
// pass, plus every job accepted since, and checks against those:
//
//  1. a pass builds its snapshot and keeps its jobs (checkJobs);
//  2. each accepted submission is appended to them (noteSubmitted);
//  3. the next pass replaces them with what the store then holds.
//
// Beside the jobs it keeps their users and accounts (JobUsers), which the
// share tree reads, so that a check reads no job it does not count.
//
// Jobs that ended since the pass still count until the next one, as Slurm
// counts finished jobs until MinJobAge; --test-only, which estimates a start
// from the running jobs, reads the store afresh.

// submitChecks are the jobs submissions are checked against, with a lock
// of their own: a submission neither waits for a pass nor holds one up.
type submitChecks struct {
	mu sync.Mutex
	// jobs are the last pass's, plus those accepted since; ok once a
	// pass has set them.
	jobs []sched.Job
	ok   bool
	// users are the jobs' users and accounts (sched.Snapshot.JobUsers),
	// kept beside them so that a check does not scan every job for them;
	// seen indexes them.
	users []sched.JobUser
	seen  map[sched.JobUser]bool
}

// keepCheckJobs keeps a pass's jobs for the submissions until the next.
func (d *Daemon) keepCheckJobs(jobs []sched.Job) {
	users := sched.JobUsersOf(jobs)
	seen := make(map[sched.JobUser]bool, len(users))
	for _, u := range users {
		seen[u] = true
	}
	c := &d.checks
	c.mu.Lock()
	c.jobs, c.ok = slices.Clip(jobs), true
	c.users, c.seen = slices.Clip(users), seen
	c.mu.Unlock()
}

// noteSubmitted counts an accepted job, given the id it got, in the checks
// until the next pass: an array once per task, as a pass counts it.
func (d *Daemon) noteSubmitted(j sched.Job, id uint32) {
	j.ID = id
	c := &d.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok {
		return
	}
	if k := (sched.JobUser{User: j.User, Account: j.Account}); !c.seen[k] && !j.State.Finished() {
		c.seen[k] = true
		c.users = append(c.users, k)
	}
	if len(j.ArrayTasks) == 0 {
		c.jobs = append(c.jobs, j)
		return
	}
	for range j.ArrayTasks {
		c.jobs = append(c.jobs, j)
	}
}

// submitSnapshot is the core's view for a submission check: the jobs as
// above (fresh from the store when fresh is set, or before the first pass),
// the node as last sampled.
func (d *Daemon) submitSnapshot(ctx context.Context, now time.Time, fresh bool) (sched.Snapshot, error) {
	cfg := d.config()
	v := d.liveView()
	gs, usage, calc := v.sample(), v.fs.usage, v.fs.calc
	d.checks.mu.Lock()
	kept, users, ok := d.checks.jobs, d.checks.users, d.checks.ok && !fresh
	d.checks.mu.Unlock()
	if gs.Time.IsZero() {
		gs = d.inv.Sample(now, nil)
	}
	var jobs []*store.Job
	if !ok {
		var err error
		jobs, err = d.st.JobRefs(ctx, store.Filter{Since: now.Add(-max(cfg.MinJobAge, time.Minute))})
		if err != nil {
			return sched.Snapshot{}, err
		}
	}
	snap := d.buildSnapshot(ctx, now, jobs, gs)
	if ok {
		// Full slice expression: CheckSubmit cannot append into ours.
		snap.Jobs = kept[:len(kept):len(kept)]
		snap.JobUsers = users[:len(users):len(users)]
	}
	snap.Usage, snap.Calc = usage, calc
	d.lastBudgets(cfg, &snap.Snapshot)
	return snap.Snapshot, nil
}

// shareExempt says whose jobs MaxJobCountPerUser does not bound: root's
// (the administrator, who may need to load or move a whole queue, and who
// can raise the limit anyway) and, on a personal daemon, its own user's,
// whom it serves alone: there is nobody to keep room for. Operators are
// held to it like everyone: it is their own jobs that would crowd the
// others out, and Slurm exempts no AdminLevel from QOS limits either.
func shareExempt(uid uint32) bool { return uid == 0 || uid == uint32(os.Geteuid()) }

// neverStarts is sbatch --test-only's answer for a job that would pend
// for a reason that no time cures (its time limit over the partition's
// MaxTime with EnforcePartLimits=NO, a dependency that can never be met,
// a partition that does not exist): refused as slurmctld's will-run test
// refuses, with the error number that goes with the reason, and a hint
// naming the reason as squeue would show it. nil for any other reason,
// for which the start stays "Unknown".
func neverStarts(est sched.Estimate) *api.Error {
	var code slurm.Errno
	switch est.Reason {
	case slurm.ReasonPartitionTimeLimit:
		code = slurm.ErrInvalidTimeLimit
	case slurm.ReasonDependencyNeverSatisfied:
		code = slurm.ErrDependency
	case slurm.ReasonBadConstraints:
		code = slurm.ErrRequestedNodeConfigUnavailable
	default:
		return nil
	}
	hint := fmt.Sprintf("the job could never start: it would pend with reason %s", est.Reason)
	if est.Detail != "" {
		hint += " (" + est.Detail + ")"
	}
	e := refusal(code, code.Error())
	e.Hint = hint
	return e
}

// unknownStart is what sbatch --test-only adds when it has no start time
// for a job that could start some day (a QOS or association limit, a
// dependency, a begin time, running jobs with no time limit): the reason
// the job would pend with, as squeue would show it, and the scheduler's
// numbers behind it, such as "alice holds 1 GPUs in QOS normal and asks
// for 4, MaxTRESPerUser is gres/gpu=4". Slurm's will-run test ignores such
// limits and prints a start time from the resources alone, exit 0
// (golden/sbatch_test_only_qos_max_gres_per_user_as_alice.txt): sbatch
// still exits 0, and the line says why the job would not start then. ""
// when the start is known.
func unknownStart(est sched.Estimate) string {
	if !est.Start.IsZero() || est.Reason == "" || est.Reason == slurm.ReasonNone {
		return ""
	}
	hint := fmt.Sprintf("no start time: the job would pend with reason %s", est.Reason)
	if est.Detail != "" {
		hint += " (" + est.Detail + ")"
	}
	return hint
}
