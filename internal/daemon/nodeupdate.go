package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/slurm-lite/slurm-lite/internal/api"
	"github.com/slurm-lite/slurm-lite/internal/gpu"
	"github.com/slurm-lite/slurm-lite/internal/localapi"
	"github.com/slurm-lite/slurm-lite/internal/notify"
	"github.com/slurm-lite/slurm-lite/internal/slurm"
	"github.com/slurm-lite/slurm-lite/internal/slurmsyntax"
	"github.com/slurm-lite/slurm-lite/internal/store"
)

// This file is scontrol update NodeName=...: draining and resuming the
// node, or single GPUs of it, by hand.
//
// A GPU drain goes to the inventory (gpu.Inventory.Drain), which shows the
// GPU Drained from the next sample on, and to the store's gpu_drains table
// keyed by UUID, which the daemon reloads at start.
//
// A drain of the whole node keeps every job from starting, CPU-only jobs
// included, and lets running jobs finish (Slurm's DRAIN: IDLE+DRAIN, or
// MIXED+DRAIN while jobs run). It is a row of the same table whose UUID is
// api.NodeDrainUUID ("node"), and lives in the daemon's admin field; the
// scheduling pass asks nodeDrained.

// nodeAdmin is the node's administrative state.
type nodeAdmin struct {
	loaded bool
	// drain is the node's drain as stored; nil when it is not drained.
	drain *store.Drain
	// reason is a reason set on an undrained node (Reason= without a
	// state). Slurm shows it; it is kept in memory only.
	reason *store.Drain
}

// nodeAdminState is the Daemon's admin field: the node's administrative
// state under its own lock, which also serializes node updates.
type nodeAdminState struct {
	mu   sync.Mutex
	node nodeAdmin
}

// adminLocked returns d's node state, reading the stored drain the first
// time. d.admin.mu must be held.
func (d *Daemon) adminLocked(ctx context.Context) *nodeAdmin {
	a := &d.admin.node
	if !a.loaded {
		drains, err := d.st.Drains(ctx)
		if err != nil {
			d.log.Error("reading the node's drain", "err", err)
			return a // tried again next time
		}
		for _, dr := range drains {
			if dr.UUID == api.NodeDrainUUID {
				dr := dr
				a.drain = &dr
			}
		}
		a.loaded = true
	}
	return a
}

// nodeDrained reports whether the node is drained by hand: nothing may
// start on it.
func (d *Daemon) nodeDrained() bool {
	d.admin.mu.Lock()
	defer d.admin.mu.Unlock()
	return d.adminLocked(context.Background()).drain != nil
}

// drains is GET api.PathNodeDrains.
func (d *Daemon) drains(ctx context.Context, req *localapi.Request[struct{}]) (api.Drains, error) {
	d.admin.mu.Lock()
	defer d.admin.mu.Unlock()
	return d.drainsLocked(ctx)
}

func (d *Daemon) drainsLocked(ctx context.Context) (api.Drains, error) {
	a := d.adminLocked(ctx)
	var out api.Drains
	if a.drain != nil {
		out.Node = apiDrain(*a.drain)
	}
	if a.reason != nil {
		out.NodeReason = apiDrain(*a.reason)
	}
	rows, err := d.st.Drains(ctx)
	if err != nil {
		return out, err
	}
	for _, dr := range rows {
		if dr.UUID != api.NodeDrainUUID {
			out.GPUs = append(out.GPUs, *apiDrain(dr))
		}
	}
	return out, nil
}

func apiDrain(dr store.Drain) *api.Drain {
	return &api.Drain{UUID: dr.UUID, Index: dr.Index, Reason: dr.Reason, Since: dr.Since, By: dr.By}
}

// updateNode is POST api.PathNodeUpdate: scontrol update NodeName=...
// State=DRAIN|RESUME Reason=..., for the node or for GPUs of it. Only
// root, operators and the daemon's own user (a personal daemon's owner,
// whom every job runs as) may; Slurm 22.05 answers others "Invalid user
// id".
// It answers once a GPU sample shows the change, so that the next sinfo
// sees it.
func (d *Daemon) updateNode(ctx context.Context, req *localapi.Request[api.NodeUpdate]) (api.Drains, error) {
	u := req.Body
	caller := req.Caller
	cfg := d.config()
	if caller.UID != 0 && caller.UID != uint32(os.Geteuid()) && !cfg.IsOperator(caller.User) {
		return api.Drains{}, refusal(slurm.ErrUserIDMissing, slurm.ErrUserIDMissing.Error())
	}
	names, err := slurmsyntax.ExpandHostlist(u.Node)
	if err != nil || len(names) == 0 {
		return api.Drains{}, refusal(slurm.ErrInvalidNodeName, slurm.ErrInvalidNodeName.Error())
	}
	for _, n := range names {
		if n != cfg.Node.NodeName {
			return api.Drains{}, refusal(slurm.ErrInvalidNodeName, slurm.ErrInvalidNodeName.Error())
		}
	}
	switch u.State {
	case api.NodeDrain:
		if strings.TrimSpace(u.Reason) == "" {
			return api.Drains{}, localapi.Errorf(http.StatusBadRequest, "a drain needs a reason: add Reason=\"...\"")
		}
	case api.NodeResume, "":
	default:
		return api.Drains{}, refusal(slurm.ErrInvalidNodeState, slurm.ErrInvalidNodeState.Error())
	}
	if u.State == "" && u.Reason == "" {
		return api.Drains{}, localapi.Errorf(http.StatusBadRequest, "no change: give State= or Reason=")
	}

	asked := d.now()
	d.admin.mu.Lock()
	if len(u.GPUs) > 0 {
		err = d.updateGPUs(ctx, caller, u, asked)
	} else {
		err = d.updateWholeNode(ctx, caller, u, asked)
	}
	d.admin.mu.Unlock()
	if err != nil {
		return api.Drains{}, err
	}
	// Not under the lock: the pass that takes the sample asks nodeDrained.
	// (Held, it stalled the scheduling loop until awaitSample gave up,
	// three seconds for every drain and resume.)
	d.awaitSample(ctx, asked)
	return d.drains(ctx, nil)
}

// updateWholeNode drains, resumes or re-words the node itself.
func (d *Daemon) updateWholeNode(ctx context.Context, caller localapi.Identity, u api.NodeUpdate, now time.Time) error {
	a := d.adminLocked(ctx)
	if !a.loaded {
		return errors.New("reading the node's drain from the store failed; see the daemon's log")
	}
	dr := store.Drain{UUID: api.NodeDrainUUID, Index: -1, Reason: u.Reason, Since: now, By: caller.UID}
	switch {
	case u.State == api.NodeDrain, u.State == "" && a.drain != nil:
		if u.State == "" && a.drain != nil {
			dr.Since, dr.By = now, caller.UID // a new reason, by whom and when, as Slurm
		}
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			if err := tx.PutDrain(dr); err != nil {
				return err
			}
			return nodeEvent(tx, d.callerEvent(caller, 0, evDrain, dr.Reason), "")
		})
		if err != nil {
			return err
		}
		a.drain, a.reason = &dr, nil
		d.log.Info("node drained", "by", caller.User, "reason", dr.Reason)
		d.tellNode(caller, "", "drain", dr.Reason)
	case u.State == "":
		a.reason = &dr
	default: // resume
		if a.drain == nil {
			d.mu.Lock()
			health := d.gsnap.NodeDrain
			d.mu.Unlock()
			if health != "" {
				return localapi.Errorf(http.StatusConflict,
					"the node is drained by the daemon itself (%s), not by hand: it resumes once the cause is gone", health)
			}
			return refusal(slurm.ErrInvalidNodeState, slurm.ErrInvalidNodeState.Error())
		}
		err := d.st.Update(ctx, func(tx *store.Tx) error {
			if err := tx.DeleteDrain(api.NodeDrainUUID); err != nil {
				return err
			}
			return nodeEvent(tx, d.callerEvent(caller, 0, evResume, ""), "")
		})
		if err != nil {
			return err
		}
		a.drain, a.reason = nil, nil
		d.log.Info("node resumed", "by", caller.User)
		d.tellNode(caller, "", "resume", "")
	}
	return nil
}

// updateGPUs drains, resumes or re-words single GPUs: all of them, or
// none when one is refused.
func (d *Daemon) updateGPUs(ctx context.Context, caller localapi.Identity, u api.NodeUpdate, now time.Time) error {
	d.mu.Lock()
	gs := d.gsnap
	// A drain is in force from its request, not from the next sample:
	// a resume right after a drain (an administrator's script) was
	// refused as "not drained" until the sample had caught up.
	stored := maps.Clone(d.drained)
	d.mu.Unlock()
	type target struct {
		uuid    string
		index   int
		drained bool
	}
	var targets []target
	for _, id := range u.GPUs {
		g, ok := gs.Find(id)
		if !ok || g.Index < 0 {
			return localapi.Errorf(http.StatusBadRequest, "no GPU %q on this node: give an index, a UUID or a PCI bus id (sinfo -G lists them)", id)
		}
		targets = append(targets, target{uuid: g.UUID, index: g.Index, drained: g.State == gpu.Drained || g.State == gpu.Lost || stored[g.UUID]})
	}
	for _, t := range targets {
		if u.State != api.NodeDrain && !t.drained {
			return refusal(slurm.ErrInvalidNodeState, fmt.Sprintf("Invalid node state specified (GPU %d is not drained)", t.index))
		}
	}
	for _, t := range targets {
		switch u.State {
		case api.NodeDrain, "":
			dr := store.Drain{UUID: t.uuid, Index: t.index, Reason: u.Reason, Since: now, By: caller.UID}
			// Marked saved first, so that a sample taken meanwhile does
			// not store the drain again under the daemon's own name.
			d.mu.Lock()
			d.drained[t.uuid] = true
			d.mu.Unlock()
			err := d.st.Update(ctx, func(tx *store.Tx) error {
				if err := tx.PutDrain(dr); err != nil {
					return err
				}
				return nodeEvent(tx, d.callerEvent(caller, 0, evDrain, u.Reason), t.uuid)
			})
			if err != nil {
				return err
			}
			if err := d.inv.Drain(t.uuid, u.Reason); err != nil {
				return localapi.Errorf(http.StatusBadRequest, "%v", err)
			}
			d.log.Info("GPU drained", "gpu", t.index, "uuid", t.uuid, "by", caller.User, "reason", u.Reason)
			d.tellNode(caller, t.uuid, "drain", u.Reason)
		default: // resume
			if err := d.inv.Resume(t.uuid); err != nil {
				return localapi.Errorf(http.StatusConflict, "%v", err)
			}
			err := d.st.Update(ctx, func(tx *store.Tx) error {
				if err := tx.DeleteDrain(t.uuid); err != nil {
					return err
				}
				return nodeEvent(tx, d.callerEvent(caller, 0, evResume, ""), t.uuid)
			})
			if err != nil {
				return err
			}
			d.mu.Lock()
			delete(d.drained, t.uuid)
			d.mu.Unlock()
			d.log.Info("GPU resumed", "gpu", t.index, "uuid", t.uuid, "by", caller.User)
			d.tellNode(caller, t.uuid, "resume", "")
		}
	}
	return nil
}

// nodeEvent appends a drain's or resume's event, of the GPU gpuUUID ("" for
// the node), in the transaction of the change.
func nodeEvent(tx *store.Tx, e store.Event, gpuUUID string) error {
	e.GPU = gpuUUID
	_, err := tx.AppendEvent(e)
	return err
}

// tellNode hands a drain or resume, of the GPU gpuUUID or ("") the node,
// to the notifier.
func (d *Daemon) tellNode(caller localapi.Identity, gpuUUID, action, detail string) {
	kind := notify.Drain
	if action == "resume" {
		kind = notify.Resume
	}
	if gpuUUID == "" {
		d.notifier.Load().Send(notify.Event{Kind: kind, Time: d.now(), Node: d.config().Node.NodeName,
			Actor: caller.User, Reason: detail})
		return
	}
	d.mu.Lock()
	index := gpuIndex(d.gsnap, gpuUUID)
	d.mu.Unlock()
	d.tellGPU(kind, index, gpuUUID, caller.User, detail)
}

// awaitSample wakes the loop and waits (a few seconds at most) for a GPU
// sample taken after t, so that the change shows in the next sinfo and the
// next scheduling pass. t and the samples' times are the daemon's clock;
// the few seconds are real. (A fake clock that stands still makes every
// update wait them out: no sample is after t.)
func (d *Daemon) awaitSample(ctx context.Context, t time.Time) {
	d.wake()
	deadline := time.NewTimer(3 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		d.mu.Lock()
		seen := d.gsnap.Time
		d.mu.Unlock()
		if seen.After(t) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}
