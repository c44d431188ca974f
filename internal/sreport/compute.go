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
	hours := 0
	if rolled.After(start) {
		hours = int((rolled.Sub(start) + time.Hour - 1) / time.Hour)
	}
	// Per hour of the window: allocated TRES-seconds, planned CPU-seconds.
	// Each job adds to the hours it spans only, so a long window costs the
	// jobs' hours, not hours × jobs.
	alloc := map[string][]int64{}
	for _, t := range tresNames {
		alloc[t] = make([]int64, hours)
	}
	planned := make([]int64, hours)
	// spread adds per to each hour for the seconds of [from, to) in it.
	spread := func(from, to time.Time, add func(h int, secs int64)) {
		if from.Before(start) {
			from = start
		}
		if to.After(rolled) {
			to = rolled
		}
		for from.Before(to) {
			h := int(from.Sub(start) / time.Hour)
			he := start.Add(time.Duration(h+1) * time.Hour)
			e := to
			if e.After(he) {
				e = he
			}
			add(h, int64(e.Sub(from)/time.Second))
			from = e
		}
	}
	never := rolled.Add(time.Hour) // "not yet": past every hour counted
	assocs := map[[2]string]*Assoc{}
	for i := range jobs {
		j := &jobs[i]
		elig := j.Eligible
		if elig.IsZero() {
			elig = j.Start // a started job was eligible by its start
		}
		if elig.IsZero() {
			continue // never eligible (held): the rollup's query skips it
		}
		// The start as the rollup reads it: a job that ended without
		// starting "started" at its end (and so ran for nothing).
		s := j.Start
		if s.IsZero() && !j.End.IsZero() {
			s = j.End
		}
		// The rollup looks at a job in the hours from its eligibility on.
		from := elig.Truncate(time.Hour)
		if !s.IsZero() {
			e := j.End
			if e.IsZero() {
				e = never
			}
			runFrom := s
			if runFrom.Before(from) {
				runFrom = from
			}
			var a *Assoc
			spread(runFrom, e, func(h int, secs int64) {
				if a == nil {
					k := [2]string{j.Account, j.User}
					if a = assocs[k]; a == nil {
						a = &Assoc{Account: j.Account, User: j.User, Used: map[string]int64{}}
						assocs[k] = a
					}
				}
				for _, t := range tresNames {
					n := secs * j.count(t)
					alloc[t][h] += n
					a.Used[t] += n
				}
			})
		}
		// Planned: the wait between eligibility and start.
		waitEnd := s
		if waitEnd.IsZero() {
			waitEnd = never
		}
		cpus := int64(max(j.ReqCPUs, j.CPUs, 1))
		spread(elig, waitEnd, func(h int, secs int64) { planned[h] += secs * cpus })
	}
	for h := 0; h < hours; h++ {
		secs := int64(3600)
		if h == hours-1 {
			secs = int64(rolled.Sub(start.Add(time.Duration(h)*time.Hour)) / time.Second)
		}
		for _, t := range tresNames {
			u := r.Util[t]
			total := c.count(t) * secs
			a := min(alloc[t][h], total)
			var plan, over int64
			if t == "cpu" {
				plan = planned[h]
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
