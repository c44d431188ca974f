// Package gpu is the scheduler's knowledge of the machine's GPUs: a live,
// honest inventory, their health, what each job uses, and whether an ended
// job has let go of its GPUs. It is the only package that imports go-nvml
// (cgo); everything else sees this package's own types.
//
// # Sources
//
// An Inventory reads GPUs from one of three sources:
//
//	FromNVML(nvml.New(), opts)   real GPUs (go-nvml's mock machines in tests)
//	Simulated(specs, opts)       GPUs named in the configuration
//	None(comment)                no GPUs
//
// Tests drive FromNVML with go-nvml's mock machines; the end-to-end tests
// (internal/e2e TestNVMLStub) run the daemon's binary against a stub
// libnvidia-ml.so.1 (package nvmlstub), through go-nvml's real loader.
//
// A missing NVIDIA library or driver is a normal state: FromNVML then
// returns an Inventory with no GPUs whose Comment says so. A driver and
// library of different versions (a driver upgraded without a reboot) is
// not "no GPUs": every snapshot asks for the node to be drained with
// "driver mismatch, reboot needed".
//
// # A sample
//
// The daemon calls Sample every few seconds (Run does it on a ticker) and
// whenever it needs a fresh view, passing the jobs that hold GPUs (IDs,
// PIDs, GPUs given, memory asked, end time). One sample:
//
//	read      the source: per GPU memory, utilization, compute processes;
//	          Xid events queued since the last sample (polled, no goroutine)
//	attribute each process to a job: by the job's PIDs, else by
//	          SLURM_JOB_ID in /proc (after a daemon restart); else foreign
//	health    drain GPUs whose NVML calls fail or that report a critical
//	          Xid; GPUs that vanish or are lost are reported for NODE_FAIL
//	rows      one GPU per row, in PCI bus order, numbered for CUDA
//	judge     running jobs: usage and violations; ended jobs: release
//	state     Up, Taken, Drained or Lost, with the reason
//
// The result, a Snapshot, is a value: the daemon maps it onto the
// scheduling core's resource model and acts on what it reports (kill
// survivors, end jobs on lost GPUs as NODE_FAIL, apply the policy for
// violations, drain the node). Pass every running job, with or without
// GPUs: a job given no GPU that uses one anyway is reported.
//
// # Glossary
//
// UUID: a GPU's identity ("GPU-5d4f…"). Indices shift when a card falls
// off the bus; the UUID does not, so drains, placements and records name
// GPUs by UUID and turn them into indices only when a job starts.
//
// PCI bus order: GPUs sorted by PCI domain, bus, device and function. Jobs
// get CUDA_DEVICE_ORDER=PCI_BUS_ID (see CUDAEnv), so CUDA numbers GPUs in
// this order; GPU.Index is a GPU's rank in it. CUDA's default order is
// "fastest first", which on a machine mixing models differs from NVML's
// and puts jobs on the wrong card — a known trap of home-made GPU queues.
//
// Type: Slurm's GPU type name. With AutoDetect=nvml Slurm names a GPU by
// its NVML name lower-cased with spaces as underscores
// ("nvidia_a100-sxm4-80gb", TypeName); a configured short type ("a100")
// names it when it is a substring (MatchType), and the node's Gres then
// reads "gpu:a100:4" (Gres).
//
// Xid: an error report from the NVIDIA driver, numbered. Some are caused
// by applications (13, 31, 43, 45, 68, 109: a bad kernel, a page fault)
// and say nothing about the card: they never drain it. The others (48
// double-bit ECC, 79 fallen off the bus, ...) drain the GPU; 79 also
// means it is lost.
//
// Foreign process: a process on a GPU that belongs to no job the daemon
// named: someone's notebook started by hand, a process that survived a
// daemon that forgot it. Its memory is real use: it counts against the
// GPU's free memory (GPU.Foreign), and a GPU it fills is Taken, not
// offered.
//
// Drain: taking a GPU out of service with a reason, by an operator
// (Drain) or by health (a failed NVML call, a critical Xid, memory that an
// ended job never gave back). A drained GPU is offered again only when an
// operator resumes it (Resume) and NVML answers for it.
//
// Release: after a job ends or is yielded, its GPUs are offered again
// only once NVML shows none of its processes on them and their memory
// back; survivors are returned for the daemon to kill, and a GPU not back
// within Options.ReleaseTimeout is drained.
//
// Not handled: MIG partitions (a GPU in MIG mode is seen as one GPU) and
// graphics processes (their memory counts as used, not as a process).
package gpu
