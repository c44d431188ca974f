package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Call answers method path for id in this process, as a request on the
// socket from id is answered once the kernel has named its caller (steps 4
// to 7 of the package comment): the same handler table, body decoding and
// validation, and handlers, so the same viewer rules and submission checks.
// in is sent as the JSON body (none when nil); the answer is decoded into
// out (ignored when nil); a refusal is an *Error, as sockclient.Do returns
// it. The web listener's REST API (internal/slurmrest) calls it for the
// user a token names, once the token is verified. Bodies are bounded by
// the caller (the REST API reads at most MaxBodyBytes).
func (s *Server) Call(ctx context.Context, id Identity, method, path string, in, out any) error {
	t, err := s.inProcessTable()
	if err != nil {
		return err
	}
	var body []byte
	if in != nil {
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("encoding the request for %s %s: %w", method, path, err)
		}
	}
	r, err := http.NewRequestWithContext(WithCaller(ctx, id), method, path, nil)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	r.Body = &heldBody{Reader: bytes.NewReader(body), b: body}
	r.ContentLength = int64(len(body))
	if !t.answers(r) {
		return Errorf(http.StatusNotFound, "slurmd-lite has no API path %q", r.URL.Path)
	}
	w := &recorder{header: http.Header{}}
	t.mux.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status/100 != 2 {
		e := &Error{}
		if err := json.Unmarshal(w.body.Bytes(), e); err != nil || e.Message == "" {
			e = &Error{Message: strings.TrimSpace(w.body.String())}
		}
		e.Status = w.status
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(w.body.Bytes(), out); err != nil {
		return fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// inProcessTable is Routes compiled once for Call.
func (s *Server) inProcessTable() (*table, error) {
	s.callOnce.Do(func() {
		s.callTable, s.callErr = compile(s.Routes)
		if s.callErr != nil {
			s.callErr = fmt.Errorf("handler table: %w", s.callErr)
		}
	})
	return s.callTable, s.callErr
}

// recorder is the http.ResponseWriter of an in-process answer.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

// callState is the Server's state for Call.
type callState struct {
	callOnce  sync.Once
	callTable *table
	callErr   error
}
