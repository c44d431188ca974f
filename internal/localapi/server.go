package localapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Limits bound what one request may cost the daemon. A zero field takes its
// value from DefaultLimits.
type Limits struct {
	// MaxBodyBytes is the largest request body; past it the answer is 413
	// and no handler runs. Job scripts travel in bodies, and Slurm takes
	// scripts up to max_script_size (4 MiB by default), a limit the submit
	// handler checks with Slurm's words. In JSON a script grows (every
	// newline, quote and tab is escaped in two bytes), and the environment
	// comes with it, so the body's limit is four times the script's: a
	// ceiling against a client that would fill the daemon's memory, not a
	// rule about jobs.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line and headers (431 past it).
	MaxHeaderBytes int
	// ReadHeaderTimeout is how long a client has to send its headers once
	// connected, so that clients which connect and stall tie up nothing.
	ReadHeaderTimeout time.Duration
	// BodyTimeout is how long a client has to send its body once its
	// headers are in (408 past it).
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no request in it.
	IdleTimeout time.Duration
}

// DefaultLimits are the limits of a Server that sets none. There is no limit
// on how long a handler runs: a yield waits out a job's grace time. Handlers
// watch their context, which ends when the client goes away or the server
// is closed.
var DefaultLimits = Limits{
	MaxBodyBytes:      16 << 20,
	MaxHeaderBytes:    64 << 10,
	ReadHeaderTimeout: 10 * time.Second,
	BodyTimeout:       30 * time.Second,
	IdleTimeout:       2 * time.Minute,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBodyBytes > 0 {
		d.MaxBodyBytes = l.MaxBodyBytes
	}
	if l.MaxHeaderBytes > 0 {
		d.MaxHeaderBytes = l.MaxHeaderBytes
	}
	if l.ReadHeaderTimeout > 0 {
		d.ReadHeaderTimeout = l.ReadHeaderTimeout
	}
	if l.BodyTimeout > 0 {
		d.BodyTimeout = l.BodyTimeout
	}
	if l.IdleTimeout > 0 {
		d.IdleTimeout = l.IdleTimeout
	}
	return d
}

// Server answers the local API on a Listener: it identifies every caller,
// refuses those its Access does not serve, routes by the handler table and
// enforces the limits before any handler runs.
type Server struct {
	// Routes is the handler table.
	Routes Routes
	// Users looks up callers' names and groups; nil means SystemUsers.
	Users Users
	// Limits bounds requests; the zero value means DefaultLimits.
	Limits Limits
	// Logf receives refusals and connection errors; nil discards them.
	Logf func(format string, args ...any)

	mu     sync.Mutex
	hs     *http.Server
	closed bool
}

// Serve answers connections on ln until Shutdown or Close, then returns nil;
// any other return is an error, such as a bad handler table. Like
// http.Server.Serve, it closes ln when it returns.
func (s *Server) Serve(ln *Listener) error {
	t, err := compile(s.Routes)
	if err != nil {
		ln.Close()
		return fmt.Errorf("handler table: %w", err)
	}
	d := &dispatcher{
		table:  t,
		users:  s.Users,
		access: ln.Access(),
		limits: s.Limits.withDefaults(),
		logf:   s.Logf,
	}
	if d.users == nil {
		d.users = SystemUsers{}
	}
	if d.logf == nil {
		d.logf = func(string, ...any) {}
	}
	if !d.access.Shared {
		d.owner = d.describe(d.access.Owner)
	}
	hs := &http.Server{
		Handler:           d,
		ConnContext:       d.connContext,
		ReadHeaderTimeout: d.limits.ReadHeaderTimeout,
		MaxHeaderBytes:    d.limits.MaxHeaderBytes,
		IdleTimeout:       d.limits.IdleTimeout,
		ErrorLog:          log.New(logWriter(d.logf), "", 0),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.hs = hs
	s.mu.Unlock()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting (the socket is removed and the lock released at
// once, so a new daemon may start), then waits for the requests in progress
// to be answered, or for ctx to end. Idle connections are closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	hs := s.hs
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	return hs.Shutdown(ctx)
}

// Close stops at once: the socket and every connection are closed, and the
// contexts of requests in progress end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	hs := s.hs
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	return hs.Close()
}

type logWriter func(format string, args ...any)

func (f logWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// dispatcher is the server's http.Handler: identity, access, route, limits,
// then the route's handler.
type dispatcher struct {
	table  table
	users  Users
	access Access
	limits Limits
	logf   func(format string, args ...any)
	owner  string // the served user, as refusals name them
}

type connKey struct{}

// connState is what the server knows about one connection. The kernel's
// answer is read when the connection is accepted; the user database is asked
// once, by the connection's first request, because ConnContext runs in the
// accept loop and a slow LDAP server there would stall every client.
type connState struct {
	peer    peer
	peerErr error

	once    sync.Once
	id      Identity
	refusal *Error
}

func (d *dispatcher) connContext(ctx context.Context, c net.Conn) context.Context {
	cs := &connState{}
	cs.peer, cs.peerErr = peerCred(c)
	return context.WithValue(ctx, connKey{}, cs)
}

// identify says who is on cs, or why they are refused. The access check
// comes before the user database, so a refused caller costs no lookup.
func (d *dispatcher) identify(cs *connState) (Identity, *Error) {
	cs.once.Do(func() {
		p := cs.peer
		switch {
		case cs.peerErr != nil:
			cs.refusal = &Error{Status: http.StatusForbidden, Code: CodeAccessDenied,
				Message: fmt.Sprintf("cannot tell who is calling: %v", cs.peerErr)}
		case !d.access.allows(p.uid):
			cs.refusal = &Error{Status: http.StatusForbidden, Code: CodeAccessDenied,
				Message: fmt.Sprintf("this slurmd-lite runs as %s and serves only that user; uid %d may not use it", d.owner, p.uid)}
		default:
			cs.id, cs.refusal = d.lookup(p)
		}
		if cs.refusal != nil {
			d.logf("refused uid %d (pid %d): %s", p.uid, p.pid, cs.refusal.Message)
		}
	})
	return cs.id, cs.refusal
}

func (d *dispatcher) lookup(p peer) (Identity, *Error) {
	name, err := d.users.LookupUID(p.uid)
	if err != nil {
		return Identity{}, &Error{Status: http.StatusForbidden, Code: CodeUserIDMissing,
			Message: fmt.Sprintf("uid %d has no name in the user database (%s): %v", p.uid, UserDatabase, err)}
	}
	groups, err := d.users.GroupIDs(name, p.gid)
	if err != nil {
		return Identity{}, &Error{Status: http.StatusForbidden, Code: CodeUserIDMissing,
			Message: fmt.Sprintf("listing the groups of user %q: %v", name, err)}
	}
	return Identity{UID: p.uid, GID: p.gid, PID: p.pid, User: name, Groups: groups}, nil
}

// describe names a uid for messages: "alice (uid 1000)", or "uid 1000" when
// the database does not know it.
func (d *dispatcher) describe(uid uint32) string {
	if name, err := d.users.LookupUID(uid); err == nil {
		return fmt.Sprintf("%s (uid %d)", name, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func (d *dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cs, _ := r.Context().Value(connKey{}).(*connState)
	if cs == nil {
		writeError(w, Errorf(http.StatusInternalServerError, "request outside a local API connection"))
		return
	}
	id, refusal := d.identify(cs)
	if refusal != nil {
		w.Header().Set("Connection", "close")
		writeError(w, refusal)
		return
	}
	h, values, allow, found := d.table.match(r.Method, r.URL.EscapedPath())
	if !found {
		writeError(w, Errorf(http.StatusNotFound, "slurmd-lite has no API path %q; is it older than this command?", r.URL.Path))
		return
	}
	if h == nil {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, Errorf(http.StatusMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	body, err := d.readBody(w, r)
	if err != nil {
		// The rest of an unread body would be taken for the next request.
		w.Header().Set("Connection", "close")
		writeError(w, err)
		return
	}
	r = r.WithContext(WithCaller(r.Context(), id))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	for k, v := range values {
		r.SetPathValue(k, v)
	}
	h.ServeHTTP(w, r)
}

// readBody reads the whole body before any handler runs, so that a body too
// large, too slow or cut short is refused without touching state. Its read
// deadline is lifted before the handler starts: a read that times out while
// a handler runs ends the request's context, and a yield runs for minutes.
// (net/http lifts it too when the body ends; this does not rely on that.)
func (d *dispatcher) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	max := d.limits.MaxBodyBytes
	if r.ContentLength > max {
		return nil, tooLarge(max)
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(d.limits.BodyTimeout)); err != nil {
		return nil, Errorf(http.StatusInternalServerError, "setting the body deadline: %v", err)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if derr := rc.SetReadDeadline(time.Time{}); err == nil && derr != nil {
		err = derr
	}
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &mbe):
		return nil, tooLarge(max)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, Errorf(http.StatusRequestTimeout, "the request body did not arrive within %v", d.limits.BodyTimeout)
	default:
		return nil, Errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
}

func tooLarge(max int64) *Error {
	return Errorf(http.StatusRequestEntityTooLarge, "the request body is larger than the limit of %s", sizeText(max))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
