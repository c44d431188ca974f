package e2e

import (
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
)

// The --json recordings (golden squeue_json, sacct_json) were made on the
// first recording's cluster with its work directory under
// /tmp/slurm-anchor.
const jsonDir = "/tmp/slurm-anchor/work"

// dependsOn gives the job a --dependency.
func (b *jobBuilder) dependsOn(spec string) *jobBuilder {
	d, err := slurmsyntax.ParseDependency(spec)
	if err != nil {
		panic(err)
	}
	b.j.Request.Dependency = &jobscript.Dependency{Spec: spec, Parsed: d}
	b.j.Eligible = time.Time{}
	return b
}

// refused is a job slurmctld kept as FAILED after it found its request
// impossible at submission (BadConstraints, exit code 1): what Slurm 22.05
// does with --gpus=16 and --mem=200G.
func (b *jobBuilder) refused(at time.Time) *jobBuilder {
	b.j.State, b.j.Reason, b.j.End = slurm.Failed, slurm.ReasonBadConstraints, at
	b.j.ExitCode = jobrec.ExitCode{Signal: 1}
	b.j.NumCPUs, b.j.NumTasks = 0, 0
	return b
}

// cancelledPending is a job cancelled before it started.
func (b *jobBuilder) cancelledPending(r slurm.Reason, at time.Time) *jobBuilder {
	b.j.State, b.j.Reason, b.j.End = slurm.Cancelled, r, at
	b.j.NumCPUs, b.j.NumTasks = 0, 0
	return b
}

// jsonQueue are the jobs squeue --json dumped (golden squeue_json): those
// finished within MinJobAge, then 25 and 26 running, 27-31 pending.
func jsonQueue(now time.Time) []api.Job {
	g, al, bo := jsonDir+"/root/g", jsonDir+"/alice", jsonDir+"/bob"
	t0 := now.Add(-40 * time.Second)
	t1 := t0.Add(3 * time.Second)
	done := func(id uint32, name string, cpu int, at time.Time) *jobBuilder {
		return newJob(id, name).user("root").dir(g).command(g+"/hello.sh").submitted(at).
			ended(slurm.Completed, at, at.Add(time.Second), cpu)
	}
	mem200G := uint64(204800)
	j20 := newJob(20, "hello").user("root").dir(g).command(g + "/hello.sh").submitted(t1).refused(t1).build()
	j20.Request.MemPerCPU, j20.Request.MemPerNode = nil, &mem200G
	j19 := newJob(19, "hello").user("root").dir(g).command(g + "/hello.sh").submitted(t1).refused(t1).build()
	j19.Request.GPUs = []jobscript.Gres{{Name: "gpu", Type: "abc", Count: 1}}
	j21 := done(21, "hello", 3, t1).build()
	j21.Partition, j21.Limit = "scavenger", 24*time.Hour
	j7 := done(7, "fail3", 4, t0).command(g + "/fail.sh").build()
	j7.State, j7.Reason, j7.ExitCode = slurm.Failed, slurm.ReasonNonZeroExitCode, jobrec.ExitCode{Status: 3}
	wrap := func(b *jobBuilder) *jobBuilder { return b.command("(null)") }
	ran := now.Add(-4 * time.Second)
	pend := now.Add(-2 * time.Second)
	return []api.Job{
		done(1, "hello", 0, t0).build(),
		done(2, "hello", 1, t0).build(),
		newJob(4, "hello").user("root").dir(g).command(g + "/hello.sh").submitted(t0).refused(t0).gpus(16).build(),
		wrap(done(5, "wrap", 2, t0)).build(),
		wrap(done(6, "sbatch", 3, t0)).build(),
		j7,
		done(11, "hello", 5, t0).task(8, 0).build(),
		done(12, "hello", 6, t0).task(8, 1).build(),
		done(13, "hello", 7, t0).task(8, 2).build(),
		done(8, "hello", 8, t0).task(8, 3).build(),
		throttled(done(14, "hello", 9, t0).task(9, 0), 2).build(),
		throttled(done(15, "hello", 10, t0).task(9, 1), 2).build(),
		throttled(done(22, "hello", 0, t1).task(9, 2), 2).build(),
		throttled(done(9, "hello", 1, t1).task(9, 3), 2).build(),
		newJob(10, "sleeper").user("root").dir(g).command(g+"/sleep.sh").submitted(t0).held(jobrec.HoldUser).
			cancelledPending(slurm.ReasonJobHeldUser, now.Add(-8*time.Second)).build(),
		newJob(16, "hello").user("root").dir(g).command(g+"/hello.sh").submitted(t1).dependsOn("afterok:10").
			cancelledPending(slurm.ReasonDependency, now.Add(-8*time.Second)).build(),
		done(17, "hello", 2, t1).build(),
		j19,
		j20,
		j21,
		newJob(25, "bigrun").user("root").dir(g).command(g+"/sleep.sh 900").submitted(ran).running(ran, 0).gpus(4).
			gpuAlloc(4).build(),
		newJob(26, "cpujob").user("alice").dir(al).command("(null)").submitted(ran).running(ran, 1).build(),
		newJob(27, "alicegpu").user("alice").dir(al).command("(null)").submitted(pend).pending(slurm.ReasonResources).gpus(2).build(),
		newJob(28, "bobgpu").user("bob").dir(bo).command("(null)").submitted(pend).pending(slurm.ReasonPriority).gpus(2).build(),
		newJob(29, "afterbig").user("root").dir(g).command(g + "/hello.sh").submitted(pend).pending(slurm.ReasonDependency).
			dependsOn("afterok:25").build(),
		newJob(30, "held").user("root").dir(g).command(g + "/hello.sh").submitted(pend).held(jobrec.HoldUser).build(),
		newJob(31, "arr").user("root").dir(g).command(g+"/hello.sh").submitted(pend).pending(slurm.ReasonPriority).
			arrayRecord([]int{0, 1, 2, 3}, 0).gpus(1).build(),
	}
}

// throttled gives an array task its array's %N.
func throttled(b *jobBuilder, n int) *jobBuilder {
	b.j.ArrayLimit = n
	return b
}

func init() {
	scenarios["jsonqueue"] = func(now time.Time, opt map[string]string) fakeState {
		return fakeState{jobs: jsonQueue(now)}
	}
	// The accounting of the first recording's day with the --json
	// recording's work directory.
	scenarios["jsonacct"] = func(now time.Time, opt map[string]string) fakeState {
		recs := anchorRecords(now, opt)
		for i := range recs {
			j := &recs[i].Job
			j.Priority = 11000
			switch j.User {
			case "root":
				j.SubmitDir = jsonDir + "/root/g"
			default:
				j.SubmitDir = jsonDir + "/" + j.User
			}
		}
		return fakeState{records: recs}
	}
}
