package squeue

import (
	"context"
	"errors"
	"fmt"

	"net/url"
	"slices"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/cli"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/format"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
	"github.com/slurm-lite/slurm-lite/internal/sockclient/gobanswer"
)

// show asks for the jobs and prints them once, as squeue's _print_job.
func (a *squeueArgs) show(c *sockclient.Client, cfg *config.View, sio cli.IO) int {
	f, warnings := a.parsedFormat()
	sortSpec := a.sort
	if sortSpec == "" {
		sortSpec = format.SqueueSort
	}
	env := cli.NewViewEnv(sio, cfg)
	env.NoConvert = a.noConvert
	var rows []format.Row
	var err error
	if a.lean(f, sortSpec) {
		rows, err = getSqueueRows(c, a.query(), env)
	} else {
		var jobs []api.Job
		jobs, err = cli.GetJobs(c, a.query())
		rows = format.Rows(jobs, env)
	}
	if err == nil && len(a.jobs) == 1 && len(rows) == 0 {
		err = &api.Error{Code: slurm.ErrInvalidJobID}
	}
	if err != nil {
		return cli.LoadJobsError("squeue", err, sio)
	}
	env.Now = sio.Now() // the clock once the jobs are in, as the rows read it
	for _, w := range warnings {
		fmt.Fprintf(sio.Stderr, "squeue: error: %s\n", w)
	}
	if !a.noHeader {
		fmt.Fprint(sio.Stdout, f.Header())
	}
	rows = a.selectRows(rows, cfg)
	if err := format.SortRows(rows, sortSpec, env.Now); err != nil {
		fmt.Fprintf(sio.Stderr, "squeue: error: %v\n", err)
		return 1
	}
	// The lines go out a buffer's worth at a time: one buffer for the
	// whole list (a megabyte with 10,000 lines) cost squeue a page fault
	// per 4 kB of it.
	b := make([]byte, 0, flushAt+flushAt/4)
	flush := func() {
		if len(b) >= flushAt {
			sio.Stdout.Write(b)
			b = b[:0]
		}
	}
	for i := range rows {
		r := &rows[i]
		if a.array && r.Tasks != "" {
			for tasks := range slices.Chunk(rowTasks(*r), flushAt/128) {
				b = f.AppendTasks(b, r, tasks)
				flush()
			}
			continue
		}
		b = f.AppendLine(b, r)
		flush()
	}
	sio.Stdout.Write(b)
	return 0
}

// flushAt is how much of its output squeue holds before writing it.
const flushAt = 64 << 10

// parsedFormat is the format squeue prints in, with the warnings about it.
func (a *squeueArgs) parsedFormat() (format.Format, []string) {
	switch {
	case a.formatSet:
		return format.ParseFormat(a.format)
	case a.formatLongSet:
		return format.ParseLongFormat(a.formatLong)
	case a.long:
		return format.ParseLongFormat(format.SqueueLong)
	}
	return format.ParseLongFormat(format.SqueueDefault)
}

// lean reports whether the compact job list (api.SqueueJobs) holds all
// that the format, the sort and the filters read: the default formats,
// -l and --start do, a format naming the request's fields does not.
func (a *squeueArgs) lean(f format.Format, sortSpec string) bool {
	return f.Lean() && format.LeanSort(sortSpec) && len(a.licenses) == 0 && a.reservation == ""
}

// rowTasks are the pending tasks a record row stands for.
func rowTasks(r format.Row) []int {
	if r.Job.ArrayRecord() && r.Tasks == format.NewRow(r.Job, nil).Tasks {
		return r.Job.ArrayPending
	}
	return parseBitFmt(r.Tasks)
}

// parseBitFmt reads "0-3,8" (ignoring a "%N" throttle).
func parseBitFmt(s string) []int {
	s, _, _ = strings.Cut(s, "%")
	var ids []int
	for _, part := range strings.Split(s, ",") {
		lo, rest, _ := slurmsyntax.Strtol(part, slurmsyntax.OutOfRange)
		hi := lo
		if strings.HasPrefix(rest, "-") {
			hi, _, _ = slurmsyntax.Strtol(rest[1:], slurmsyntax.OutOfRange)
		}
		for i := lo; i <= hi && len(ids) < slurmsyntax.MaxArraySizeLimit; i++ {
			ids = append(ids, int(i))
		}
	}
	return ids
}

// selectRows puts rows (one per job) in the controller's order, keeps
// the jobs squeue shows (its _filter_job and _filter_job_part), narrows
// array records to the tasks asked for, and, unless -r, merges pending
// tasks back into their array's record (_combine_pending_array_tasks).
func (a *squeueArgs) selectRows(all []format.Row, cfg *config.View) []format.Row {
	format.ControllerOrderRows(all)
	rows := all[:0]
	for _, r := range all {
		j := r.Job
		if j.ID == 0 || !a.keep(&r, cfg) {
			continue
		}
		if len(a.jobs) > 0 {
			ok, tasks := a.matchJobList(j)
			if !ok {
				continue
			}
			if tasks != nil {
				if len(tasks) == 1 {
					r.Tasks, r.Task = "", tasks[0]
				} else {
					r.Tasks = format.BitFmt(tasks)
				}
			}
		}
		rows = append(rows, r)
	}
	if !a.array {
		rows = combinePending(rows)
	}
	return rows
}

// keep applies every filter but the job list. The filters on the
// request's licenses and reservation read the full record, which squeue
// asks for when they are given (lean).
func (a *squeueArgs) keep(r *format.Row, cfg *config.View) bool {
	j := r.Job
	if len(a.licenses) > 0 && !anyLicense(r.Full.Request.Licenses, a.licenses) {
		return false
	}
	if len(a.accounts) > 0 && !cli.ContainsFold(a.accounts, j.Account) {
		return false
	}
	if len(a.qos) > 0 && !cli.ContainsFold(a.qos, j.QOS) {
		return false
	}
	switch {
	case a.allStates:
	case a.states != nil:
		if !slices.Contains(a.states, j.State) && !slices.Contains(a.states, j.ShownState()) {
			return false
		}
	default:
		switch j.State {
		case slurm.Pending, slurm.Running, slurm.Suspended, slurm.Completing:
		default:
			return false
		}
	}
	if a.nodes != "" && !cli.HostsIntersect(a.nodes, j.Node, j.State) {
		return false
	}
	if a.usersGiven && !slices.ContainsFunc(a.users, func(u cli.UserMatch) bool { return u.Matches(j.User, j.UID) }) {
		return false
	}
	if a.reservation != "" && r.Full.Request.Reservation != a.reservation {
		return false
	}
	if len(a.names) > 0 && !cli.ContainsFold(a.names, j.Name) {
		return false
	}
	if len(a.partitions) > 0 && !slices.Contains(a.partitions, j.Partition) {
		return false
	}
	// Without -a (or -p, or -j), jobs of hidden partitions stay hidden.
	if !a.all && len(a.jobs) == 0 && cfg != nil {
		if p := cfg.Partition(j.Partition); p != nil && p.Hidden {
			return false
		}
	}
	return true
}

// matchJobList is the -j test of _filter_job. tasks is non-nil when j is an
// array's pending record of which only some tasks were asked for.
func (a *squeueArgs) matchJobList(j *api.SqueueJob) (ok bool, tasks []int) {
	record := j.ArrayRecord()
	for _, s := range a.jobs {
		switch {
		case s.task < 0 && (s.id == j.ArrayJobID || s.id == j.ID):
			return true, nil
		case s.task >= 0 && !record && s.task == j.ArrayTaskID && s.id == j.ArrayJobID:
			return true, nil
		case s.task >= 0 && record && s.id == j.ArrayJobID && slices.Contains(j.ArrayPending, s.task):
			ok = true
		}
	}
	if !ok {
		return false, nil
	}
	for _, s := range a.jobs {
		if s.id == j.ArrayJobID && s.task >= 0 && slices.Contains(j.ArrayPending, s.task) && !slices.Contains(tasks, s.task) {
			tasks = append(tasks, s.task)
		}
	}
	slices.Sort(tasks)
	return true, tasks
}

// combinePending merges pending array tasks that have rows of their own
// (started and requeued, or held one by one) into their array's pending
// record, when it has one with the same name and partition. The merged
// record lists its tasks without the throttle, and its reason names every
// task's reason, as squeue does.
func combinePending(rows []format.Row) []format.Row {
	for i := range rows {
		rec := &rows[i]
		if rec.Job == nil || rec.Job.State != slurm.Pending || !rec.Job.ArrayRecord() || rec.Tasks == "" {
			continue
		}
		tasks := parseBitFmt(rec.Tasks)
		merged := 0
		for k := range rows {
			t := &rows[k]
			if k == i || t.Job == nil || t.Job.State != slurm.Pending || t.Task == jobrec.NoTask || t.Tasks != "" ||
				t.Job.ArrayJobID != rec.Job.ArrayJobID || t.Job.Name != rec.Job.Name || t.Job.Partition != rec.Job.Partition {
				continue
			}
			mergeReason(rec, t.Job)
			tasks = append(tasks, t.Task)
			t.Job = nil
			merged++
		}
		if merged > 0 {
			rec.Tasks = format.BitFmt(tasks)
		}
	}
	return slices.DeleteFunc(rows, func(r format.Row) bool { return r.Job == nil })
}

// mergeReason is _merge_job_reason: the record's reason, then each task's
// that differs and is not in it yet, comma-separated.
func mergeReason(rec *format.Row, task *api.SqueueJob) {
	if rec.Job.Reason == task.Reason {
		return
	}
	cp := *rec.Job
	if cp.StateDesc == "" {
		cp.StateDesc = string(cp.Reason)
	}
	if w := string(task.Reason); !strings.Contains(cp.StateDesc, w) {
		cp.StateDesc += "," + w
	}
	rec.Job = &cp
}

// anyLicense reports whether a job's --licenses (name[:count],...) names
// one of want.
func anyLicense(licenses string, want []string) bool {
	for _, l := range cli.SplitList(licenses) {
		name, _, _ := strings.Cut(l, ":")
		if slices.Contains(want, name) {
			return true
		}
	}
	return false
}

// getSqueueRows asks the daemon for jobs in squeue's compact form (the
// query of getJobs), one row each.
func getSqueueRows(c *sockclient.Client, q url.Values, env *format.Env) ([]format.Row, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cli.RequestTimeout)
	defer cancel()
	path := api.PathSqueueJobs
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var list api.SqueueJobs
	err := gobanswer.Do(ctx, c, "GET", path, nil, &list)
	var le *api.Error
	if errors.As(err, &le) && le.Status == 404 {
		// A daemon older than this command (binaries replaced while it
		// runs) lists full records only.
		jobs, err := cli.GetJobs(c, q)
		return format.Rows(jobs, env), err
	}
	if err != nil {
		return nil, err
	}
	jobs := list.Jobs()
	rows := make([]format.Row, len(jobs))
	for i := range jobs {
		rows[i] = format.NewRow(&jobs[i], env)
	}
	return rows, nil
}
