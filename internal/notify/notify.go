package notify

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/clock"
	"github.com/slurm-lite/slurm-lite/internal/jobrec"
)

// Event is one thing to tell: a job's (Job set) or a GPU's (GPU set).
type Event struct {
	// Kind is the event's word (Begin, End, Yield, Drain, ...).
	Kind string
	// Time is when it happened, on the sender's clock (the daemon's);
	// zero is Options.Clock's now.
	Time time.Time
	// Job is the job as it is after the change; nil for a GPU's event.
	Job *jobrec.Job
	// GPU is the GPU drained or resumed; nil for a job's event.
	GPU *GPU
	// Node is the node drained or resumed as a whole.
	Node string
	// Array, when set, makes the event the summary of a whole array job
	// (Job is the array's record): mailed as slurmctld's "Slurm Array
	// Summary", and not sent to webhooks, which get each task's events.
	Array *Array
	// Budget is the budget of a BUDGET_80 or BUDGET_100 event.
	Budget *Budget
	// Actor is who made the change ("" for the job itself or the
	// scheduler); Reason why.
	Actor  string
	Reason string
}

// GPU names a GPU in an event.
type GPU struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
}

// Hook is one webhook: where, which kinds (or All), and optionally whose
// jobs (a GPU's events go only to hooks without Users).
type Hook struct {
	URL    string
	Events []string
	Users  []string
}

// wants reports whether the hook takes ev.
func (h Hook) wants(ev Event) bool {
	if !slices.Contains(h.Events, All) && !slices.Contains(h.Events, ev.Kind) {
		return false
	}
	if len(h.Users) == 0 {
		return true
	}
	if ev.Budget != nil {
		return h.wantsBudget(ev.Budget)
	}
	return ev.Job != nil && slices.Contains(h.Users, ev.Job.User)
}

// Options configure a Notifier. Zero durations and counts take the
// defaults in brackets.
type Options struct {
	// Cluster is ClusterName, for the mail's environment and the body.
	Cluster string
	// MailProg is the mail program; "" sends no mail.
	MailProg string
	Hooks    []Hook
	Log      *slog.Logger
	// GroupName names a gid, for SLURM_JOB_GROUP.
	GroupName func(gid uint32) string
	// Queue is how many events wait per destination [256].
	Queue int
	// Attempts is how often a webhook is tried [5]; Backoff the wait
	// before the second try, doubled before each next [1s]; Timeout
	// bounds each try [10s].
	Attempts int
	Backoff  time.Duration
	Timeout  time.Duration
	// MailTimeout bounds one run of MailProg [120s, slurmctld's
	// MAIL_PROG_TIMEOUT].
	MailTimeout time.Duration
	// Clock stamps an event sent without a Time [the machine's]: the
	// daemon gives its own.
	Clock clock.Clock
	// Client posts to the webhooks [http.DefaultClient]; tests give one
	// that answers in memory, to time the retries in a synctest bubble.
	Client *http.Client
}

// Notifier delivers events; see the package comment.
type Notifier struct {
	opts  Options
	mail  chan Event
	hooks []chan Event
	wg    sync.WaitGroup
	stop  context.CancelFunc
	once  sync.Once
	// mu guards closed: Send holds it shared, so that Close never closes
	// a queue under a Send.
	mu     sync.RWMutex
	closed bool
	// abandoned counts the deliveries Close cut short (under way when it
	// stopped them), for its count of what was dropped.
	abandoned atomic.Int64
}

// Start starts the Notifier's goroutines; Close stops them.
func Start(opts Options) *Notifier {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	opts.Queue = cmpPos(opts.Queue, 256)
	opts.Attempts = cmpPos(opts.Attempts, 5)
	opts.Backoff = cmpPos(opts.Backoff, time.Second)
	opts.Timeout = cmpPos(opts.Timeout, 10*time.Second)
	opts.MailTimeout = cmpPos(opts.MailTimeout, 120*time.Second)
	if opts.GroupName == nil {
		opts.GroupName = func(uint32) string { return "" }
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	ctx, stop := context.WithCancel(context.Background())
	n := &Notifier{opts: opts, stop: stop}
	if opts.MailProg != "" {
		n.mail = make(chan Event, opts.Queue)
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.drain(ctx, n.mail, n.sendMail) }()
	}
	for _, h := range opts.Hooks {
		q := make(chan Event, opts.Queue)
		n.hooks = append(n.hooks, q)
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.drain(ctx, q, func(ctx context.Context, ev Event) bool { return n.post(ctx, h, ev) })
		}()
	}
	return n
}

func cmpPos[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// drain delivers q's events one at a time, in order, until ctx ends or q
// is closed. deliver says whether the event was delivered; one that was
// not because ctx ended was abandoned by Close.
func (n *Notifier) drain(ctx context.Context, q chan Event, deliver func(context.Context, Event) bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-q:
			if !ok {
				return
			}
			if !deliver(ctx, ev) && ctx.Err() != nil {
				n.abandoned.Add(1)
			}
		}
	}
}

// Send queues ev for the mail program (when its job asked for mail of
// this kind) and for each webhook that wants it. It never blocks: a full
// queue drops the event and says so in the log.
func (n *Notifier) Send(ev Event) {
	if n == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = n.opts.Clock.Now()
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	if n.closed {
		return
	}
	if n.mail != nil && (ev.Budget != nil || ev.Job != nil && wantsMail(ev)) {
		n.enqueue(n.mail, ev, "mail")
	}
	if ev.Array != nil {
		return
	}
	for i, h := range n.opts.Hooks {
		if h.wants(ev) {
			n.enqueue(n.hooks[i], ev, h.URL)
		}
	}
}

func (n *Notifier) enqueue(q chan Event, ev Event, dest string) {
	select {
	case q <- ev:
	default:
		n.logger(ev).Warn("notification dropped: its queue is full", "event", ev.Kind, "to", dest)
	}
}

// logger is the log with the event's job (or GPU) as a field.
func (n *Notifier) logger(ev Event) *slog.Logger {
	switch {
	case ev.Job != nil:
		return n.opts.Log.With("job", ev.Job.ID)
	case ev.GPU != nil:
		return n.opts.Log.With("gpu", ev.GPU.Index)
	case ev.Budget != nil:
		return n.opts.Log.With("account", ev.Budget.Account)
	}
	return n.opts.Log
}

// Close stops the deliveries. It waits up to wait for the queues to empty
// (not at all when wait is 0); then what is left is dropped at once: a
// delivery under way is abandoned (its webhook request cancelled, its
// MailProg killed) and the events still queued are not sent. It returns,
// once every delivery has ended, how many events were dropped, for the
// caller's log. A stopping daemon closes with 0: a webhook that hangs must
// not keep it, and its state lock, for seconds after it said it stopped.
func (n *Notifier) Close(wait time.Duration) (dropped int) {
	if n == nil {
		return 0
	}
	n.once.Do(func() {
		n.mu.Lock()
		n.closed = true
		n.mu.Unlock()
		// No Send runs now: the queues can be closed, and what is in them
		// stays there to be counted.
		if n.mail != nil {
			close(n.mail)
		}
		for _, q := range n.hooks {
			close(q)
		}
		done := make(chan struct{})
		go func() { n.wg.Wait(); close(done) }()
		if wait > 0 {
			select {
			case <-done:
			case <-time.After(wait):
			}
		}
		n.stop()
		<-done
		dropped = int(n.abandoned.Load())
		if n.mail != nil {
			dropped += len(n.mail)
		}
		for _, q := range n.hooks {
			dropped += len(q)
		}
	})
	return dropped
}
