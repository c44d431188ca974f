package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/userdb"
)

// The audit trail and the notifications have one source: each place that
// changes a job's or a GPU's state appends an event to the store in the
// transaction of the change (schedEvent, callerEvent), and once that has
// committed hands the same change to the notifier (tell, tellGPU), which
// never blocks.

// schedulerName is the actor of what the daemon decided by itself (a
// start, an end, a preemption, a health check's drain).
const schedulerName = "slurmd-lite"

// eventAction is what an event of the audit trail records. The daemon
// writes these and no others: every event is made by schedEvent,
// callerEvent or actorEvent, which take an eventAction, never a string
// (TestEventsAreMadeFromDeclaredActions holds the code to it), and
// TestWebShowsTheAnonymousViewerNoSecrets brings each one about on a live
// daemon, reading the list from this block: an action added here that it
// does not bring about fails it.
//
// An event's detail may carry what its job's metadata carries (its name,
// comment, user, account, paths): it is shown only to whoever sees the
// job (viewer.seesTrail). It never carries a job's secrets (environment,
// script, --wrap, --export values).
type eventAction string

const (
	evStart    eventAction = "start"     // the scheduler started a job
	evEnd      eventAction = "end"       // a run ended
	evRequeue  eventAction = "requeue"   // a run ended back to PENDING, or a requeue was asked
	evNodeFail eventAction = "node_fail" // a run was lost (its supervisor or GPU) and requeued
	evPreempt  eventAction = "preempt"   // the scheduler stops a job for a higher tier's
	evCancel   eventAction = "cancel"    // scancel
	evHold     eventAction = "hold"      // scontrol hold
	evRelease  eventAction = "release"   // scontrol release
	evUpdate   eventAction = "update"    // scontrol update job
	evYield    eventAction = "yield"     // scontrol yield, or the scheduler's shrink
	evDrain    eventAction = "drain"     // a GPU or the node drained (by hand or by the health check)
	evResume   eventAction = "resume"    // a GPU or the node resumed
	evAdopt    eventAction = "adopt"     // a run put back from its job directory: the database came back without it (adopt.go)
	evLost     eventAction = "lost"      // an acknowledged job the database came back without and that never started (adopt.go)

	evResvCreate eventAction = "reservation_create" // scontrol create reservation
	evResvUpdate eventAction = "reservation_update" // scontrol update reservation
	evResvDelete eventAction = "reservation_delete" // scontrol delete reservation, or one that ended or was purged
)

// schedEvent is an event the daemon itself made.
func (d *Daemon) schedEvent(id uint32, action eventAction, detail string) store.Event {
	return d.actorEvent(uint32(os.Geteuid()), schedulerName, id, action, detail)
}

// callerEvent is an event a command's caller made.
func (d *Daemon) callerEvent(caller localapi.Identity, id uint32, action eventAction, detail string) store.Event {
	return d.actorEvent(caller.UID, caller.User, id, action, detail)
}

// actorEvent is an event that user uid, named name, made (of job id; 0 for
// the node's or a GPU's).
func (d *Daemon) actorEvent(uid uint32, name string, id uint32, action eventAction, detail string) store.Event {
	return store.Event{Time: d.now(), Actor: uid, ActorName: name, JobID: id, Action: string(action), Detail: detail}
}

// tell hands a job's change to the notifier.
func (d *Daemon) tell(kind string, j store.Job, actor, reason string) {
	d.notifier.Load().Send(notify.Event{Kind: kind, Time: d.now(), Job: &j, Actor: actor, Reason: reason})
}

// tellGPU hands a GPU's drain or resume to the notifier.
func (d *Daemon) tellGPU(kind string, index int, uuid, actor, reason string) {
	d.notifier.Load().Send(notify.Event{Kind: kind, Time: d.now(), GPU: &notify.GPU{Index: index, UUID: uuid},
		Actor: actor, Reason: reason})
}

// newLogger is the daemon's log in the configured format.
func newLogger(w io.Writer, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if format == config.LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// mailProg is the mail program in force: MailProg, else /usr/bin/mail or
// /bin/mail where present; "" sends no mail.
func mailProg(cfg *config.Config) string {
	if cfg.MailProg != "" {
		return cfg.MailProg
	}
	for _, p := range config.DefaultMailProgs {
		if config.Runnable(p) == nil {
			return p
		}
	}
	return ""
}

// startNotifier starts the notifier of cfg in place of the one before,
// which finishes its queue in the background.
func (d *Daemon) startNotifier(cfg *config.Config) {
	// No mail program is warned of with the other site warnings (warnSite).
	prog := mailProg(cfg)
	hooks := make([]notify.Hook, len(cfg.Notify))
	for i, h := range cfg.Notify {
		hooks[i] = notify.Hook{URL: h.URL, Events: h.Events, Users: h.Users}
	}
	n := notify.Start(notify.Options{Cluster: cfg.ClusterName, MailProg: prog, Hooks: hooks, Log: d.log,
		GroupName: userdb.GroupName, Backoff: d.opts.NotifyBackoff, Clock: d.clock})
	if old := d.notifier.Swap(n); old != nil {
		go func() {
			if n := old.Close(time.Minute); n > 0 {
				d.log.Warn("notifications not sent: the configuration was reloaded and they were not delivered within a minute", "dropped", n)
			}
		}()
	}
}

// endKind is the notification of a job's end, by its state.
func endKind(j store.Job) string { return notify.EndKind(j.State) }

// endDetail says how a run ended, for the audit trail.
func endDetail(j store.Job) string {
	s := fmt.Sprintf("%s, exit code %s", j.State, j.ExitCode)
	if !j.Start.IsZero() && !j.End.IsZero() {
		s += fmt.Sprintf(", ran %s", j.End.Sub(j.Start).Round(time.Second))
	}
	if j.Reason != slurm.ReasonNone && j.Reason != "" {
		s += ", reason " + string(j.Reason)
	}
	return s
}

// limitMails sends the TIME_LIMIT mails a running job asked for, as
// slurmctld's _job_time_check does: each once a run, when the time left is
// at most 50%, 20% or 10% of the limit, and at the limit. It returns the
// next time one is due, to wake the loop then.
func (d *Daemon) limitMails(now time.Time, j store.Job, limit time.Duration) (next time.Time) {
	for _, m := range []struct {
		kind string
		left float64
	}{{notify.TimeLimit, 0}, {notify.TimeLimit90, 0.1}, {notify.TimeLimit80, 0.2}, {notify.TimeLimit50, 0.5}} {
		if !wantsKind(j, m.kind) {
			continue
		}
		due := j.Start.Add(limit - time.Duration(float64(limit)*m.left))
		key := limitKey{j.ID, j.Restarts, m.kind}
		if now.Before(due) {
			if next.IsZero() || due.Before(next) {
				next = due
			}
			continue
		}
		if d.limitMailed[key] {
			continue
		}
		if d.limitMailed == nil {
			d.limitMailed = map[limitKey]bool{}
		}
		d.limitMailed[key] = true
		// The pass's now: the mail's run time counts up to it.
		d.notifier.Load().Send(notify.Event{Kind: m.kind, Time: now, Job: &j})
	}
	return next
}

// limitKey is one TIME_LIMIT mail of one run of a job.
type limitKey struct {
	job  uint32
	run  int
	kind string
}

// forgetLimitMails forgets the TIME_LIMIT mails of runs no longer running.
func (d *Daemon) forgetLimitMails(jobs []*store.Job) {
	if len(d.limitMailed) == 0 {
		return
	}
	running := map[limitKey]bool{} // kind ""
	for _, j := range jobs {
		if j.State == slurm.Running {
			running[limitKey{j.ID, j.Restarts, ""}] = true
		}
	}
	for k := range d.limitMailed {
		if !running[limitKey{k.job, k.run, ""}] {
			delete(d.limitMailed, k)
		}
	}
}

// wantsKind reports whether the job's --mail-type holds kind.
func wantsKind(j store.Job, kind string) bool { return slices.Contains(j.Request.MailType, kind) }

// gpuIndex is the index of the GPU with this UUID in the last sample, or -1.
func gpuIndex(gs gpu.Snapshot, uuid string) int {
	for _, g := range gs.GPUs {
		if g.UUID == uuid {
			return g.Index
		}
	}
	return -1
}

// events is the audit trail (api.PathEvents).
func (d *Daemon) events(ctx context.Context, req *localapi.Request[struct{}]) ([]api.Event, error) {
	q := req.Query
	var err error
	var f store.EventFilter
	if f.Since, err = queryTime(q, "since"); err != nil {
		return nil, err
	}
	if f.Until, err = queryTime(q, "until"); err != nil {
		return nil, err
	}
	var evs []store.Event
	if q.Get("node") == "1" {
		f.NoJob = true
		got, err := d.st.Events(ctx, f)
		if err != nil {
			return nil, err
		}
		evs = append(evs, got...)
	}
	v := d.viewer(req.Caller)
	for _, s := range q["job"] {
		ref, err := parseJobRef(s)
		if err != nil {
			return nil, localapi.Errorf(http.StatusBadRequest, "job %q is not a job id; give a number such as 12", s)
		}
		j, err := d.st.Job(ctx, ref.id)
		// No job: its trail still says what became of the id (a job
		// lost with the database: adopt.go), to whoever sees others' jobs.
		known := err == nil
		if (err != nil && !errors.Is(err, store.ErrNotFound)) || !v.seesTrail(ref.id, j.UID, known) {
			continue // unknown, or not the caller's to see: nothing to show
		}
		f.JobID, f.NoJob = ref.id, false
		got, err := d.st.Events(ctx, f)
		if err != nil {
			return nil, err
		}
		evs = append(evs, got...)
	}
	gs := d.liveView().sample()
	node := d.config().Node.NodeName
	out := make([]api.Event, 0, len(evs))
	for _, e := range evs {
		a := api.Event{Seq: e.Seq, Time: e.Time, Actor: e.Actor, ActorName: e.ActorName, JobID: e.JobID,
			GPU: e.GPU, GPUIndex: -1, Action: e.Action, Detail: e.Detail}
		if e.JobID == 0 {
			a.Node = node
			switch {
			case e.GPU == "" || e.GPU == api.NodeDrainUUID:
				a.GPU = api.NodeDrainUUID
			default:
				a.GPUIndex = gpuIndex(gs, e.GPU)
			}
		}
		out = append(out, a)
	}
	slices.SortStableFunc(out, func(a, b api.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// dependMails sends the INVALID_DEPEND mail of each pending job whose
// dependency can never be satisfied, once (the loop's).
func (d *Daemon) dependMails(decisions map[uint32]sched.Decision, jobs map[uint32]*store.Job) {
	for id, dec := range decisions {
		if dec.Reason != slurm.ReasonDependencyNeverSatisfied || d.dependMailed[id] {
			continue
		}
		j, ok := jobs[id]
		if !ok || !wantsKind(*j, notify.InvalidDepend) {
			continue
		}
		if d.dependMailed == nil {
			d.dependMailed = map[uint32]bool{}
		}
		d.dependMailed[id] = true
		d.tell(notify.InvalidDepend, *j, schedulerName, string(dec.Reason))
	}
}

// arrayFirsts are the starts that begin their array: the first of the
// array in this pass's starts when none of its tasks has run yet
// (slurmctld's _first_array_task: no other task running or done), for
// the array's summary BEGIN mail. Read before the starts commit: tasks
// started together are committed together.
func (d *Daemon) arrayFirsts(ctx context.Context, starts []pendingStart) map[int]bool {
	var firsts map[int]bool
	seen := map[uint32]bool{}
	for i, ps := range starts {
		j := ps.job
		if ps.task < 0 || seen[j.ID] || !wantsKind(j, notify.Begin) || wantsKind(j, notify.ArrayTasks) {
			continue
		}
		seen[j.ID] = true
		rows, err := d.st.Jobs(ctx, store.Filter{IDs: []uint32{j.ArrayJobID}})
		if err != nil || slices.ContainsFunc(rows, func(r store.Job) bool { return r.State != slurm.Pending }) {
			continue
		}
		if firsts == nil {
			firsts = map[int]bool{}
		}
		firsts[i] = true
	}
	return firsts
}

// arrayEnd sends an array's summary END or FAIL mail once j, one of its
// tasks, was the last to end: FAIL when a task exited non-zero and FAIL
// was asked, else END (job_completion_logger's arr_finished).
func (d *Daemon) arrayEnd(ctx context.Context, j store.Job) {
	if j.ArrayTaskID == store.NoTask || wantsKind(j, notify.ArrayTasks) ||
		!wantsKind(j, notify.End) && !wantsKind(j, notify.Fail) {
		return
	}
	// Most ends are not the last: asked first, the tasks not finished
	// are few, where the whole array may be thousands.
	left, err := d.st.Jobs(ctx, store.Filter{IDs: []uint32{j.ArrayJobID},
		States: []slurm.JobState{slurm.Pending, slurm.Running, slurm.Completing, slurm.Suspended}})
	if err != nil || len(left) > 0 {
		return
	}
	rows, err := d.st.Jobs(ctx, store.Filter{IDs: []uint32{j.ArrayJobID}})
	if err != nil {
		return
	}
	meta := j
	// Each task counts as job_completion_logger saw it end (finish.go).
	a := notify.Array{MinStatus: notify.WaitStatus(j.AccountedExitCode()), MaxStatus: notify.WaitStatus(j.AccountedExitCode())}
	for _, r := range rows {
		if !r.State.Finished() {
			return // not the last
		}
		if r.ID == j.ArrayJobID {
			meta = r
		}
		s := notify.WaitStatus(r.AccountedExitCode())
		a.MinStatus, a.MaxStatus = min(a.MinStatus, s), max(a.MaxStatus, s)
	}
	kind := notify.End
	if a.MaxStatus&0x7f == 0 && a.MaxStatus>>8 != 0 && wantsKind(j, notify.Fail) {
		kind = notify.Fail
	} else if !wantsKind(j, notify.End) {
		return
	}
	d.notifier.Load().Send(notify.Event{Kind: kind, Time: d.now(), Job: &meta, Array: &a})
}
