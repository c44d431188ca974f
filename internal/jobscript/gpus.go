package jobscript

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// What a request's GPU options add up to on this one node, for a job and
// for a step of it. These are the one place that counts them: the
// scheduler's request, the submission checks, the yield, accounting and
// scontrol all ask NodeGPUs; the daemon asks StepGPUs for each srun.

// GPUSpec is one request's GPU options as Slurm groups them: per job (or,
// for srun, per step: --gpus), per node (--gpus-per-node and --gres, whose
// other GRES such as shard ride along), per socket and per task. Counts of
// 0 are not in it (Slurm drops them).
type GPUSpec struct {
	PerJob    []Gres `json:"per_job,omitempty"`
	PerNode   []Gres `json:"per_node,omitempty"`
	PerSocket []Gres `json:"per_socket,omitempty"`
	PerTask   []Gres `json:"per_task,omitempty"`
}

// GPUSpec is the request's GPU options. --gpus-per-socket is kept as given
// in Other (scontrol shows it from there) and read from it.
func (r *Request) GPUSpec() GPUSpec {
	sp := GPUSpec{PerJob: r.GPUs, PerTask: r.GPUsPerTask}
	if len(r.GPUsPerNode) > 0 || len(r.Gres) > 0 {
		sp.PerNode = append(slices.Clip(r.GPUsPerNode), r.Gres...)
	}
	sp.PerSocket = r.GPUsPerSocket()
	return sp
}

// GPUsPerSocket is --gpus-per-socket read (sbatch checked it).
func (r *Request) GPUsPerSocket() []Gres {
	v, ok := r.OtherValue("gpus-per-socket")
	if !ok {
		return nil
	}
	g, _ := ParseGPUOption("gpus-per-socket", v)
	return g
}

// SocketsPerNode is --sockets-per-node, 0 when not given.
func (r *Request) SocketsPerNode() int {
	v, _ := r.OtherValue("sockets-per-node")
	n, _ := strconv.Atoi(strings.TrimSpace(v))
	return max(n, 0)
}

// DropGPUsPerSocket forgets --gpus-per-socket: a request whose GPU count
// is replaced (scontrol update, a yield with Gpus=) asks per socket no
// more.
func (r *Request) DropGPUsPerSocket() {
	r.Other = slices.DeleteFunc(slices.Clone(r.Other), func(s Setting) bool { return s.Name == "gpus-per-socket" })
}

// ParseGPUOption reads the value of one GPU option as sbatch and srun do:
// --gpus, --gpus-per-node, --gpus-per-socket, --gpus-per-task
// ([type:]count,...) or --gres (name[:type][:count],...). ok is false
// for a malformed value, which Slurm refuses as "Invalid generic resource
// (gres) specification".
func ParseGPUOption(option, v string) (gs []Gres, ok bool) {
	return parseGres(gresItems(v, option != "gres"))
}

// GPUNeed is what a request needs of GPUs on this one node.
type GPUNeed struct {
	// GPUs is the number of whole GPUs.
	GPUs int
	// Type is the GPU type they must be ("" for any); several types asked
	// for at once are joined by "," (the scheduler places one type, so
	// such a request fits nowhere and is refused at submission, naming
	// them).
	Type string
	// Shards is the count of --gres=shard:N.
	Shards int
}

// NodeGPUs is what the request needs on this one node. Each GRES record
// (a name and type, as gres_job_state_validate groups the options, the
// last count of each kind winning) needs the most that any of its counts
// comes to here: --gpus, per node, per socket times --sockets-per-node,
// per task times the tasks. sbatch's checks make these agree wherever the
// job fits on one node; where they do not, it could not fit one node, and
// the most is what it would need of this one.
func (r *Request) NodeGPUs() GPUNeed {
	sockets := r.SocketsPerNode()
	if sockets == 0 {
		sockets = 1
	}
	return r.GPUSpec().node(max(r.NTasks, 1), sockets)
}

func (sp GPUSpec) node(tasks, sockets int) GPUNeed {
	var need GPUNeed
	var types []string
	for _, rec := range sp.records() {
		n := max(rec.perJob, rec.perNode, rec.perSocket*uint64(sockets), rec.perTask*uint64(tasks))
		switch rec.name {
		case "gpu":
			need.GPUs += int(n)
			if rec.typ != "" && !slices.Contains(types, rec.typ) {
				types = append(types, rec.typ)
			}
		case "shard":
			need.Shards += int(n)
		}
	}
	need.Type = strings.Join(types, ",")
	return need
}

// records groups a spec as gres_job_state_validate and
// gres_step_state_validate do: one record per name and type, in the order
// first named, a later count of the same kind replacing an earlier one.
func (sp GPUSpec) records() gresList {
	var list gresList
	rec := list.record
	for _, g := range sp.PerJob {
		rec(g).perJob = g.Count
	}
	for _, g := range sp.PerNode {
		rec(g).perNode = g.Count
	}
	for _, g := range sp.PerSocket {
		rec(g).perSocket = g.Count
	}
	for _, g := range sp.PerTask {
		rec(g).perTask = g.Count
	}
	return list
}

// empty reports a spec that asks for nothing.
func (sp GPUSpec) empty() bool {
	return len(sp.PerJob) == 0 && len(sp.PerNode) == 0 && len(sp.PerSocket) == 0 && len(sp.PerTask) == 0
}

// StepNeed is what a step takes of its job's GPUs: GPUs plus PerTask for
// each of its tasks, or, with All, every GPU the job holds (shared by
// the step with its job's other steps).
type StepNeed struct {
	GPUs, PerTask int
	All           bool
}

// StepGresError is a step's GPU request that slurmctld refuses
// (ESLURM_INVALID_GRES), with the line it explains it with.
type StepGresError struct{ Msg string }

func (e *StepGresError) Error() string { return e.Msg }

// StepGPUs is what a step asks of its job's GPUs, as slurmctld's
// step_create counts it (Slurm 22.05):
//
//  1. a step given no GPU option (step nil) asks what its job asked for
//     (_copy_job_tres_to_step): the job's request, not what it holds, so
//     an --exclusive job's implicit GPUs go to no step;
//  2. the step's records must fit the job's request (_validate_step_counts,
//     with its words);
//  3. each GPU record counts, in this order, its count per node, else per
//     task (times the step's tasks), else per step; a record of GPUs per
//     socket alone, which steps do not count, takes all the job's GPUs
//     (_step_get_gres_needed).
//
// GPU memory is shared, not counted: a step of a job that holds GPU
// memory (--gpu-mem, --gres=shard) sees its job's GPUs.
func StepGPUs(job *Request, step *GPUSpec) (StepNeed, error) {
	jobSpec := job.GPUSpec()
	sp := jobSpec
	if step != nil {
		sp = *step
		if err := validateStep(sp, jobSpec); err != nil {
			return StepNeed{}, err
		}
	}
	var need StepNeed
	shared := step == nil && job.GPUMem > 0
	for _, rec := range sp.records() {
		switch {
		case rec.name == "shard" || rec.name == "mps":
			shared = true
		case rec.name != "gpu":
		case rec.perNode != 0:
			need.GPUs += int(rec.perNode)
		case rec.perTask != 0:
			need.PerTask += int(rec.perTask)
		case rec.perJob != 0:
			need.GPUs += int(rec.perJob)
		default:
			need.All = true
		}
	}
	if shared {
		need.All = true
	}
	return need, nil
}

// validateStep is _validate_step_counts: each GRES the step names must be
// in the job's request, with counts of each kind no larger than the job's.
func validateStep(step, job GPUSpec) error {
	if step.empty() {
		return nil
	}
	jobRecs := job.records()
	if len(jobRecs) == 0 {
		return &StepGresError{"Step requested GRES but job doesn't have GRES"}
	}
	for _, s := range step.records() {
		var j *gresJob
		for _, r := range jobRecs {
			if r.name == s.name && (s.typ == "" || r.typ == s.typ) {
				j = r
				break
			}
		}
		typ := s.typ
		if typ == "" {
			typ = "(null)" // a NULL type_name, as glibc's printf shows it
		}
		switch {
		case j == nil:
			return &StepGresError{fmt.Sprintf("Step requested GRES (%s:%s) not found in the job", s.name, typ)}
		case s.perJob != 0 && j.perJob != 0 && j.perJob < s.perJob:
			return &StepGresError{fmt.Sprintf("Step requested gres=%s:%d is more than the job's gres=%s:%d", s.name, s.perJob, j.name, j.perJob)}
		case s.perNode != 0 && j.perNode != 0 && j.perNode < s.perNode:
			return &StepGresError{fmt.Sprintf("Step requested gres_per_node=%s:%d is more than the job's gres_per_node=%s:%d", s.name, s.perNode, j.name, j.perNode)}
		case s.perSocket != 0 && j.perSocket != 0 && j.perSocket < s.perSocket:
			return &StepGresError{fmt.Sprintf("Step requested gres_per_socket=%s:%d is more than the job's gres_per_socket=%s:%d", s.name, s.perSocket, j.name, j.perSocket)}
		case s.perTask != 0 && j.perTask != 0 && j.perTask < s.perTask:
			return &StepGresError{fmt.Sprintf("Step requested gres_per_task=%s:%d is more than the job's gres_per_task=%s:%d", s.name, s.perTask, j.name, j.perTask)}
		}
	}
	return nil
}
