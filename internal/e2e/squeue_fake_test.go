package e2e

import (
	"context"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// The fake daemon's squeue list: its job list in api.SqueueJobs's compact
// form, as the daemon's squeueJobs sends it.
func init() {
	fakeRouteHooks = append(fakeRouteHooks, func(d *fakeDaemon) localapi.Routes {
		return localapi.Routes{
			{Method: "GET", Path: api.PathSqueueJobs, Handler: localapi.Func(
				func(ctx context.Context, req *localapi.Request[struct{}]) (api.SqueueJobs, error) {
					d.record("GET", api.PathSqueueJobs, req.Query.Encode(), nil)
					return api.CompactJobs(d.jobsFor(req.Query)), nil
				})},
		}
	})
}
