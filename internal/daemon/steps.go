package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/jobscript"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/procfs"
	"github.com/slurm-lite/slurm-lite/internal/sched"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// Job steps: srun inside a job asks for a step (POST /v1/steps), runs its
// tasks itself, and says when they ended (POST /v1/steps/end). The daemon
// numbers the steps of each run of a job 0, 1, 2, ..., keeps them in
// accounting, and shares the job's CPUs and GPUs between the steps that run
// at once, as slurmctld's step manager does:
//
//   - a step that is not exact (srun without --exact, -c or --mem) holds all
//     of the job's CPUs, so it waits until no other step holds any;
//   - an exact step holds the CPUs it asks for (tasks × CPUs per task);
//   - a step holds the GPUs it asks for (srun's --gpus, --gpus-per-node,
//     --gpus-per-task, --gres, or the SLURM_GPUS* variables it inherits
//     from the batch script); one that asks for none asks what its job
//     asked for, never more (so a step of an --exclusive job, which holds
//     every GPU, gets only the GPUs its job asked for); a step sharing its
//     job's GPU memory sees its GPUs and holds none (jobscript.StepGPUs);
//   - an --overlap step holds nothing and waits for nothing.
//
// A step that does not fit now is refused with "Requested nodes are busy";
// srun says so and asks again with Wait, which holds the request until a
// step ends. A step asking for more than the job has is refused with
// Slurm's words for CPUs, memory or GRES.
//
// The table of running steps lives in memory; each step is also in the
// store from its start (RUNNING), so that numbering survives a restart of
// the daemon. An srun that dies without saying so (SIGKILL, the OOM
// killer) is noticed through a pidfd on the pid its socket was opened by,
// and its step ends CANCELLED.

// defaultStepWait bounds one held step request, as srun's step_wait
// (SlurmctldTimeout, at least 60 s) bounds each of its tries.
const defaultStepWait = 60 * time.Second

// extras is what steps and interactive allocations keep per daemon: the
// Daemon's field x (newExtras builds it), under its own lock.
type extras struct {
	mu sync.Mutex
	// steps are each job's running steps.
	steps map[uint32]*jobSteps
	// changed is closed (and replaced) whenever a step ends, waking the
	// requests that wait for room.
	changed chan struct{}
	// callers are the pids that submitted interactive jobs, while their
	// jobs are pending (alloc.go).
	callers map[uint32]int
	// tellMu orders what tellSteps sends, so that a late message never
	// replaces a newer list of sruns.
	tellMu sync.Mutex
}

func newExtras() *extras {
	return &extras{steps: map[uint32]*jobSteps{}, changed: make(chan struct{}),
		callers: map[uint32]int{}}
}

// extras returns the daemon's steps and interactive allocations (d.x, set
// when the daemon is built and never replaced, so no lock is needed to
// read it).
func (d *Daemon) extras() *extras { return d.x }

// jobSteps are the steps of one run of a job.
type jobSteps struct {
	run int
	// next is the next step id.
	next   int
	active map[int]*activeStep
}

// activeStep is a running step: what it holds, and what its final record
// repeats.
type activeStep struct {
	id      int
	name    string
	ntasks  int
	start   time.Time
	cpus    []int // held CPUs (none for --overlap)
	gpus    []int // held GPUs (only with --gpus=N)
	overlap bool
	pid     int // the srun that runs it
}

// wake tells waiting step requests that room may have been made. The
// caller holds x.mu.
func (x *extras) wake() {
	close(x.changed)
	x.changed = make(chan struct{})
}

// jobRes is what a job holds, as steps see it.
type jobRes struct {
	cpus  []int
	gpus  []int
	memMB uint64 // 0: not tracked
}

// placed is where a step goes.
type placed struct {
	ntasks int
	// cpus and gpus are what the step may use; heldCPUs and heldGPUs what
	// it keeps from other steps.
	cpus, gpus         []int
	heldCPUs, heldGPUs []int
}

// placeStep is sched.PlaceStep, the rule that fits a step into a job
// beside the steps that hold parts of it (held), in the daemon's terms:
// code is 0 and p the step when it fits now, slurm.ErrNodesBusy when it
// would fit once other steps end, and otherwise the Slurm error that
// refuses it, with notes srun prints before it.
func placeStep(job jobRes, held []activeStep, ask api.StepRequest, need jobscript.StepNeed) (p placed, code slurm.Errno, notes []string) {
	hs := make([]sched.StepHeld, len(held))
	for i, h := range held {
		hs[i] = sched.StepHeld{CPUs: h.cpus, GPUs: h.gpus}
	}
	gpus := need.GPUs
	if need.All {
		gpus = -1
	}
	sp, err := sched.PlaceStep(sched.StepJob{CPUs: job.cpus, GPUs: job.gpus, MemMB: job.memMB}, hs,
		sched.StepAsk{NTasks: ask.NTasks, CPUsPerTask: ask.CPUsPerTask, MemMB: ask.MemMB, GPUs: gpus,
			GPUsPerTask: need.PerTask, Overcommit: ask.Overcommit, Overlap: ask.Overlap, Exact: ask.Exact})
	var se *sched.StepError
	if errors.As(err, &se) {
		return placed{}, se.Code, se.Notes
	}
	return placed{ntasks: sp.NTasks, cpus: sp.CPUs, gpus: sp.GPUs, heldCPUs: sp.HeldCPUs, heldGPUs: sp.HeldGPUs}, 0, nil
}

// stepGPUs is what a step asks of its job's GPUs (jobscript.StepGPUs):
// srun's GPU options, or what an srun of an earlier version sent as
// --gpus, or none (the job's request).
func stepGPUs(r *jobscript.Request, ask api.StepRequest) (jobscript.StepNeed, error) {
	spec := ask.GPUSpec
	if spec == nil && ask.GPUs >= 0 {
		spec = &jobscript.GPUSpec{}
		if ask.GPUs > 0 {
			spec.PerJob = []jobscript.Gres{{Name: "gpu", Count: uint64(ask.GPUs)}}
		}
	}
	return jobscript.StepGPUs(r, spec)
}

// stepRefusal is a step refused with Slurm's code and words; notes come
// first, each on its own line, as srun prints them.
func stepRefusal(code slurm.Errno, notes ...string) *api.Error {
	msg := code.Error()
	for i := len(notes) - 1; i >= 0; i-- {
		msg = notes[i] + "\n" + msg
	}
	return &api.Error{Status: http.StatusBadRequest, Code: code, Message: msg}
}

// stepJob reads the job a step request names and checks it as srun's
// allocation lookup and slurmctld's step creation do, in their order:
// known, running, the caller's (or root's).
func (d *Daemon) stepJob(ctx context.Context, caller localapi.Identity, id uint32) (store.Job, error) {
	j, err := d.st.Job(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && j.ArrayRecord():
		return j, stepRefusal(slurm.ErrInvalidJobID)
	case err != nil:
		return j, err
	case j.State == slurm.Pending:
		return j, stepRefusal(slurm.ErrJobPending)
	case j.State != slurm.Running:
		return j, stepRefusal(slurm.ErrAlreadyDone)
	case caller.UID != 0 && caller.UID != j.UID:
		return j, stepRefusal(slurm.ErrAccessDenied)
	}
	return j, nil
}

// createStep is POST /v1/steps.
func (d *Daemon) createStep(ctx context.Context, req *localapi.Request[api.StepRequest]) (api.Step, error) {
	ask := req.Body
	wait := defaultStepWait
	if ask.WaitSeconds > 0 {
		wait = time.Duration(ask.WaitSeconds) * time.Second
	}
	// The wait is srun's, in real time, whatever the daemon's clock.
	deadline := clock.After(wait)
	for {
		j, err := d.stepJob(ctx, req.Caller, ask.JobID)
		if err != nil {
			return api.Step{}, err
		}
		st, changed, err := d.tryStep(ctx, j, req.Caller, ask)
		var le *api.Error
		if !ask.Wait || !errors.As(err, &le) || le.Code != slurm.ErrNodesBusy || deadline.Passed() {
			if err == nil && ask.Join {
				st.Env, err = d.joinJob(ctx, j, req.Caller.PID, ask.Env)
				if err != nil {
					d.endStepAs(ctx, j.ID, st.Run, st.StepID, slurm.Failed, store.ExitCode{Status: 1})
				}
			}
			return st, err
		}
		// Held until a step ends; the job's own end shows on the next
		// look, so look at least every second.
		select {
		case <-changed:
		case <-time.After(min(time.Second, deadline.Left())):
		case <-ctx.Done():
			return api.Step{}, ctx.Err()
		}
	}
}

// tryStep places and records a step now, or says why not; changed is the
// channel that closes when a step ends.
func (d *Daemon) tryStep(ctx context.Context, j store.Job, caller localapi.Identity, ask api.StepRequest) (api.Step, <-chan struct{}, error) {
	x := d.extras()
	need, err := stepGPUs(&j.Request, ask)
	if err != nil {
		return api.Step{}, nil, stepRefusal(slurm.ErrInvalidGRES, err.Error())
	}
	next, err := d.nextStepID(ctx, j)
	if err != nil {
		return api.Step{}, nil, err
	}
	x.mu.Lock()
	js := x.steps[j.ID]
	if js == nil || js.run != j.Restarts {
		if next < 0 {
			// The table moved on between the two looks: look again.
			x.mu.Unlock()
			return d.tryStep(ctx, j, caller, ask)
		}
		js = &jobSteps{run: j.Restarts, next: next, active: map[int]*activeStep{}}
		x.steps[j.ID] = js
	}
	var held []activeStep
	for _, s := range js.active {
		held = append(held, *s)
	}
	res := jobRes{cpus: j.Alloc.CPUs, gpus: gpuIndices(j.Alloc), memMB: uint64(j.Alloc.Mem >> 20)}
	if len(res.cpus) == 0 {
		// A job placed without CPU ids (none configured) still has its
		// count.
		for i := range max(j.Request.NTasks, 1) * max(j.Request.CPUsPerTask, 1) {
			res.cpus = append(res.cpus, i)
		}
	}
	p, code, notes := placeStep(res, held, ask, need)
	changed := x.changed
	if code != 0 {
		x.mu.Unlock()
		return api.Step{}, changed, stepRefusal(code, notes...)
	}
	asked := -1
	if ask.ResvPorts != nil {
		asked = *ask.ResvPorts
	}
	ports, err := sched.StepPorts(j.Alloc.Ports, asked, p.ntasks)
	var se *sched.StepError
	if errors.As(err, &se) {
		x.mu.Unlock()
		return api.Step{}, changed, stepRefusal(se.Code, se.Notes...)
	}
	s := &activeStep{id: js.next, name: ask.Name, ntasks: p.ntasks, start: d.now(),
		cpus: p.heldCPUs, gpus: p.heldGPUs, overlap: ask.Overlap, pid: caller.PID}
	js.next++
	js.active[s.id] = s
	x.mu.Unlock()

	err = d.st.Update(ctx, func(tx *store.Tx) error {
		return tx.PutStep(store.Step{JobID: j.ID, Run: j.Restarts, ID: strconv.Itoa(s.id), Name: s.name,
			State: slurm.Running, Start: s.start, NTasks: s.ntasks})
	})
	if err != nil {
		x.mu.Lock()
		delete(js.active, s.id)
		x.wake()
		x.mu.Unlock()
		return api.Step{}, changed, fmt.Errorf("recording step %d.%d: %w", j.ID, s.id, err)
	}
	d.log.Info("step started", "job", j.ID, "step", s.id, "tasks", s.ntasks, "cpus", len(p.cpus), "gpus", p.gpus)
	if caller.PID > 0 {
		go d.watchStep(j.ID, j.Restarts, s.id, caller.PID)
		// Before srun starts its tasks: a signal for the job's steps from
		// now on reaches them and spares srun.
		d.tellSteps(j)
	}
	nodeGPUs := len(d.liveView().sample().GPUs)
	return api.Step{JobID: j.ID, StepID: s.id, Run: j.Restarts, NTasks: p.ntasks, CPUs: p.cpus, GPUs: p.gpus,
		JobGPUs: res.gpus, Node: d.config().Node.NodeName, NodeGPUs: nodeGPUs, KillWait: d.config().KillWait, Ports: ports}, changed, nil
}

// nextStepID is the id the job's next step gets in its current run: one
// more than the highest in the table or, the first time, in the store.
func (d *Daemon) nextStepID(ctx context.Context, j store.Job) (int, error) {
	x := d.extras()
	x.mu.Lock()
	js := x.steps[j.ID]
	known := js != nil && js.run == j.Restarts
	x.mu.Unlock()
	if known {
		return -1, nil // the table's own count is used
	}
	recs, err := d.st.Records(ctx, store.Filter{IDs: []uint32{j.ID}})
	if err != nil {
		return 0, err
	}
	next := 0
	for _, r := range recs {
		if r.Job.ID != j.ID || r.Job.Restarts != j.Restarts {
			continue
		}
		for _, s := range r.Steps {
			if n, err := strconv.Atoi(s.ID); err == nil && s.Run == j.Restarts {
				next = max(next, n+1)
			}
		}
	}
	return next, nil
}

// endStep is POST /v1/steps/end.
func (d *Daemon) endStep(ctx context.Context, req *localapi.Request[api.StepEnd]) (map[string]string, error) {
	e := req.Body
	j, err := d.st.Job(ctx, e.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, stepRefusal(slurm.ErrInvalidJobID)
	} else if err != nil {
		return nil, err
	}
	if req.Caller.UID != 0 && req.Caller.UID != j.UID {
		return nil, stepRefusal(slurm.ErrAccessDenied)
	}
	state := e.State
	if (j.State == slurm.Running || j.State == slurm.Completing) && state != slurm.Cancelled {
		// Tasks that ended while the job was being ended were ended by
		// it, as Slurm records them.
		if end := d.jobEnding(ctx, j); end.Ending {
			state = slurm.Cancelled
		}
	}
	if err := d.endStepAs(ctx, e.JobID, e.Run, e.StepID, state, e.ExitCode, e.UserCPU, e.SystemCPU); err != nil {
		return nil, err
	}
	return map[string]string{"status": "ok"}, nil
}

// endStepAs takes a step out of the table and records its end; a step the
// table does not know (the daemon restarted meanwhile) is completed from
// its stored record.
func (d *Daemon) endStepAs(ctx context.Context, jobID uint32, run, id int, state slurm.JobState, exit store.ExitCode, cpu ...time.Duration) error {
	x := d.extras()
	x.mu.Lock()
	var s *activeStep
	if js := x.steps[jobID]; js != nil && js.run == run {
		s = js.active[id]
		delete(js.active, id)
		if len(js.active) == 0 {
			// Nothing held: the next step's id comes from the store, and
			// ended jobs leave nothing behind here.
			delete(x.steps, jobID)
		}
		x.wake()
	}
	x.mu.Unlock()
	rec := store.Step{JobID: jobID, Run: run, ID: strconv.Itoa(id), State: state, End: d.now(), ExitCode: exit}
	if len(cpu) == 2 {
		rec.UserCPU, rec.SystemCPU = max(cpu[0], 0), max(cpu[1], 0)
	}
	if s != nil {
		rec.Name, rec.NTasks, rec.Start = s.name, s.ntasks, s.start
	} else {
		old, ok, err := d.storedStep(ctx, jobID, run, id)
		if err != nil {
			return err
		}
		if !ok {
			return refusal(slurm.ErrInvalidJobID, fmt.Sprintf("no step %d.%d", jobID, id))
		}
		if old.State.Finished() {
			return nil
		}
		rec.Name, rec.NTasks, rec.Start = old.Name, old.NTasks, old.Start
	}
	if s != nil && s.pid > 0 {
		if j, err := d.st.Job(ctx, jobID); err == nil && j.State == slurm.Running && j.Restarts == run {
			d.tellSteps(j)
		}
	}
	err := d.st.Update(ctx, func(tx *store.Tx) error { return tx.PutStep(rec) })
	if err == nil {
		d.log.Info("step ended", "job", jobID, "step", id, "state", string(state), "exit", exit.String())
	}
	return err
}

// stepProcs are the job's running steps and the sruns that run them.
func (d *Daemon) stepProcs(j store.Job) []stepd.StepProc {
	x := d.extras()
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []stepd.StepProc
	if js := x.steps[j.ID]; js != nil && js.run == j.Restarts {
		for _, s := range js.active {
			if s.pid > 0 {
				out = append(out, stepd.StepProc{Step: s.id, PID: s.pid})
			}
		}
	}
	slices.SortFunc(out, func(a, b stepd.StepProc) int { return a.Step - b.Step })
	return out
}

// tellSteps tells the job's supervisor which steps run now and which
// sruns run them, so that scancel --signal and --signal=SIG@secs reach
// the steps' tasks and not srun, as in Slurm (stepd.TargetSteps). A
// failure is logged: the signal then reaches every process of the job but
// the batch shell, srun included.
func (d *Daemon) tellSteps(j store.Job) {
	x := d.extras()
	x.tellMu.Lock()
	defer x.tellMu.Unlock()
	req := stepd.Request{Op: stepd.OpSteps, Steps: d.stepProcs(j), Run: &stepd.RunOwner{JobID: j.ID, Run: j.Restarts, UID: j.UID}}
	if _, err := stepd.Call(d.runDir(j.ID, j.Restarts), req); err != nil {
		d.log.Warn("telling the supervisor the job's steps", "job", j.ID, "err", err)
	}
}

// storedStep reads one step of a run from accounting.
func (d *Daemon) storedStep(ctx context.Context, jobID uint32, run, id int) (store.Step, bool, error) {
	recs, err := d.st.Records(ctx, store.Filter{IDs: []uint32{jobID}, EarlierRuns: true})
	if err != nil {
		return store.Step{}, false, err
	}
	for _, r := range recs {
		for _, s := range r.Steps {
			if s.JobID == jobID && s.Run == run && s.ID == strconv.Itoa(id) {
				return s, true, nil
			}
		}
	}
	return store.Step{}, false, nil
}

// watchStep ends a step whose srun died without saying so. A pidfd names
// the process itself; the loop also stops once the step has ended.
func (d *Daemon) watchStep(jobID uint32, run, id, pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone already, or an old kernel: the job's end cleans up
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for d.stepActive(jobID, run, id) {
		n, err := unix.Poll(fds, 1000)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n > 0 {
			break
		}
	}
	if !d.stepActive(jobID, run, id) {
		return
	}
	d.log.Warn("srun ended without ending its step", "job", jobID, "step", id, "pid", pid)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.endStepAs(ctx, jobID, run, id, slurm.Cancelled, store.ExitCode{Signal: 9}); err != nil {
		d.log.Error("ending the step of a dead srun", "job", jobID, "step", id, "err", err)
	}
}

func (d *Daemon) stepActive(jobID uint32, run, id int) bool {
	x := d.extras()
	x.mu.Lock()
	defer x.mu.Unlock()
	js := x.steps[jobID]
	return js != nil && js.run == run && js.active[id] != nil
}

// stepsJob is GET /v1/steps?job=N: whether the job is being ended.
func (d *Daemon) stepsJob(ctx context.Context, req *localapi.Request[struct{}]) (api.JobEnding, error) {
	n, err := strconv.ParseUint(req.Query.Get("job"), 10, 32)
	if err != nil || n == 0 {
		return api.JobEnding{}, localapi.Errorf(http.StatusBadRequest, "job=%q is not a job id", req.Query.Get("job"))
	}
	j, err := d.st.Job(ctx, uint32(n))
	if errors.Is(err, store.ErrNotFound) {
		return api.JobEnding{}, stepRefusal(slurm.ErrInvalidJobID)
	} else if err != nil {
		return api.JobEnding{}, err
	}
	if req.Caller.UID != 0 && req.Caller.UID != j.UID {
		return api.JobEnding{}, stepRefusal(slurm.ErrAccessDenied)
	}
	return d.jobEnding(ctx, j), nil
}

// jobEnding asks the job's supervisor whether it is ending it.
func (d *Daemon) jobEnding(ctx context.Context, j store.Job) api.JobEnding {
	kw := d.config().KillWait
	if j.State != slurm.Running && j.State != slurm.Completing {
		return api.JobEnding{Ending: true, At: j.End, KillWait: kw}
	}
	rep, err := stepd.Call(d.runDir(j.ID, j.Restarts), stepd.Request{Op: stepd.OpStatus})
	if err != nil || rep.Status == nil {
		return api.JobEnding{KillWait: kw}
	}
	if e := rep.Status.Ending; e != nil {
		return api.JobEnding{Ending: true, Why: e.Why, At: e.At, KillWait: kw}
	}
	if rep.Status.State.Finished() {
		return api.JobEnding{Ending: true, KillWait: kw}
	}
	return api.JobEnding{KillWait: kw}
}

// joinJob makes an srun from outside a job part of it (srun --jobid): the
// caller moves into the job's cgroup where it has one, and gets the job's
// environment over its own.
func (d *Daemon) joinJob(ctx context.Context, j store.Job, pid int, base []string) ([]string, error) {
	if pid > 0 {
		cg := ""
		if id, err := stepd.ReadIdentity(d.runDir(j.ID, j.Restarts)); err == nil {
			cg = id.Cgroup
		}
		if cg != "" {
			if err := procfs.JoinCgroup(cg, pid); err != nil {
				d.log.Warn("srun --jobid not moved into the job's cgroup", "job", j.ID, "pid", pid, "err", err)
			}
		}
	}
	return d.jobEnv(ctx, j, base)
}

// jobEnv is the environment a job's processes get, over base (the
// caller's environment; nil: the submitter's), as its supervisor would give
// its batch script.
func (d *Daemon) jobEnv(ctx context.Context, j store.Job, base []string) ([]string, error) {
	script, err := d.st.Script(ctx, j.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	spec, err := d.spec(j, script, effectiveLimit(d.config(), &j))
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = script.Env
	}
	env := stepd.JobEnv(spec, base)
	if interactive(j) {
		// ENVIRONMENT=BATCH is a batch script's; srun tells jobs apart by it.
		env = slices.DeleteFunc(env, func(kv string) bool { return kv == "ENVIRONMENT=BATCH" })
	}
	return env, nil
}
