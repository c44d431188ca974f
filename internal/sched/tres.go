package sched

import (
	"math"
	"strings"
)

// TRESFactor is one TRES's part of a job's priority: the weighted factor
// (sprio -l's TRES column prints it rounded, sprio -n's the factor alone).
type TRESFactor struct {
	Name string
	// Weight is PriorityWeightTRES's weight for it.
	Weight float64
	// Value is Weight times the factor.
	Value float64
}

// mib is Slurm's unit of the mem TRES.
const mib = 1 << 20

// tresFactors are the job's weighted TRES factors, one for each TRES of
// PriorityWeightTRES whose factor is not 0, and their sum
// (priority_multifactor.c, _get_tres_factors and _get_tres_prio_weighted):
// the job's count of each TRES, what it was allocated once running and
// what it asks for until then, over the partition's total of it; with
// PriorityFlags=NO_NORMAL_TRES the count as is
// (priority_multifactor.shtml, "TRES Factors").
func (p *pass) tresFactors(pj *pjob) ([]TRESFactor, float64) {
	ws := p.cfg.Weights.TRES
	if len(ws) == 0 {
		return nil, 0
	}
	var (
		out []TRESFactor
		sum float64
	)
	var part []float64
	if pj.part >= 0 {
		part = p.partitionTRES(pj.part)
	}
	for i, w := range ws {
		v := p.jobTRES(pj, w.Name)
		var f float64
		switch {
		case p.cfg.Flags&FlagNoNormalTRES != 0:
			f = v
		case v != 0 && part != nil && part[i] != 0:
			f = v / part[i]
		}
		if f == 0 || w.Weight == 0 {
			continue
		}
		out = append(out, TRESFactor{Name: w.Name, Weight: w.Weight, Value: f * w.Weight})
		sum += f * w.Weight
	}
	return out, sum
}

// jobTRES is the job's count of one TRES as slurmctld keeps it in
// tres_alloc_cnt or tres_req_cnt: CPUs, memory in megabytes, nodes, its
// billing (a whole number, as Slurm stores it), whole GPUs (of a type,
// for gres/gpu:TYPE) and shards.
func (p *pass) jobTRES(pj *pjob, name string) float64 {
	j := pj.job
	running := len(j.Alloc.GPUs) > 0 || len(j.Alloc.CPUs) > 0
	switch name {
	case "cpu":
		if running && len(j.Alloc.CPUs) > 0 {
			return float64(len(j.Alloc.CPUs) + p.moreCPUs(j))
		}
		return float64(max(1, j.Req.CPUs))
	case "mem":
		if running {
			return float64(j.Alloc.Mem / mib)
		}
		return float64(j.Req.Mem / mib)
	case "node":
		return float64(1 + len(j.Alloc.More))
	case "billing":
		var part *Partition
		if pj.part >= 0 {
			part = &p.snap.Partitions[pj.part]
		}
		return math.Floor(billing(j, part, p.snap))
	case "gres/shard":
		if p.cfg.ShardSize <= 0 {
			return 0
		}
		if running {
			var s int64
			for _, g := range j.Alloc.GPUs {
				s += g.Mem / p.cfg.ShardSize
			}
			return float64(s)
		}
		if j.Req.GPUMem == 0 {
			return 0
		}
		return float64(int64(max(1, j.Req.GPUs)) * (j.Req.GPUMem / p.cfg.ShardSize))
	}
	typ, typed := strings.CutPrefix(name, "gres/gpu:")
	if name != "gres/gpu" && !typed {
		return 0
	}
	if running {
		n := 0
		for _, g := range j.Alloc.GPUs {
			if g.Mem == 0 && (!typed || typeMatches(p.gpuType(g.UUID), typ)) {
				n++
			}
		}
		for k := range j.Alloc.More {
			for _, g := range j.Alloc.More[k].GPUs {
				if g.Mem == 0 && (!typed || typeMatches(p.gpuType(g.UUID), typ)) {
					n++
				}
			}
		}
		return float64(n)
	}
	// A request counts toward gres/gpu:TYPE only when it names the type.
	if j.Req.GPUMem > 0 || (typed && (j.Req.GPUType == "" || !typeMatches(typ, j.Req.GPUType))) {
		return 0
	}
	return float64(j.Req.GPUs)
}

// moreCPUs counts the CPUs a job spanning several nodes holds beyond its
// first.
func (p *pass) moreCPUs(j *Job) int {
	n := 0
	for k := range j.Alloc.More {
		n += len(j.Alloc.More[k].CPUs)
	}
	return n
}

func (p *pass) gpuType(uuid string) string {
	if s, ok := p.slotUUID[uuid]; ok {
		return p.slots[s].gpu.Type
	}
	return ""
}

// partitionTRES is the partition's total of each TRES of
// PriorityWeightTRES, in that order (partition_mgr.c, _calc_part_tres):
// the sum over its nodes, the node count, and its billing, the
// partition's TRESBillingWeights over those totals.
func (p *pass) partitionTRES(part int) []float64 {
	if p.partTRES == nil {
		p.partTRES = make([][]float64, len(p.snap.Partitions))
	}
	if t := p.partTRES[part]; t != nil {
		return t
	}
	var cpus, mem, nodes, gpus, shards float64
	var gpuMem float64
	typed := map[string]float64{}
	ws := p.cfg.Weights.TRES
	for n := range p.snap.Nodes {
		if !p.partHasNode(part, n) {
			continue
		}
		node := &p.snap.Nodes[n]
		nodes++
		cpus += float64(max(0, node.CPUs))
		mem += float64(node.Mem / mib)
		for g := range node.GPUs {
			gpu := &node.GPUs[g]
			gpus++
			gpuMem += float64(gpu.TotalMem)
			if p.cfg.ShardSize > 0 {
				shards += float64(gpu.TotalMem / p.cfg.ShardSize)
			}
			for _, w := range ws {
				if typ, ok := strings.CutPrefix(w.Name, "gres/gpu:"); ok && typeMatches(gpu.Type, typ) {
					typed[w.Name]++
				}
			}
		}
	}
	t := make([]float64, len(ws))
	for i, w := range ws {
		switch w.Name {
		case "cpu":
			t[i] = cpus
		case "mem":
			t[i] = mem
		case "node":
			t[i] = nodes
		case "gres/gpu":
			t[i] = gpus
		case "gres/shard":
			t[i] = shards
		case "billing":
			t[i] = p.partitionBilling(part, cpus, mem, gpus)
		default:
			t[i] = typed[w.Name]
		}
	}
	p.partTRES[part] = t
	return t
}

// partitionBilling is the partition's billing TRES: its TRESBillingWeights
// over its totals (assoc_mgr_tres_weighted), the largest weighted TRES
// with MAX_TRES.
func (p *pass) partitionBilling(part int, cpus, mem, gpus float64) float64 {
	w := defaultBilling
	if b := p.snap.Partitions[part].Billing; b != nil {
		w = *b
	}
	parts := [3]float64{w.CPU * cpus, w.MemGiB * mem / 1024, w.GPU * gpus}
	if p.cfg.Flags&FlagMaxTRES != 0 {
		return max(parts[0], parts[1], parts[2])
	}
	return parts[0] + parts[1] + parts[2]
}
