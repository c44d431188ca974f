package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cron"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// scrontab, as slurmctld keeps it (src/slurmctld/crontab.c): a user's
// crontab is stored whole, beside its entries' jobs. Each entry is one
// batch job whose begin time is the entry's next time; when a run ends,
// however it ended but cancelled, the job is requeued under the same id
// with the begin time after that (settleCron). Installing a crontab
// replaces the user's: the old entries' pending jobs are cancelled, and
// their running ones run on but no longer recur. scancel of an entry's
// job cancels it for good and comments the entry out in the crontab
// (#DISABLED:, which scrontab -l shows).

// crontabKey is where a user's crontab is kept (the store's meta table):
// fixed width, so that no key is the prefix of another.
func crontabKey(uid uint32) string { return fmt.Sprintf("crontab/%010d", uid) }

// storedCrontab is a crontab as kept: its text as installed, and the lines
// of the entries cancelled since (counted from 1).
type storedCrontab struct {
	User     string `json:"user"`
	Text     string `json:"text"`
	Disabled []int  `json:"disabled,omitempty"`
}

// errScronDisabled is the refusal when ScronParameters does not enable
// scrontab, in Slurm's words (scrontab checks it before it asks).
func errScronDisabled() *api.Error {
	return &api.Error{Status: http.StatusBadRequest, Code: slurm.ErrDisabled,
		Message: "scrontab is disabled on this cluster",
		Hint:    `ScronParameters = "enable" in the configuration turns scrontab on`}
}

// crontabOwner is the user whose crontab a request is for: the caller's
// own, or with -u another's, which root alone may change and root and
// operators may read (scrontab's man page).
func (d *Daemon) crontabOwner(caller localapi.Identity, name string, change bool) (localapi.Identity, error) {
	if name == "" || name == caller.User {
		return caller, nil
	}
	if change && caller.UID != 0 {
		return localapi.Identity{}, &api.Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied,
			Message: slurm.ErrAccessDenied.Error(), Hint: fmt.Sprintf("only root may change %s's crontab; %s may change their own (scrontab without -u)", name, caller.User)}
	}
	if !change && caller.UID != 0 && !d.config().IsOperator(caller.User) {
		return localapi.Identity{}, &api.Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied,
			Message: slurm.ErrAccessDenied.Error(), Hint: fmt.Sprintf("only root and operators may read %s's crontab", name)}
	}
	u, err := user.Lookup(name)
	if err != nil {
		return localapi.Identity{}, &api.Error{Status: http.StatusBadRequest, Code: slurm.ErrUserIDMissing,
			Message: fmt.Sprintf("Could not find user %s", name)}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	id := localapi.Identity{UID: uint32(uid), GID: uint32(gid), User: u.Username}
	if id.Groups, err = (localapi.SystemUsers{}).GroupIDs(u.Username, id.GID); err != nil {
		return localapi.Identity{}, fmt.Errorf("finding %s's groups: %w", name, err)
	}
	return id, nil
}

// crontab is scrontab -l (and -e's first step): the crontab as installed.
func (d *Daemon) crontab(ctx context.Context, req *localapi.Request[struct{}]) (api.CrontabText, error) {
	if !d.config().ScronEnabled() {
		return api.CrontabText{}, errScronDisabled()
	}
	owner, err := d.crontabOwner(req.Caller, req.Query.Get("user"), false)
	if err != nil {
		return api.CrontabText{}, err
	}
	// Read outside the writer: the key is fixed-width, so the prefix
	// names this user's crontab alone.
	vals, err := d.st.MetaPrefix(ctx, crontabKey(owner.UID))
	if err != nil {
		return api.CrontabText{}, err
	}
	if len(vals) == 0 {
		return api.CrontabText{User: owner.User, None: true}, nil
	}
	var ct storedCrontab
	if err := json.Unmarshal([]byte(vals[0]), &ct); err != nil {
		return api.CrontabText{}, fmt.Errorf("reading %s's crontab: %w", owner.User, err)
	}
	return api.CrontabText{User: owner.User, Text: ct.Text, Disabled: ct.Disabled}, nil
}

func readCrontab(tx *store.Tx, uid uint32) (storedCrontab, bool, error) {
	v, ok, err := tx.Meta(crontabKey(uid))
	if err != nil || !ok {
		return storedCrontab{}, false, err
	}
	var ct storedCrontab
	if err := json.Unmarshal([]byte(v), &ct); err != nil {
		return storedCrontab{}, false, fmt.Errorf("reading user %d's crontab: %w", uid, err)
	}
	return ct, true, nil
}

func writeCrontab(tx *store.Tx, uid uint32, ct storedCrontab) error {
	b, err := json.Marshal(ct)
	if err != nil {
		return err
	}
	return tx.PutMeta(crontabKey(uid), string(b))
}

// installCrontab is scrontab FILE and -e: every entry's job is checked as
// sbatch's would be; if one is refused, nothing is installed and the
// answer names its lines; else, in one commit, the old entries' jobs are
// cancelled (or stop recurring, when running), the new ones created, and
// the crontab stored.
func (d *Daemon) installCrontab(ctx context.Context, req *localapi.Request[api.Crontab]) (api.CrontabInstalled, error) {
	if !d.config().ScronEnabled() {
		return api.CrontabInstalled{}, errScronDisabled()
	}
	owner, err := d.crontabOwner(req.Caller, req.Body.User, true)
	if err != nil {
		return api.CrontabInstalled{}, err
	}
	now := d.now()
	// MaxJobCountPerUser counts every entry's job: each is admitted alone
	// against the same queue, which holds none of the others yet.
	// The pending jobs of the crontab this one replaces are cancelled in
	// the same commit and do not count: editing a crontab at its limit
	// must stay possible (a running one still counts: it runs on).
	shareSnap, err := d.submitSnapshot(ctx, now, false)
	if err != nil {
		return api.CrontabInstalled{}, err
	}
	replaced, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Pending}})
	if err != nil {
		return api.CrontabInstalled{}, err
	}
	gone := map[uint32]bool{}
	for _, j := range replaced {
		if j.UID == owner.UID && j.Request.Cron != nil && !j.Request.Cron.Off {
			gone[j.ID] = true
		}
	}
	shareSnap.Jobs = slices.DeleteFunc(slices.Clone(shareSnap.Jobs), func(j sched.Job) bool { return gone[j.ID] })
	var jobs []store.NewJob
	var admittedJobs []admitted
	for _, e := range req.Body.Entries {
		lines := fmt.Sprintf("%d-%d", e.LineStart, e.LineEnd)
		entry, err := cron.ParseSchedule(e.Spec)
		if err != nil {
			return api.CrontabInstalled{FailedLines: lines, Code: int(slurm.EINVAL), Error: err.Error()}, nil
		}
		sub := e.Submit
		if sub.Request.Cron != nil || sub.TestOnly {
			return api.CrontabInstalled{}, localapi.Errorf(http.StatusBadRequest, "lines %s: an entry's job is made by the daemon from its schedule; send the request without cron or test_only", lines)
		}
		sub.Request.Cron = &jobscript.Cron{Spec: entry.Spec(), LineStart: e.LineStart, LineEnd: e.LineEnd}
		// The trick of scrontab: the begin time gates the next run.
		sub.Request.Begin = entry.Next(now)
		a, err := d.admit(ctx, owner, sub, now, true)
		if err != nil {
			out := api.CrontabInstalled{FailedLines: lines, Error: err.Error()}
			var le *api.Error
			if errors.As(err, &le) && le.Code != 0 {
				// The controller's message beside its error number
				// (sbatch's "error:" lines before "Batch job submission
				// failed"), without the number's own words.
				out.Code, out.Hint = int(le.Code), le.Hint
				msg := strings.Split(le.Message, "\n")
				if words, ok := le.Code.Words(); ok && msg[len(msg)-1] == words {
					msg = msg[:len(msg)-1]
				}
				out.Error = strings.Join(msg, "\n")
			}
			return out, nil
		}
		if !shareExempt(owner.UID) {
			if err := sched.CheckUserShare(owner.User, len(jobs)+1, shareSnap); err != nil {
				var se *sched.SubmitError
				if errors.As(err, &se) {
					d.log.Info("crontab refused", "user", owner.User, "why", se.Detail)
					return api.CrontabInstalled{FailedLines: lines, Code: int(se.Code), Hint: se.Detail}, nil
				}
				return api.CrontabInstalled{}, err
			}
		}
		script := a.job.Request.Script
		a.job.Request.Script = ""
		jobs = append(jobs, store.NewJob{Job: a.job, Script: script, Env: sub.Env})
		admittedJobs = append(admittedJobs, a)
	}
	var ids []uint32
	var cancelled []store.Job
	err = d.st.Update(ctx, func(tx *store.Tx) error {
		ids, cancelled = nil, nil
		var err error
		if cancelled, err = d.endCronJobs(tx, owner.UID, now); err != nil {
			return err
		}
		for _, nj := range jobs {
			id, err := tx.Insert(nj)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return writeCrontab(tx, owner.UID, storedCrontab{User: owner.User, Text: req.Body.Text})
	})
	if errors.Is(err, store.ErrFull) {
		return api.CrontabInstalled{}, &api.Error{Status: http.StatusServiceUnavailable, Message: err.Error()}
	}
	if err != nil {
		return api.CrontabInstalled{}, fmt.Errorf("installing %s's crontab: %w", owner.User, err)
	}
	d.afterCronEnds(req.Caller, cancelled)
	for i, id := range ids {
		d.log.Info("job submitted from a crontab", "job", id, "user", owner.User, "spec", jobs[i].Job.Request.Cron.Spec,
			"begin", jobs[i].Job.Request.Begin.Format(time.RFC3339))
		d.noteSubmitted(admittedJobs[i].sj, id)
	}
	d.noteUser(owner.User)
	d.wake()
	return api.CrontabInstalled{JobIDs: ids}, nil
}

// removeCrontab is scrontab -r: the crontab goes, its pending jobs are
// cancelled, its running ones run on without recurring.
func (d *Daemon) removeCrontab(ctx context.Context, req *localapi.Request[api.CrontabRemove]) (struct{}, error) {
	if !d.config().ScronEnabled() {
		return struct{}{}, errScronDisabled()
	}
	owner, err := d.crontabOwner(req.Caller, req.Body.User, true)
	if err != nil {
		return struct{}{}, err
	}
	now := d.now()
	var cancelled []store.Job
	err = d.st.Update(ctx, func(tx *store.Tx) error {
		var err error
		if cancelled, err = d.endCronJobs(tx, owner.UID, now); err != nil {
			return err
		}
		return tx.DeleteMeta(crontabKey(owner.UID))
	})
	if err != nil {
		return struct{}{}, fmt.Errorf("removing %s's crontab: %w", owner.User, err)
	}
	d.afterCronEnds(req.Caller, cancelled)
	d.wake()
	return struct{}{}, nil
}

// endCronJobs is _clear_requeue_cron: every job of uid that still recurs
// stops recurring; those not running are cancelled as slurmctld cancels
// them (CANCELLED, started and ended now, exit code 1). It returns the
// cancelled ones.
func (d *Daemon) endCronJobs(tx *store.Tx, uid uint32, now time.Time) ([]store.Job, error) {
	rows, err := tx.Jobs(store.Filter{States: []slurm.JobState{slurm.Pending, slurm.Running, slurm.Completing, slurm.Suspended}})
	if err != nil {
		return nil, err
	}
	var cancelled []store.Job
	for _, j := range rows {
		if j.UID != uid || j.Request.Cron == nil || j.Request.Cron.Off {
			continue
		}
		c := *j.Request.Cron
		c.Off = true
		j.Request.Cron = &c
		if j.State == slurm.Pending {
			j.State, j.Reason = slurm.Cancelled, slurm.ReasonNone
			j.Start, j.End = now, now
			j.ExitCode = store.ExitCode{Status: 1}
			cancelled = append(cancelled, j)
		}
		if err := tx.PutJob(j); err != nil {
			return nil, err
		}
		detail := "no longer recurs: its crontab was replaced or removed"
		if j.State == slurm.Cancelled {
			detail = "cancelled: its crontab was replaced or removed"
		}
		if _, err := tx.AppendEvent(d.schedEvent(j.ID, evCancel, detail)); err != nil {
			return nil, err
		}
	}
	return cancelled, nil
}

// afterCronEnds tells of the jobs a new or removed crontab cancelled, as
// scancel's end of a pending job is told (--mail-type=END, webhooks).
func (d *Daemon) afterCronEnds(caller localapi.Identity, cancelled []store.Job) {
	for _, j := range cancelled {
		d.log.Info("crontab job cancelled: its crontab was replaced or removed", "job", j.ID, "user", j.User, "by", caller.User)
		d.tell(notify.End, j, "", "")
	}
}

// disableCronEntry comments out, in its owner's crontab, the entry whose
// job j was cancelled (crontab_add_disabled_lines).
func (d *Daemon) disableCronEntry(ctx context.Context, j store.Job) {
	c := j.Request.Cron
	if c == nil || c.Off {
		return
	}
	err := d.st.Update(ctx, func(tx *store.Tx) error {
		ct, ok, err := readCrontab(tx, j.UID)
		if err != nil || !ok {
			return err
		}
		for l := c.LineStart; l <= c.LineEnd; l++ {
			if !slices.Contains(ct.Disabled, l) {
				ct.Disabled = append(ct.Disabled, l)
			}
		}
		return writeCrontab(tx, j.UID, ct)
	})
	if err != nil {
		d.log.Error("commenting out a cancelled crontab entry", "job", j.ID, "err", err)
		return
	}
	d.log.Info("cancelling cron job", "job", j.ID, "lines", fmt.Sprintf("%d-%d", c.LineStart, c.LineEnd))
}

// errCronOff: a scrontab job's run ended after its crontab was replaced
// or removed; it is not requeued.
var errCronOff = errors.New("the job no longer recurs")

// settleCron requeues a scrontab job whose run ended for its schedule's
// next time, under the same id, waiting with Reason BeginTime (what
// slurmctld does for a CRON_JOB on its completion): whatever its exit
// code or time limit, but not when it was cancelled (scancel ends it for
// good) or no longer recurs. It reports whether it took the end.
func (d *Daemon) settleCron(ctx context.Context, j store.Job, st stepd.Status) (bool, error) {
	if c := j.Request.Cron; c == nil || c.Off || st.State == slurm.Cancelled || interactive(j) {
		return false, nil
	}
	err := d.requeueAs(ctx, j, st, slurm.Requeued, requeueAs{cron: true})
	if errors.Is(err, errCronOff) {
		return false, nil
	}
	return true, err
}
