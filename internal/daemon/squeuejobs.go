package daemon

import (
	"context"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// squeueJobs is squeue's job list: the jobs of d.jobs (same query), in
// columns and without what squeue's common formats never print. It skips
// apiJob's paths and command and the full records' encoding, which were
// most of a 10,000-job squeue.
func (d *Daemon) squeueJobs(ctx context.Context, req *localapi.Request[struct{}]) (api.SqueueJobs, error) {
	rows, err := d.listedJobs(ctx, req.Query)
	if err != nil {
		return api.SqueueJobs{}, err
	}
	c := api.NewSqueueJobs(len(rows))
	for i := range rows {
		l := d.live(&rows[i])
		c.Append(&rows[i], &l)
	}
	return c, nil
}
