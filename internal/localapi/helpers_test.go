package localapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// fakeUsers is a user database of a few made-up users.
type fakeUsers struct {
	names  map[uint32]string
	groups map[string][]uint32
}

var _ Users = fakeUsers{}

func (f fakeUsers) LookupUID(uid uint32) (string, error) {
	if n, ok := f.names[uid]; ok {
		return n, nil
	}
	return "", fmt.Errorf("unknown userid %d", uid)
}

func (f fakeUsers) GroupIDs(name string, gid uint32) ([]uint32, error) {
	g, ok := f.groups[name]
	if !ok {
		return nil, fmt.Errorf("no groups for %q", name)
	}
	return append([]uint32{gid}, g...), nil
}

// echoIn is a request body with a rule: a name is required.
type echoIn struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

func (e *echoIn) Validate() error {
	if e.Name == "" {
		return errors.New("name is empty; give one")
	}
	return nil
}

type echoOut struct {
	Name string `json:"name"`
	N    int    `json:"n"`
	User string `json:"user"`
	ID   string `json:"id,omitempty"`
}

// testAPI is a handler table that counts the calls that reach a handler, so
// tests can check that a refused request touched nothing.
type testAPI struct {
	calls atomic.Int64
	// slept, when set, hears of each sleep handler's start.
	slept chan struct{}
}

func (a *testAPI) routes() Routes {
	return Routes{
		{Method: "POST", Path: "/v1/echo", Handler: Func(a.echo)},
		{Method: "GET", Path: "/v1/whoami", Handler: Func(a.whoami)},
		{Method: "GET", Path: "/v1/jobs/{id}", Handler: Func(a.job)},
		{Method: "DELETE", Path: "/v1/jobs/{id}", Handler: Func(a.job)},
		{Method: "GET", Path: "/v1/jobs/held", Handler: Func(a.held)},
		{Method: "POST", Path: "/v1/refuse", Handler: Func(a.refuse)},
		{Method: "POST", Path: "/v1/fail", Handler: Func(a.fail)},
		{Method: "POST", Path: "/v1/sleep", Handler: Func(a.sleep)},
	}
}

func (a *testAPI) echo(ctx context.Context, req *Request[echoIn]) (echoOut, error) {
	a.calls.Add(1)
	return echoOut{Name: req.Body.Name, N: req.Body.N, User: req.Caller.User}, nil
}

func (a *testAPI) whoami(ctx context.Context, req *Request[struct{}]) (Identity, error) {
	a.calls.Add(1)
	id, ok := Caller(ctx)
	if !ok {
		return Identity{}, errors.New("no caller on the context")
	}
	if fmt.Sprint(id) != fmt.Sprint(req.Caller) {
		return Identity{}, fmt.Errorf("context says %+v, request says %+v", id, req.Caller)
	}
	return id, nil
}

func (a *testAPI) job(ctx context.Context, req *Request[struct{}]) (echoOut, error) {
	a.calls.Add(1)
	return echoOut{ID: req.PathValue("id"), Name: req.Query.Get("name")}, nil
}

func (a *testAPI) held(ctx context.Context, req *Request[struct{}]) (echoOut, error) {
	a.calls.Add(1)
	return echoOut{Name: "held"}, nil
}

func (a *testAPI) refuse(ctx context.Context, req *Request[struct{}]) (struct{}, error) {
	a.calls.Add(1)
	return struct{}{}, &api.Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied, Message: "you may not"}
}

func (a *testAPI) fail(ctx context.Context, req *Request[struct{}]) (struct{}, error) {
	a.calls.Add(1)
	return struct{}{}, errors.New("the disk is full")
}

// sleep waits for the given milliseconds, or fails if its context ends
// first.
func (a *testAPI) sleep(ctx context.Context, req *Request[echoIn]) (echoOut, error) {
	a.calls.Add(1)
	if a.slept != nil {
		a.slept <- struct{}{}
	}
	select {
	case <-time.After(time.Duration(req.Body.N) * time.Millisecond):
		return echoOut{Name: req.Body.Name}, nil
	case <-ctx.Done():
		return echoOut{}, fmt.Errorf("context ended: %w", context.Cause(ctx))
	}
}

// server is a running test server.
type server struct {
	sock string
	api  *testAPI
	srv  *Server
	done chan error
}

type serverOpt func(*Server, *Access)

func withUsers(u Users) serverOpt   { return func(s *Server, _ *Access) { s.Users = u } }
func withLimits(l Limits) serverOpt { return func(s *Server, _ *Access) { s.Limits = l } }
func withAccess(a Access) serverOpt { return func(_ *Server, acc *Access) { *acc = a } }
func withRoutes(r Routes) serverOpt { return func(s *Server, _ *Access) { s.Routes = r } }

// startServer listens in a fresh temporary directory and serves the test
// API; the test's cleanup shuts it down and checks that Serve returned nil.
func startServer(t testing.TB, opts ...serverOpt) *server {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "run", "slurmd.sock")
	return startServerAt(t, sock, opts...)
}

func startServerAt(t testing.TB, sock string, opts ...serverOpt) *server {
	t.Helper()
	api := &testAPI{}
	srv := &Server{Routes: api.routes(), Logf: t.Logf}
	access := AccessFor(os.Geteuid())
	for _, o := range opts {
		o(srv, &access)
	}
	ln, err := Listen(sock, access)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	s := &server{sock: sock, api: api, srv: srv, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-s.done; err != nil {
			t.Errorf("Serve returned %v after Shutdown, want nil", err)
		}
	})
	return s
}

// client is the commands' client (sockclient), the one client there is.
func (s *server) client(t testing.TB) *sockclient.Client {
	t.Helper()
	return sockclient.New(s.sock)
}

// rawResponse is an answer read without the client, for requests that the
// client would never send.
type rawResponse struct {
	Status int
	Allow  string
	Body   string
}

// raw sends method path with body as it is, over a fresh connection.
func raw(t *testing.T, sock, method, path, body string) rawResponse {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	defer hc.CloseIdleConnections()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://slurmd-lite"+path, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{Status: resp.StatusCode, Allow: resp.Header.Get("Allow"), Body: string(b)}
}

// Dial returns a client for the daemon at sock once one listens there.
func Dial(sock string) (*sockclient.Client, error) {
	c := sockclient.New(sock)
	if err := c.Reach(context.Background()); err != nil {
		return nil, err
	}
	return c, nil
}
