package sched

import (
	"fmt"
	"slices"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// StepJob is what a running job holds, as its steps see it.
type StepJob struct {
	CPUs, GPUs []int
	// MemMB is the job's memory; 0 when it is not tracked.
	MemMB uint64
}

// StepHeld is what one running step keeps from the others: its CPUs and
// GPUs (none for an overlapping step).
type StepHeld struct {
	CPUs, GPUs []int
}

// StepAsk is what srun asks of a step.
type StepAsk struct {
	// NTasks is -n; 0 runs as many tasks as the job's CPUs hold.
	NTasks      int
	CPUsPerTask int
	MemMB       uint64
	// GPUs is how many of the job's GPUs the step holds, plus GPUsPerTask
	// for each of its tasks; GPUs -1 sees all of the job's and holds none
	// (a step sharing its job's GPU memory, or asking per socket alone).
	GPUs        int
	GPUsPerTask int
	Overcommit  bool
	Overlap     bool
	Exact       bool
}

// StepPlace is where a step goes: the CPUs and GPUs it may use, and those
// of them it keeps from other steps.
type StepPlace struct {
	NTasks             int
	CPUs, GPUs         []int
	HeldCPUs, HeldGPUs []int
}

// StepError is a step refused as slurmctld refuses it: Slurm's code, and
// the lines srun prints before its words.
type StepError struct {
	Code  slurm.Errno
	Notes []string
}

func (e *StepError) Error() string { return e.Code.Error() }

// PlaceStep fits a step into a job beside the steps that hold parts of it.
// It is slurmctld's step allocation on one node: the step when it fits
// now; a *StepError with slurm.ErrNodesBusy when it would fit once other
// steps end (srun waits); otherwise a *StepError with the Slurm error that
// refuses it (too many CPUs, more memory or GPUs than the job has). held is
// not changed.
func PlaceStep(job StepJob, held []StepHeld, ask StepAsk) (StepPlace, error) {
	var p StepPlace
	cpt := max(ask.CPUsPerTask, 1)
	p.NTasks = ask.NTasks
	if p.NTasks <= 0 {
		// -c without -n: as many tasks as the job's CPUs hold.
		p.NTasks = max(len(job.CPUs)/cpt, 1)
	}
	need := p.NTasks * cpt
	if ask.Overcommit {
		need = min(need, max(len(job.CPUs), cpt))
	}
	switch {
	case need > len(job.CPUs):
		return StepPlace{}, &StepError{Code: slurm.ErrTooManyRequestedCPUs}
	case job.MemMB > 0 && ask.MemMB > job.MemMB:
		return StepPlace{}, &StepError{Code: slurm.ErrInvalidTaskMemory}
	}
	gpus := ask.GPUs
	if gpus >= 0 {
		gpus += ask.GPUsPerTask * p.NTasks
	}
	if gpus > len(job.GPUs) {
		return StepPlace{}, &StepError{Code: slurm.ErrInvalidGRES,
			Notes: []string{fmt.Sprintf("Step requested gres=gpu:%d is more than the job's gres=gpu:%d", gpus, len(job.GPUs))}}
	}
	exact := ask.Exact
	if ask.Overlap {
		p.CPUs = slices.Clone(job.CPUs)
		if exact {
			p.CPUs = p.CPUs[:need]
		}
		p.GPUs = slices.Clone(job.GPUs)
		if gpus >= 0 {
			p.GPUs = p.GPUs[:gpus]
		}
		return p, nil
	}
	var busyCPU, busyGPU []int
	for _, h := range held {
		busyCPU = append(busyCPU, h.CPUs...)
		busyGPU = append(busyGPU, h.GPUs...)
	}
	freeCPU := without(job.CPUs, busyCPU)
	freeGPU := without(job.GPUs, busyGPU)
	switch {
	case exact && len(freeCPU) < need, !exact && len(freeCPU) < len(job.CPUs):
		return StepPlace{}, &StepError{Code: slurm.ErrNodesBusy}
	case exact:
		p.CPUs = freeCPU[:need]
	default:
		p.CPUs = freeCPU
	}
	p.HeldCPUs = p.CPUs
	switch {
	case gpus < 0:
		p.GPUs = slices.Clone(job.GPUs)
	case len(freeGPU) < gpus:
		return StepPlace{}, &StepError{Code: slurm.ErrNodesBusy}
	default:
		p.GPUs = freeGPU[:gpus]
		p.HeldGPUs = p.GPUs
	}
	return p, nil
}

// without is all minus the members of taken, in all's order.
func without(all, taken []int) []int {
	out := []int{}
	for _, v := range all {
		if !slices.Contains(taken, v) {
			out = append(out, v)
		}
	}
	return out
}
