package e2e

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// g6Name is the job name Snakemake gave the jobs of one workflow run.
const g6Name = "3f0c5b2e-6d1a-4c2b-9a57-g6095758"

// g6Records are the sixth recording's runs as sacct showed them. early is
// the moment 26382 and tasks 0 and 1 of array 26383 ran (tasks 2-3
// pending, at most 2 at once); late, after 26382 and task 0 were cancelled
// and the other tasks ended.
func g6Records(now time.Time, late bool) []jobrec.Record {
	t := oodTime
	rec := func(a acctJob, submit, start string, run time.Duration) jobrec.Record {
		return a.record(t("2026-11-29T"+submit), t("2026-11-29T"+start), run)
	}
	var recs []jobrec.Record
	add := func(r jobrec.Record, fix func(*jobrec.Record)) {
		if fix != nil {
			fix(&r)
		}
		recs = append(recs, r)
	}
	mem100 := func(r *jobrec.Record) {
		mib := uint64(100)
		r.Job.Request.MemPerCPU, r.Job.Request.MemPerNode = nil, &mib
		r.Job.Alloc.Mem = 100 << 20
	}
	cpu := func(ms ...float64) func(*jobrec.Record) {
		return func(r *jobrec.Record) {
			mem100(r)
			for i := range r.Steps {
				r.Steps[i].UserCPU = time.Duration(ms[i] * float64(time.Millisecond))
			}
		}
	}
	// The workflow's jobs: two plain ones and array 26389, whose tasks 1
	// and 2 got ids of their own.
	add(rec(acctJob("26387 "+g6Name+" root gpu COMPLETED 0:0 batch:COMPLETED:0:0"), "09:58:05", "09:58:06", 0), cpu(2.1))
	add(rec(acctJob("26388 "+g6Name+" root gpu COMPLETED 0:0 batch:COMPLETED:0:0 0:COMPLETED:0:0"), "09:58:05", "09:58:06", 0), func(r *jobrec.Record) {
		cpu(13.4, 2.8)(r)
		r.Steps[1].Name = "echo"
	})
	for _, a := range []string{"26389_1@26405", "26389_2@26406", "26389_3"} {
		add(rec(acctJob(a+" "+g6Name+" root gpu COMPLETED 0:0 batch:COMPLETED:0:0"), "09:58:05", "09:58:06", 0), cpu(2.2))
	}
	add(rec(acctJob("26390 snakejob_a_1 root gpu COMPLETED 0:0 batch:COMPLETED:0:0 0:COMPLETED:0:0"), "09:58:07", "09:58:07", 0), func(r *jobrec.Record) {
		mem100(r)
		r.Job.TimeLimit = 5 * time.Minute
	})
	add(rec(acctJob("26393 submitit root gpu FAILED 0:53 batch:CANCELLED:0:53"), "09:58:07", "09:58:07", 0), nil)
	add(rec(acctJob("26394 wrap root gpu FAILED 0:53 batch:CANCELLED:0:53"), "09:58:07", "09:58:07", 0), nil)
	add(rec(acctJob("26404 sigjob root gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15 0:CANCELLED:0:15"), "09:58:07", "09:58:10", 9*time.Second), nil)
	add(rec(acctJob("26410 wrap root gpu COMPLETED 0:0 batch:COMPLETED:0:0"), "09:59:03", "09:59:03", 8*time.Second), func(r *jobrec.Record) {
		r.Job.Request.WCKey, r.Job.Request.Sharing = "x", jobscript.Exclusive
		r.Job.Alloc.CPUs = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	})
	if !late {
		// 26382 has run 53 s; the array's tasks 0 and 1 run, 2-3 wait.
		running := func(a acctJob, submit string) jobrec.Record {
			r := rec(a, submit, "09:58:03", 0)
			r.Job.State, r.Job.End = slurm.Running, time.Time{}
			r.Job.Start = now.Add(-53*time.Second - 200*time.Millisecond)
			for i := range r.Steps {
				r.Steps[i].State, r.Steps[i].Start, r.Steps[i].End = slurm.Running, r.Job.Start, time.Time{}
			}
			return r
		}
		add(running("26382 longrun root gpu RUNNING 0:0 batch:RUNNING:0:0", "09:58:02"), nil)
		add(running("26383_0@26384 arrenv root gpu RUNNING 0:0 batch:RUNNING:0:0", "09:58:02"), nil)
		add(running("26383_1@26385 arrenv root gpu RUNNING 0:0 batch:RUNNING:0:0", "09:58:02"), nil)
		add(rec(acctJob("26383 arrenv root gpu PENDING 0:0"), "09:58:02", "09:58:02", 0), func(r *jobrec.Record) {
			r.Job.ArrayJobID, r.Job.ArrayPending, r.Job.ArrayLimit = 26383, []int{2, 3}, 2
			r.Job.End, r.Job.Reason = time.Time{}, slurm.ReasonJobArrayTaskLimit
		})
		return recs
	}
	add(rec(acctJob("26382 longrun root gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15"), "09:58:02", "09:58:03", 55*time.Second), nil)
	add(rec(acctJob("26383_0@26384 arrenv root gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15"), "09:58:02", "09:58:03", 5*time.Second), nil)
	add(rec(acctJob("26383_1@26385 arrenv root gpu COMPLETED 0:0 batch:COMPLETED:0:0"), "09:58:02", "09:58:03", 30*time.Second), nil)
	add(rec(acctJob("26383_2 arrenv root gpu COMPLETED 0:0 batch:COMPLETED:0:0"), "09:58:02", "09:58:08", 30*time.Second), nil)
	add(rec(acctJob("26407 cltest root gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15"), "09:59:00", "09:59:00", time.Second), nil)
	return recs
}

// fitToday moves runs into today before now, in their order, for
// sacct's default window (since midnight): shifted to end a second ago, or
// squeezed after midnight when the day is younger than they last.
func fitToday(recs []jobrec.Record, now time.Time) {
	var first, last time.Time
	each := func(r *jobrec.Record, f func(*time.Time)) {
		for _, t := range []*time.Time{&r.Job.Submit, &r.Job.Eligible, &r.Job.Start, &r.Job.End} {
			if !t.IsZero() {
				f(t)
			}
		}
		for i := range r.Steps {
			for _, t := range []*time.Time{&r.Steps[i].Start, &r.Steps[i].End} {
				if !t.IsZero() {
					f(t)
				}
			}
		}
	}
	for i := range recs {
		each(&recs[i], func(t *time.Time) {
			if first.IsZero() || t.Before(first) {
				first = *t
			}
			if t.After(last) {
				last = *t
			}
		})
	}
	y, m, d := now.Date()
	midnight := time.Date(y, m, d, 0, 0, 1, 0, now.Location())
	end := now.Add(-time.Second)
	start := end.Add(-last.Sub(first))
	if start.Before(midnight) {
		start = midnight
	}
	scale := float64(end.Sub(start)) / float64(max(last.Sub(first), 1))
	for i := range recs {
		each(&recs[i], func(t *time.Time) {
			*t = start.Add(time.Duration(float64(t.Sub(first)) * scale))
		})
	}
}

func init() {
	scenarios["g6acct"] = func(now time.Time, opt map[string]string) fakeState {
		recs := g6Records(now, opt["moment"] == "late")
		if opt["today"] == "1" {
			fitToday(recs, now)
		}
		return fakeState{records: recs}
	}
}
