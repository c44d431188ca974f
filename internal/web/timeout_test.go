package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// slow is a source that answers after delay, or gives up when its caller
// does: a store read stuck behind a long write.
type slow struct{ delay time.Duration }

func (s slow) wait(ctx context.Context) error {
	select {
	case <-time.After(s.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s slow) State(ctx context.Context) (*State, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return box(), nil
}

func (s slow) Usage(ctx context.Context, month time.Time) (*Usage, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return &Usage{Cluster: "lab", Accounts: []AccountUsage{}}, nil
}

// Each read of the source is given stateTimeout, exactly: a source that
// answers a nanosecond within it is served; one that never answers fails
// the request (the dashboard's and the usage's 503, the metrics'
// slurm_lite_up 0) at stateTimeout to the nanosecond. In a synctest
// bubble the ten seconds pass in no time.
func TestAStuckSourceFailsTheRequestAtStateTimeout(t *testing.T) {
	for _, path := range []string{"/metrics", "/api/dashboard", "/api/usage"} {
		t.Run(path, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				serve := func(delay time.Duration) (*httptest.ResponseRecorder, time.Duration) {
					h := Handler(slow{delay}, quiet())
					start := time.Now()
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
					return rec, time.Since(start)
				}
				rec, took := serve(stateTimeout - time.Nanosecond)
				if rec.Code != http.StatusOK || took != stateTimeout-time.Nanosecond {
					t.Errorf("a source a nanosecond inside the timeout: status %d after %v, want 200 when it answered", rec.Code, took)
				}
				if path == "/metrics" && !strings.Contains(rec.Body.String(), "\nslurm_lite_up 1\n") {
					t.Errorf("metrics of a source that answered: no slurm_lite_up 1:\n%s", rec.Body)
				}
				rec, took = serve(time.Hour)
				if took != stateTimeout {
					t.Errorf("a stuck source: the request ended after %v, want exactly %v", took, stateTimeout)
				}
				switch path {
				case "/metrics":
					if !strings.Contains(rec.Body.String(), "\nslurm_lite_up 0\n") {
						t.Errorf("metrics of a stuck source: status %d, no slurm_lite_up 0:\n%s", rec.Code, rec.Body)
					}
				default:
					if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "deadline exceeded") {
						t.Errorf("a stuck source: status %d, %q; want 503 saying the deadline passed", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}
