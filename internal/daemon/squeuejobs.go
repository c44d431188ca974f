package daemon

import (
	"context"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// squeueJobs is squeue's job list: the jobs of d.jobs (same query), in
// columns and without what squeue's common formats never print. It skips
// apiJob's paths and command and the full records' encoding, which were
// most of a 10,000-job squeue.
func (d *Daemon) squeueJobs(ctx context.Context, req *localapi.Request[struct{}]) (api.SqueueJobs, error) {
	c := api.NewSqueueJobs(0)
	v := d.liveView()
	who := d.viewer(req.Caller)
	// The columns carry no secrets (nothing of the request): only whether
	// the caller sees the job at all is the viewer's.
	err := d.eachListedJob(ctx, req.Query, func(j *store.Job) {
		if !who.seesJob(j.UID) {
			return
		}
		l := v.live(j)
		c.Append(j, &l)
	})
	if err != nil {
		return api.SqueueJobs{}, err
	}
	return c, nil
}
