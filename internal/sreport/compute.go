package sreport

import (
	"cmp"
	"slices"
	"time"
)

// TRES names sreport's -T takes, in Slurm's order (cpu, mem, energy is left
// out: slurm-lite measures none, node, billing, then GRES).
var tresNames = []string{"cpu", "mem", "node", "billing", "gres/gpu"}

// Job is one job record as the reports need it. Start and End are zero
// when the job has not started or not ended; Eligible is zero while it
// cannot run (held).
type Job struct {
	ID                   uint32
	User, Account        string
	Eligible, Start, End time.Time
	// CPUs, MemMB, GPUs, Billing are what the job was allocated; ReqCPUs
	// what it asked for (planned time of a pending job counts these).
	CPUs, ReqCPUs int
	MemMB         int64
	GPUs          int
	Billing       int64
}

// count is the job's allocation of one TRES.
func (j *Job) count(tres string) int64 {
	switch tres {
	case "cpu":
		return int64(j.CPUs)
	case "mem":
		return j.MemMB
	case "node":
		return 1
	case "billing":
		return j.Billing
	case "gres/gpu":
		return int64(j.GPUs)
	}
	return 0
}

// Cluster is the machine: its name in accounting and its TRES.
type Cluster struct {
	Name    string
	CPUs    int
	MemMB   int64
	GPUs    int
	Billing int64
}

func (c *Cluster) count(tres string) int64 {
	switch tres {
	case "cpu":
		return int64(c.CPUs)
	case "mem":
		return c.MemMB
	case "node":
		return 1
	case "billing":
		return c.Billing
	case "gres/gpu":
		return int64(c.GPUs)
	}
	return 0
}

// Util is the cluster's time of one TRES over the window, in TRES-seconds.
type Util struct {
	Alloc, Down, PlannedDown, Idle, Planned, Over, Reported int64
}

// Assoc is one (account, user) association's usage, in TRES-seconds.
type Assoc struct {
	Account, User string
	Used          map[string]int64
}

// Result is what Compute found.
type Result struct {
	Cluster Cluster
	// Start, End is the window; Seconds its length.
	Start, End time.Time
	Util       map[string]*Util
	// Assocs are the associations that used anything, by account then user.
	Assocs []*Assoc
	// Sizes is job SizesByAccount's raw material: CPU-seconds per job
	// account and allocated CPU count.
	jobs []Job
	now  time.Time
}

// Seconds is the window's length.
func (r *Result) Seconds() int64 { return int64(r.End.Sub(r.Start) / time.Second) }

// Total is a TRES's count times the window: what percentages are of, and
// what "Reported" prints (cluster_reports.c multiplies the requested
// window, rolled up or not).
func (r *Result) Total(tres string) int64 { return r.Cluster.count(tres) * r.Seconds() }

// Compute attributes the jobs' time in [start, end) as slurmdbd's hourly
// rollup does (as_mysql_rollup.c, _process_cluster_usage and the job loop
// of as_mysql_hourly_rollup):
//
//  1. only whole hours before now are rolled up; later hours count nothing;
//  2. in each hour a job counts from max(start, hour) to min(end, hour's
//     end), a running job to the hour's end; a job that ended without
//     starting counts nothing;
//  3. a job that was eligible and had not started yet adds its requested
//     CPUs × the seconds it waited in the hour to the cluster's planned
//     CPU time (no other TRES has planned time);
//  4. per hour and TRES, idle = total - allocated - planned; a negative
//     idle is taken from planned and shown as overcommitted instead.
func Compute(c Cluster, jobs []Job, start, end, now time.Time) *Result {
	r := &Result{Cluster: c, Start: start, End: end, Util: map[string]*Util{}, jobs: jobs, now: now}
	for _, t := range tresNames {
		r.Util[t] = &Util{Reported: r.Total(t)}
	}
	rolled := now.Truncate(time.Hour)
	if end.Before(rolled) {
		rolled = end
	}
	assocs := map[[2]string]*Assoc{}
	for h := start; h.Before(rolled); h = h.Add(time.Hour) {
		he := h.Add(time.Hour)
		alloc := map[string]int64{}
		var planned int64
		for i := range jobs {
			j := &jobs[i]
			if j.Eligible.IsZero() && j.Start.IsZero() {
				continue // never eligible: the rollup's query skips it
			}
			if !j.End.IsZero() && j.End.Before(h) {
				continue
			}
			if !j.Eligible.IsZero() && !j.Eligible.Before(he) {
				continue
			}
			s, e := j.Start, j.End
			if s.IsZero() && !e.IsZero() {
				s = e
			}
			if !s.IsZero() && s.Before(h) {
				s = h
			}
			if e.IsZero() || e.After(he) {
				e = he
			}
			if !s.IsZero() && e.After(s) {
				secs := int64(e.Sub(s) / time.Second)
				k := [2]string{j.Account, j.User}
				a := assocs[k]
				if a == nil {
					a = &Assoc{Account: j.Account, User: j.User, Used: map[string]int64{}}
					assocs[k] = a
				}
				for _, t := range tresNames {
					n := secs * j.count(t)
					alloc[t] += n
					a.Used[t] += n
				}
			}
			// Planned: the wait between eligibility and start in this hour.
			if !j.Eligible.IsZero() {
				ps, pe := j.Eligible, s
				if ps.Before(h) {
					ps = h
				}
				if pe.IsZero() || pe.After(he) {
					pe = he
				}
				if pe.After(ps) {
					planned += int64(pe.Sub(ps)/time.Second) * int64(max(j.ReqCPUs, j.CPUs, 1))
				}
			}
		}
		for _, t := range tresNames {
			u := r.Util[t]
			total := c.count(t) * 3600
			a := min(alloc[t], total)
			var plan, over int64
			if t == "cpu" {
				plan = planned
			}
			idle := total - a - plan
			if idle < 0 {
				plan += idle
				over -= idle
				idle = 0
				plan = max(plan, 0)
			}
			u.Alloc += a
			u.Idle += idle
			u.Planned += plan
			u.Over += over
		}
	}
	for _, a := range assocs {
		r.Assocs = append(r.Assocs, a)
	}
	slices.SortFunc(r.Assocs, func(x, y *Assoc) int {
		return cmp.Or(cmp.Compare(x.Account, y.Account), cmp.Compare(x.User, y.User))
	})
	return r
}

// sizeBuckets are job SizesByAccount's default grouping, in CPUs.
var sizeBuckets = []int{50, 250, 500, 1000}

// Sizes is job SizesByAccount: per account (the given ones, or "root" for
// all), the CPU-seconds of jobs in each size bucket within the window. The
// job report reads job records, not the rollup: a running job counts up to
// now.
func (r *Result) Sizes(accounts []string) (rows []SizeRow) {
	if len(accounts) == 0 {
		accounts = []string{"root"}
	}
	for _, acct := range accounts {
		row := SizeRow{Account: acct, Secs: make([]int64, len(sizeBuckets)+1)}
		for i := range r.jobs {
			j := &r.jobs[i]
			if acct != "root" && j.Account != acct {
				continue
			}
			s, e := j.Start, j.End
			if s.IsZero() {
				continue
			}
			if e.IsZero() {
				e = r.now
			}
			if s.Before(r.Start) {
				s = r.Start
			}
			if e.After(r.End) {
				e = r.End
			}
			if !e.After(s) {
				continue
			}
			b := 0
			for b < len(sizeBuckets) && j.CPUs >= sizeBuckets[b] {
				b++
			}
			row.Secs[b] += int64(e.Sub(s)/time.Second) * int64(j.CPUs)
		}
		rows = append(rows, row)
	}
	return rows
}

// SizeRow is one account's line of job SizesByAccount.
type SizeRow struct {
	Account string
	Secs    []int64
}
