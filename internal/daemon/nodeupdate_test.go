package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/config"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// drainDaemon is a daemon with a store, four simulated GPUs and a stand-in
// for the scheduling loop that, whenever woken, asks whether the node is
// drained and samples the GPUs, as a pass does.
func drainDaemon(t *testing.T, dir string) *Daemon {
	t.Helper()
	cfg := config.Default()
	cfg.Node.NodeName, cfg.Node.CPUs = "gpu01", 4
	cfg.Operators = []string{"ops"}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	inv, err := gpu.Simulated([]gpu.SimGPU{{Type: "a100", Memory: 80 << 30, Count: 4}}, gpu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := newDaemon(Options{}, cfg)
	d.st, d.inv, d.log = st, inv, slog.New(slog.NewTextHandler(io.Discard, nil))
	// What Run does at start: stored drains back into the inventory.
	drains, err := st.Drains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, dr := range drains {
		_ = inv.Drain(dr.UUID, dr.Reason)
		d.drained[dr.UUID] = true
	}
	d.gsnap = inv.Sample(time.Now(), nil)
	d.publishLocked() // nothing else runs yet
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.kick:
				_ = d.nodeDrained()
				gs := inv.Sample(time.Now(), nil)
				d.mu.Lock()
				d.gsnap = gs
				d.publishLocked()
				d.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return d
}

var (
	rootCaller  = localapi.Identity{UID: 0, User: "root"}
	opsCaller   = localapi.Identity{UID: 4242, User: "ops"}
	aliceCaller = localapi.Identity{UID: 4243, User: "alice"}
)

func update(d *Daemon, who localapi.Identity, u api.NodeUpdate) (api.Drains, error) {
	return d.updateNode(context.Background(), &localapi.Request[api.NodeUpdate]{Caller: who, Body: u})
}

// code is the Slurm error number of a refusal, 0 for none, -1 for an
// error without one.
func code(err error) slurm.Errno {
	var le *api.Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &le) && le.Code != 0:
		return le.Code
	}
	return -1
}

// A node update answers once a pass has sampled after it, and the pass
// is not kept waiting by the update: the update used to hold the node's
// lock, which every pass takes, while it waited for that sample, so the
// scheduling loop stood still until the wait gave up three seconds later
// and the update answered without the sample it waited for.
func TestUpdateNodeAnswersAfterAPassThatItDidNotBlock(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	for _, u := range []api.NodeUpdate{
		{Node: "gpu01", State: api.NodeDrain, Reason: "maintenance"},
		{Node: "gpu01", State: api.NodeResume},
	} {
		asked := time.Now()
		if _, err := update(d, rootCaller, u); err != nil {
			t.Fatalf("%s: %v", u.State, err)
		}
		d.mu.Lock()
		seen := d.gsnap.Time
		d.mu.Unlock()
		if !seen.After(asked) {
			t.Errorf("%s answered with the sample of %s, taken before it was asked at %s", u.State,
				seen.Format(time.RFC3339Nano), asked.Format(time.RFC3339Nano))
		}
	}
}

func TestUpdateNodeRefusals(t *testing.T) {
	if os.Geteuid() == 4243 {
		t.Skip("the test's caller alice has this process's uid")
	}
	tests := []struct {
		name string
		who  localapi.Identity
		u    api.NodeUpdate
		want slurm.Errno
	}{
		{"a user who is not an operator is refused as by Slurm", aliceCaller,
			api.NodeUpdate{Node: "gpu01", State: api.NodeDrain, Reason: "x"}, 2010},
		{"another node's name is refused", rootCaller,
			api.NodeUpdate{Node: "gpu02", State: api.NodeDrain, Reason: "x"}, 2018},
		{"a host list naming another node too is refused", rootCaller,
			api.NodeUpdate{Node: "gpu[01-02]", State: api.NodeDrain, Reason: "x"}, 2018},
		{"a state other than DRAIN and RESUME is refused", rootCaller,
			api.NodeUpdate{Node: "gpu01", State: "DOWN", Reason: "x"}, 2028},
		{"resuming a node that is not drained is refused", rootCaller,
			api.NodeUpdate{Node: "gpu01", State: api.NodeResume}, 2028},
		{"resuming a GPU that is not drained is refused", rootCaller,
			api.NodeUpdate{Node: "gpu01", GPUs: []string{"1"}, State: api.NodeResume}, 2028},
		{"a drain without a reason is refused", rootCaller,
			api.NodeUpdate{Node: "gpu01", State: api.NodeDrain}, -1},
		{"a GPU that is not there is refused", rootCaller,
			api.NodeUpdate{Node: "gpu01", GPUs: []string{"9"}, State: api.NodeDrain, Reason: "x"}, -1},
		{"an operator may drain", opsCaller,
			api.NodeUpdate{Node: "gpu01", State: api.NodeDrain, Reason: "x"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := drainDaemon(t, t.TempDir())
			_, err := update(d, tt.who, tt.u)
			if got := code(err); got != tt.want {
				t.Errorf("refusal code %d (%v), want %d", got, err, tt.want)
			}
		})
	}
}

func TestNodeDrainIsKeptAndResumed(t *testing.T) {
	dir := t.TempDir()
	d := drainDaemon(t, dir)
	if d.nodeDrained() {
		t.Fatal("a new node is drained")
	}
	got, err := update(d, rootCaller, api.NodeUpdate{Node: "gpu01", State: api.NodeDrain, Reason: "fan broken"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Node == nil || got.Node.Reason != "fan broken" || got.Node.By != 0 || got.Node.UUID != api.NodeDrainUUID {
		t.Fatalf("drains after the drain: %+v", got)
	}
	if !d.nodeDrained() {
		t.Fatal("the scheduling pass is not told the node is drained")
	}

	// A new daemon over the same store (a restart) finds the drain.
	d.st.Close()
	d2 := drainDaemon(t, dir)
	if !d2.nodeDrained() {
		t.Fatal("the drain did not survive a restart")
	}
	if _, err := update(d2, rootCaller, api.NodeUpdate{Node: "gpu01", State: api.NodeResume}); err != nil {
		t.Fatal(err)
	}
	if d2.nodeDrained() {
		t.Fatal("the node is still drained after RESUME")
	}
	rows, err := d2.st.Drains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Errorf("the store still holds drains: %+v", rows)
	}
}

func TestReasonOnUndrainedNode(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	got, err := update(d, rootCaller, api.NodeUpdate{Node: "gpu01", Reason: "new fan on Monday"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Node != nil || got.NodeReason == nil || got.NodeReason.Reason != "new fan on Monday" {
		t.Errorf("drains: %+v, want a reason and no drain", got)
	}
	if d.nodeDrained() {
		t.Error("a reason alone drained the node")
	}
}

func TestGPUDrainAndResume(t *testing.T) {
	d := drainDaemon(t, t.TempDir())
	uuid := d.gsnap.GPUs[2].UUID
	before := d.gsnap
	before.GPUs = slices.Clone(before.GPUs)
	got, err := update(d, rootCaller, api.NodeUpdate{Node: "gpu01", GPUs: []string{"2"}, State: api.NodeDrain, Reason: "ECC errors"})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Drain{{UUID: uuid, Index: 2, Reason: "ECC errors", By: 0}}
	if diff := cmp.Diff(want, got.GPUs, cmpIgnoreSince); diff != "" {
		t.Errorf("GPU drains (-want +got):\n%s", diff)
	}
	// The answer comes after a sample that shows it.
	d.mu.Lock()
	g := d.gsnap.GPUs[2]
	d.mu.Unlock()
	if g.State != gpu.Drained || g.Reason != "ECC errors" {
		t.Errorf("GPU 2 is %s (%q) in the latest sample, want drained", g.State, g.Reason)
	}
	if d.nodeDrained() {
		t.Error("draining a GPU drained the node")
	}

	// Kept in the store, by UUID, for the next start.
	rows, err := d.st.Drains(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].UUID != uuid || rows[0].Reason != "ECC errors" {
		t.Errorf("stored drains %+v, want GPU 2's", rows)
	}

	// A pass's sample taken just before the drain may land after it: the
	// drain is in force all the same, and the resume is not refused as
	// "not drained" (seen in a test that drains and resumes at once).
	d.mu.Lock()
	d.gsnap = before
	d.publishLocked()
	d.mu.Unlock()

	// Resumed by UUID.
	got, err = update(d, rootCaller, api.NodeUpdate{Node: "gpu01", GPUs: []string{uuid}, State: api.NodeResume})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GPUs) != 0 {
		t.Errorf("GPU drains after the resume: %+v", got.GPUs)
	}
	d.mu.Lock()
	g = d.gsnap.GPUs[2]
	d.mu.Unlock()
	if g.State != gpu.Up {
		t.Errorf("GPU 2 is %s after the resume, want up", g.State)
	}
	d.mu.Lock()
	saved := d.drained[uuid]
	d.mu.Unlock()
	if saved {
		t.Error("GPU 2 is still marked saved: a later health drain of it would not be stored")
	}
}

var cmpIgnoreSince = cmp.Transformer("noSince", func(d api.Drain) api.Drain {
	d.Since = time.Time{}
	return d
})
