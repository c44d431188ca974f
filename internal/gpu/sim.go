package gpu

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// SimGPU describes simulated GPUs of one type, as the configuration names
// them (GPUs = "simulated").
type SimGPU struct {
	Type   string // Slurm type name: "a100"
	Memory uint64 // bytes per GPU
	Count  int
}

// Simulated is an Inventory of GPUs that do not exist, for machines
// without NVIDIA GPUs (demos, tests, trying the scheduler out). They
// behave as real ones wherever that can be simulated: inventory, memory
// held as jobs declared it (a job that asked for whole GPUs holds all
// their memory), drains and resumes, and release — an ended job's memory
// stays held while any of its processes is still alive (asked through
// Options.Procs). What cannot be simulated — utilization, processes of
// nobody's, Xids, lost GPUs, jobs using more than they declared — never
// happens. Every GPU says Simulated, and the Comment says "simulated".
func Simulated(gpus []SimGPU, opts Options) (*Inventory, error) {
	s := &simSource{}
	var parts []string
	for _, g := range gpus {
		switch {
		case strings.TrimSpace(g.Type) == "" || strings.ContainsAny(g.Type, ":, "):
			return nil, fmt.Errorf("simulated GPUs: type %q: want a Slurm type name such as a100", g.Type)
		case g.Memory == 0:
			return nil, fmt.Errorf("simulated GPUs of type %q: memory must be more than 0", g.Type)
		case g.Count <= 0:
			return nil, fmt.Errorf("simulated GPUs of type %q: count must be at least 1, not %d", g.Type, g.Count)
		}
		for range g.Count {
			s.devs = append(s.devs, simDev{
				uuid: fmt.Sprintf("GPU-SIM-%04d", len(s.devs)), typ: g.Type, memory: g.Memory,
			})
		}
		parts = append(parts, fmt.Sprintf("%d x %s %s", g.Count, g.Type, formatSize(g.Memory)))
	}
	if len(s.devs) == 0 {
		return nil, fmt.Errorf("simulated GPUs: none described")
	}
	s.text = "GPUs: simulated (" + strings.Join(parts, ", ") + ")"
	inv := newInventory(s, opts)
	s.procs = inv.opts.Procs
	return inv, nil
}

type simSource struct {
	devs  []simDev
	text  string
	procs Procs
}

type simDev struct {
	uuid, typ string
	memory    uint64
}

func (s *simSource) mode() Mode      { return ModeSimulated }
func (s *simSource) comment() string { return s.text }
func (s *simSource) close()          {}

func (s *simSource) probe(uuid string) error {
	for _, d := range s.devs {
		if d.uuid == uuid {
			return nil
		}
	}
	return fmt.Errorf("no simulated GPU %s", uuid)
}

// read fills each GPU with what its jobs declared: one process per job,
// its first PID (0 when the caller gave none: the job's user stands for
// it, sinfo -G prints its PID as "-"), holding the job's memory.
// An ended job keeps holding it while one of its PIDs is alive.
func (s *simSource) read(_ time.Time, jobs []Job) reading {
	rd := reading{comment: s.text}
	for i, d := range s.devs {
		dr := deviceReading{
			uuid: d.uuid, model: "simulated " + d.typ, autoType: d.typ, nvmlIndex: i,
			total: d.memory, memKnown: true, util: -1, procsKnown: true, simulated: true,
		}
		for _, j := range jobs {
			if !slices.Contains(j.GPUs, d.uuid) {
				continue
			}
			mem := d.memory
			if j.MemPerGPU > 0 {
				mem = min(j.MemPerGPU, d.memory)
			}
			pid := 0
			if len(j.PIDs) > 0 {
				pid = j.PIDs[0]
			}
			if !j.running() {
				pid = s.survivor(j.PIDs)
				if pid == 0 {
					continue
				}
			}
			dr.procs = append(dr.procs, rawProc{pid: pid, mem: mem, util: -1, job: j.ID})
			dr.used = min(dr.used+mem, d.memory)
		}
		rd.devices = append(rd.devices, dr)
	}
	return rd
}

func (s *simSource) survivor(pids []int) int {
	for _, p := range pids {
		if p > 0 && s.procs.Alive(p) {
			return p
		}
	}
	return 0
}
