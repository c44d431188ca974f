package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/localapi"
)

// TestRESTWaitsForAStartingDaemon: the web listener opens before the
// socket's routes exist; a REST request that comes meanwhile is answered
// once they do, not refused (seen as "slurmd-lite is starting" when a
// client came in the milliseconds between the two on a busy machine).
func TestRESTWaitsForAStartingDaemon(t *testing.T) {
	d := &Daemon{restReady: make(chan struct{})}
	type pong struct{ Who string }
	srv := &localapi.Server{Routes: localapi.Routes{
		{Method: "GET", Path: "/v1/pong", Handler: localapi.Func(func(ctx context.Context, req *localapi.Request[struct{}]) (pong, error) {
			return pong{Who: req.Caller.User}, nil
		})},
	}}
	answered := make(chan error, 1)
	var got pong
	go func() {
		answered <- restBackend{d}.Call(context.Background(), localapi.Identity{UID: 1001, User: "alice"}, "GET", "/v1/pong", nil, &got)
	}()
	select {
	case err := <-answered:
		t.Fatalf("answered before the routes existed: %v", err)
	case <-time.After(50 * time.Millisecond): // it waits: nothing to poll
	}
	d.restSrv.Store(srv)
	close(d.restReady)
	if err := <-answered; err != nil || got.Who != "alice" {
		t.Fatalf("after the start: %+v, %v; want alice's answer", got, err)
	}
}
