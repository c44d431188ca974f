package api

// PathYieldSteps is how far a yield in progress has come (GET
// ?job=ID, answer []YieldStep): scontrol, on a terminal, polls it while
// its yield waits, to say what is happening.
const PathYieldSteps = "/v1/jobs/yield/steps"

// YieldStep is one step a waited-for yield has taken, in order:
// "signalled" (Signal, GraceSeconds), "stopped" (Seconds, Clean: the job's
// processes have ended; its GPUs' memory is awaited next).
type YieldStep struct {
	JobID        uint32  `json:"job_id"`
	Step         string  `json:"step"`
	Signal       string  `json:"signal,omitempty"`
	GraceSeconds int     `json:"grace_seconds,omitempty"`
	Seconds      float64 `json:"seconds,omitempty"`
	Clean        bool    `json:"clean,omitempty"`
}

// PathYield is scontrol yield: checkpoint, stop, give the GPUs away,
// requeue (POST Yield, answer Yielded).
const PathYield = "/v1/jobs/yield"

// Yield asks to yield a job (Job), or whatever job holds a GPU (GPU: an
// index or a UUID), with what it should ask for when it runs again.
type Yield struct {
	Job string `json:"job,omitempty"`
	GPU string `json:"gpu,omitempty"`
	// BatchSize, GPUs and GPUMem change the job's request for its next
	// run; nil (or "") keeps it, except that a job that declared a batch
	// size comes back with half of it.
	BatchSize *int   `json:"batch_size,omitempty"`
	GPUs      *int   `json:"gpus,omitempty"`
	GPUMem    string `json:"gpu_mem,omitempty"`
	// Grace is the time, in seconds, between the signal and SIGKILL; nil
	// takes the partition's GraceTime (KillWait when that is 0).
	Grace *int `json:"grace,omitempty"`
	// NoWait answers as soon as the job has been signalled.
	NoWait bool `json:"no_wait,omitempty"`
}

// Yielded is what a yield did.
type Yielded struct {
	JobID uint32 `json:"job_id"`
	// Pending: the job had not started; only its request changed.
	Pending bool `json:"pending,omitempty"`
	// Waited: the answer comes after the job stopped and its GPUs were
	// confirmed free; otherwise only the signal was sent.
	Waited bool `json:"waited,omitempty"`
	// GPUs are the indices of the GPUs it gave back.
	GPUs []int `json:"gpus,omitempty"`
	// StopSeconds is how long it took from the signal to the last process's
	// end; Clean that the job exited on its own within the grace time.
	StopSeconds float64 `json:"stop_seconds,omitempty"`
	Clean       bool    `json:"clean,omitempty"`
	// Released: NVML (or the simulation) shows its GPU memory back.
	Released bool `json:"released,omitempty"`
	// Ended is the job's own end state when its script had already ended
	// as the yield's signal came: the job is over, not requeued.
	Ended string `json:"ended,omitempty"`
	// What the job will ask for when it runs again.
	BatchSize int   `json:"batch_size,omitempty"`
	NumGPUs   int   `json:"num_gpus,omitempty"`
	GPUMem    int64 `json:"gpu_mem,omitempty"`
	// For is the pending job the GPUs go to first (0: none could use
	// them, and the yielded job may take them back).
	For uint32 `json:"for,omitempty"`
	// Steps are the steps a waited-for yield took (PathYieldSteps): a
	// caller that polled prints those it has not seen yet.
	Steps []YieldStep `json:"steps,omitempty"`
}
