package sched

import (
	"fmt"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Ports: slurm.conf's MpiParams=ports=LO-HI lends each node's jobs ports
// of their own, so that two jobs' listeners (torchrun's rendezvous, a
// notebook) never take the same one. Slurm hands them to job steps
// (srun, SLURM_STEP_RESV_PORTS); slurm-lite also gives every job a range
// when it starts, held like its CPUs until it ends: a column of the node's
// timeline counts the ports left, Alloc.Ports names those a running job
// holds (so a restarted daemon re-derives who holds what from its running
// jobs), and a job that needs more than are free waits with Resources.

// PortRange is MpiParams=ports=Lo-Hi; the zero value lends none.
type PortRange struct {
	Lo, Hi int
}

// Size is how many ports the range holds.
func (r PortRange) Size() int {
	if r.Lo <= 0 || r.Hi < r.Lo {
		return 0
	}
	return r.Hi - r.Lo + 1
}

// JobPorts is how many ports a job holds while it runs: none without a
// range; the count it asked for (srun's --resv-ports=N for the allocation
// srun makes); or else Slurm's count for a step of all the job's tasks,
// tasks + 1 (golden/resv_ports_steps.txt: -n1 gets 2, -n3 gets 4).
func JobPorts(ports PortRange, r Request) int {
	switch {
	case ports.Size() == 0:
		return 0
	case r.PortsAsked:
		return max(r.Ports, 0)
	}
	return max(r.Tasks, 1) + 1
}

// portCol is the timeline column counting node n's free ports.
func (p *pass) portCol(n int) int { return 2*len(p.nodeSlots[n]) + 2 }

// pickPorts takes the lowest free ports of node n. Lowest first (Slurm
// rotates through the range instead) so that a plan is a function of the
// snapshot alone.
func (p *pass) pickPorts(n, count int) []int {
	if count <= 0 {
		return nil
	}
	used := p.portUsed[n]
	out := make([]int, 0, count)
	for i := 0; i < len(used) && len(out) < count; i++ {
		if !used[i] {
			used[i] = true
			out = append(out, p.snap.Ports.Lo+i)
		}
	}
	return out
}

// holdPorts marks the ports a running job holds on node n used, and says
// how many of them are the range's (a port outside it, left by a range
// since changed, holds nothing).
func (p *pass) holdPorts(n int, ports []int) int64 {
	var held int64
	for _, port := range ports {
		if i := port - p.snap.Ports.Lo; i >= 0 && i < len(p.portUsed[n]) && !p.portUsed[n][i] {
			p.portUsed[n][i] = true
			held++
		}
	}
	return held
}

// StepPorts are the ports a job step gets (SLURM_STEP_RESV_PORTS): from
// its job's (jobPorts), never from another job's. asked is srun's
// --resv-ports=N (-1: not given); without it a step gets Slurm's count,
// its tasks + 1, as much of it as its job holds. A job holding none (no
// MpiParams) gives none, as Slurm without MpiParams does. A step asking
// for more than its job holds is refused with Slurm's words for a count
// beyond the range (golden/resv_ports_too_many.txt). Steps of one job may
// share its ports: they are one user's one program.
func StepPorts(jobPorts []int, asked, ntasks int) ([]int, error) {
	if len(jobPorts) == 0 {
		return nil, nil
	}
	n := min(max(ntasks, 1)+1, len(jobPorts))
	if asked >= 0 {
		if asked > len(jobPorts) {
			return nil, &StepError{Code: slurm.ErrPortsInvalid,
				Notes: []string{fmt.Sprintf("--resv-ports=%d is more than the %d ports the job holds (%s)", asked, len(jobPorts), slurm.FormatPorts(jobPorts))}}
		}
		n = asked
	}
	if n == 0 {
		return nil, nil
	}
	return jobPorts[:n:n], nil
}
