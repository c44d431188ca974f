package e2e

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The jobs that single golden files show with scontrol show job and squeue,
// each as it was when recorded. Their ids differ, so one scenario holds
// them all; only=ID,... keeps some of them.

func (b *jobBuilder) gpuAlloc(n int) *jobBuilder {
	for i := range n {
		b.j.Alloc.GPUs = append(b.j.Alloc.GPUs, jobrec.GPUAlloc{Index: i, UUID: "GPU-" + strconv.Itoa(i)})
	}
	return b
}

func (b *jobBuilder) memPerNode(mib uint64) *jobBuilder {
	b.j.Request.MemPerCPU, b.j.Request.MemPerNode = nil, &mib
	b.j.Alloc.Mem = int64(mib) << 20
	return b
}

func (b *jobBuilder) limit(d time.Duration) *jobBuilder {
	b.j.TimeLimit, b.j.Limit, b.j.Request.TimeLimit = d, d, jobscript.Limit(d)
	return b
}

// requeued makes the job pending again after a requeue, eligible (and
// expected to start) at begin.
func (b *jobBuilder) requeued(submit, begin time.Time) *jobBuilder {
	b.j.State, b.j.Reason, b.j.Restarts = slurm.Pending, slurm.ReasonBeginTime, 1
	b.j.Submit, b.j.Eligible, b.j.ExpectedStart = submit, begin, begin
	b.j.Start, b.j.End, b.j.Alloc = time.Time{}, time.Time{}, jobrec.Alloc{}
	return b
}

func singleJobs(now time.Time) []api.Job {
	g, g6 := "/srv/slurm/work/root/g", "/srv/slurm/work/root/g6"
	null := "/dev/null"
	done := func(id uint32, name, hms string) *jobBuilder {
		return newJob(id, name).user("root").dir(g).files(null).command(g+"/hello.sh").priority(3500).
			submitted(at(hms)).ended(slurm.Completed, at(hms), at(hms), 0)
	}
	jobs := []api.Job{
		done(15828, "hello", "09:11:43").build(),
		done(15829, "hello", "09:11:43").build(),
		newJob(15831, "gpudetail").user("root").dir(g).files(null).command(g+"/sleep.sh 15").priority(3500).
			submitted(at("09:11:53")).running(now.Add(-1200*time.Millisecond), 0).gpus(2).gpuAlloc(2).build(),
		newJob(40, "timeout1").user("root").dir(g).files(g+"/timeout-40.out").command(g+"/trapper.sh").
			submitted(at("08:51:06")).ended(slurm.Timeout, at("08:51:08"), at("08:52:21"), 0).limit(time.Minute).build(),
		newJob(43, "restarter").user("root").dir(g).files(g+"/restart-43.out").command(g+"/restart.sh").gpus(1).gpuAlloc(1).
			submitted(at("08:51:10")).running(now.Add(-2200*time.Millisecond), 0).build(),
		newJob(38, "scav").user("bob").dir("/srv/slurm/work/bob").files("/srv/slurm/work/bob/slurm-38.out").gpus(4).
			requeued(at("08:51:05"), at("08:53:06")).build(),
		newJob(26396, "nf-hello_(1)").user("root").dir(g6 + "/nf").files(g6 + "/nf/.command.log").command(".command.run").
			priority(3500).submitted(at("09:58:07")).pending(slurm.ReasonNone).memPerNode(200).limit(10 * time.Minute).build(),
		newJob(26394, "wrap").user("root").dir(g6).files(g6+"/nodir/26394.log").priority(3500).
			submitted(at("09:58:07")).ended(slurm.Failed, at("09:58:07"), at("09:58:07"), 0).build(),
		newJob(26410, "wrap").user("root").dir(g6).files(g6+"/slurm-26410.out").priority(3500).
			submitted(at("09:59:03")).running(now.Add(-1200*time.Millisecond), 0).gpuAlloc(4).build(),
		newJob(26408, "rqarr").user("root").dir(g6).files(null).priority(3500).task(26408, 1).
			requeued(at("09:59:01"), at("10:01:02")).build(),
		newJob(26409, "rqarr").user("root").dir(g6).files(null).priority(3500).task(26408, 0).
			submitted(at("09:59:00")).running(now.Add(-time.Minute), 1).build(),
		newJob(26390, "snakejob_a_1").user("root").dir(g6).files(g6+"/.snakemake/slurm_logs/rule_a/26390.log").priority(3500).
			submitted(at("09:58:07")).ended(slurm.Completed, at("09:58:07"), at("09:58:07"), 8).memPerNode(100).limit(5 * time.Minute).build(),
		newJob(39, "urgent").user("alice").dir("/srv/slurm/work/alice").files("/srv/slurm/work/alice/slurm-39.out").gpus(2).gpuAlloc(2).
			submitted(at("08:51:04")).running(now.Add(-1200*time.Millisecond), 0).build(),
		newJob(25884, "gpus2").user("root").dir(g).files(g + "/slurm-25884.out").gpus(2).priority(3500).
			submitted(at("09:40:00")).pending(slurm.ReasonResources).build(),
		newJob(26382, "longrun").user("root").dir(g6).files(g6 + "/long-26382.out").priority(3500).
			submitted(at("09:58:02")).pending(slurm.ReasonNone).build(),
	}
	for i := range jobs {
		j := &jobs[i]
		switch j.ID {
		case 40:
			j.Reason, j.ExitCode = slurm.ReasonTimeLimit, jobrec.ExitCode{Signal: 9}
		case 43:
			j.Restarts, j.Eligible = 1, at("08:53:11")
		case 38:
			j.Partition = "scavenger"
		case 26396:
			j.Requeue, j.Request.CPUsPerTask, j.NumCPUs = false, 2, 2
			j.Request.Comment = "nf_task"
		case 26394:
			j.Reason, j.ExitCode = slurm.ReasonJobLaunchFailure, jobrec.ExitCode{Signal: 53}
		case 26410:
			j.Request.Sharing, j.NumCPUs = jobscript.Exclusive, 16
			j.Alloc.CPUs, j.Alloc.Mem = []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 16000<<20
			j.Request.WCKey = "x"
		case 15831:
			j.Eligible = at("09:11:53")
		}
	}
	return jobs
}

// usageJobs are the jobs of squeue_priority_order.txt: a blocker running,
// three users' jobs behind it by priority, and one in the filler
// partition, which cannot start while the blocker holds the GPUs.
func usageJobs(now time.Time) []api.Job {
	d := "/srv/slurm/work/root/g"
	pend := func(id uint32, name, user string, prio uint32, r slurm.Reason) api.Job {
		return newJob(id, name).user(user).dir(d).files(d + "/out").priority(prio).
			submitted(at("09:30:00")).pending(r).build()
	}
	scav := pend(10159, "r_scav", "root", 6000, slurm.ReasonPriority)
	scav.Partition = "scavenger"
	scav.StateDesc = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
	return []api.Job{
		newJob(10155, "blocker").user("root").dir(d).files(d+"/out").priority(6000).
			submitted(at("09:29:00")).running(now.Add(-time.Minute), 0).build(),
		pend(10156, "a_pend", "alice", 3500, slurm.ReasonPriority),
		pend(10157, "b_pend", "bob", 8500, slurm.ReasonResources),
		pend(10158, "r_pend", "root", 6000, slurm.ReasonPriority),
		scav,
	}
}

// anchorMoments moves the first recording's jobs to the moments of its
// later goldens: hold27=admin|user|release, requeue25=1 (25 back to
// pending), cancels=1 (27 and 29-31 cancelled, 25 and 28 requeued).
func anchorMoments(jobs []api.Job, now time.Time, opt map[string]string) []api.Job {
	for i := range jobs {
		j := &jobs[i]
		switch {
		case j.ID == 27 && opt["hold27"] == "admin":
			j.Hold, j.Reason, j.Priority = jobrec.HoldAdmin, slurm.ReasonJobHeldAdmin, 0
		case j.ID == 27 && opt["hold27"] == "user":
			j.Hold, j.Reason, j.Priority = jobrec.HoldUser, slurm.ReasonJobHeldUser, 0
		case j.ID == 27 && opt["hold27"] == "release":
			j.Reason = slurm.ReasonNone
		case j.ID == 25 && opt["requeue25"] == "1":
			b := jobBuilder{j: *j}
			*j = b.requeued(at("08:50:15"), at("08:52:16")).build()
		// After the cancels, 25 and 28 wait for their begin times, 28's the
		// later: squeue lists the later start first.
		case j.ID == 25 && opt["cancels"] == "1":
			b := jobBuilder{j: *j}
			*j = b.requeued(now.Add(-time.Minute), now.Add(time.Minute)).build()
		case j.ID == 28 && opt["cancels"] == "1":
			b := jobBuilder{j: *j}
			*j = b.requeued(now.Add(-time.Minute), now.Add(time.Minute+5*time.Second)).build()
		case slices.Contains([]uint32{27, 29, 30, 31}, j.ID) && opt["cancels"] == "1":
			j.State, j.End = slurm.Cancelled, now.Add(-time.Second)
		case j.ID == 26 && opt["cancels"] == "1":
			j.Start = now.Add(-13*time.Second - 200*time.Millisecond)
		}
	}
	return jobs
}

// only keeps the jobs whose ids a scenario's only= option lists.
func only(jobs []api.Job, ids string) []api.Job {
	if ids == "" {
		return jobs
	}
	keep := strings.Split(ids, ",")
	return slices.DeleteFunc(jobs, func(j api.Job) bool {
		return !slices.Contains(keep, strconv.FormatUint(uint64(j.ID), 10))
	})
}

func init() {
	scenarios["singles"] = func(now time.Time, opt map[string]string) fakeState {
		return fakeState{jobs: only(singleJobs(now), opt["only"])}
	}
	scenarios["usage"] = func(now time.Time, opt map[string]string) fakeState {
		return fakeState{jobs: usageJobs(now)}
	}
	scenarios["anchor"] = func(now time.Time, opt map[string]string) fakeState {
		return fakeState{jobs: asUser(anchorMoments(anchorJobs(now), now, opt), opt["me"])}
	}
}
