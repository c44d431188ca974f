package daemon

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/procfs"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/stepd"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// setUpCgroups gives job cgroups their controllers (stepd.Delegate): the
// daemon moves itself, and the supervisors of the jobs it reattached to,
// into a leaf of its own where that lets its cgroup give its children
// memory, pids and cpuset. It says once, loudly, when --mem cannot be
// enforced, and why; and sets the memory limits of running jobs whose
// cgroups had none (they ran before the controller came on, or their
// limits lapsed while the daemon was stopped: Release).
//
// It runs after reattach, whose supervisors it must know, and before the
// first job starts, whose spec names the base (Spec.Cgroup.Parent).
func (d *Daemon) setUpCgroups(ctx context.Context) {
	type running struct {
		id     uint32
		cgroup string
		mem    int64
	}
	var live []running
	var ours []int
	jobs, err := d.st.Jobs(ctx, store.Filter{States: []slurm.JobState{slurm.Running, slurm.Completing}})
	if err != nil {
		d.log.Warn("reading running jobs for their supervisors' cgroups", "err", err)
	}
	for _, j := range jobs {
		id, err := stepd.ReadIdentity(d.runDir(j.ID, j.Restarts))
		if err != nil || !stepd.Alive(id) {
			continue
		}
		// A supervisor without a cgroup for its job has the job's
		// processes beside it: they are ours as much as it is.
		ours = append(append(ours, id.PID), procfs.Descendants(id.PID)...)
		live = append(live, running{j.ID, id.Cgroup, j.Alloc.Mem})
	}
	d.cg = stepd.Delegate(ours)
	cg := d.cg
	switch {
	case cg.Base == "":
		d.log.Warn("jobs are tracked without cgroups: --mem is NOT enforced and an OOM kill is not told apart",
			"why", cg.Problem, "fix", cg.Fix)
	case !cg.Memory:
		d.log.Warn("--mem, --mem-per-cpu and --mem-per-gpu are NOT enforced: job cgroups get no memory controller",
			"under", cg.Base, "why", cg.Problem, "fix", cg.Fix)
	default:
		args := []any{"under", cg.Base, "controllers", strings.Join(cg.Controllers, " ")}
		if cg.Moved {
			args = append(args, "daemon_cgroup", cg.Base+"/"+stepd.DaemonLeaf)
		}
		d.log.Info("jobs get a cgroup each; --mem is enforced", args...)
	}
	if !cg.Memory {
		return
	}
	for _, r := range live {
		set, err := stepd.RestoreMemoryLimit(r.cgroup, r.mem)
		if err != nil {
			d.log.Warn("a running job's memory limit could not be set again", "job", r.id, "err", err)
		} else if set {
			d.log.Info("a running job's memory limit is enforced again", "job", r.id, "limit_mb", r.mem>>20)
		}
	}
}

// releaseCgroups is the daemon's stop: see stepd.Delegation.Release.
func (d *Daemon) releaseCgroups() {
	if err := d.cg.Release(); err != nil {
		d.log.Warn("the controllers turned on at start could not be turned off: a daemon started in the same cgroup may be refused",
			"err", err, "fix", "echo '-cpuset -pids -memory' > "+d.cg.Base+"/cgroup.subtree_control")
	} else if d.cg.Moved && len(d.cg.Enabled) > 0 {
		d.log.Info("controllers turned off for the next start: running jobs' memory limits lapse until then",
			"cgroup", d.cg.Base, "controllers", strings.Join(d.cg.Enabled, " "))
	}
}

// cgroupsView is the delegation as the API shows it.
func (d *Daemon) cgroupsView() *api.Cgroups {
	return &api.Cgroups{Base: d.cg.Base, Controllers: d.cg.Controllers, Memory: d.cg.Memory,
		Problem: d.cg.Problem, Fix: d.cg.Fix}
}

// memNote is the note a job that asked for memory gets when its
// supervisor could not enforce it: "--mem=200M not enforced: ...", with
// the daemon's reason (or the supervisor's, from a run under an earlier
// daemon). "" when the job asked for none, or it was enforced.
func (d *Daemon) memNote(j store.Job, st stepd.Status) string {
	r := &j.Request
	var opt string
	switch {
	case r.MemPerNode != nil:
		opt = "--mem=" + slurmsyntax.FormatSize(slurmsyntax.Bytes(*r.MemPerNode)*slurmsyntax.MiB)
	case r.MemPerCPU != nil:
		opt = "--mem-per-cpu=" + slurmsyntax.FormatSize(slurmsyntax.Bytes(*r.MemPerCPU)*slurmsyntax.MiB)
	case r.MemPerGPU != nil:
		opt = "--mem-per-gpu=" + slurmsyntax.FormatSize(slurmsyntax.Bytes(*r.MemPerGPU)*slurmsyntax.MiB)
	default:
		return ""
	}
	if !st.MemLimitUnenforced {
		return ""
	}
	why := d.cg.Problem
	if why == "" {
		// This daemon's job cgroups have memory; the run had none (it
		// started under another daemon, or its cgroup failed).
		why = "its cgroup had no memory controller"
		for _, w := range st.Warnings {
			if _, after, ok := strings.Cut(w, " not enforced: "); ok && strings.HasPrefix(w, "memory limit") {
				why = after
			}
		}
	}
	return fmt.Sprintf("%s not enforced: no memory controller for job cgroups (%s)", opt, why)
}

// addNote appends a note unless the job has it already (a requeued job
// keeps its runs' notes).
func addNote(j *store.Job, note string) {
	if note != "" && !slices.Contains(j.Notes, note) {
		j.Notes = append(j.Notes, note)
	}
}
