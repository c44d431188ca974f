package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBudgetBounds(t *testing.T) {
	const MiB = 1 << 20
	b := newBudget(Limits{MaxBodyBytesInFlight: 128 * MiB, MaxUserBodyBytesInFlight: 64 * MiB, SmallBodyBytes: MiB})
	take := func(uid uint32, n int64) (*hold, int) {
		h := b.hold(uid, fmt.Sprintf("user%d (uid %d)", uid, uid))
		if e := h.grow(n); e != nil {
			return h, e.Status
		}
		return h, 0
	}
	// One user: three bodies of 15 MiB fit in the half of the big room
	// (48 of 96 MiB) that bodies past a user's share (16 MiB, the largest
	// body) may take; a fourth does not, though within her own 64 MiB.
	var alice []*hold
	for i := range 5 {
		h, status := take(1001, 15*MiB)
		want := 0
		if i >= 3 {
			want = http.StatusTooManyRequests
		}
		if status != want {
			t.Fatalf("alice's body %d of 15 MiB: status %d, want %d", i+1, status, want)
		}
		alice = append(alice, h)
	}
	// Alice's own small body still fits beside them.
	if _, status := take(1001, 64<<10); status != 0 {
		t.Errorf("alice's small body beside her uploads: status %d, want 0", status)
	}
	// Three other users each get a big body in the half kept for them ...
	bob, status := take(1002, 15*MiB)
	if status != 0 {
		t.Fatalf("bob's first body: %d", status)
	}
	// ... but not a second one: that would be past his share.
	if _, status := take(1002, 15*MiB); status != http.StatusTooManyRequests {
		t.Errorf("bob's second body beside alice's: status %d, want 429", status)
	}
	for _, uid := range []uint32{1003, 1004} {
		if _, status := take(uid, 15*MiB); status != 0 {
			t.Fatalf("uid %d's first body: %d", uid, status)
		}
	}
	// The big room (96 MiB) is then full.
	if _, status := take(1006, 15*MiB); status != http.StatusServiceUnavailable {
		t.Errorf("a body past the big bodies' part: status %d, want 503", status)
	}
	// ... and small ones still find the reserve.
	for uid := uint32(2000); uid < 2010; uid++ {
		if _, status := take(uid, MiB); status != 0 {
			t.Fatalf("uid %d's 1 MiB body beside big uploads: status %d, want 0", uid, status)
		}
	}
	// A body without a length that grows past the small size moves to the
	// big part, and is refused there.
	h := b.hold(1005, "dave (uid 1005)")
	if e := h.grow(512 << 10); e != nil {
		t.Fatalf("dave's first step: %v", e)
	}
	if e := h.grow(7 * MiB); e == nil || e.Status != http.StatusServiceUnavailable {
		t.Errorf("dave's body growing past 1 MiB among full big bodies: %v, want 503", e)
	} else if want := "slurmd-lite is busy: it holds 100.6 MiB of requests in flight from all users, and this one of 7.0 MiB would pass its limit of 128 MiB (96 MiB for requests over 1 MiB); try again in a moment"; e.Message != want {
		t.Errorf("message:\n%s\nwant\n%s", e.Message, want)
	}
	h.release()
	if st := b.stats(); st.InFlight != 6*15*MiB+64<<10+10*MiB || st.Peak > 128*MiB {
		t.Errorf("stats %+v", st)
	}
	// Everything given back is free again, twice released or not.
	for _, h := range alice {
		h.release()
		h.release()
	}
	bob.release()
	if _, status := take(1006, 15*MiB); status != 0 {
		t.Errorf("a body after others were released: status %d, want 0", status)
	}
	if got := b.users[1001]; got != 64<<10 {
		t.Errorf("alice holds %d after releasing her uploads, want %d", got, 64<<10)
	}
	if got, ok := b.bigUsers[1001]; ok {
		t.Errorf("alice holds %d of big bodies after releasing them all", got)
	}
}

// peerQueue hands out the uid of each new connection in the order they are
// dialled, standing in for other users; when it is empty the kernel says.
type peerQueue struct {
	mu   sync.Mutex
	uids []uint32
}

func (q *peerQueue) push(uid uint32) {
	q.mu.Lock()
	q.uids = append(q.uids, uid)
	q.mu.Unlock()
}

func (q *peerQueue) peerOf(c net.Conn) (peer, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.uids) == 0 {
		return peerCred(c)
	}
	uid := q.uids[0]
	q.uids = q.uids[1:]
	return peer{uid: uid, gid: uid, pid: 1}, nil
}

func withPeers(q *peerQueue) serverOpt { return func(s *Server, _ *Access) { s.peerOf = q.peerOf } }

// manyUsers is a user database of uids 1000 to 1099, named u1000 and on.
func manyUsers() fakeUsers {
	u := fakeUsers{names: map[uint32]string{uint32(os.Getuid()): "me"}, groups: map[string][]uint32{"me": nil}}
	for uid := uint32(1000); uid < 1100; uid++ {
		name := "u" + strconv.Itoa(int(uid))
		u.names[uid], u.groups[name] = name, nil
	}
	return u
}

// dialAs connects to s as uid, which must be the next uid q hands out.
func dialAs(t *testing.T, s *server, q *peerQueue, uid uint32) net.Conn {
	t.Helper()
	q.push(uid)
	c, err := net.Dial("unix", s.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The identity is taken when the server accepts; wait for that, so the
	// next dial's uid is not taken by this one.
	for deadline := time.Now().Add(5 * time.Second); ; {
		q.mu.Lock()
		n := len(q.uids)
		q.mu.Unlock()
		if n == 0 {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not accept a connection in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// answer reads one answer from c, the refusal decoded.
func answer(t *testing.T, c net.Conn) (int, wireError) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, wireError{}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("a refusal with Content-Type %q, want application/json: %s", ct, b)
	}
	return resp.StatusCode, decodeWire(t, string(b))
}

// answers reads the answers that come on conns within wait, at once on all
// of them: the refusals by status, and the connections that got none (the
// uploads admitted, still waiting for their bodies).
func answers(t *testing.T, conns []net.Conn, wait time.Duration) (map[int][]wireError, []net.Conn) {
	t.Helper()
	type result struct {
		c      net.Conn
		status int
		e      wireError
	}
	results := make(chan result, len(conns))
	for _, c := range conns {
		go func() {
			c.SetReadDeadline(time.Now().Add(wait))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				results <- result{c: c}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			r := result{c: c, status: resp.StatusCode}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				r.e.Error = fmt.Sprintf("Content-Type %q, want application/json: %s", ct, b)
			} else if err := json.Unmarshal(b, &r.e); err != nil {
				r.e.Error = fmt.Sprintf("body %q: %v", b, err)
			}
			results <- r
		}()
	}
	refused := map[int][]wireError{}
	var waiting []net.Conn
	for range conns {
		r := <-results
		if r.status == 0 {
			waiting = append(waiting, r.c)
		} else {
			refused[r.status] = append(refused[r.status], r.e)
		}
	}
	return refused, waiting
}

// slowUploads starts, on each of conns, a POST that declares size bytes and
// sends all of it but the last byte, as a client that stalls before the
// end: the most a body can hold. It returns when every write is done or
// refused.
func slowUploads(t *testing.T, conns []net.Conn, size int) {
	t.Helper()
	head := fmt.Sprintf("POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size)
	body := []byte(`{"name": "` + strings.Repeat("x", size-len(`{"name": ""}`)))
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			// A refused upload finds its connection closed: that is the
			// refusal, read later.
			io.WriteString(c, head)
			c.Write(body[:size-1])
		})
	}
	wg.Wait()
}

// waitRefused waits until s has refused n requests for the budget.
func waitRefused(t *testing.T, s *server, n int64) BodyMemory {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		m := s.srv.BodyMemory()
		if m.Refused >= n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d refusals after 10s, want %d; %+v", m.Refused, n, m)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rss is the process's resident memory from /proc, 0 where there is none.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// The attack: 40 connections each declare a 15 MiB body and send it
// slowly. Before the budget, each took its whole body (and twice that while
// io.ReadAll grew it), and the daemon went from 37 MB to 1.17 GB.
func TestSlowUploadsFromOneUserAreBounded(t *testing.T) {
	q := &peerQueue{}
	s := startServer(t, withUsers(manyUsers()), withAccess(Access{Shared: true}), withPeers(q))
	heap0, rss0 := heapInUse(), rss()

	const n, size = 40, 15 << 20
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dialAs(t, s, q, 1001)
	}
	slowUploads(t, conns, size)
	// Three fit in the half of the big room that one user may take past
	// the largest body (48 of 96 MiB); the others are refused at once.
	waitRefused(t, s, n-3)
	refused, admitted := answers(t, conns, time.Second)
	want := map[int][]wireError{http.StatusTooManyRequests: slices.Repeat([]wireError{{Error: alicesRefusal}}, n-3)}
	if diff := cmp.Diff(want, refused); diff != "" || len(admitted) != 3 {
		t.Errorf("%d uploads still reading, want 3; refusals (-want +got):\n%s", len(admitted), diff)
	}

	// Meanwhile the same user's squeue, another user's small sbatch and
	// another user's sbatch of a 4 MiB script are answered.
	squeue := dialAs(t, s, q, 1001)
	io.WriteString(squeue, "GET /v1/jobs/7 HTTP/1.1\r\nHost: x\r\n\r\n")
	if status, e := answer(t, squeue); status != http.StatusOK {
		t.Errorf("the uploader's own squeue: %d %+v", status, e)
	}
	for _, body := range []string{`{"name": "small"}`, `{"name": "` + strings.Repeat("#SBATCH --comment=x\\n", 4<<20/20) + `"}`} {
		c := dialAs(t, s, q, 1002)
		fmt.Fprintf(c, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		if status, e := answer(t, c); status != http.StatusOK {
			t.Errorf("another user's request of %d bytes: %d %+v", len(body), status, e)
		}
	}

	heap1, rss1 := heapInUse(), rss()
	m := s.srv.BodyMemory()
	t.Logf("40 uploads of 15 MiB from one user: %d refused; bodies held %.1f MiB (peak %.1f MiB, limit %d MiB); heap in use %.1f -> %.1f MiB; process RSS %.1f -> %.1f MiB",
		m.Refused, mib(m.InFlight), mib(m.Peak), m.Limit>>20, mib(int64(heap0)), mib(int64(heap1)), mib(rss0), mib(rss1))
	if m.InFlight != 3*size {
		t.Errorf("%d bytes held, want the three admitted bodies' %d", m.InFlight, 3*size)
	}
	if m.Peak > m.Limit || m.Peak > DefaultLimits.MaxUserBodyBytesInFlight+5<<20 {
		t.Errorf("peak %d bytes held, over the bounds", m.Peak)
	}
	if grew := int64(heap1) - int64(heap0); grew > 80<<20 {
		t.Errorf("the heap grew by %.1f MiB, want under 80 MiB (the 45 MiB admitted)", mib(grew))
	}

	// When the uploaders go, their room is given back.
	for _, c := range admitted {
		c.Close()
	}
	waitHeld(t, s, 0)
}

// alicesRefusal is the answer to one user's fourth stalled 15 MiB upload.
const alicesRefusal = "u1001 (uid 1001) already has 45.0 MiB of requests over 1 MiB in flight; past 16 MiB of them, one user's share, such requests from all users may hold 48 MiB together (they hold 45.0 MiB), the rest being kept for other users' large requests, and this one of 15.0 MiB would pass that; wait for yours to be answered, then try again"

// One user's stalled large uploads do not push other users' large
// submissions to 503 (issue 23 item 6): while alice holds all she may, bob
// and carol each stall a 15 MiB upload of their own beside hers and dave's
// 15 MiB sbatch is answered; none of them may take a second one there,
// which keeps the room for the next user.
func TestOtherUsersLargeBodiesPassBesideOneUsersStalledOnes(t *testing.T) {
	q := &peerQueue{}
	s := startServer(t, withUsers(manyUsers()), withAccess(Access{Shared: true}), withPeers(q))
	const n, size = 40, 15 << 20
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dialAs(t, s, q, 1001)
	}
	slowUploads(t, conns, size)
	waitRefused(t, s, n-3)
	waitHeld(t, s, 3*size)

	// bob and carol stall theirs too: both taken.
	others := []net.Conn{dialAs(t, s, q, 1002), dialAs(t, s, q, 1003)}
	slowUploads(t, others, size)
	waitHeld(t, s, 5*size)
	// dave's is answered.
	body := `{"name": "` + strings.Repeat("#SBATCH --comment=x\\n", (size-64)/20) + `"}`
	c := dialAs(t, s, q, 1004)
	fmt.Fprintf(c, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if status, e := answer(t, c); status != http.StatusOK {
		t.Errorf("dave's %.1f MiB request beside alice's, bob's and carol's stalled ones: %d %+v", mib(int64(len(body))), status, e)
	}
	// bob's second is refused: past his share, where alice already is.
	bob2 := dialAs(t, s, q, 1002)
	slowUploads(t, []net.Conn{bob2}, size)
	if status, e := answer(t, bob2); status != http.StatusTooManyRequests ||
		!strings.HasPrefix(e.Error, "u1002 (uid 1002) already has 15.0 MiB of requests over 1 MiB in flight; past 16 MiB of them, one user's share,") {
		t.Errorf("bob's second stalled upload: %d %+v, want 429 for his share", status, e)
	}
	m := s.srv.BodyMemory()
	t.Logf("alice's 40 stalled uploads of 15 MiB (3 taken), bob's and carol's one each, dave's answered: bodies held %.1f MiB (peak %.1f MiB, limit %d MiB), %d refused",
		mib(m.InFlight), mib(m.Peak), m.Limit>>20, m.Refused)
	if m.Peak > m.Limit {
		t.Errorf("peak %d bytes held, over the limit %d", m.Peak, m.Limit)
	}
	for _, c := range append(conns, others...) {
		c.Close()
	}
	waitHeld(t, s, 0)
}

// Many users, each within their own bound, together meet the total bound;
// ordinary requests from anyone still pass.
func TestSlowUploadsFromManyUsersAreBounded(t *testing.T) {
	q := &peerQueue{}
	s := startServer(t, withUsers(manyUsers()), withAccess(Access{Shared: true}), withPeers(q))
	heap0 := heapInUse()
	const n, size = 40, 15 << 20
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = dialAs(t, s, q, uint32(1010+i))
	}
	slowUploads(t, conns, size)
	// The big bodies' part, 96 MiB, takes six of them.
	waitRefused(t, s, n-6)
	refused, admitted := answers(t, conns, time.Second)
	want := map[int][]wireError{http.StatusServiceUnavailable: slices.Repeat([]wireError{{
		Error: "slurmd-lite is busy: it holds 90.0 MiB of requests in flight from all users, and this one of 15.0 MiB would pass its limit of 128 MiB (96 MiB for requests over 1 MiB); try again in a moment",
	}}, n-6)}
	if diff := cmp.Diff(want, refused); diff != "" || len(admitted) != 6 {
		t.Errorf("%d uploads still reading, want 6; refusals (-want +got):\n%s", len(admitted), diff)
	}
	// Small requests from uploaders and from others still pass, many at once.
	var cs []net.Conn
	for i := range 20 {
		c := dialAs(t, s, q, uint32(1000+i%12))
		body := `{"name": "` + strings.Repeat("x", 256<<10) + `"}`
		fmt.Fprintf(c, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		cs = append(cs, c)
	}
	for i, c := range cs {
		if status, e := answer(t, c); status != http.StatusOK {
			t.Errorf("small request %d beside 40 uploads: %d %+v", i, status, e)
		}
	}
	m := s.srv.BodyMemory()
	heap1 := heapInUse()
	t.Logf("40 uploads of 15 MiB from 40 users: %d refused; bodies held %.1f MiB (peak %.1f MiB, limit %d MiB); heap in use %.1f -> %.1f MiB",
		m.Refused, mib(m.InFlight), mib(m.Peak), m.Limit>>20, mib(int64(heap0)), mib(int64(heap1)))
	if m.Peak > m.Limit {
		t.Errorf("peak %d bytes held, over the limit %d", m.Peak, m.Limit)
	}
	if grew := int64(heap1) - int64(heap0); grew > int64(m.Limit) {
		t.Errorf("the heap grew by %.1f MiB, over the %d MiB bound", mib(grew), m.Limit>>20)
	}
	for _, c := range admitted {
		c.Close()
	}
	waitHeld(t, s, 0)
}

func TestChunkedUploadsTakeRoomAsTheyGrow(t *testing.T) {
	q := &peerQueue{}
	s := startServer(t, withUsers(manyUsers()), withAccess(Access{Shared: true}), withPeers(q),
		withLimits(Limits{MaxBodyBytes: 2 << 20, MaxUserBodyBytesInFlight: 1 << 20, MaxBodyBytesInFlight: 4 << 20, SmallBodyBytes: 64 << 10}))
	// A body without a length, sent slowly, takes room only as it comes.
	c := dialAs(t, s, q, 1001)
	io.WriteString(c, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	fmt.Fprintf(c, "%x\r\n{\"name\": \"%s\r\n", 10+100<<10, strings.Repeat("x", 100<<10))
	waitHeld(t, s, 128<<10)
	// It passes its user's bound as it grows, and is told so.
	chunk := strings.Repeat("y", 512<<10)
	for range 2 {
		fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk)
	}
	status, e := answer(t, c)
	if status != http.StatusTooManyRequests || !strings.Contains(e.Error, "the limit of 1 MiB that one user may have in flight") {
		t.Errorf("a chunked body past its user's bound: %d %+v", status, e)
	}
	waitHeld(t, s, 0)
	// One that ends within the bounds is answered.
	c = dialAs(t, s, q, 1001)
	io.WriteString(c, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	fmt.Fprintf(c, "%x\r\n{\"name\": \"%s\"}\r\n0\r\n\r\n", 12+300<<10, strings.Repeat("x", 300<<10))
	if status, e := answer(t, c); status != http.StatusOK {
		t.Errorf("a chunked body within the bounds: %d %+v", status, e)
	}
	waitHeld(t, s, 0)
}

// A body held past its deadline is refused and its room given back.
func TestStalledUploadsGiveTheirRoomBack(t *testing.T) {
	q := &peerQueue{}
	s := startServer(t, withUsers(manyUsers()), withAccess(Access{Shared: true}), withPeers(q),
		withLimits(Limits{BodyTimeout: 300 * time.Millisecond}))
	conns := []net.Conn{dialAs(t, s, q, 1001), dialAs(t, s, q, 1001)}
	slowUploads(t, conns, 15<<20)
	if m := s.srv.BodyMemory(); m.Peak != 30<<20 {
		t.Errorf("peak %d bytes held, want the two bodies' %d", m.Peak, 30<<20)
	}
	for _, c := range conns {
		if status, _ := answer(t, c); status != http.StatusRequestTimeout {
			t.Errorf("a stalled upload: status %d, want 408", status)
		}
	}
	waitHeld(t, s, 0)
}

func waitHeld(t *testing.T, s *server, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		m := s.srv.BodyMemory()
		if m.InFlight == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes held after 10s, want %d", m.InFlight, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// BenchmarkSmallRequestsBesideUploads is the round trip of an ordinary
// request while 40 uploads of 15 MiB stall: what the budget costs the
// traffic it protects.
func BenchmarkSmallRequestsBesideUploads(b *testing.B) {
	s := startServerAt(b, b.TempDir()+"/s.sock")
	for range 40 {
		c, err := net.Dial("unix", s.sock)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{\"name\": \"", 15<<20)
	}
	c := s.client(b)
	ctx := context.Background()
	for b.Loop() {
		var out echoOut
		if err := c.Do(ctx, "POST", "/v1/echo", echoIn{Name: "train"}, &out); err != nil {
			b.Fatal(err)
		}
	}
	m := s.srv.BodyMemory()
	b.ReportMetric(mib(m.Peak), "peak-MiB-held")
}
