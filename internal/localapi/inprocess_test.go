package localapi

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// Call answers as the socket answers a caller: the same table, decoding,
// handlers and refusals, for the identity it is given.
func TestCallAnswersAsTheSocket(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	type out struct {
		N    int    `json:"n"`
		X    string `json:"x"`
		User string `json:"user"`
	}
	srv := &Server{Routes: Routes{
		{Method: "POST", Path: "/v1/echo/{x}", Handler: Func(func(ctx context.Context, r *Request[in]) (out, error) {
			if r.Caller.User != "alice" {
				return out{}, &Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied, Message: "only alice"}
			}
			return out{N: r.Body.N, X: r.PathValue("x"), User: r.Caller.User}, nil
		})},
	}}
	alice := Identity{UID: 1001, GID: 1001, User: "alice"}
	var got out
	if err := srv.Call(context.Background(), alice, "POST", "/v1/echo/seven", in{N: 7}, &got); err != nil || got != (out{7, "seven", "alice"}) {
		t.Errorf("Call = %+v, %v", got, err)
	}
	var e *Error
	err := srv.Call(context.Background(), Identity{UID: 1002, User: "bob"}, "POST", "/v1/echo/x", in{}, nil)
	if !errors.As(err, &e) || e.Status != http.StatusForbidden || e.Code != slurm.ErrAccessDenied || e.Message != "only alice" {
		t.Errorf("bob's call: %v", err)
	}
	err = srv.Call(context.Background(), alice, "POST", "/v1/echo/x", map[string]any{"n": 1, "extra": true}, nil)
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
		t.Errorf("an unknown field: %v, want 400 as on the socket", err)
	}
	err = srv.Call(context.Background(), alice, "GET", "/v1/echo/x", nil, nil)
	if !errors.As(err, &e) || e.Status != http.StatusNotFound {
		t.Errorf("a method the table lacks: %v, want 404", err)
	}
}
