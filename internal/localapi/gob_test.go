package localapi

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/sockclient/gobanswer"
)

// An answer asked for in gob comes back the same as in JSON; a refusal
// stays JSON, with its code.
func TestGobAnswersAreTheSame(t *testing.T) {
	s := startServer(t)
	c := s.client(t)
	ctx := context.Background()
	var asJSON, asGob echoOut
	if err := c.Do(ctx, "POST", "/v1/echo", echoIn{Name: "a", N: 7}, &asJSON); err != nil {
		t.Fatal(err)
	}
	if err := gobanswer.Do(ctx, c, "POST", "/v1/echo", echoIn{Name: "a", N: 7}, &asGob); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(asJSON, asGob); diff != "" {
		t.Errorf("gob answer (-json +gob):\n%s", diff)
	}
	err := gobanswer.Do(ctx, c, "POST", "/v1/refuse", nil, nil)
	var e *api.Error
	if !errors.As(err, &e) || e.Code == 0 {
		t.Errorf("refusal asked for in gob: %v, want an *api.Error with Slurm's code", err)
	}
}
