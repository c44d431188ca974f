package api

import "time"

// PathEvents is GET -> []Event: the audit trail. Query: job (repeated: those
// jobs' events), node=1 (the node's and GPUs' events: drains and resumes),
// since and until (RFC 3339). Another user's job events follow the job
// viewer rules (PrivateData=jobs hides them).
const PathEvents = "/v1/events"

// Event is one line of the audit trail: who (Actor, ActorName: the
// daemon's own user and "slurmd-lite" for what the scheduler decided),
// when, what (Action: start, end, requeue, preempt, yield, cancel, hold,
// release, update, drain, resume, ...), on which job or GPU, and why.
type Event struct {
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Actor     uint32    `json:"actor"`
	ActorName string    `json:"actor_name"`
	JobID     uint32    `json:"job_id,omitempty"`
	// GPU is the GPU's UUID, GPUIndex its index now (-1 when it is not on
	// the bus); both empty for a job's event. A drain of the whole node
	// has GPU "node".
	GPU      string `json:"gpu,omitempty"`
	GPUIndex int    `json:"gpu_index"`
	// Node is the node's name, for a node's or GPU's event.
	Node   string `json:"node,omitempty"`
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}
