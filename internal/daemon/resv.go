package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
	"github.com/slurm-lite/slurm-lite/internal/web"
)

// This file is advance reservations: scontrol create/update/delete/show
// reservation, sinfo -T, and what the scheduling pass gets of them.
//
// They are kept in the store's meta table as "reservation/NAME" with
// their JSON (store/meta.go), and in memory under resvState's lock, which
// also serializes changes. The core places them (sched/reservation.go);
// the daemon checks who may change them, removes those that ended (as
// slurmctld does at a reservation's end, unless it recurs) and those idle
// for their PURGE_COMP time, and records each change in the audit trail.

const resvKeyPrefix = "reservation/"

// resvState is the Daemon's resv field.
type resvState struct {
	mu     sync.Mutex
	loaded bool
	list   []api.Reservation
	// idleSince is, per active PURGE_COMP reservation, since when no job
	// of it has run (in memory: a restart gives it its time again).
	idleSince map[string]time.Time
	// cur is list as last set, for passes and snapshots, which read it
	// without the lock (a change holds the lock while it builds one).
	cur atomic.Pointer[[]api.Reservation]
}

// setListLocked replaces the list. d.resv.mu must be held.
func (d *Daemon) setListLocked(list []api.Reservation) {
	d.resv.list = list
	c := slices.Clone(list)
	d.resv.cur.Store(&c)
}

// resvsLocked returns the reservations, reading the store the first time.
// d.resv.mu must be held.
func (d *Daemon) resvsLocked(ctx context.Context) ([]api.Reservation, error) {
	if d.resv.loaded {
		return d.resv.list, nil
	}
	vals, err := d.st.MetaPrefix(ctx, resvKeyPrefix)
	if err != nil {
		return nil, err
	}
	var list []api.Reservation
	for _, v := range vals {
		var r api.Reservation
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("reading a stored reservation: %w", err)
		}
		list = append(list, r)
	}
	d.setListLocked(list)
	d.resv.loaded = true
	return list, nil
}

// reservations is a copy of the reservations, for a pass.
func (d *Daemon) reservations(ctx context.Context) []api.Reservation {
	if c := d.resv.cur.Load(); c != nil {
		return *c
	}
	d.resv.mu.Lock()
	defer d.resv.mu.Unlock()
	list, err := d.resvsLocked(ctx)
	if err != nil {
		d.log.Error("reading reservations", "err", err)
	}
	return slices.Clone(list)
}

// schedResv is a reservation in the core's terms.
func schedResv(r *api.Reservation) sched.Reservation {
	sr := sched.Reservation{Name: r.Name, Start: r.Start, End: r.End, Users: r.Users, ExcludeUsers: r.ExcludeUsers,
		Accounts: r.Accounts, Partition: r.Partition, Node: r.Node, GPUs: r.GPUs, GPUType: r.GPUType}
	f := &sr.Flags
	f.Maint, f.IgnoreJobs, f.Flex, f.Magnetic = r.Has("MAINT"), r.Has("IGNORE_JOBS"), r.Has("FLEX"), r.Has("MAGNETIC")
	f.Daily, f.Weekday, f.Weekend, f.Weekly = r.Has("DAILY"), r.Has("WEEKDAY"), r.Has("WEEKEND"), r.Has("WEEKLY")
	if r.Has("PURGE_COMP") {
		f.PurgeComp = r.PurgeComp
	}
	return sr
}

func schedResvs(list []api.Reservation) []sched.Reservation {
	out := make([]sched.Reservation, 0, len(list))
	for i := range list {
		out = append(out, schedResv(&list[i]))
	}
	return out
}

// shownResv fills in what show prints: the window in force or next, the
// state, the node.
func shownResv(r api.Reservation, cfg *config.Config, cpus int, now time.Time) api.Reservation {
	sr := schedResv(&r)
	s, e, _ := sr.Window(now)
	r.ShowStart, r.ShowEnd = s.Local(), e.Local()
	r.Active = sr.Active(now)
	r.NodeName, r.NodeCPUs = cfg.Node.NodeName, cpus
	r.ShowPartition = r.Partition
	if r.ShowPartition == "" && r.Node == "" {
		if p := cfg.DefaultPartition(); p != nil {
			r.ShowPartition = p.PartitionName
		}
	}
	return r
}

// listReservations is GET api.PathReservations: every reservation, by
// start time then name (everyone may see them, as in Slurm).
func (d *Daemon) listReservations(ctx context.Context, req *localapi.Request[struct{}]) (api.Reservations, error) {
	d.resv.mu.Lock()
	list, err := d.resvsLocked(ctx)
	list = slices.Clone(list)
	d.resv.mu.Unlock()
	if err != nil {
		return api.Reservations{}, err
	}
	cfg, now := d.config(), d.now()
	cpus := d.nodeCPUs()
	out := api.Reservations{List: make([]api.Reservation, 0, len(list))}
	for _, r := range list {
		out.List = append(out.List, shownResv(r, cfg, cpus, now))
	}
	slices.SortStableFunc(out.List, func(a, b api.Reservation) int {
		return cmp.Or(a.ShowStart.Compare(b.ShowStart), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// nodeCPUs is the node's CPUs as the scheduler counts them.
func (d *Daemon) nodeCPUs() int {
	gs := d.liveView().sample()
	return schedNode(d.config(), gs, false).CPUs
}

// changeReservation is POST api.PathReservations: scontrol create, update
// and delete reservation. Root, operators and the daemon's own user may;
// Slurm 22.05 answers others "Invalid user id".
func (d *Daemon) changeReservation(ctx context.Context, req *localapi.Request[api.ResvChange]) (api.Reservation, error) {
	caller, ch := req.Caller, req.Body
	cfg := d.config()
	if caller.UID != 0 && caller.UID != uint32(os.Geteuid()) && !cfg.IsOperator(caller.User) {
		return api.Reservation{}, refusal(slurm.ErrUserIDMissing, slurm.ErrUserIDMissing.Error())
	}
	d.resv.mu.Lock()
	defer d.resv.mu.Unlock()
	list, err := d.resvsLocked(ctx)
	if err != nil {
		return api.Reservation{}, err
	}
	now := d.now()
	at := slices.IndexFunc(list, func(r api.Reservation) bool { return r.Name == ch.Name })
	var r api.Reservation
	switch ch.Action {
	case api.ResvCreate:
		r = api.Reservation{By: caller.User, Created: now}
		if err := api.ApplyResvWords(&r, ch.Words, now, true); err != nil {
			return api.Reservation{}, refusal(slurm.EINVAL, err.Error())
		}
		if r.Name == "" {
			r.Name = newResvName(list, cmp.Or(first(r.Users), first(r.Accounts), "resv"))
		}
		if slices.ContainsFunc(list, func(o api.Reservation) bool { return o.Name == r.Name }) {
			return api.Reservation{}, refusal(slurm.ErrReservationNameDup, slurm.ErrReservationNameDup.Error())
		}
	case api.ResvUpdate, api.ResvDelete:
		if at < 0 {
			return api.Reservation{}, refusal(slurm.ErrReservationInvalid, slurm.ErrReservationInvalid.Error())
		}
		r = list[at]
		if ch.Action == api.ResvDelete {
			if d.resvRunning(ctx, r.Name) {
				return api.Reservation{}, refusal(slurm.ErrReservationBusy, slurm.ErrReservationBusy.Error())
			}
			return r, d.dropResvLocked(ctx, r, caller.UID, caller.User, "deleted")
		}
		words := slices.DeleteFunc(slices.Clone(ch.Words), func(w string) bool {
			k, _, _ := strings.Cut(w, "=")
			return strings.EqualFold(k, "ReservationName")
		})
		if err := api.ApplyResvWords(&r, words, now, false); err != nil {
			return api.Reservation{}, refusal(slurm.EINVAL, err.Error())
		}
	default:
		return api.Reservation{}, localapi.Errorf(http.StatusBadRequest, "unknown reservation action %q: want create, update or delete", ch.Action)
	}
	if e := d.checkResv(ctx, &r, list, now); e != nil {
		return api.Reservation{}, e
	}
	b, err := json.Marshal(r)
	if err != nil {
		return api.Reservation{}, err
	}
	action := evResvCreate
	if ch.Action == api.ResvUpdate {
		action = evResvUpdate
	}
	err = d.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.PutMeta(resvKeyPrefix+r.Name, string(b)); err != nil {
			return err
		}
		return nodeEvent(tx, d.callerEvent(caller, 0, action, resvDetail(&r)), "")
	})
	if err != nil {
		return api.Reservation{}, err
	}
	if at >= 0 {
		list[at] = r
	} else {
		list = append(list, r)
	}
	d.setListLocked(list)
	d.log.Info("reservation "+ch.Action+"d", "by", caller.User, "name", r.Name, "detail", resvDetail(&r))
	d.wake()
	return shownResv(r, cfg, d.nodeCPUs(), now), nil
}

// resvDetail is an event's detail: what it holds and when, not who may use
// it (the audit trail is shown to everyone; user names may be private).
func resvDetail(r *api.Reservation) string {
	what := "Nodes=" + cmp.Or(r.Node, "ALL")
	if r.GPUs > 0 {
		what = fmt.Sprintf("TRES=gres/gpu=%d", r.GPUs)
		if r.GPUType != "" {
			what = fmt.Sprintf("TRES=gres/gpu:%s=%d", r.GPUType, r.GPUs)
		}
	}
	s := fmt.Sprintf("ReservationName=%s StartTime=%s EndTime=%s %s", r.Name,
		r.Start.Local().Format("2006-01-02T15:04:05"), r.End.Local().Format("2006-01-02T15:04:05"), what)
	if len(r.Flags) > 0 {
		s += " Flags=" + strings.Join(r.Flags, ",")
	}
	return s
}

// checkResv refuses a reservation slurmctld would: unknown users,
// accounts, partition or node, and one that does not fit beside the
// others and the running jobs (sched.ResvConflict).
func (d *Daemon) checkResv(ctx context.Context, r *api.Reservation, list []api.Reservation, now time.Time) *api.Error {
	cfg := d.config()
	for _, u := range r.Users {
		if _, err := user.Lookup(u); err != nil {
			return refusal(slurm.ErrUserIDMissing, slurm.ErrUserIDMissing.Error())
		}
	}
	if cfg.HasAccounts() {
		for _, a := range r.Accounts {
			if !slices.ContainsFunc(cfg.AccountTree(), func(x config.Account) bool { return x.Name == a }) {
				return refusal(slurm.ErrInvalidAccount, slurm.ErrInvalidAccount.Error())
			}
		}
	}
	if r.Partition != "" && cfg.Partition(r.Partition) == nil {
		return refusal(slurm.ErrInvalidPartitionName, slurm.ErrInvalidPartitionName.Error())
	}
	if r.Node != "" && r.Node != cfg.Node.NodeName {
		return refusal(slurm.ErrInvalidNodeName, slurm.ErrInvalidNodeName.Error())
	}
	snap, err := d.submitSnapshot(ctx, now, true)
	if err != nil {
		return localapi.Errorf(http.StatusInternalServerError, "reading the jobs: %v", err)
	}
	snap.Reservations = nil
	for i := range list {
		if list[i].Name != r.Name {
			snap.Reservations = append(snap.Reservations, schedResv(&list[i]))
		}
	}
	sr := schedResv(r)
	sr.Node = "" // the core's one node
	switch why := sched.ResvConflict(snap, sr); {
	case why == "":
		return nil
	case strings.HasPrefix(why, slurm.ErrReservationOverlap.Error()):
		return refusal(slurm.ErrReservationOverlap, why)
	case strings.HasPrefix(why, slurm.ErrNodesBusy.Error()):
		return refusal(slurm.ErrNodesBusy, why)
	default:
		return refusal(slurm.ErrRequestedNodeConfigUnavailable, why)
	}
}

// resvRunning reports whether a job runs in the reservation: slurmctld
// refuses to delete it then.
func (d *Daemon) resvRunning(ctx context.Context, name string) bool {
	jobs, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Running, slurm.Completing}})
	if err != nil {
		return true
	}
	return slices.ContainsFunc(jobs, func(j store.Job) bool { return j.Request.Reservation == name })
}

// dropResvLocked removes a reservation, recording who (the caller, or the
// daemon for one that ended) and why. d.resv.mu must be held.
func (d *Daemon) dropResvLocked(ctx context.Context, r api.Reservation, uid uint32, who, why string) error {
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteMeta(resvKeyPrefix + r.Name); err != nil {
			return err
		}
		return nodeEvent(tx, d.actorEvent(uid, who, 0, evResvDelete, resvDetail(&r)+" ("+why+")"), "")
	})
	if err != nil {
		return err
	}
	d.setListLocked(slices.DeleteFunc(slices.Clone(d.resv.list), func(o api.Reservation) bool { return o.Name == r.Name }))
	delete(d.resv.idleSince, r.Name)
	d.log.Info("reservation "+why, "by", who, "name", r.Name)
	return nil
}

// expireReservations is the pass's housekeeping: a reservation whose
// window ended and that does not recur is removed, as slurmctld removes
// it; one with PURGE_COMP is removed once active and without a running
// job for its time.
func (d *Daemon) expireReservations(ctx context.Context, now time.Time, jobs []*store.Job) {
	d.resv.mu.Lock()
	defer d.resv.mu.Unlock()
	list, err := d.resvsLocked(ctx)
	if err != nil {
		d.log.Error("reading reservations", "err", err)
		return
	}
	for _, r := range slices.Clone(list) {
		sr := schedResv(&r)
		if _, _, ok := sr.Window(now); !ok {
			if err := d.dropResvLocked(ctx, r, uint32(os.Geteuid()), schedulerName, "ended"); err != nil {
				d.log.Error("removing an ended reservation", "name", r.Name, "err", err)
			}
			continue
		}
		if sr.Flags.PurgeComp <= 0 || !sr.Active(now) {
			continue
		}
		busy := slices.ContainsFunc(jobs, func(j *store.Job) bool {
			return j.Request.Reservation == r.Name && (j.State == slurm.Running || j.State == slurm.Completing)
		})
		if d.resv.idleSince == nil {
			d.resv.idleSince = map[string]time.Time{}
		}
		since, seen := d.resv.idleSince[r.Name]
		switch {
		case busy || !seen:
			d.resv.idleSince[r.Name] = now
		case now.Sub(since) >= sr.Flags.PurgeComp:
			if err := d.dropResvLocked(ctx, r, uint32(os.Geteuid()), schedulerName, "purged: idle for its PURGE_COMP time"); err != nil {
				d.log.Error("purging a reservation", "name", r.Name, "err", err)
			}
		}
	}
}

// resvRefusal refuses a job naming a reservation that does not exist or
// that its user and account may not use, with Slurm's errors.
func (d *Daemon) resvRefusal(ctx context.Context, j *store.Job) *api.Error {
	name := j.Request.Reservation
	if name == "" {
		return nil
	}
	d.resv.mu.Lock()
	list, err := d.resvsLocked(ctx)
	d.resv.mu.Unlock()
	if err != nil {
		return localapi.Errorf(http.StatusInternalServerError, "reading reservations: %v", err)
	}
	at := slices.IndexFunc(list, func(r api.Reservation) bool { return r.Name == name })
	if at < 0 {
		e := refusal(slurm.ErrReservationInvalid, slurm.ErrReservationInvalid.Error())
		e.Hint = fmt.Sprintf("no reservation %q; scontrol show reservation lists them", name)
		return e
	}
	if sr := schedResv(&list[at]); !sr.Allows(j.User, j.Account) {
		e := refusal(slurm.ErrReservationAccess, slurm.ErrReservationAccess.Error())
		e.Hint = fmt.Sprintf("reservation %q is not for user %s in account %s", name, j.User, j.Account)
		return e
	}
	return nil
}

// newResvName is Slurm's name for an unnamed reservation: its first user
// or account and the lowest free number.
func newResvName(list []api.Reservation, base string) string {
	for n := 1; ; n++ {
		name := fmt.Sprintf("%s_%d", base, n)
		if !slices.ContainsFunc(list, func(r api.Reservation) bool { return r.Name == name }) {
			return name
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// webReservations are the reservations as the dashboard and /metrics show
// them, by start then name.
func (d *Daemon) webReservations(now time.Time) []web.Reservation {
	list := d.reservations(context.Background())
	gpus := len(d.liveView().sample().GPUs)
	out := make([]web.Reservation, 0, len(list))
	for i := range list {
		sr := schedResv(&list[i])
		s, e, _ := sr.Window(now)
		n := list[i].GPUs
		if n == 0 {
			n = gpus
		}
		out = append(out, web.Reservation{Name: list[i].Name, Start: s.Unix(), End: e.Unix(), Active: sr.Active(now),
			GPUs: n, Flags: strings.Join(list[i].Flags, ",")})
	}
	slices.SortStableFunc(out, func(a, b web.Reservation) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Name, b.Name))
	})
	return out
}
