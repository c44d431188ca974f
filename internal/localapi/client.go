package localapi

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/user"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/sockclient"
)

// Client talks to slurmd-lite over its socket. It is safe for concurrent
// use and keeps connections open between requests.
type Client struct {
	socket string
	tr     *http.Transport
	hc     *http.Client
	// answer is MessageTimeout (sockclient's answer.go); 0: the context
	// alone bounds a request.
	answer time.Duration
}

// SetMessageTimeout sets how long a request waits for its answer before
// the client pings the daemon, and gives up with a *NotAnsweringError when
// the ping is not answered within it either; 0 waits as long as the
// request's context.
func (c *Client) SetMessageTimeout(d time.Duration) { c.answer = d }

// NotAnsweringError says that the daemon took the connection but answered
// neither the request nor a ping within MessageTimeout.
type NotAnsweringError = sockclient.NotAnsweringError

// dialTimeout bounds connecting to the socket: a live daemon's kernel
// backlog answers at once, so waiting longer only hides a wedged daemon.
const dialTimeout = 5 * time.Second

// Dial returns a client for the daemon at socketPath after checking that
// one answers there; if none does, the error says why and what to do
// (an *UnreachableError).
func Dial(socketPath string) (*Client, error) {
	c := NewClient(socketPath)
	conn, err := c.dial(context.Background())
	if err != nil {
		return nil, err
	}
	conn.Close()
	return c, nil
}

// NewClient returns a client for the daemon at socketPath without
// connecting; the first request says whether one answers.
func NewClient(socketPath string) *Client {
	c := &Client{socket: socketPath}
	c.tr = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return c.dial(ctx)
		},
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
		// Shorter than the server's IdleTimeout, so the client drops a
		// kept-alive connection before the server does and never sends a
		// POST into one that the server is closing.
		IdleConnTimeout: 30 * time.Second,
	}
	c.hc = &http.Client{Transport: c.tr}
	return c
}

// Socket is the socket the client talks to.
func (c *Client) Socket() string { return c.socket }

// Close closes the client's idle connections.
func (c *Client) Close() error {
	c.tr.CloseIdleConnections()
	return nil
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	if err := checkSocketPath(c.socket); err != nil {
		return nil, &UnreachableError{Socket: c.socket, Err: err}
	}
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		if errors.Is(err, syscall.EAGAIN) {
			// The backlog is full: the daemon has stopped accepting.
			return nil, &NotAnsweringError{Socket: c.socket, Timeout: c.answer}
		}
		return nil, unreachable(c.socket, err)
	}
	return conn, nil
}

// Do sends method path with in as its JSON body (none when in is nil) and
// decodes the answer into out (ignored when out is nil). A refusal by the
// daemon is an *Error with its status and Slurm code; a daemon that cannot
// be reached is an *UnreachableError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, method, path, in, out, false)
}

// DoGob is Do with the answer asked for in encoding/gob (see GobType):
// for answers of thousands of records, which JSON is slow to decode. A
// daemon that answers JSON anyway is understood.
func (c *Client) DoGob(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, method, path, in, out, true)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any, asGob bool) error {
	var dead atomic.Pointer[NotAnsweringError]
	if c.answer > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		stop := sockclient.Watch(c.socket, c.answer, func(na *NotAnsweringError) {
			dead.Store(na)
			cancel()
		})
		defer stop()
	}
	err := c.do1(ctx, method, path, in, out, asGob)
	if na := dead.Load(); na != nil && err != nil {
		return na
	}
	return err
}

func (c *Client) do1(ctx context.Context, method, path string, in, out any, asGob bool) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding the request for %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	// The host names nothing (the socket is the address); it reads well in
	// the daemon's logs.
	req, err := http.NewRequestWithContext(ctx, method, "http://slurmd-lite"+path, body)
	if err != nil {
		return fmt.Errorf("request %s %q: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if asGob {
		req.Header.Set("Accept", GobType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *UnreachableError
		if errors.As(err, &ue) {
			return ue
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return fmt.Errorf("talking to slurmd-lite at %s: %w", c.socket, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return readError(resp)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if resp.Header.Get("Content-Type") == GobType {
		if err := gob.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("reading slurmd-lite's answer to %s %s: %w", method, path, err)
		}
		return nil
	}
	// Lenient, unlike the server: a newer daemon may add fields that this
	// client does not know.
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reading slurmd-lite's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// readError turns a refusal into an *Error. net/http answers a few refusals
// itself (431 for headers too large) in plain text; their text is kept.
func readError(resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{}
	if err := json.Unmarshal(b, e); err != nil || e.Message == "" {
		e = &Error{Message: strings.TrimSpace(string(b))}
		if e.Message == "" {
			e.Message = resp.Status
		}
	}
	e.Status = resp.StatusCode
	return e
}

// UnreachableError says that the daemon cannot be reached, why, and what to
// do (sockclient's, which says it the same way for the commands built on it).
type UnreachableError = sockclient.UnreachableError

// NotRunning is the error every client gives when no socket is at socket:
// "slurmd-lite is not running (no socket at ...); start it with: slurmd-lite".
func NotRunning(socket string) error { return sockclient.NotRunning(socket) }

// unreachable explains a failed connect as sockclient does, naming a
// socket's owner through NSS (so LDAP users have names too).
func unreachable(socket string, err error) *UnreachableError {
	return sockclient.Unreachable(socket, err, func(uid uint32) string {
		if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil {
			return u.Username
		}
		return ""
	})
}
