package sockclient_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

type echoIn struct {
	Name string `json:"name"`
	Size int    `json:"size"`
}

func (echoIn) Validate() error { return nil }

type echoOut struct {
	Name  string `json:"name"`
	User  string `json:"user"`
	Bytes string `json:"bytes"`
}

// serve runs the daemon's own server (localapi) on a socket in a fresh
// directory, with a handler that echoes, pads its answer to the size asked
// (large answers go chunked) or refuses as Slurm would.
func serve(t *testing.T) string {
	t.Helper()
	return serveRoutes(t, localapi.Routes{
		{Method: "POST", Path: "/v1/echo", Handler: localapi.Func(func(ctx context.Context, r *localapi.Request[echoIn]) (echoOut, error) {
			if r.Body.Name == "refuse" {
				return echoOut{}, &api.Error{Status: 400, Code: 2017, Message: "Invalid job id specified"}
			}
			return echoOut{Name: r.Body.Name, User: r.Caller.User, Bytes: strings.Repeat("x", r.Body.Size)}, nil
		})},
	})
}

// serveRoutes runs the daemon's own server (localapi) with routes on a
// socket in a fresh directory, for the test's length.
func serveRoutes(t *testing.T, routes localapi.Routes) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sockclient") // short: sun_path is 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // a root daemon serves everyone
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "d.sock")
	ln, err := localapi.Listen(sock, localapi.AccessFor(os.Geteuid()))
	if err != nil {
		t.Fatal(err)
	}
	srv := &localapi.Server{Routes: routes}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return sock
}

func TestAnswersAreRead(t *testing.T) {
	sock := serve(t)
	c := sockclient.New(sock)
	for _, tc := range []struct {
		name string
		size int
	}{
		{"a small answer, with its Content-Length", 10},
		{"a large answer, chunked", 300_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got echoOut
			if err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "job", Size: tc.size}, &got); err != nil {
				t.Fatal(err)
			}
			want := echoOut{Name: "job", User: got.User, Bytes: strings.Repeat("x", tc.size)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if got.User == "" {
				t.Error("the daemon did not name the caller")
			}
		})
	}
}

func TestRefusalsAndAbsencesAreTyped(t *testing.T) {
	sock := serve(t)
	stale := filepath.Join(filepath.Dir(sock), "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	for _, tc := range []struct {
		name, socket, path string
		want               string
	}{
		{"a refusal keeps the daemon's code and words", sock, "/v1/echo", "status 400 code 2017: Invalid job id specified"},
		{"an unknown path is the server's 404", sock, "/v1/nothing", "status 404 code 0: "},
		{"no socket says to start the daemon", filepath.Join(filepath.Dir(sock), "none.sock"), "/v1/echo",
			"unreachable: slurmd-lite is not running (no socket at " + filepath.Join(filepath.Dir(sock), "none.sock") + "); start it with: slurmd-lite"},
		{"a socket nobody listens on is a stopped daemon's", stale, "/v1/echo",
			"unreachable: slurmd-lite is not running (nobody listens on " + stale + ", left by a daemon that stopped); start it with: slurmd-lite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := sockclient.New(tc.socket).Do(context.Background(), "POST", tc.path, echoIn{Name: "refuse"}, nil)
			var got string
			var e *api.Error
			var ue *sockclient.UnreachableError
			switch {
			case errors.As(err, &e):
				got = "status " + strconv.Itoa(e.Status) + " code " + strconv.Itoa(int(e.Code)) + ": "
				if e.Code != 0 {
					got += e.Message
				}
			case errors.As(err, &ue):
				got = "unreachable: " + ue.Error()
			default:
				got = "other: " + err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	var le *sockclient.UnreachableError
	if !errors.As(sockclient.NotRunning("/x"), &le) || !errors.Is(le, syscall.ENOENT) {
		t.Error("NotRunning is not an UnreachableError with ENOENT")
	}
}

// shapeOut reads its answer itself when its name is "plain", as
// api.Submitted does for {"job_id":N}, and leaves any other to
// encoding/json.
type shapeOut struct {
	echoOut
	self bool
}

func (s *shapeOut) DecodeAnswer(body []byte) bool {
	if !strings.Contains(string(body), `"name":"plain"`) {
		return false
	}
	s.Name, s.self = "plain", true
	return true
}

func TestAnswerDecoderFallsBackToJSON(t *testing.T) {
	sock := serve(t)
	c := sockclient.New(sock)
	var plain shapeOut
	if err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "plain"}, &plain); err != nil || !plain.self || plain.Name != "plain" {
		t.Errorf("plain answer: %+v, %v; want it read by DecodeAnswer", plain, err)
	}
	var other shapeOut
	if err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "job", Size: 300_000}, &other); err != nil ||
		other.self || other.Name != "job" || len(other.Bytes) != 300_000 || other.User == "" {
		t.Errorf("other answer: self %v, name %q, %d bytes, %v; want encoding/json's whole answer", other.self, other.Name, len(other.Bytes), err)
	}
}
