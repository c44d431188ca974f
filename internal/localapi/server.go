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

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
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

	// MaxBodyBytesInFlight bounds the request bodies held at once, by all
	// connections together: a body takes its room when its headers arrive
	// (by Content-Length, before a byte of it is read; step by step as it is
	// read when it has none) and gives it back when its handler returns. A
	// body that would pass it is refused at once with 503, so that many slow
	// or stalled uploads cannot fill the daemon's memory. A quarter of it is
	// kept for bodies of at most SmallBodyBytes, so that big uploads, from
	// however many users, never crowd out ordinary requests; of the rest,
	// the big room, every user may hold one largest body (MaxBodyBytes)
	// while there is room, and the bodies beyond that, of all users, half:
	// the other half is kept for users with no more than one, so that one
	// user's stalled uploads never crowd out another user's big sbatch
	// (429 past it). Requests without a body take nothing and are never
	// refused by it.
	MaxBodyBytesInFlight int64
	// MaxUserBodyBytesInFlight bounds the bodies held at once for one user
	// (the uid the kernel names), refused with 429 past it: what stops one
	// user's uploads from taking all of MaxBodyBytesInFlight. It should be
	// at least MaxBodyBytes, or the largest body is never taken.
	MaxUserBodyBytesInFlight int64
	// SmallBodyBytes is the size up to which a body may use the part of
	// MaxBodyBytesInFlight kept for small bodies.
	SmallBodyBytes int64
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
	// What a body holds while it is read, its bytes, is what is counted;
	// decoding it takes about twice as much again, for the milliseconds the
	// decoding lasts. 128 MiB is eight of the largest bodies, or some
	// thirty sbatch requests with 4 MiB scripts, in flight at once; a
	// daemon at rest holds some 40 MB, so the bodies in flight keep it
	// under half a gigabyte even while they are all decoded.
	MaxBodyBytesInFlight: 128 << 20,
	// Four of the largest bodies, or a dozen sbatch requests with 4 MiB
	// scripts, from one user at once; half the total, so that a second user
	// always finds room. Big bodies are bounded tighter still: past the
	// first 16 MiB, those of all users share half the big room, 48 MiB.
	MaxUserBodyBytesInFlight: 64 << 20,
	// An ordinary job script is a few KiB; 1 MiB leaves room for big
	// environments (--export=ALL) and long scripts.
	SmallBodyBytes: 1 << 20,
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
	if l.MaxBodyBytesInFlight > 0 {
		d.MaxBodyBytesInFlight = l.MaxBodyBytesInFlight
	}
	if l.MaxUserBodyBytesInFlight > 0 {
		d.MaxUserBodyBytesInFlight = l.MaxUserBodyBytesInFlight
	}
	if l.SmallBodyBytes > 0 {
		d.SmallBodyBytes = l.SmallBodyBytes
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

	// peerOf says who is on a connection; nil means the kernel (peerCred).
	// Tests set it to stand in for other users.
	peerOf func(net.Conn) (peer, error)

	mu     sync.Mutex
	hs     *http.Server
	budget *budget
	closed bool

	callState // Call's compiled table (inprocess.go)
}

// BodyMemory says what request bodies hold now, and have held at most,
// against Limits.MaxBodyBytesInFlight; zeros before Serve.
func (s *Server) BodyMemory() BodyMemory {
	s.mu.Lock()
	b := s.budget
	s.mu.Unlock()
	if b == nil {
		return BodyMemory{Limit: s.Limits.withDefaults().MaxBodyBytesInFlight}
	}
	return b.stats()
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
		peerOf: s.peerOf,
	}
	d.budget = newBudget(d.limits)
	if d.peerOf == nil {
		d.peerOf = peerCred
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
	s.budget = d.budget
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
	table  *table
	users  Users
	access Access
	limits Limits
	budget *budget
	peerOf func(net.Conn) (peer, error)
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
	cs.peer, cs.peerErr = d.peerOf(c)
	return context.WithValue(ctx, connKey{}, cs)
}

// identify says who is on cs, or why they are refused. The access check
// comes before the user database, so a refused caller costs no lookup.
func (d *dispatcher) identify(cs *connState) (Identity, *Error) {
	cs.once.Do(func() {
		p := cs.peer
		switch {
		case cs.peerErr != nil:
			cs.refusal = &Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied,
				Message: fmt.Sprintf("cannot tell who is calling: %v", cs.peerErr)}
		case !d.access.allows(p.uid):
			cs.refusal = &Error{Status: http.StatusForbidden, Code: slurm.ErrAccessDenied,
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
		return Identity{}, &Error{Status: http.StatusForbidden, Code: slurm.ErrUserIDMissing,
			Message: fmt.Sprintf("uid %d has no name in the user database (%s): %v", p.uid, UserDatabase, err)}
	}
	groups, err := d.users.GroupIDs(name, p.gid)
	if err != nil {
		return Identity{}, &Error{Status: http.StatusForbidden, Code: slurm.ErrUserIDMissing,
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
	if !d.table.answers(r) {
		allow := d.table.allowed(r)
		if len(allow) == 0 {
			writeError(w, Errorf(http.StatusNotFound, "slurmd-lite has no API path %q; is it older than this command?", r.URL.Path))
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, Errorf(http.StatusMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
		return
	}
	// The body's room is held until the handler returns: what it decoded
	// from the body lives as long.
	hold := d.budget.hold(id.UID, fmt.Sprintf("%s (uid %d)", id.User, id.UID))
	defer hold.release()
	body, err := d.readBody(w, r, hold)
	if err != nil {
		// The rest of an unread body would be taken for the next request.
		w.Header().Set("Connection", "close")
		if err.Status == http.StatusTooManyRequests || err.Status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
			d.logf("refused %s %s of uid %d (pid %d): %s", r.Method, r.URL.Path, id.UID, id.PID, err.Message)
		}
		writeError(w, err)
		return
	}
	r = r.WithContext(WithCaller(r.Context(), id))
	r.Body = &heldBody{Reader: bytes.NewReader(body), b: body}
	r.ContentLength = int64(len(body))
	// The mux finds the route again, and sets its PathValues.
	d.table.mux.ServeHTTP(w, r)
}

// heldBody is a request body already read in full; decodeBody decodes its
// bytes where they lie rather than copying them again.
type heldBody struct {
	*bytes.Reader
	b []byte
}

func (*heldBody) Close() error { return nil }

// readBody reads the whole body before any handler runs, so that a body too
// large, too slow or cut short is refused without touching state, and takes
// its room in the budget: all of it at once by its Content-Length, before
// any of it is read (so a body over the budget is refused without waiting
// for it), or step by step as a body without a length arrives. Its read
// deadline is lifted before the handler starts: a read that times out while
// a handler runs ends the request's context, and a yield runs for minutes.
// (net/http lifts it too when the body ends; this does not rely on that.)
func (d *dispatcher) readBody(w http.ResponseWriter, r *http.Request, h *hold) ([]byte, *Error) {
	max := d.limits.MaxBodyBytes
	if r.ContentLength > max {
		return nil, tooLarge(max)
	}
	if r.ContentLength >= 0 {
		if e := h.grow(r.ContentLength); e != nil {
			return nil, e
		}
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(clock.After(d.limits.BodyTimeout).ForConn()); err != nil {
		return nil, Errorf(http.StatusInternalServerError, "setting the body deadline: %v", err)
	}
	body, err := readAccounted(http.MaxBytesReader(w, r.Body, max), r.ContentLength, max, h)
	if derr := rc.SetReadDeadline(time.Time{}); err == nil && derr != nil {
		err = derr
	}
	var mbe *http.MaxBytesError
	var e *Error
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &e):
		return nil, e
	case errors.As(err, &mbe):
		return nil, tooLarge(max)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, Errorf(http.StatusRequestTimeout, "the request body did not arrive within %v", d.limits.BodyTimeout)
	default:
		return nil, Errorf(http.StatusBadRequest, "reading the request body: %v", err)
	}
}

// chunkStep is the first room a body without a length takes; it doubles
// from there.
const chunkStep = 32 << 10

// readAccounted reads body into memory that h has room for. A body of known
// length (n >= 0, its room already taken) is read into a buffer of exactly
// that size, never grown; one without is read into a buffer that doubles,
// up to limit, each step taken from the budget first.
func readAccounted(body io.Reader, n, limit int64, h *hold) ([]byte, error) {
	if n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= limit {
				// Full: one byte more is over the limit, which the
				// MaxBytesReader says.
				var one [1]byte
				for {
					k, err := body.Read(one[:])
					if err == io.EOF {
						return buf, nil
					}
					if err != nil {
						return nil, err
					}
					if k > 0 {
						return nil, &http.MaxBytesError{Limit: limit}
					}
				}
			}
			size := min(limit, int64(max(2*cap(buf), chunkStep)))
			if e := h.grow(size); e != nil {
				return nil, e
			}
			grown := make([]byte, len(buf), size)
			copy(grown, buf)
			buf = grown
		}
		k, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
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
