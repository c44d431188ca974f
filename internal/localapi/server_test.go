package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// wireError is an error body as it arrives.
type wireError struct {
	Error string `json:"error"`
	Code  int    `json:"code"`
}

func decodeWire(t *testing.T, body string) wireError {
	t.Helper()
	var w wireError
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("error body %q is not {\"error\", \"code\"}: %v", body, err)
	}
	return w
}

func TestRefusedRequestsReachNoHandler(t *testing.T) {
	s := startServer(t, withLimits(Limits{MaxBodyBytes: 1 << 10}))
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		allow  string
		error  string
	}{{
		name: "a body that is not JSON", method: "POST", path: "/v1/echo", body: `{"name": "a",`,
		status: 400, error: "bad request body: unexpected EOF",
	}, {
		name: "a field the request does not have", method: "POST", path: "/v1/echo", body: `{"name": "a", "gpus": 2}`,
		status: 400, error: `bad request body: unknown field "gpus"`,
	}, {
		name: "a field of the wrong type", method: "POST", path: "/v1/echo", body: `{"name": "a", "n": "two"}`,
		status: 400, error: "bad request body: cannot unmarshal string into Go struct field echoIn.n of type int",
	}, {
		name: "two JSON values", method: "POST", path: "/v1/echo", body: `{"name": "a"} {"name": "b"}`,
		status: 400, error: "bad request body: more data after the JSON value",
	}, {
		name: "no body where one is needed", method: "POST", path: "/v1/echo",
		status: 400, error: "POST /v1/echo needs a JSON request body",
	}, {
		name: "a body where none is taken", method: "GET", path: "/v1/whoami", body: `{"uid": 0}`,
		status: 400, error: `bad request body: unknown field "uid"`,
	}, {
		name: "a body that fails validation", method: "POST", path: "/v1/echo", body: `{"n": 3}`,
		status: 400, error: "name is empty; give one",
	}, {
		name: "an unknown path", method: "GET", path: "/v1/nodes",
		status: 404, error: `slurmd-lite has no API path "/v1/nodes"; is it older than this command?`,
	}, {
		name: "an unknown version", method: "POST", path: "/v2/echo", body: `{"name": "a"}`,
		status: 404, error: `slurmd-lite has no API path "/v2/echo"; is it older than this command?`,
	}, {
		name: "a path with a trailing slash", method: "POST", path: "/v1/echo/", body: `{"name": "a"}`,
		status: 404, error: `slurmd-lite has no API path "/v1/echo/"; is it older than this command?`,
	}, {
		name: "an empty captured segment", method: "GET", path: "/v1/jobs/",
		status: 404, error: `slurmd-lite has no API path "/v1/jobs/"; is it older than this command?`,
	}, {
		name: "a path with an empty segment", method: "POST", path: "/v1//echo", body: `{"name": "a"}`,
		status: 404, error: `slurmd-lite has no API path "/v1//echo"; is it older than this command?`,
	}, {
		name: "a path with a dot segment", method: "GET", path: "/v1/jobs/./7",
		status: 404, error: `slurmd-lite has no API path "/v1/jobs/./7"; is it older than this command?`,
	}, {
		name: "the root", method: "GET", path: "/",
		status: 404, error: `slurmd-lite has no API path "/"; is it older than this command?`,
	}, {
		name: "a wrong method", method: "GET", path: "/v1/echo",
		status: 405, allow: "POST", error: "GET is not allowed on /v1/echo (allowed: POST)",
	}, {
		name: "a wrong method on a captured path", method: "PUT", path: "/v1/jobs/7",
		status: 405, allow: "DELETE, GET", error: "PUT is not allowed on /v1/jobs/7 (allowed: DELETE, GET)",
	}, {
		name: "a body over the limit", method: "POST", path: "/v1/echo", body: `{"name": "` + strings.Repeat("x", 2<<10) + `"}`,
		status: 413, error: "the request body is larger than the limit of 1024 bytes",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.api.calls.Load()
			got := raw(t, s.sock, tt.method, tt.path, tt.body)
			if diff := cmp.Diff(tt.status, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s\nbody: %s", diff, got.Body)
			}
			if diff := cmp.Diff(tt.allow, got.Allow); diff != "" {
				t.Errorf("Allow header (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wireError{Error: tt.error}, decodeWire(t, got.Body)); diff != "" {
				t.Errorf("error body (-want +got):\n%s", diff)
			}
			if n := s.api.calls.Load() - before; n != 0 {
				t.Errorf("%d handler calls for a refused request, want 0", n)
			}
		})
	}
}

func TestHandlersAnswer(t *testing.T) {
	s := startServer(t, withUsers(fakeUsers{
		names:  map[uint32]string{uint32(os.Getuid()): "alice"},
		groups: map[string][]uint32{"alice": {100}},
	}))
	c := s.client(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		method string
		path   string
		in     any
		want   echoOut
	}{{
		name: "a decoded body and the caller's name", method: "POST", path: "/v1/echo",
		in: echoIn{Name: "train", N: 4}, want: echoOut{Name: "train", N: 4, User: "alice"},
	}, {
		name: "a captured segment", method: "GET", path: "/v1/jobs/42",
		want: echoOut{ID: "42"},
	}, {
		name: "a captured segment with an escaped slash", method: "DELETE", path: "/v1/jobs/a%2Fb",
		want: echoOut{ID: "a/b"},
	}, {
		name: "a query", method: "GET", path: "/v1/jobs/7?name=x%20y",
		want: echoOut{ID: "7", Name: "x y"},
	}, {
		name: "a literal segment before a capture", method: "GET", path: "/v1/jobs/held",
		want: echoOut{Name: "held"},
	}, {
		name: "a body of {} where none is needed", method: "GET", path: "/v1/jobs/9",
		in: struct{}{}, want: echoOut{ID: "9"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got echoOut
			if err := c.Do(ctx, tt.method, tt.path, tt.in, &got); err != nil {
				t.Fatalf("Do: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandlerErrorsReachTheClient(t *testing.T) {
	s := startServer(t)
	c := s.client(t)
	tests := []struct {
		name string
		path string
		want *api.Error
	}{{
		name: "an *api.Error keeps its status and Slurm code",
		path: "/v1/refuse",
		want: &api.Error{Status: 403, Message: "you may not", Code: slurm.ErrAccessDenied},
	}, {
		name: "any other error is the daemon's own failure",
		path: "/v1/fail",
		want: &api.Error{Status: 500, Message: "the disk is full"},
	}, {
		name: "a refusal by the transport",
		path: "/v1/nowhere",
		want: &api.Error{Status: 404, Message: `slurmd-lite has no API path "/v1/nowhere"; is it older than this command?`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Do(context.Background(), "POST", tt.path, nil, nil)
			var got *api.Error
			if !errors.As(err, &got) {
				t.Fatalf("Do returned %v (%T), want an *api.Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChunkedBodyOverTheLimitIsRefused(t *testing.T) {
	// A body without Content-Length is cut at the limit as it is read.
	s := startServer(t, withLimits(Limits{MaxBodyBytes: 1 << 10}))
	conn, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest("POST", "http://slurmd-lite/v1/echo", io.MultiReader(
		strings.NewReader(`{"name": "`), strings.NewReader(strings.Repeat("x", 4<<10)), strings.NewReader(`"}`)))
	req.ContentLength = -1
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413; body %s", resp.StatusCode, b)
	}
	if n := s.api.calls.Load(); n != 0 {
		t.Errorf("%d handler calls, want 0", n)
	}
}

func TestAFourMiBScriptFitsTheDefaultLimit(t *testing.T) {
	// Slurm's default max_script_size is 4 MiB; in JSON a script of short
	// lines grows by a byte a line, and the request must still fit.
	s := startServer(t)
	c := s.client(t)
	line := "#SBATCH --comment=\"x\"\n"
	script := strings.Repeat(line, 4<<20/len(line))
	var got echoOut
	if err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: script}, &got); err != nil {
		t.Fatalf("Do with a %d-byte script: %v", len(script), err)
	}
	if got.Name != script {
		t.Errorf("the script came back with %d bytes, want %d", len(got.Name), len(script))
	}
	before := s.api.calls.Load()
	err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: strings.Repeat("x", 16<<20)}, &got)
	want := &api.Error{Status: http.StatusRequestEntityTooLarge, Message: "the request body is larger than the limit of 16 MiB"}
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("Do with a body over 16 MiB: %v, want an *api.Error", err)
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Do with a body over 16 MiB (-want +got):\n%s", diff)
	}
	if n := s.api.calls.Load() - before; n != 0 {
		t.Errorf("%d handler calls for the oversize body, want 0", n)
	}
}

func TestHeadersOverTheLimitAreRefused(t *testing.T) {
	s := startServer(t, withLimits(Limits{MaxHeaderBytes: 1 << 10}))
	c := s.client(t)
	err := c.Do(context.Background(), "GET", "/v1/jobs/"+strings.Repeat("7", 8<<10), nil, nil)
	var e *api.Error
	if !errors.As(err, &e) || e.Status != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("Do with 8 KiB of path: %v, want a 431 *api.Error", err)
	}
	if n := s.api.calls.Load(); n != 0 {
		t.Errorf("%d handler calls, want 0", n)
	}
}

func TestStalledClientsDoNotHoldOthers(t *testing.T) {
	s := startServer(t, withLimits(Limits{ReadHeaderTimeout: 500 * time.Millisecond, BodyTimeout: 500 * time.Millisecond}))
	c := s.client(t)

	// One client connects and sends half a header line; another sends its
	// headers and half its body. Neither finishes.
	headerStall, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer headerStall.Close()
	fmt.Fprintf(headerStall, "POST /v1/echo HTTP/1.1\r\nHost: x\r\n")
	bodyStall, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer bodyStall.Close()
	fmt.Fprintf(bodyStall, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"name\"")

	// Meanwhile others are answered.
	var got echoOut
	if err := c.Do(context.Background(), "POST", "/v1/echo", echoIn{Name: "meanwhile"}, &got); err != nil {
		t.Fatalf("a request beside stalled clients: %v", err)
	}

	// And the stalled ones are let go: the header one closed, the body one
	// told why.
	headerStall.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(headerStall); err != nil || len(b) != 0 {
		t.Errorf("stalled in its headers: read %q, %v; want the connection closed with no answer", b, err)
	}
	bodyStall.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(bodyStall), nil)
	if err != nil {
		t.Fatalf("stalled in its body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if diff := cmp.Diff(wireError{Error: "the request body did not arrive within 500ms"}, decodeWire(t, string(b))); diff != "" || resp.StatusCode != 408 {
		t.Errorf("stalled in its body: status %d, want 408; error (-want +got):\n%s", resp.StatusCode, diff)
	}
	if n := s.api.calls.Load(); n != 1 {
		t.Errorf("%d handler calls, want 1 (the request beside them)", n)
	}
}

func TestLongHandlersOutliveTheBodyDeadline(t *testing.T) {
	// A read that times out while a handler runs ends its context; the body
	// deadline must be over before the handler starts.
	s := startServer(t, withLimits(Limits{BodyTimeout: 100 * time.Millisecond}))
	c := s.client(t)
	var got echoOut
	if err := c.Do(context.Background(), "POST", "/v1/sleep", echoIn{Name: "yield", N: 500}, &got); err != nil {
		t.Fatalf("a handler running 5 times the body deadline: %v", err)
	}
	if got.Name != "yield" {
		t.Errorf("answer %+v", got)
	}
}

func TestConcurrentRequestsAreAllAnswered(t *testing.T) {
	s := startServer(t)
	c := s.client(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			var got echoOut
			in := echoIn{Name: fmt.Sprintf("job%d", i), N: i}
			if err := c.Do(context.Background(), "POST", "/v1/echo", in, &got); err != nil {
				errs <- err
				return
			}
			if got.Name != in.Name || got.N != in.N {
				errs <- fmt.Errorf("request %d got %+v", i, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := s.api.calls.Load(); got != n {
		t.Errorf("%d handler calls, want %d", got, n)
	}
}

func TestShutdownWaitsForRequestsInProgress(t *testing.T) {
	sock := t.TempDir() + "/slurmd.sock"
	api := &testAPI{slept: make(chan struct{}, 1)}
	srv := &Server{Routes: api.routes(), Logf: t.Logf}
	ln, err := Listen(sock, AccessFor(os.Getuid()))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	answer := make(chan error, 1)
	go func() {
		var got echoOut
		answer <- c.Do(context.Background(), "POST", "/v1/sleep", echoIn{Name: "slow", N: 300}, &got)
	}()
	select {
	case <-api.slept: // in progress
	case <-time.After(20 * time.Second):
		t.Fatal("the request did not reach its handler")
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-answer; err != nil {
		t.Errorf("the request in progress during Shutdown: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: %v, want nil", err)
	}
	// The socket is gone and the lock free: the next daemon starts.
	if _, err := Dial(sock); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("Dial after Shutdown: %v, want no socket", err)
	}
	ln2, err := Listen(sock, AccessFor(os.Getuid()))
	if err != nil {
		t.Fatalf("Listen after Shutdown: %v", err)
	}
	ln2.Close()
}

func TestBadHandlerTablesAreRefused(t *testing.T) {
	h := Func(func(context.Context, *Request[struct{}]) (struct{}, error) { return struct{}{}, nil })
	tests := []struct {
		name   string
		routes Routes
		want   string
	}{{
		name:   "a path without a version",
		routes: Routes{{Method: "GET", Path: "/jobs", Handler: h}},
		want:   `route GET "/jobs": the path must start with a version, as in /v1/jobs`,
	}, {
		name:   "a version alone",
		routes: Routes{{Method: "GET", Path: "/v1", Handler: h}},
		want:   `route GET "/v1": the path must start with a version, as in /v1/jobs`,
	}, {
		name:   "version zero",
		routes: Routes{{Method: "GET", Path: "/v0/jobs", Handler: h}},
		want:   `route GET "/v0/jobs": the path must start with a version, as in /v1/jobs`,
	}, {
		name:   "a relative path",
		routes: Routes{{Method: "GET", Path: "v1/jobs", Handler: h}},
		want:   `route GET "v1/jobs": the path must start with /`,
	}, {
		name:   "an empty segment",
		routes: Routes{{Method: "GET", Path: "/v1//jobs", Handler: h}},
		want:   `route GET "/v1//jobs": the path has an empty segment`,
	}, {
		name:   "a capture inside a segment",
		routes: Routes{{Method: "GET", Path: "/v1/job-{id}", Handler: h}},
		want:   `route GET "/v1/job-{id}": segment "job-{id}": a captured segment is a whole segment {name}`,
	}, {
		name:   "a name captured twice",
		routes: Routes{{Method: "GET", Path: "/v1/{id}/{id}", Handler: h}},
		want:   `route GET "/v1/{id}/{id}": segment {id} is captured twice`,
	}, {
		name:   "a lower-case method",
		routes: Routes{{Method: "get", Path: "/v1/jobs", Handler: h}},
		want:   `route "get" "/v1/jobs": the method must be an HTTP method in capitals`,
	}, {
		name:   "no handler",
		routes: Routes{{Method: "GET", Path: "/v1/jobs"}},
		want:   `route GET /v1/jobs has no handler`,
	}, {
		name:   "a route twice",
		routes: Routes{{Method: "GET", Path: "/v1/jobs", Handler: h}, {Method: "GET", Path: "/v1/jobs", Handler: h}},
		want:   `route GET /v1/jobs is in the table twice`,
	}, {
		name:   "a segment that needs escaping",
		routes: Routes{{Method: "GET", Path: "/v1/job list", Handler: h}},
		want:   `route GET "/v1/job list": segment "job list" needs escaping; use plain words`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compile(tt.routes)
			got := fmt.Sprint(err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("compile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConflictingRoutesAreRefused(t *testing.T) {
	h := http.NotFoundHandler()
	// Both answer GET /v1/jobs/held, and neither is the more specific.
	_, err := compile(Routes{
		{Method: "GET", Path: "/v1/{kind}/held", Handler: h},
		{Method: "GET", Path: "/v1/jobs/{id}", Handler: h},
	})
	if err == nil || !strings.HasPrefix(err.Error(), "route GET /v1/jobs/{id}: ") || !strings.Contains(err.Error(), "conflicts with") {
		t.Errorf("compile: %v, want a conflict of route GET /v1/jobs/{id}", err)
	}
}

func TestServeRefusesABadTable(t *testing.T) {
	sock := t.TempDir() + "/slurmd.sock"
	ln, err := Listen(sock, AccessFor(os.Getuid()))
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Routes: Routes{{Method: "GET", Path: "/jobs", Handler: http.NotFoundHandler()}}}
	err = srv.Serve(ln)
	if want := `handler table: route GET "/jobs": the path must start with a version, as in /v1/jobs`; fmt.Sprint(err) != want {
		t.Errorf("Serve: %v, want %s", err, want)
	}
	// Serve closed the listener: the socket is gone.
	if _, err := Dial(sock); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("Dial after a failed Serve: %v, want no socket", err)
	}
}
