package format

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
)

// The GPU view: sinfo -O fields of slurm-lite's own, one row per GPU
// (sinfo -G prints SinfoGPUs). Values are parseable: no blanks inside a
// value, lists joined by ",", "N/A" for none, as Slurm's GresUsed does.
//
//	GpuIndex      GPU         the index jobs see (CUDA_VISIBLE_DEVICES, PCI order)
//	GpuUUID       UUID
//	GpuType       TYPE        the Gres type ("a100")
//	GpuModel      MODEL       NVML's name
//	GpuMem        MEMORY      total memory ("80G")
//	GpuMemUsed    MEM_USED    memory held by every process, jobs' and others'
//	GpuMemFree    MEM_FREE
//	GpuUtil       UTIL        utilization ("37%"), N/A when NVML cannot say
//	GpuState      STATE       idle; allocated (jobs hold it); mixed (no job, but
//	                          processes of nobody's hold some memory: still
//	                          offered); taken (those leave too little: not
//	                          offered); drained; draining (drained, a job still
//	                          on it); lost
//	GpuJobs       JOBS        ids of the jobs holding it
//	GpuForeign    FOREIGN     processes of no job: PID:USER:MEMORY,...
//	GpuForeignMem FOREIGN_MEM memory those hold
//	GpuProcs      PROCESSES   every process: PID:USER:MEMORY:JOB (JOB "-" for none;
//	                          PID "-" on simulated GPUs, where a job has no process)
//	GpuReason     REASON      why it is drained, taken or lost; "none"
//	GpuTimestamp  TIMESTAMP   when it was drained, "Unknown"
//	GpuUser       USER        who drained it, "Unknown"

func init() { sinfoFields = append(sinfoFields, gpuFields...) }

// gpuSize prints bytes as a size moved up while at least 1024 ("80G",
// "79.65G"): exact units would print most GPUs' memory in MiB.
func gpuSize(b uint64) string {
	return convertNum(float64(b>>20), unitMega, unitNone-1, convertAll)
}

func gpuValue(fn func(g *api.GPU, e *SinfoEntry) string) func(e sinfoRow) string {
	return func(e sinfoRow) string {
		if e.GPU == nil {
			return "N/A"
		}
		return fn(e.GPU, e.SinfoEntry)
	}
}

// GPUState is a GPU's state as the GPU view prints it.
func GPUState(g *api.GPU) string {
	switch g.State {
	case "drained", "lost":
		if len(g.Jobs) > 0 && g.State == "drained" {
			return "draining"
		}
		return g.State
	case "taken":
		return "taken"
	}
	switch {
	case len(g.Jobs) > 0:
		return "allocated"
	case g.Foreign > 0:
		return "mixed" // still offered, beside someone's process
	}
	return "idle"
}

// gpuJobs are the jobs holding g as squeue names them ("4_2" for an array
// task), from a daemon that sends the names; else their ids.
func gpuJobs(g *api.GPU) string {
	if len(g.JobNames) > 0 {
		return strings.Join(g.JobNames, ",")
	}
	return joinIDs(g.Jobs)
}

func joinIDs(ids []uint32) string {
	if len(ids) == 0 {
		return "N/A"
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(parts, ",")
}

// procPID is a process's PID; "-" for a simulated GPU's stand-in for a
// job, which is no process.
func procPID(p api.Process) string {
	if p.PID <= 0 {
		return "-"
	}
	return strconv.Itoa(p.PID)
}

func procUser(p api.Process) string {
	if p.User == "" {
		return "?"
	}
	return p.User
}

// foreignProcs lists a GPU's processes of no job as PID:USER:MEMORY,...;
// "" when there are none.
func foreignProcs(g *api.GPU) string {
	var parts []string
	for _, p := range g.Processes {
		if p.JobID == "" {
			parts = append(parts, fmt.Sprintf("%d:%s:%s", p.PID, procUser(p), gpuSize(p.Memory)))
		}
	}
	return strings.Join(parts, ",")
}

// ForeignUse is what scontrol show node prints in Extra= about processes
// the scheduler did not start, one GPU:PID:USER:MEMORY per process:
// "ForeignGPU=0:4242:carol:70G,1:77:?:2G"; "" when there are none. Slurm's
// Extra is free text; Gres and the other fields, which tools parse, stay
// exactly Slurm's.
func ForeignUse(gpus []api.GPU) string {
	var parts []string
	for _, g := range gpus {
		for _, p := range g.Processes {
			if p.JobID == "" {
				parts = append(parts, fmt.Sprintf("%d:%d:%s:%s", g.Index, p.PID, procUser(p), gpuSize(p.Memory)))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "ForeignGPU=" + strings.Join(parts, ",")
}

func gpuDrain(g *api.GPU, e *SinfoEntry) (GPUDrain, bool) {
	if e.Node == nil {
		return GPUDrain{}, false
	}
	d, ok := e.Node.GPUDrains[g.UUID]
	return d, ok && gpuOut(*g)
}

var gpuFields = []*sinfoField{
	{names: []string{"gpuindex"}, header: "GPU", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return strconv.Itoa(g.Index) })},
	{names: []string{"gpuuuid"}, header: "UUID", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return g.UUID })},
	{names: []string{"gputype"}, header: "TYPE", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return orNull(g.Type) })},
	{names: []string{"gpumodel"}, header: "MODEL", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return strings.ReplaceAll(g.Model, " ", "_") })},
	{names: []string{"gpumem"}, header: "MEMORY", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return gpuSize(g.MemoryTotal) })},
	{names: []string{"gpumemused"}, header: "MEM_USED", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return gpuSize(g.MemoryUsed) })},
	{names: []string{"gpumemfree"}, header: "MEM_FREE", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string {
			if g.MemoryUsed >= g.MemoryTotal {
				return "0"
			}
			return gpuSize(g.MemoryTotal - g.MemoryUsed)
		})},
	{names: []string{"gpuutil"}, header: "UTIL", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string {
			if g.Utilization < 0 {
				return "N/A"
			}
			return strconv.Itoa(g.Utilization) + "%"
		})},
	{names: []string{"gpustate"}, header: "STATE", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return GPUState(g) })},
	{names: []string{"gpujobs"}, header: "JOBS", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return gpuJobs(g) })},
	{names: []string{"gpuforeign"}, header: "FOREIGN", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string {
			if s := foreignProcs(g); s != "" {
				return s
			}
			return "N/A"
		})},
	{names: []string{"gpuforeignmem"}, header: "FOREIGN_MEM", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string { return gpuSize(g.Foreign) })},
	{names: []string{"gpuprocs"}, header: "PROCESSES", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string {
			var parts []string
			for _, p := range g.Processes {
				job := p.JobID
				if job == "" {
					job = "-"
				}
				parts = append(parts, fmt.Sprintf("%s:%s:%s:%s", procPID(p), procUser(p), gpuSize(p.Memory), job))
			}
			if len(parts) == 0 {
				return "N/A"
			}
			return strings.Join(parts, ",")
		})},
	{names: []string{"gpureason"}, header: "REASON", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, _ *SinfoEntry) string {
			if g.Reason == "" {
				return "none"
			}
			return g.Reason
		})},
	{names: []string{"gputimestamp"}, header: "TIMESTAMP", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, e *SinfoEntry) string {
			if d, ok := gpuDrain(g, e); ok && !d.Since.IsZero() {
				return Time(d.Since)
			}
			return "Unknown"
		})},
	{names: []string{"gpuuser"}, header: "USER", x: sinfoAttr{gpu: true},
		value: gpuValue(func(g *api.GPU, e *SinfoEntry) string {
			if d, ok := gpuDrain(g, e); ok && d.UID >= 0 {
				return d.User
			}
			return "Unknown"
		})},
}
