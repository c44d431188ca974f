package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/jobrec"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
)

// The webhooks' retries and timeouts run on Go's timers, which in a
// synctest bubble move only when every goroutine waits: a test of a
// backoff of seconds takes no time and sees each try at its exact moment.
// The hooks answer in memory (Options.Client), since a real socket is not
// something a bubble can wait on.

// memHook is a webhook server in memory: answer says what each try gets
// (by its number, from 1), and it notes when each try came, on the
// bubble's clock, from start.
type memHook struct {
	start  time.Time
	answer func(try int, r *http.Request) (*http.Response, error)

	mu     sync.Mutex
	at     []time.Duration
	bodies []Body
}

func (h *memHook) RoundTrip(r *http.Request) (*http.Response, error) {
	// As net/http's transport, nothing is sent on a context already done
	// (a closed Notifier's worker may still pick up a queued event).
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.at = append(h.at, time.Since(h.start))
	try := len(h.at)
	h.mu.Unlock()
	return h.answer(try, r)
}

func (h *memHook) client() *http.Client { return &http.Client{Transport: h} }

func (h *memHook) tries() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.at...)
}

// status is an answer with that status and no body.
func status(code int, r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

// never is a hook that takes the request and never answers: only the
// client giving up ends it.
func never(_ int, r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func seconds(s ...float64) []time.Duration {
	var d []time.Duration
	for _, x := range s {
		d = append(d, time.Duration(x*float64(time.Second)))
	}
	return d
}

// A hook that refuses every try is tried Attempts times, the waits
// between them Backoff and doubling: with the defaults (5 tries, 1 s) at
// 0, 1, 3, 7 and 15 s exactly; then given up, with one error in the log,
// and Close, given a minute, returns as soon as that is over, dropping
// nothing.
func TestWebhookBacksOffExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hook := &memHook{start: time.Now(), answer: func(_ int, r *http.Request) (*http.Response, error) {
			return status(http.StatusServiceUnavailable, r)
		}}
		var logged logBuffer
		n := Start(Options{Client: hook.client(), Log: newLog(&logged), Hooks: []Hook{{URL: "http://hook/", Events: []string{All}}}})
		n.Send(Event{Kind: End, Job: job()})
		if dropped := n.Close(time.Minute); dropped != 0 {
			t.Errorf("Close dropped %d, want 0 (the event was given up, not cut short)", dropped)
		}
		if took := time.Since(hook.start); took != 15*time.Second {
			t.Errorf("Close returned after %v, want 15s: as soon as the last try failed", took)
		}
		if got, want := hook.tries(), seconds(0, 1, 3, 7, 15); !slices.Equal(got, want) {
			t.Errorf("tries at %v, want %v", got, want)
		}
		log := logged.String()
		if strings.Count(log, "webhook failed, trying again") != 4 || strings.Count(log, "giving up") != 1 ||
			!strings.Contains(log, "in=4s") {
			t.Errorf("log: want 4 retries (the third in 4s) and one giving up:\n%s", log)
		}
	})
}

// A hook that never answers is cut off at Timeout on each try, and the
// backoff counts from then: tries at 0 and 10 s + 1 s, given up at 21 s.
func TestWebhookTryTimesOutExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hook := &memHook{start: time.Now(), answer: never}
		n := Start(Options{Client: hook.client(), Attempts: 2, Timeout: 10 * time.Second,
			Hooks: []Hook{{URL: "http://hook/", Events: []string{All}}}})
		n.Send(Event{Kind: End, Job: job()})
		n.Close(time.Hour)
		if took := time.Since(hook.start); took != 21*time.Second {
			t.Errorf("given up after %v, want 21s: two tries of 10s and a second between", took)
		}
		if got, want := hook.tries(), seconds(0, 11); !slices.Equal(got, want) {
			t.Errorf("tries at %v, want %v", got, want)
		}
	})
}

// Close(wait) waits for the queues to empty for wait and not a moment
// longer: then the delivery under way (a hook that never answers, whose
// Timeout is an hour) is abandoned and the queued event dropped.
func TestCloseWaitsExactlyItsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hook := &memHook{start: time.Now(), answer: never}
		n := Start(Options{Client: hook.client(), Timeout: time.Hour, Hooks: []Hook{{URL: "http://hook/", Events: []string{All}}}})
		n.Send(Event{Kind: End, Job: job()})
		n.Send(Event{Kind: Begin, Job: job()})
		if dropped := n.Close(5 * time.Second); dropped != 2 {
			t.Errorf("Close dropped %d, want 2 (the one under way, the one queued)", dropped)
		}
		if took := time.Since(hook.start); took != 5*time.Second {
			t.Errorf("Close(5s) returned after %v, want exactly 5s", took)
		}
		if got := hook.tries(); len(got) != 1 {
			t.Errorf("tries at %v, want the one cut short", got)
		}
	})
}

// A webhook that fails once gets the event again exactly Backoff later;
// one filtered by Users gets only that user's jobs.
func TestWebhookRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var bodies []Body
		var urls []string
		hook := &memHook{start: time.Now()}
		hook.answer = func(try int, r *http.Request) (*http.Response, error) {
			if try == 1 {
				return status(http.StatusServiceUnavailable, r)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			b, _ := io.ReadAll(r.Body)
			var body Body
			if err := json.Unmarshal(b, &body); err != nil {
				t.Errorf("body %s: %v", b, err)
			}
			mu.Lock()
			bodies, urls = append(bodies, body), append(urls, r.URL.String())
			mu.Unlock()
			return status(http.StatusOK, r)
		}
		n := Start(Options{Cluster: "lab", Backoff: 2 * time.Second, Client: hook.client(), Hooks: []Hook{
			{URL: "http://hook/", Events: []string{End, Fail, Drain}},
			{URL: "http://hook/bob", Events: []string{All}, Users: []string{"bob"}},
		}})
		failed := job()
		failed.State, failed.ExitCode = slurm.Failed, jobrec.ExitCode{Status: 3}
		n.Send(Event{Kind: Begin, Job: job(), Time: t0})
		n.Send(Event{Kind: Fail, Job: failed, Time: t0})
		n.Send(Event{Kind: Drain, GPU: &GPU{Index: 1, UUID: "GPU-1"}, Actor: "root", Reason: "fan", Time: t0})
		n.Close(10 * time.Second)
		if got, want := hook.tries(), seconds(0, 2, 2); !slices.Equal(got, want) {
			t.Errorf("tries at %v, want %v: the refused one again 2s (Backoff) later, then the next event at once", got, want)
		}
		if len(bodies) != 2 || urls[0] != "http://hook/" || urls[1] != "http://hook/" {
			t.Fatalf("%d bodies to %v: want 2, both to the hook without Users", len(bodies), urls)
		}
		b := bodies[0]
		if b.Event != Fail || b.Job.ID != 12 || b.Job.State != "FAILED" || b.Job.ExitCode != "3:0" || b.Job.User != "alice" ||
			len(b.Job.GPUs) != 1 || b.Job.GPUs[0] != 1 || !b.Job.Start.Equal(t0.Add(5*time.Second)) ||
			b.Subject != "Slurm Job_id=12 Name=train Failed, Run time 00:01:00, FAILED, ExitCode 3" {
			t.Errorf("first body: %+v %+v", b, b.Job)
		}
		if b := bodies[1]; b.Event != Drain || b.GPU == nil || b.GPU.Index != 1 || b.Actor != "root" || b.Reason != "fan" || b.Job != nil {
			t.Errorf("second body: %+v", b)
		}
	})
}

// A full queue drops, never blocks: Send returns at once, on the bubble's
// clock not a nanosecond later (a Send that blocked would deadlock the
// bubble, and the test would say so).
func TestSendNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hook := &memHook{start: time.Now(), answer: never}
		var logged logBuffer
		n := Start(Options{Queue: 2, Client: hook.client(), Hooks: []Hook{{URL: "http://hook/", Events: []string{All}}}, Log: newLog(&logged)})
		for range 10 {
			n.Send(Event{Kind: Begin, Job: job()})
		}
		if took := time.Since(hook.start); took != 0 {
			t.Errorf("10 Sends took %v of the clock, want none", took)
		}
		n.Close(0)
		if !strings.Contains(logged.String(), "notification dropped") {
			t.Errorf("no drop logged: %s", logged.String())
		}
	})
}
