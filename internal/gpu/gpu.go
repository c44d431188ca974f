package gpu

import (
	"strconv"
	"time"
)

// Mode says where an Inventory's GPUs come from.
type Mode string

const (
	// ModeNVML: real GPUs read through NVML.
	ModeNVML Mode = "nvml"
	// ModeSimulated: GPUs named in the configuration, with memory
	// bookkept from what jobs declared.
	ModeSimulated Mode = "simulated"
	// ModeNone: no GPUs (no driver, or none configured).
	ModeNone Mode = "none"
)

// State is whether a GPU may be offered to jobs, and if not, why.
type State string

const (
	// Up: offered to jobs, for its free memory.
	Up State = "up"
	// Taken: held by processes outside the scheduler, with less than
	// Options.MinFree left: not offered until they let go.
	Taken State = "taken"
	// Drained: not offered until an operator resumes it (after a failed
	// NVML call, a critical Xid, memory that never came back, or by hand).
	Drained State = "drained"
	// Lost: NVML cannot reach it; jobs on it end as NODE_FAIL.
	Lost State = "lost"
)

// GPU is one GPU as one sample saw it.
type GPU struct {
	// Index is the GPU's number in CUDA_VISIBLE_DEVICES for a job started
	// with CUDA_DEVICE_ORDER=PCI_BUS_ID: its rank in PCI bus order among
	// the GPUs NVML enumerates now. -1 for a GPU that is gone. Indices
	// shift when a card falls off the bus; UUID does not.
	Index int
	// NVMLIndex is NVML's own index (-1 when gone). Usually equal to
	// Index; shown because when it is not, nvidia-smi and jobs disagree.
	NVMLIndex int
	UUID      string
	PCIBusID  string // "00000000:07:00.0"; "" for simulated GPUs
	Model     string // NVML's name: "NVIDIA A100-SXM4-80GB"
	// AutoType is Slurm's AutoDetect=nvml type name for Model:
	// "nvidia_a100-sxm4-80gb" (see TypeName).
	AutoType string
	// Type is the type the node's Gres uses: the configured short type
	// that matches AutoType ("a100"), or AutoType when none does.
	Type string

	MemoryTotal uint64 // bytes
	MemoryUsed  uint64 // bytes held by everyone, as NVML counts it
	MemoryFree  uint64 // MemoryTotal - MemoryUsed
	// Foreign is the memory held by processes of no known job: real use
	// that placement must count, reported with each process.
	Foreign uint64
	// Utilization is the percentage of time a kernel ran in the last
	// sample period; -1 when NVML cannot say (and for simulated GPUs).
	Utilization int
	Processes   []Process // compute processes, by PID
	Peers       []string  // UUIDs of the GPUs it reaches over NVLink

	State     State
	Reason    string // why it is not Up
	Simulated bool
}

// Offered reports whether jobs may be placed on the GPU.
func (g GPU) Offered() bool { return g.State == Up }

// Process is one compute process on one GPU.
type Process struct {
	PID    int
	User   string // login name from /proc; "" when it cannot be read
	Memory uint64 // bytes; 0 when NVML cannot say
	// Utilization is the process's SM utilization in percent; -1 unknown.
	Utilization int
	// JobID is the job the process belongs to; "" for a foreign process.
	JobID string
}

// Foreign reports whether the process belongs to no job the caller named.
func (p Process) Foreign() bool { return p.JobID == "" }

// Job is what the caller (the daemon, which knows process trees and
// placements) tells a sample about one job holding GPUs.
type Job struct {
	ID string
	// User is the job's owner. When set, a process claimed for the job
	// only through /proc (SLURM_JOB_ID in its environment) must belong to
	// this user: anybody can put SLURM_JOB_ID in an environment.
	User string
	PIDs []int    // the job's processes, as far as the caller knows
	GPUs []string // UUIDs of the GPUs it was given
	// MemPerGPU is the GPU memory it asked for on each GPU (--gpu-mem,
	// shards), in bytes; 0 for a job that asked for whole GPUs.
	MemPerGPU uint64
	// Ended is when the job ended or was yielded; zero while it runs.
	// An ended job's GPUs are checked for release.
	Ended time.Time
}

func (j Job) running() bool { return j.Ended.IsZero() }

// Snapshot is one sample of the machine's GPUs, with what it means for the
// jobs the caller named. It is a value: nothing in it changes afterwards.
type Snapshot struct {
	Time    time.Time
	Mode    Mode
	Comment string // for the log and the node's Comment
	Driver  string // NVIDIA driver version; "" when unknown
	// NodeDrain, when set, means the whole node must be drained with this
	// reason (e.g. "driver mismatch, reboot needed").
	NodeDrain string
	// GPUs in PCI bus order, gone ones included with Index -1.
	GPUs []GPU
	// Lost lists the GPUs NVML cannot reach, with the jobs on them.
	Lost []LostGPU
	// Jobs holds this sample's usage of each running job named.
	Jobs map[string]JobSample
	// Releases answers "is it released?" for each ended job named.
	Releases map[string]Release
	// Violations lists running jobs that broke their word.
	Violations []Violation
	// Xids lists the Xid events seen since the previous sample, critical
	// or not (application Xids are reported but drain nothing).
	Xids []XidEvent
	// Warnings are problems worth a log line that drain nothing.
	Warnings []string
}

// Find returns the GPU named by id: its index ("3"), UUID or PCI bus id.
func (s Snapshot) Find(id string) (GPU, bool) {
	if n, err := strconv.Atoi(id); err == nil {
		for _, g := range s.GPUs {
			if g.Index == n && n >= 0 {
				return g, true
			}
		}
		return GPU{}, false
	}
	for _, g := range s.GPUs {
		if g.UUID == id || (g.PCIBusID != "" && g.PCIBusID == id) {
			return g, true
		}
	}
	return GPU{}, false
}

// LostGPU is a GPU NVML cannot reach, and the jobs that were on it: the
// daemon ends those as NODE_FAIL.
type LostGPU struct {
	UUID   string
	Index  int // its index when last seen
	Reason string
	Jobs   []string // sorted
}

// XidEvent is one Xid error NVML reported for a GPU.
type XidEvent struct {
	UUID string
	Xid  uint64
	// Application is true for Xids that applications cause (see
	// ApplicationXid); those never drain a GPU.
	Application bool
	Text        string // "Xid 79: GPU has fallen off the bus"
}
