package e2e

import (
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// acctJob is one run in an accounting scenario, written compactly:
//
//	id[_task[@jobid]] name user partition state exit [by=UID] [steps...]
//
// where each step is "name:STATE:status:signal". Runs without steps never
// started ("None assigned").
type acctJob string

// record builds the run, started at start and lasting for run.
func (a acctJob) record(submit, start time.Time, run time.Duration) jobrec.Record {
	f := strings.Fields(string(a))
	idPart, name, user, part, state, exit := f[0], f[1], f[2], f[3], f[4], f[5]
	b := newJob(0, name).user(user).submitted(submit)
	b.j.Partition = part
	arrayID, task, jobID := parseAcctID(idPart)
	b.j.ID = jobID
	if task >= 0 {
		b.task(arrayID, task)
	}
	st, _ := slurm.ParseJobState(state)
	var steps []jobrec.Step
	for _, s := range f[6:] {
		if by, ok := strings.CutPrefix(s, "by="); ok {
			uid, _ := strconv.ParseUint(by, 10, 32)
			u := uint32(uid)
			b.j.CancelledBy = &u
			continue
		}
		p := strings.Split(s, ":")
		sst, _ := slurm.ParseJobState(p[1])
		steps = append(steps, jobrec.Step{JobID: jobID, ID: p[0], Name: p[0], State: sst, NTasks: 1,
			Start: start, End: start.Add(run), ExitCode: exitOf(p[2] + ":" + p[3])})
	}
	if len(steps) > 0 {
		b.ended(st, start, start.Add(run), 0)
	} else {
		b.j.State, b.j.End = st, submit
	}
	b.j.ExitCode = exitOf(exit)
	return jobrec.Record{Job: b.j.Job, Latest: true, Steps: steps}
}

// parseAcctID reads "7", "8_3" (task 3 of array 8, job id 8) or
// "8_0@10" (task 0 of array 8, job id 10).
func parseAcctID(s string) (arrayID uint32, task int, jobID uint32) {
	s, own, hasOwn := strings.Cut(s, "@")
	a, t, isTask := strings.Cut(s, "_")
	n, _ := strconv.ParseUint(a, 10, 32)
	arrayID, jobID, task = uint32(n), uint32(n), -1
	if isTask {
		task, _ = strconv.Atoi(t)
	}
	if hasOwn {
		o, _ := strconv.ParseUint(own, 10, 32)
		jobID = uint32(o)
	}
	return arrayID, task, jobID
}

func exitOf(s string) jobrec.ExitCode {
	st, sig, _ := strings.Cut(s, ":")
	a, _ := strconv.Atoi(st)
	b, _ := strconv.Atoi(sig)
	return jobrec.ExitCode{Status: a, Signal: b}
}

// anchorDay are the first recording's runs, in submission order
// (golden/sacct_default.txt; the array tasks got ids of their own, the last
// one keeping the array's).
var anchorDay = []acctJob{
	"1 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"2 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"4 hello root gpu FAILED 1:0",
	"5 wrap root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"6 sbatch root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"7 fail3 root gpu FAILED 3:0 batch:FAILED:3:0",
	"8_0@10 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"8_1@11 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"8_2@12 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"8_3 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"9_0@13 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"9_1@14 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"9_2@15 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"9_3 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"17 hello root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"19 hello root gpu FAILED 1:0",
	"20 hello root gpu FAILED 1:0",
	"21 hello root scavenger COMPLETED 0:0 batch:COMPLETED:0:0",
	"26 cpujob alice gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15",
	"27 alicegpu alice gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15",
	"31_0@32 arr root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"31_1@33 arr root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"31_2@34 arr root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"31_3 arr root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"25 bigrun root gpu CANCELLED 0:0 by=0",
	"28 bobgpu bob gpu CANCELLED 0:0 by=0",
	"35 envdump root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"36 envdump root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"37 envdump root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"39 urgent alice gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"38 scav bob scavenger CANCELLED 0:0 by=0",
	"40 timeout1 root gpu TIMEOUT 0:0 batch:CANCELLED:0:9",
	"41 sigusr1 root gpu TIMEOUT 0:0 batch:CANCELLED:0:9",
	"42 sigall root gpu TIMEOUT 0:0 batch:CANCELLED:0:9",
	"43 restarter root gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15",
	"44_0@45 envdump root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"44_1 envdump root gpu COMPLETED 0:0 batch:COMPLETED:0:0",
	"46 tocancel root gpu CANCELLED 0:0 by=0 batch:CANCELLED:0:15",
}

// anchorRecords are the runs of the first recording's day. Times are of
// the recording (2026-11-29), or with today=1 moved into today before now
// so that sacct's default window (since midnight) holds them. The runs
// that goldens show in detail get their recorded times; 43 and 38 also
// have their earlier runs (sacct -D). late=1 adds job 47, recorded after
// the others.
func anchorRecords(now time.Time, opt map[string]string) []jobrec.Record {
	base := at("08:49:00")
	var recs []jobrec.Record
	for i, a := range anchorDay {
		submit := base.Add(time.Duration(i) * time.Second)
		recs = append(recs, a.record(submit, submit, time.Second))
	}
	byID := func(id uint32) *jobrec.Record {
		for i := range recs {
			if recs[i].Job.ID == id {
				return &recs[i]
			}
		}
		panic(id)
	}
	// 40: a one-minute limit; the batch step outlived the job by KillWait.
	r := byID(40)
	setRun(r, at("08:51:08"), at("08:52:21"))
	r.Job.TimeLimit, r.Steps[0].End = time.Minute, at("08:52:50")
	r = byID(41)
	setRun(r, at("08:51:09"), at("08:53:22"))
	r.Steps[0].End = at("08:53:52")
	// 43 ran twice: requeued after 2 s, then cancelled after 2 s.
	r = byID(43)
	first := jobrec.Record{Job: r.Job, Steps: []jobrec.Step{r.Steps[0]}}
	setRun(&first, at("08:51:08"), at("08:51:10"))
	first.Job.State, first.Job.CancelledBy = slurm.Requeued, nil
	first.Job.Submit = at("08:48:01")
	setRun(r, at("08:53:51"), at("08:53:53"))
	r.Job.Restarts = 1
	// 38 was preempted (requeued) after 3 s, then cancelled while pending.
	// With preempt=1, as golden preempt_sacct_preempted saw it, the second
	// run had not ended yet.
	pre := acctJob("38 scav bob scavenger PREEMPTED 0:0 batch:CANCELLED:0:15").record(at("08:48:02"), at("08:51:02"), 3*time.Second)
	pre.Latest, first.Latest = false, false
	if r = byID(38); opt["preempt"] == "1" {
		r.Job.State, r.Job.CancelledBy, r.Job.End, r.Job.Restarts = slurm.Pending, nil, time.Time{}, 1
	}
	recs = append(recs, first, pre)
	if opt["late"] == "1" {
		recs = append(recs, acctJob("47 allocation root gpu CANCELLED 0:0 by=0").record(at("08:59:00"), at("08:59:00"), 0))
	}
	if opt["today"] == "1" {
		fitToday(recs, now)
	}
	return recs
}

// setRun sets a run's start and end, and its steps'.
func setRun(r *jobrec.Record, start, end time.Time) {
	r.Job.Start, r.Job.End = start, end
	for i := range r.Steps {
		r.Steps[i].Start, r.Steps[i].End = start, end
	}
}

func init() {
	scenarios["anchoracct"] = func(now time.Time, opt map[string]string) fakeState {
		return fakeState{records: anchorRecords(now, opt)}
	}
}
