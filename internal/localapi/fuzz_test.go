package localapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzServe sends the server any request that a local user could: any
// method, path, headers and body, framed by Content-Length, chunked, or not
// at all. Whatever comes, the server does not panic, answers with valid
// HTTP or closes the connection, refuses in JSON ({"error", "code"}) unless
// net/http itself refused a request it could not parse, and holds no more
// body bytes than its bound, giving them all back when the connection ends.
func FuzzServe(f *testing.F) {
	seeds := []struct {
		method, path, header, body string
		framing                    uint8
	}{
		{"POST", "/v1/echo", "Content-Type: application/json\r\n", `{"name": "a", "n": 2}`, 0},
		{"POST", "/v1/echo", "", `{"name": "a", "n": 2}`, 1},
		{"POST", "/v1/echo", "Content-Length: 5000\r\n", `{"name": "`, 2},
		{"POST", "/v1/echo", "", `{"name": "` + strings.Repeat("x", 5000) + `"}`, 0},
		{"POST", "/v1/echo", "", `{"name": "` + strings.Repeat("x", 3000) + `"}`, 1},
		{"GET", "/v1/whoami", "Accept: " + GobType + "\r\n", "", 0},
		{"GET", "/v1/jobs/a%2Fb?name=x", "", "", 0},
		{"DELETE", "/v1/jobs/%zz", "", "", 0},
		{"PUT", "/v1/jobs/7", "", "{}", 0},
		{"GET", "//v1/../v1/jobs/held", "", "", 0},
		{"GET", "*", "", "", 0},
		{"GET", "http://other/v1/whoami", "", "", 0},
		{"POST", "/v1/refuse", "Expect: 100-continue\r\n", "{}", 0},
		{"0", "*", "EXpeCt:", "0", 0},
		{"POST", "/v1/fail", "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n", "{}", 2},
		{"POST", "/v1/echo", "", "{\"name\": \"a\"}GET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n", 0},
		{"BREW", "/v1/echo\x00", "X: \x7f\r\n", "\xff\xfe", 0},
		{"GET", "/v1/jobs/" + strings.Repeat("9", 5000), "", "", 0},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.header, []byte(s.body), s.framing)
	}

	var panics atomic.Int64
	var lastPanic atomic.Value
	api := &testAPI{}
	var routes Routes
	for _, r := range api.routes() {
		if r.Path != "/v1/sleep" { // a fuzzed sleep would only be slow
			routes = append(routes, r)
		}
	}
	s := startServer(f, withRoutes(routes), withLimits(Limits{
		MaxBodyBytes:             4 << 10,
		MaxHeaderBytes:           4 << 10,
		ReadHeaderTimeout:        2 * time.Second,
		BodyTimeout:              2 * time.Second,
		MaxBodyBytesInFlight:     16 << 10,
		MaxUserBodyBytesInFlight: 8 << 10,
		SmallBodyBytes:           1 << 10,
	}), func(srv *Server, _ *Access) {
		srv.Logf = func(format string, args ...any) {
			if msg := fmt.Sprintf(format, args...); strings.Contains(msg, "panic") {
				panics.Add(1)
				lastPanic.Store(msg)
			}
		}
	})

	f.Fuzz(func(t *testing.T, method, path, header string, body []byte, framing uint8) {
		var req bytes.Buffer
		fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: slurmd-lite\r\n%s", method, path, header)
		switch framing % 3 {
		case 0:
			fmt.Fprintf(&req, "Content-Length: %d\r\n\r\n", len(body))
			req.Write(body)
		case 1:
			req.WriteString("Transfer-Encoding: chunked\r\n\r\n")
			if len(body) > 0 {
				fmt.Fprintf(&req, "%x\r\n%s\r\n", len(body), body)
			}
			req.WriteString("0\r\n\r\n")
		default:
			req.WriteString("\r\n")
			req.Write(body)
		}

		c, err := net.Dial("unix", s.sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(req.Bytes()); err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
			t.Fatalf("sending: %v", err)
		}
		// All sent: the server sees the end, so nothing waits on a deadline.
		c.(*net.UnixConn).CloseWrite()

		br := bufio.NewReader(c)
		for {
			if _, err := br.Peek(1); err != nil {
				if errors.Is(err, io.EOF) || isReset(err) {
					break // the server closed the connection
				}
				t.Fatalf("waiting for an answer: %v", err)
			}
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the server's answer is not HTTP: %v", err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil && !isReset(err) {
				t.Fatalf("reading the answer's body: %v", err)
			}
			checkAnswer(t, resp, b)
			if resp.Close {
				break
			}
		}

		if n := panics.Load(); n > 0 {
			t.Fatalf("the server panicked: %v", lastPanic.Load())
		}
		// Every body's room is given back once its request is over.
		for deadline := time.Now().Add(5 * time.Second); ; {
			m := s.srv.BodyMemory()
			if m.Peak > m.Limit {
				t.Fatalf("bodies held %d bytes at their peak, over the limit of %d", m.Peak, m.Limit)
			}
			if m.InFlight == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d body bytes still held after the connection ended", m.InFlight)
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// netHTTPRefusals are the statuses net/http gives, in plain text, to a
// request it cannot parse before any handler of ours sees it.
var netHTTPRefusals = map[int]bool{
	http.StatusBadRequest:                  true,
	http.StatusExpectationFailed:           true,
	http.StatusRequestHeaderFieldsTooLarge: true,
	http.StatusNotImplemented:              true,
	http.StatusHTTPVersionNotSupported:     true,
}

func checkAnswer(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	status, ct := resp.StatusCode, resp.Header.Get("Content-Type")
	switch {
	case status < 100 || status > 599:
		t.Fatalf("status %d", status)
	case status < 200:
		return // 100 Continue, before the answer
	case status < 300:
		if ct != "application/json" && ct != GobType {
			t.Fatalf("answer %d with Content-Type %q: %q", status, ct, body)
		}
		return
	case ct != "application/json":
		if !netHTTPRefusals[status] || (ct != "" && !strings.HasPrefix(ct, "text/plain")) {
			t.Fatalf("refusal %d with Content-Type %q, neither ours in JSON nor net/http's: %q", status, ct, body)
		}
		return
	}
	var e wireError
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == "" {
		t.Fatalf("refusal %d is not {\"error\", \"code\"}: %q (%v)", status, body, err)
	}
	if (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && resp.Header.Get("Retry-After") == "" {
		t.Fatalf("refusal %d without Retry-After: %s", status, e.Error)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}
