package localapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

func TestNotRunningIsTheCommandsWording(t *testing.T) {
	// internal/cli prints this text today; the words are the contract.
	got := sockclient.NotRunning("/run/slurm-lite/slurmd.sock").Error()
	want := "slurmd-lite is not running (no socket at /run/slurm-lite/slurmd.sock); start it with: slurmd-lite"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NotRunning (-want +got):\n%s", diff)
	}
}

func TestUnreachableDaemons(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, sock string)
		want  string // %s is the socket
		errno syscall.Errno
	}{{
		name:  "no socket at all",
		setup: func(*testing.T, string) {},
		want:  "slurmd-lite is not running (no socket at %s); start it with: slurmd-lite",
		errno: syscall.ENOENT,
	}, {
		name:  "a socket left by a daemon that died",
		setup: leaveStaleSocket,
		want:  "slurmd-lite is not running (nobody listens on %s, left by a daemon that stopped); start it with: slurmd-lite",
		errno: syscall.ECONNREFUSED,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "slurmd.sock")
			tt.setup(t, sock)
			want := fmt.Sprintf(tt.want, sock)

			err := sockclient.New(sock).Do(context.Background(), "GET", "/v1/whoami", nil, nil)
			check := func(how string, err error) {
				t.Helper()
				if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", how, diff)
				}
				var ue *sockclient.UnreachableError
				if !errors.As(err, &ue) || !errors.Is(err, tt.errno) {
					t.Errorf("%s: %T %v is not an *sockclient.UnreachableError for %v", how, err, err, tt.errno)
				}
			}
			check("Do", err)
		})
	}
}

func TestNoSocketIsNotExist(t *testing.T) {
	err := sockclient.New(filepath.Join(t.TempDir(), "slurmd.sock")).Do(context.Background(), "GET", "/v1/whoami", nil, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(%v, fs.ErrNotExist) is false", err)
	}
}

func TestDaemonGoneBetweenRequests(t *testing.T) {
	s := startServer(t)
	c := s.client(t)
	if err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "a"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.srv.Close(); err != nil {
		t.Fatal(err)
	}
	err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "b"}, nil)
	if want := sockclient.NotRunning(s.sock).Error(); fmt.Sprint(err) != want {
		t.Errorf("Do after the daemon stopped: %v, want %s", err, want)
	}
}

func TestCancelledRequest(t *testing.T) {
	s := startServer(t)
	c := s.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Do(ctx, "POST", "/v1/echo", echoIn{Name: "a"}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestRefusalsInPlainTextKeepTheirWords(t *testing.T) {
	// net/http refuses headers that are too large itself, in plain text.
	s := startServer(t, withLimits(Limits{MaxHeaderBytes: 1 << 10}))
	err := s.client(t).Do(context.Background(), "GET", "/v1/jobs/"+strings.Repeat("7", 8<<10), nil, nil)
	want := &api.Error{Status: http.StatusRequestHeaderFieldsTooLarge, Message: "431 Request Header Fields Too Large"}
	var got *api.Error
	if !errors.As(err, &got) {
		t.Fatalf("Do: %v, want an *api.Error", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Do (-want +got):\n%s", diff)
	}
}

func TestAnswerThatIsNotJSON(t *testing.T) {
	s := startServer(t, withRoutes(Routes{{Method: "GET", Path: "/v1/text", Handler: http.HandlerFunc(
		func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })}}))
	var out echoOut
	err := s.client(t).Do(context.Background(), "GET", "/v1/text", nil, &out)
	if err == nil || !strings.HasPrefix(err.Error(), "reading slurmd-lite's answer to GET /v1/text: ") {
		t.Errorf("Do: %v, want an error about the answer", err)
	}
}
