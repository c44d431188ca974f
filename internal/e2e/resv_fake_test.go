package e2e

import (
	"context"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// The fake daemon holds no reservations: sinfo -T and scontrol show
// reservation answer as the real daemon does with none (the live daemon's
// reservations are reservations.txtar's).
func init() {
	fakeRouteHooks = append(fakeRouteHooks, func(d *fakeDaemon) localapi.Routes {
		return localapi.Routes{{Method: "GET", Path: api.PathReservations, Handler: localapi.Func(
			func(ctx context.Context, req *localapi.Request[struct{}]) (api.Reservations, error) {
				return api.Reservations{List: []api.Reservation{}}, nil
			})}}
	})
}
