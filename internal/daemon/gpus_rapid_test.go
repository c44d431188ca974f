package daemon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	st "github.com/slurm-lite/slurm-lite/internal/sched/schedtest"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// TestNoJobOrTaskSeesAGPUItWasNotGiven: over random GPU options (every
// way sbatch takes GPUs, with task counts, --exclusive and --gpu-bind),
// jobs placed by the scheduler over several passes with some ending
// between them, and random steps of the running ones:
//
//  1. a running job holds what its options add up to on the node
//     (jobscript's NodeGPUs; every GPU with --exclusive), and no GPU that
//     another running job holds whole;
//  2. its batch script's GPU variables name exactly its GPUs;
//  3. a step's GPUs are its job's, never more than the job asked for
//     when the step asks nothing itself, and steps running at once hold
//     none in common;
//  4. each task's GPUs under the step's binding are its step's.
func TestNoJobOrTaskSeesAGPUItWasNotGiven(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ngpu := rapid.IntRange(1, 8).Draw(t, "gpus")
		base := st.Snap().Node(st.Node("gpu01").CPUs(32).GPUs(ngpu, "a100", 80*st.GiB)).Build()
		node := base.Nodes[0]
		var jobs []store.Job
		for i := range rapid.IntRange(1, 6).Draw(t, "jobs") {
			r, err := parseArgs(genGPUArgs(t, ngpu))
			if err != nil {
				continue // refused by sbatch: never submitted
			}
			jobs = append(jobs, store.Job{ID: uint32(i + 1), User: "u", Partition: "gpu", State: slurm.Pending,
				Submit: st.Epoch, Eligible: st.Epoch, Request: *r})
		}
		for pass := range 4 {
			snap := base
			snap.Now = st.Epoch.Add(time.Duration(pass) * time.Minute)
			snap.Jobs = nil
			for i := range jobs {
				if j := &jobs[i]; j.State == slurm.Pending || j.State == slurm.Running {
					snap.Jobs = append(snap.Jobs, schedJob(j, j.ID, -1, 1<<30, node))
				}
			}
			for _, s := range sched.Cycle(snap).Starts {
				for i := range jobs {
					if jobs[i].ID == s.JobID {
						jobs[i].State, jobs[i].Alloc = slurm.Running, storeAlloc(s.Alloc)
					}
				}
			}
			checkJobs(t, jobs, ngpu)
			for _, j := range jobs {
				if j.State == slurm.Running {
					checkSteps(t, j, ngpu)
				}
			}
			// Some of the running jobs end before the next pass.
			for i := range jobs {
				if jobs[i].State == slurm.Running && rapid.Bool().Draw(t, "ends") {
					jobs[i].State, jobs[i].Alloc = slurm.Completed, store.Alloc{}
				}
			}
		}
	})
}

// genGPUArgs draws sbatch's options: one way of asking for GPUs (or none),
// tasks, --exclusive and --gpu-bind, some of them.
func genGPUArgs(t *rapid.T, ngpu int) []string {
	n := func(label string) string { return strconv.Itoa(rapid.IntRange(0, ngpu+1).Draw(t, label)) }
	typ := rapid.SampledFrom([]string{"", "a100:"}).Draw(t, "type")
	tasks := strconv.Itoa(rapid.IntRange(1, 4).Draw(t, "tasks"))
	var args []string
	switch rapid.IntRange(0, 7).Draw(t, "how") {
	case 1:
		args = append(args, "--gpus="+typ+n("gpus"))
	case 2:
		args = append(args, "--gpus-per-node="+typ+n("per-node"))
	case 3:
		args = append(args, "--gres=gpu:"+typ+n("gres"))
	case 4:
		args = append(args, "-n", tasks, "--gpus-per-task="+typ+n("per-task"))
	case 5:
		args = append(args, "-N1", "--ntasks-per-node="+tasks, "--gpus-per-task="+typ+n("per-task"))
	case 6:
		args = append(args, "--gpus-per-socket="+typ+n("per-socket"), "--sockets-per-node="+strconv.Itoa(rapid.IntRange(1, 2).Draw(t, "sockets")))
	case 7:
		args = append(args, "--gres=shard:"+strconv.Itoa(rapid.IntRange(1, 100).Draw(t, "shards")))
	}
	if rapid.IntRange(0, 2).Draw(t, "more-tasks") == 0 {
		args = append(args, "-n", tasks)
	}
	if rapid.IntRange(0, 3).Draw(t, "exclusive") == 0 {
		args = append(args, "--exclusive")
	}
	if rapid.Bool().Draw(t, "bind") {
		args = append(args, "--gpu-bind="+genGPUBind(t, ngpu))
	}
	return args
}

func genGPUBind(t *rapid.T, ngpu int) string {
	k := strconv.Itoa(rapid.IntRange(0, 3).Draw(t, "bind-n"))
	ids := func() string {
		var l []string
		for range rapid.IntRange(1, 4).Draw(t, "list") {
			l = append(l, strconv.Itoa(rapid.IntRange(0, ngpu+1).Draw(t, "id")))
		}
		return strings.Join(l, ",")
	}
	return rapid.SampledFrom([]func() string{
		func() string { return "closest" },
		func() string { return "none" },
		func() string { return "single:" + k },
		func() string { return "per_task:" + k },
		func() string { return "map_gpu:" + ids() },
		func() string {
			return "mask_gpu:0x" + strconv.FormatInt(int64(rapid.IntRange(1, 1<<ngpu+1).Draw(t, "mask")), 16)
		},
	}).Draw(t, "bind")()
}

func parseArgs(args []string) (*jobscript.Request, error) {
	cl, err := jobscript.ParseCommandLine(append(args, "job.sh"))
	if err != nil {
		return nil, err
	}
	return jobscript.Parse(jobscript.Input{Script: []byte("#!/bin/sh\ntrue\n"), Command: cl, Now: st.Epoch})
}

// checkJobs checks 1 and 2 over the running jobs.
func checkJobs(t *rapid.T, jobs []store.Job, ngpu int) {
	whole := map[int]uint32{} // GPU index -> the job that holds it whole
	for _, j := range jobs {
		if j.State != slurm.Running {
			continue
		}
		want := j.Request.NodeGPUs().GPUs
		shared := false
		for _, g := range j.Alloc.GPUs {
			shared = shared || g.Mem > 0
		}
		switch {
		case j.Request.Sharing == jobscript.Exclusive:
			want = ngpu
		case shared:
			want = 1
		}
		if len(j.Alloc.GPUs) != want {
			t.Fatalf("job %d (%s) holds %d GPUs, its options add up to %d", j.ID, describeGPUs(j.Request), len(j.Alloc.GPUs), want)
		}
		for _, g := range j.Alloc.GPUs {
			if other, ok := whole[g.Index]; ok {
				t.Fatalf("jobs %d and %d both hold GPU %d, one of them whole", other, j.ID, g.Index)
			}
			if g.Mem == 0 {
				whole[g.Index] = j.ID
			}
		}
		// The batch script's variables.
		spec := &stepd.Spec{JobID: j.ID, Options: specOptions(&j.Request), GPUs: gpuIndices(j.Alloc), NodeName: "gpu01"}
		env := map[string]string{}
		for _, kv := range stepd.JobEnv(spec, []string{"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "SLURM_STEP_GPUS=7"}) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		ids := indexList(gpuIndices(j.Alloc))
		for _, k := range []string{"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "SLURM_JOB_GPUS"} {
			if got, ok := env[k]; ids == "" && ok || ids != "" && got != ids {
				t.Fatalf("job %d holds GPUs %q; its batch script has %s=%q (set: %v)", j.ID, ids, k, got, ok)
			}
		}
		if _, ok := env["SLURM_STEP_GPUS"]; ok {
			t.Fatalf("job %d: the batch script inherits SLURM_STEP_GPUS", j.ID)
		}
	}
}

// checkSteps checks 3 and 4 for a few steps of a running job, some held
// while the next are asked for.
func checkSteps(t *rapid.T, j store.Job, ngpu int) {
	res := jobRes{gpus: gpuIndices(j.Alloc)}
	for i := range 32 {
		res.cpus = append(res.cpus, i)
	}
	var held []activeStep
	for range rapid.IntRange(1, 4).Draw(t, "steps") {
		ask := api.StepRequest{NTasks: rapid.IntRange(1, 4).Draw(t, "step-tasks"), Exact: true, GPUs: -1,
			Overlap: rapid.IntRange(0, 3).Draw(t, "overlap") == 0}
		if rapid.Bool().Draw(t, "step-asks") {
			ask.GPUSpec = genStepSpec(t, ngpu)
		}
		need, err := stepGPUs(&j.Request, ask)
		if err != nil {
			continue // refused with Slurm's words: the step gets nothing
		}
		p, code, _ := placeStep(res, held, ask, need)
		if code != 0 {
			continue
		}
		for _, g := range p.gpus {
			if !slices.Contains(res.gpus, g) {
				t.Fatalf("job %d holds %v; its step got GPU %d", j.ID, res.gpus, g)
			}
		}
		if asked := j.Request.NodeGPUs().GPUs; ask.GPUSpec == nil && !need.All && len(p.gpus) > asked && asked > 0 &&
			need.PerTask == 0 {
			t.Fatalf("job %d asked for %d GPUs; a step asking nothing got %v", j.ID, asked, p.gpus)
		}
		for _, h := range held {
			for _, g := range p.heldGPUs {
				if slices.Contains(h.gpus, g) {
					t.Fatalf("job %d: two steps at once hold GPU %d", j.ID, g)
				}
			}
		}
		bind := jobscript.TresBind(genGPUBind(t, ngpu), "")
		for task := range p.ntasks {
			mine, _ := jobscript.BindGPUs(bind, p.gpus, ngpu, task)
			for _, g := range mine {
				if !slices.Contains(p.gpus, g) {
					t.Fatalf("job %d, step GPUs %v, binding %q: task %d got GPU %d", j.ID, p.gpus, bind, task, g)
				}
			}
			if len(p.gpus) > 0 && len(mine) == 0 {
				t.Fatalf("step GPUs %v, binding %q: task %d got none", p.gpus, bind, task)
			}
		}
		if !ask.Overlap {
			held = append(held, activeStep{cpus: p.heldCPUs, gpus: p.heldGPUs})
		}
	}
}

// genStepSpec draws srun's own GPU options.
func genStepSpec(t *rapid.T, ngpu int) *jobscript.GPUSpec {
	g := func(label string) []jobscript.Gres {
		n := uint64(rapid.IntRange(0, ngpu+1).Draw(t, label))
		if n == 0 {
			return nil
		}
		return []jobscript.Gres{{Name: "gpu", Count: n}}
	}
	sp := &jobscript.GPUSpec{}
	switch rapid.IntRange(0, 4).Draw(t, "step-how") {
	case 1:
		sp.PerJob = g("step-gpus")
	case 2:
		sp.PerNode = g("step-per-node")
	case 3:
		sp.PerTask = g("step-per-task")
	case 4:
		sp.PerSocket = g("step-per-socket")
	}
	return sp
}

func indexList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

func describeGPUs(r jobscript.Request) string {
	return fmt.Sprintf("gpus=%v per-node=%v gres=%v per-task=%v per-socket=%v tasks=%d sharing=%q",
		r.GPUs, r.GPUsPerNode, r.Gres, r.GPUsPerTask, r.GPUsPerSocket(), r.NTasks, r.Sharing)
}
